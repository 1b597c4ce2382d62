package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckSlowConsumers is natscli's SERVER_004 (checkSlowConsumers): a
// server's /varz counts slow consumers. WARN.
var CheckSlowConsumers = check.Check{
	Code:        string(report.CodeSlowConsumers),
	NatscliCode: "SERVER_004",
	Severity:    report.Warning,
	Description: "natscli SERVER_004: a server of the nats audit gather archive has disconnected slow consumers since it started (/varz slow_consumers)",
	Skip:        skipper(needs(judgeSlowConsumers, varzAnswers)),
	Run:         runner(needs(judgeSlowConsumers, varzAnswers)),
}

func judgeSlowConsumers(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	eachAnswer(g, varzPages, func(cluster string, s *model.GatherServer, c capture.Capture) {
		if c.Varz != nil && c.Varz.SlowConsumers > 0 {
			f := serverFinding(s, c, "%s/%s: %d slow consumers", cluster, s.Name, c.Varz.SlowConsumers)
			remedy.Prescribe(remedy.SlowConsumers, remedy.Args{"server": s.Name, "count": fmt.Sprint(c.Varz.SlowConsumers)}).Apply(&f)
			found = append(found, f)
		}
	})
	return examples(found, warn)
}
