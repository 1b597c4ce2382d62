package audit

import (
	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckAuthNotRequired is natscli's SERVER_007 (checkServerAuthRequired):
// a server's /varz says clients need not authenticate. WARN.
var CheckAuthNotRequired = check.Check{
	Code:        string(report.CodeAuthNotRequired),
	NatscliCode: "SERVER_007",
	Severity:    report.Warning,
	Description: "natscli SERVER_007: a server of the nats audit gather archive does not require authentication (/varz auth_required)",
	Skip:        skipper(needs(judgeAuthRequired, varzAnswers)),
	Run:         runner(needs(judgeAuthRequired, varzAnswers)),
}

func judgeAuthRequired(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	eachAnswer(g, varzPages, func(_ string, s *model.GatherServer, c capture.Capture) {
		if c.Varz != nil && !c.Varz.AuthRequired {
			f := serverFinding(s, c, "%s: authentication not required", s.Name)
			remedy.Prescribe(remedy.AuthNotRequired, remedy.Args{"server": s.Name, "id": c.Varz.ServerID}).Apply(&f)
			found = append(found, f)
		}
	})
	return examples(found, warn)
}
