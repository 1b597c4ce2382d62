package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckServerUnhealthy is natscli's SERVER_001 (server_checks.go
// checkServerHealth): a server's /healthz status is neither "ok" nor
// empty. WARN.
var CheckServerUnhealthy = check.Check{
	Code:        string(report.CodeServerUnhealthy),
	NatscliCode: "SERVER_001",
	Severity:    report.Warning,
	Description: "natscli SERVER_001: a server of the nats audit gather archive answered /healthz with a status other than ok",
	Skip:        skipper(needs(judgeServerHealth, healthzAnswers)),
	Run:         runner(needs(judgeServerHealth, healthzAnswers)),
}

func judgeServerHealth(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	eachAnswer(g, healthzPages, func(_ string, s *model.GatherServer, c capture.Capture) {
		if h := c.Healthz; h != nil && h.Status != "ok" && h.Status != "" {
			f := serverFinding(s, c, "%s: /healthz %d - %s", s.Name, h.StatusCode, h.Status)
			remedy.Prescribe(remedy.ServerUnhealthy, remedy.Args{"server": s.Name, "status": fmt.Sprintf("%d - %s", h.StatusCode, h.Status)}).Apply(&f)
			found = append(found, f)
		}
	})
	return examples(found, warn)
}
