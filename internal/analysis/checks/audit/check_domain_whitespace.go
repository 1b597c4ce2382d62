package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckDomainWhitespace is natscli's SERVER_006
// (checkJetStreamDomainsForWhitespace): a server's JetStream domain (/jsz
// config.domain) holds a space, tab or line break. WARN.
var CheckDomainWhitespace = check.Check{
	Code:        string(report.CodeDomainWhitespace),
	NatscliCode: "SERVER_006",
	Severity:    report.Warning,
	Description: "natscli SERVER_006: a server of the nats audit gather archive has whitespace in its JetStream domain (/jsz config.domain)",
	Skip:        skipper(needs(judgeDomainWhitespace, jszAnswers)),
	Run:         runner(needs(judgeDomainWhitespace, jszAnswers)),
}

func judgeDomainWhitespace(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	eachAnswer(g, jszPages, func(cluster string, s *model.GatherServer, c capture.Capture) {
		if c.Jsz != nil && whitespace(c.Jsz.Config.Domain, " \t\r\n") {
			f := serverFinding(s, c, "cluster %s server %s domain %q", cluster, s.Name, c.Jsz.Config.Domain)
			remedy.Prescribe(remedy.DomainWhitespace, remedy.Args{"server": s.Name, "domain": fmt.Sprintf("%q", c.Jsz.Config.Domain)}).Apply(&f)
			found = append(found, f)
		}
	})
	return examples(found, warn)
}
