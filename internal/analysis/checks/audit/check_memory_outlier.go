package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckMemoryOutlier is natscli's CLUSTER_001
// (checkClusterMemoryUsageOutliers): a server's /varz mem is above the
// threshold times its cluster's average. WARN; SKIP when a server of a
// cluster has no /varz.
var CheckMemoryOutlier = check.Check{
	Code:        string(report.CodeMemoryOutlier),
	NatscliCode: "CLUSTER_001",
	Severity:    report.Warning,
	Description: "natscli CLUSTER_001: a server of the nats audit gather archive uses more memory than the threshold times its cluster's average (/varz mem)",
	Settings: []check.Setting{{Key: "memory", Default: 1.5, Unit: "ratio",
		Description: "threshold of memory usage above the cluster's average, as a multiple of it"}},
	Skip: skipper(needs(judgeMemoryOutlier, varzAnswers)),
	Run:  runner(needs(judgeMemoryOutlier, varzAnswers)),
}

func judgeMemoryOutlier(p *check.Pass, g *model.Gather) verdict {
	if why := missing(g, varzPages, "/varz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	ratio := p.Setting("memory")
	var found []report.Finding
	for _, cl := range g.Clusters {
		var total float64
		n := 0
		for _, s := range cl.Servers {
			for _, c := range s.Varz {
				total += float64(c.Varz.Mem)
				n++
			}
		}
		if n == 0 {
			continue
		}
		mean := total / float64(n)
		for i := range cl.Servers {
			s := &cl.Servers[i]
			// natscli keeps the last page's figure per server.
			c := s.Varz[len(s.Varz)-1]
			if mem := float64(c.Varz.Mem); mem > mean*ratio {
				f := serverFinding(s, c, "cluster %s avg: %d bytes, server %s: %d bytes", cl.Name, int64(mean), s.Name, c.Varz.Mem)
				remedy.Prescribe(remedy.MemoryOutlier, remedy.Args{"server": s.Name, "cluster": cl.Name,
					"mem": fmt.Sprint(c.Varz.Mem), "mean": fmt.Sprint(int64(mean))}).Apply(&f)
				found = append(found, f)
			}
		}
	}
	return examples(found, warn)
}
