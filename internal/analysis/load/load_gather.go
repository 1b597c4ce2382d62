package load

import (
	"sort"

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
					file(&gs, cp)
				}
			}
			gc.Servers = append(gc.Servers, gs)
		}
		g.Clusters = append(g.Clusters, gc)
	}
	return g
}

// file puts answer c among the pages of its kind of server s.
func file(s *model.GatherServer, c capture.Capture) {
	switch c.Kind {
	case capture.KindVarz:
		s.Varz = append(s.Varz, c)
	case capture.KindJsz:
		s.Jsz = append(s.Jsz, c)
	case capture.KindHealthz:
		s.Healthz = append(s.Healthz, c)
	case capture.KindGatewayz:
		s.Gatewayz = append(s.Gatewayz, c)
	case capture.KindLeafz:
		s.Leafz = append(s.Leafz, c)
	case capture.KindAccountz:
		s.Accountz = append(s.Accountz, c)
	}
}

// unclustered is the cluster natscli's gather tags a server outside any
// cluster with.
const unclustered = "unclustered"

// looseGather is the bundle's loose captures (named, in reading order) as
// a gather archive would hold them: each server under the cluster its
// answers name (unclustered if none does), its answers by kind, pages
// ordered by the time they were taken, and as stream infos per replica
// the /jsz stream details that carry their configuration (natscli reads
// limits and metadata there), each replica's latest.
func looseGather(all []capture.Capture) model.Gather {
	var caps []capture.Capture
	for _, c := range all {
		switch {
		case c.Varz != nil, c.Jsz != nil, c.Healthz != nil, c.Gatewayz != nil, c.Leafz != nil, c.Account != nil:
			caps = append(caps, c)
		}
	}
	cluster := map[string]string{}
	var names []string
	for _, c := range caps {
		if _, ok := cluster[c.Server.Name]; !ok {
			cluster[c.Server.Name] = ""
			names = append(names, c.Server.Name)
		}
		if cluster[c.Server.Name] == "" {
			cluster[c.Server.Name] = c.Server.Cluster
		}
	}
	sorted := append([]capture.Capture(nil), caps...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Server.Time.Before(sorted[j].Server.Time) })
	byCluster := map[string][]*model.GatherServer{}
	servers := map[string]*model.GatherServer{}
	sort.Strings(names)
	for _, n := range names {
		cl := cluster[n]
		if cl == "" {
			cl = unclustered
		}
		s := &model.GatherServer{Name: n}
		servers[n] = s
		byCluster[cl] = append(byCluster[cl], s)
	}
	type replica struct{ account, stream, server string }
	streams := map[replica]capture.AuditStream{}
	for _, c := range sorted {
		s := servers[c.Server.Name]
		file(s, c)
		if c.Jsz == nil {
			continue
		}
		for _, ad := range c.Jsz.AccountDetails {
			for i := range ad.Streams {
				sd := &ad.Streams[i]
				if sd.Config == nil {
					continue
				}
				cl := cluster[s.Name]
				if sd.Cluster != nil && sd.Cluster.Name != "" {
					cl = sd.Cluster.Name
				}
				streams[replica{ad.Name, sd.Name, s.Name}] = capture.AuditStream{Account: ad.Name, Stream: sd.Name, Server: s.Name,
					Cluster: cl, File: c.File, Info: sd}
			}
		}
	}
	g := model.Gather{Loose: true}
	clusters := make([]string, 0, len(byCluster))
	for cl := range byCluster {
		clusters = append(clusters, cl)
	}
	sort.Strings(clusters)
	for _, cl := range clusters {
		gc := model.GatherCluster{Name: cl}
		for _, s := range byCluster[cl] {
			gc.Servers = append(gc.Servers, *s)
		}
		g.Clusters = append(g.Clusters, gc)
	}
	keys := make([]replica, 0, len(streams))
	for k := range streams {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.account != b.account {
			return a.account < b.account
		}
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		return a.server < b.server
	})
	for _, k := range keys {
		g.Streams = append(g.Streams, streams[k])
	}
	return g
}
