package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// CheckReplicaLagging is natscli's JETSTREAM_001
// (checkStreamLaggingReplicas): a replica's stream info last_seq is more
// than the threshold share below the highest last_seq of the stream's
// replicas. FAIL. replica-gap says more, from the stores: a stream it
// reports is not reported again here.
var CheckReplicaLagging = check.Check{
	Code:        string(report.CodeReplicaLagging),
	NatscliCode: "JETSTREAM_001",
	Severity:    report.Critical,
	Description: "natscli JETSTREAM_001: a replica of a stream of the nats audit gather archive is behind the highest last sequence of its replicas by more than the threshold (stream info state.last_seq per replica)",
	Settings: []check.Setting{{Key: "last_seq", Default: 10, Unit: "percent",
		Description: "how far a replica may be behind the highest known last sequence, in percent of it"}},
	CoveredBy: []string{string(report.CodeReplicaGap)},
	Skip:      skipper(needs(judgeReplicaLag, streamAnswers)),
	Run:       runner(needs(judgeReplicaLag, streamAnswers)),
}

func judgeReplicaLag(p *check.Pass, g *model.Gather) verdict {
	pct := p.Setting("last_seq")
	var found []report.Finding
	for _, st := range streamsOf(g) {
		var highest uint64
		top := ""
		for _, r := range st.Replicas {
			if r.Info.State.LastSeq > highest {
				highest, top = r.Info.State.LastSeq, r.Server
			}
		}
		if highest == 0 {
			continue // an empty stream
		}
		maxDelta := uint64(float64(highest) * (pct / 100))
		var threshold uint64
		if maxDelta <= highest {
			threshold = highest - maxDelta
		}
		for _, r := range st.Replicas {
			if r.Info.State.LastSeq < threshold {
				found = append(found, report.Finding{Server: r.Server, Account: st.Account, Stream: st.Stream, File: r.File,
					Message: fmt.Sprintf("%s/%s server %s lastSequence: %d is behind highest lastSequence: %d on server: %s",
						st.Account, st.Stream, r.Server, r.Info.State.LastSeq, highest, top),
					Evidence: []string{r.File}})
			}
		}
	}
	return examples(found, fail)
}
