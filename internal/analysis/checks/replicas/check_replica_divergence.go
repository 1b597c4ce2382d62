package replicas

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var CheckReplicaDivergence = check.Check{
	Code:        string(report.CodeReplicaDivergence),
	Severity:    report.Critical,
	Description: "replicas hold different content under the same sequence",
	Skip:        noReplicas,
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, st := range m.Streams {
			cmp := st.Comparison
			if cmp == nil || len(cmp.Diverged) == 0 {
				continue
			}
			// The ranges of every sequence that diverged, and per pattern
			// ("n1,n3 | n2,n4") the sequences that split that way.
			var ranges seqset.Set
			patterns := map[string]seqset.Set{}
			count := uint64(0)
			for _, d := range cmp.Diverged {
				ranges.AddRange(d.First, d.Last)
				count += d.Last - d.First + 1
				var sides []string
				for _, mask := range d.Sides {
					sides = append(sides, strings.Join(cmp.Servers(m, mask), ","))
				}
				sort.Strings(sides)
				k := strings.Join(sides, " | ")
				p := patterns[k]
				p.AddRange(d.First, d.Last)
				patterns[k] = p
			}
			f := report.Finding{
				Account: st.Account, Stream: st.Name, Seq: ranges[0].First, Ranges: ranges, Servers: cmp.Servers(m, 1<<len(cmp.Copies)-1),
				Message: fmt.Sprintf("replicas of %s > %s hold different messages under the same %d sequence(s) (%s): acknowledged writes were lost or overwritten without an error",
					st.Account, st.Name, count, model.RangesText(ranges)),
			}
			divergenceRemedy(st).Apply(&f)
			for _, k := range model.SortedKeys(patterns) {
				f.Evidence = append(f.Evidence, fmt.Sprintf("sequences %s: content differs between %s", model.RangesText(patterns[k]), k))
			}
			if len(st.AssignedTo) > 0 {
				f.Evidence = append(f.Evidence, fmt.Sprintf("the meta state assigns the stream to %s; copies elsewhere are from earlier replicas", strings.Join(model.SortedNames(m, st.AssignedTo), ", ")))
			}
			out = append(out, f)
		}
		return out
	},
}

func divergenceRemedy(st *model.Stream) remedy.Prescription {
	return remedy.Prescribe(remedy.DivergenceChooseCopy, remedy.Args{"stream": st.Name})
}

// noReplicas skips the replica checks where no stream has two copies.
func noReplicas(p *check.Pass) string {
	for _, st := range p.Model.Streams {
		if len(st.Copies) > 1 {
			return ""
		}
	}
	return "no stream has copies on two servers in the bundle"
}
