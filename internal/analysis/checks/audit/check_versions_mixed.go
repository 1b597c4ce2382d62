package audit

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckVersionsMixed is natscli's SERVER_002 (checkServerVersion): the
// servers' /varz report more than one version. FAIL; SKIP when no /varz
// names a version.
var CheckVersionsMixed = check.Check{
	Code:        string(report.CodeVersionsMixed),
	NatscliCode: "SERVER_002",
	Severity:    report.Critical,
	Description: "natscli SERVER_002: the servers of the nats audit gather archive do not all run the same nats-server version (their /varz)",
	Skip:        skipper(needs(judgeVersions, varzAnswers)),
	Run:         runner(needs(judgeVersions, varzAnswers)),
}

func judgeVersions(_ *check.Pass, g *model.Gather) verdict {
	seen := map[string]bool{}
	var order []string
	var evidence []string
	eachAnswer(g, varzPages, func(_ string, s *model.GatherServer, c capture.Capture) {
		if c.Varz == nil || seen[c.Varz.Version] {
			return
		}
		seen[c.Varz.Version] = true
		order = append(order, c.Varz.Version)
		evidence = append(evidence, fmt.Sprintf("%s - %s (%s)", s.Name, c.Varz.Version, c.File))
	})
	switch len(order) {
	case 0:
		return verdict{outcome: skip, reason: "no /varz names a version"}
	case 1:
		return verdict{outcome: pass}
	}
	f := report.Finding{
		Message:  fmt.Sprintf("servers run %d different versions: %v", len(order), order),
		Evidence: evidence,
	}
	remedy.Prescribe(remedy.VersionsMixed, remedy.Args{"versions": strings.Join(order, ", ")}).Apply(&f)
	return verdict{outcome: fail, found: []report.Finding{f}}
}
