package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckSubjectsHigh is natscli's JETSTREAM_002
// (checkStreamHighCardinality): a replica's stream info counts more
// unique subjects than the threshold. WARN.
var CheckSubjectsHigh = check.Check{
	Code:        string(report.CodeSubjectsHigh),
	NatscliCode: "JETSTREAM_002",
	Severity:    report.Warning,
	Description: "natscli JETSTREAM_002: a stream of the nats audit gather archive holds more unique subjects than the threshold (stream info state.num_subjects)",
	Settings: []check.Setting{{Key: "subjects", Default: 1_000_000, Unit: "count",
		Description: "alerting threshold for unique subjects in a stream"}},
	Skip: skipper(needs(judgeSubjects, streamAnswers)),
	Run:  runner(needs(judgeSubjects, streamAnswers)),
}

func judgeSubjects(p *check.Pass, g *model.Gather) verdict {
	limit := p.Setting("subjects")
	var found []report.Finding
	for _, st := range streamsOf(g) {
		for _, r := range st.Replicas {
			if n := r.Info.State.NumSubjects; float64(n) > limit {
				f := report.Finding{Server: r.Server, Account: st.Account, Stream: st.Stream, File: r.File,
					Message: fmt.Sprintf("%s/%s: %d subjects", st.Account, st.Stream, n), Evidence: []string{r.File}}
				remedy.Prescribe(remedy.SubjectsHigh, remedy.Args{"account": st.Account, "stream": st.Stream,
					"count": fmt.Sprint(n), "limit": fmt.Sprint(limit)}).Apply(&f)
				found = append(found, f)
			}
		}
	}
	return examples(found, warn)
}
