package audit

import (
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// CheckMetaPeerOffline is natscli's META_001
// (checkMetaClusterOfflineReplicas): a server's /jsz meta_cluster marks a
// peer offline. FAIL; SKIP when a server of a cluster has no /jsz. A
// server whose JetStream is disabled, or whose /jsz has no meta_cluster,
// is passed over. peer-offline says more of a peer that stays in its
// groups: a peer it reports is not reported again here.
var CheckMetaPeerOffline = check.Check{
	Code:        string(report.CodeMetaPeerOffline),
	NatscliCode: "META_001",
	Severity:    report.Critical,
	Description: "natscli META_001: a server of the nats audit gather archive reports a meta group peer offline (/jsz meta_cluster.replicas[].offline)",
	CoveredBy:   []string{string(report.CodePeerOffline)},
	Skip:        skipper(needs(judgeMetaOffline, jszAnswers)),
	Run:         runner(needs(judgeMetaOffline, jszAnswers)),
}

func judgeMetaOffline(_ *check.Pass, g *model.Gather) verdict {
	if why := missing(g, jszPages, "/jsz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	var found []report.Finding
	for _, cl := range g.Clusters {
		for i := range cl.Servers {
			s := &cl.Servers[i]
			for _, c := range s.Jsz {
				if c.Jsz.Disabled || c.Jsz.Meta == nil {
					continue
				}
				for _, r := range c.Jsz.Meta.Replicas {
					if r.Offline {
						f := serverFinding(s, c, "%s - %s reports peer %s as offline", cl.Name, s.Name, r.Name)
						f.Server, f.Peer, f.Group, f.Servers = r.Name, r.Peer, natsfmt.MetaGroup, []string{s.Name}
						// Its own remedy, for when peer-offline (which covers
						// it) has no stores or logs to judge by.
						remedy.Prescribe(remedy.MetaPeerOffline, remedy.Args{"server": r.Name, "reporter": s.Name}).Apply(&f)
						found = append(found, f)
					}
				}
			}
		}
	}
	return examples(found, fail)
}
