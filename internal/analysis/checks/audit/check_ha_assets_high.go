package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckHAAssetsHigh is natscli's CLUSTER_003 (checkClusterHighHAAssets):
// a server's /jsz ha_assets is above the threshold. WARN; SKIP when a
// server of a cluster has no /jsz.
var CheckHAAssetsHigh = check.Check{
	Code:        string(report.CodeHAAssetsHigh),
	NatscliCode: "CLUSTER_003",
	Severity:    report.Warning,
	Description: "natscli CLUSTER_003: a server of the nats audit gather archive hosts more HA assets (replicated streams and consumers, /jsz ha_assets) than the threshold",
	Settings: []check.Setting{{Key: "assets", Default: 1000, Unit: "count",
		Description: "number of HA assets per server"}},
	Skip: skipper(needs(judgeHAAssets, jszAnswers)),
	Run:  runner(needs(judgeHAAssets, jszAnswers)),
}

func judgeHAAssets(p *check.Pass, g *model.Gather) verdict {
	if why := missing(g, jszPages, "/jsz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	limit := p.Setting("assets")
	var found []report.Finding
	for _, cl := range g.Clusters {
		for i := range cl.Servers {
			s := &cl.Servers[i]
			for _, c := range s.Jsz {
				if float64(c.Jsz.HAAssets) > limit {
					f := serverFinding(s, c, "%s: %d HA assets", s.Name, c.Jsz.HAAssets)
					remedy.Prescribe(remedy.HAAssetsHigh, remedy.Args{"server": s.Name, "count": fmt.Sprint(c.Jsz.HAAssets), "limit": fmt.Sprint(limit)}).Apply(&f)
					found = append(found, f)
				}
			}
		}
	}
	return examples(found, warn)
}
