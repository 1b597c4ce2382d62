package load

import (
	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

// gatherOf is an audit archive as natscli's audit reads it: the clusters
// and servers of its manifest's tags, each server's answers by kind, and
// its stream infos. The answers are those the archive's reader decoded;
// nothing is read again.
func gatherOf(a auditRead) model.Gather {
	g := model.Gather{Dir: a.dir, Streams: a.audit.Streams}
	byServer := map[[2]string]*capture.AuditServer{}
	for i := range a.audit.Servers {
		s := &a.audit.Servers[i]
		byServer[[2]string{s.Cluster, s.Name}] = s
	}
	for _, c := range a.audit.Clusters {
		gc := model.GatherCluster{Name: c.Name}
		for _, name := range c.Servers {
			gs := model.GatherServer{Name: name}
			if s := byServer[[2]string{c.Name, name}]; s != nil {
				for _, cp := range s.Captures {
					switch cp.Kind {
					case capture.KindVarz:
						gs.Varz = append(gs.Varz, cp)
					case capture.KindJsz:
						gs.Jsz = append(gs.Jsz, cp)
					case capture.KindHealthz:
						gs.Healthz = append(gs.Healthz, cp)
					case capture.KindGatewayz:
						gs.Gatewayz = append(gs.Gatewayz, cp)
					case capture.KindLeafz:
						gs.Leafz = append(gs.Leafz, cp)
					case capture.KindAccountz:
						gs.Accountz = append(gs.Accountz, cp)
					}
				}
			}
			gc.Servers = append(gc.Servers, gs)
		}
		g.Clusters = append(g.Clusters, gc)
	}
	return g
}
