package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckCPUHigh is natscli's SERVER_003 (checkServerCPUUsage): a server's
// /varz cpu divided by its cores is above the threshold. FAIL. A server
// reporting zero cores is passed over.
var CheckCPUHigh = check.Check{
	Code:        string(report.CodeCPUHigh),
	NatscliCode: "SERVER_003",
	Severity:    report.Critical,
	Description: "natscli SERVER_003: a server of the nats audit gather archive uses more CPU than the threshold (/varz cpu over cores)",
	Settings: []check.Setting{{Key: "cpu", Default: 90, Unit: "percent",
		Description: "CPU limit threshold: /varz cpu divided by cores above this fails"}},
	Skip: skipper(needs(judgeCPU, varzAnswers)),
	Run:  runner(needs(judgeCPU, varzAnswers)),
}

func judgeCPU(p *check.Pass, g *model.Gather) verdict {
	limit := p.Setting("cpu")
	var found []report.Finding
	eachAnswer(g, varzPages, func(cluster string, s *model.GatherServer, c capture.Capture) {
		if c.Varz == nil || c.Varz.Cores == 0 {
			return
		}
		if avg := c.Varz.CPU / float64(c.Varz.Cores); avg > limit {
			f := serverFinding(s, c, "%s - %s: %.1f%% CPU (%.1f%% over %d cores)", cluster, s.Name, avg, c.Varz.CPU, c.Varz.Cores)
			remedy.Prescribe(remedy.CPUHigh, remedy.Args{"server": s.Name, "cpu": fmt.Sprintf("%.1f", avg)}).Apply(&f)
			found = append(found, f)
		}
	})
	return examples(found, fail)
}
