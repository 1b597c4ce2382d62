package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckClusterNameWhitespace is natscli's CLUSTER_004
// (checkClusterNamesForWhitespace): a cluster name of the archive's tags
// holds a space or a line break. FAIL.
var CheckClusterNameWhitespace = check.Check{
	Code:        string(report.CodeClusterNameWhitespace),
	NatscliCode: "CLUSTER_004",
	Severity:    report.Critical,
	Description: "natscli CLUSTER_004: a cluster of the nats audit gather archive has whitespace in its name",
	Skip:        skipper(judgeClusterNames),
	Run:         runner(judgeClusterNames),
}

func judgeClusterNames(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	for _, cl := range g.Clusters {
		if whitespace(cl.Name, " \n") {
			f := report.Finding{Message: fmt.Sprintf("cluster %q has whitespace in its name", cl.Name)}
			remedy.Prescribe(remedy.ClusterNameWhitespace, remedy.Args{"cluster": fmt.Sprintf("%q", cl.Name)}).Apply(&f)
			found = append(found, f)
		}
	}
	return examples(found, fail)
}
