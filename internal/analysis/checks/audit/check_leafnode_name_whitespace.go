package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckLeafnodeNameWhitespace is natscli's LEAF_001
// (checkLeafnodeServerNamesForWhitespace): a leafnode connection of a
// cluster's servers (their /leafz) comes from a server whose name holds
// whitespace. FAIL, one example per cluster; SKIP when a server of a
// cluster has no /leafz in the archive.
var CheckLeafnodeNameWhitespace = check.Check{
	Code:        string(report.CodeLeafnodeNameWhitespace),
	NatscliCode: "LEAF_001",
	Severity:    report.Critical,
	Description: "natscli LEAF_001: a leafnode connected to a cluster of the nats audit gather archive has whitespace in its server name (their /leafz)",
	Skip:        skipper(needs(judgeLeafNames, leafzAnswers)),
	Run:         runner(needs(judgeLeafNames, leafzAnswers)),
}

func judgeLeafNames(_ *check.Pass, g *model.Gather) verdict {
	if why := missing(g, leafzPages, "/leafz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	var found []report.Finding
	for _, cl := range g.Clusters {
		var names, evidence []string
		for i := range cl.Servers {
			s := &cl.Servers[i]
			for _, c := range s.Leafz {
				if c.Leafz == nil {
					continue
				}
				for _, l := range c.Leafz.Leafs {
					if !whitespace(l.Name, " \t\r\n") {
						continue
					}
					evidence = append(evidence, fmt.Sprintf("%s line %d: leafnode %q on %s, account %s", c.File, c.Line, l.Name, s.Name, l.Account))
					if !slices.Contains(names, l.Name) {
						names = append(names, l.Name)
					}
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		f := report.Finding{Message: fmt.Sprintf("leafnodes connected to cluster %s have whitespace in their server names: %s", cl.Name, strings.Join(quoted, ", ")),
			Evidence: evidence}
		remedy.Prescribe(remedy.LeafnodeNameWhitespace, remedy.Args{"cluster": cl.Name, "leafnodes": strings.Join(quoted, ", ")}).Apply(&f)
		found = append(found, f)
	}
	return examples(found, fail)
}
