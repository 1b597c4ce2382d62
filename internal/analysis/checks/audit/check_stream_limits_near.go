package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckStreamLimitsNear is natscli's JETSTREAM_003 (checkStreamLimits): a
// replica's stream info holds more messages, bytes or consumers than the
// threshold share of the stream's max_msgs, max_bytes or max_consumers
// (when set). WARN. Its remedy (remedy.StreamLimitsNear): raise the limit
// with `nats stream edit`, or accept what the stream does at it.
var CheckStreamLimitsNear = check.Check{
	Code:        string(report.CodeStreamLimitsNear),
	NatscliCode: "JETSTREAM_003",
	Severity:    report.Warning,
	Description: "natscli JETSTREAM_003: a stream of the nats audit gather archive is near its configured limit of messages, bytes or consumers (stream info state against config)",
	Settings: []check.Setting{
		{Key: "messages", Default: 90, Unit: "percent", Description: "alert if messages near the configured limit"},
		{Key: "bytes", Default: 90, Unit: "percent", Description: "alert if size near the configured limit"},
		{Key: "consumers", Default: 90, Unit: "percent", Description: "alert if consumer count near the configured limit"},
	},
	Skip: skipper(needs(judgeStreamLimits, streamAnswers)),
	Run:  runner(needs(judgeStreamLimits, streamAnswers)),
}

func judgeStreamLimits(p *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	for _, st := range streamsOf(g) {
		for _, r := range st.Replicas {
			cfg := r.Info.Config
			if cfg == nil {
				cfg = &capture.StreamConfig{}
			}
			near := func(what, key, flag string, value, limit int64) {
				if limit <= 0 {
					return
				}
				if value > int64(float64(limit)*(p.Setting(key)/100)) {
					f := report.Finding{Server: r.Server, Account: st.Account, Stream: st.Stream, File: r.File,
						Message: fmt.Sprintf("stream %s (in %s on %s) using %.1f%% of %s limit (%d/%d)",
							st.Stream, st.Account, r.Server, float64(value)*100/float64(limit), what, value, limit),
						Evidence: []string{r.File}}
					storage := key != "consumers"
					remedy.Prescribe(remedy.StreamLimitsNear, remedy.Args{"account": st.Account, "stream": st.Stream, "what": what,
						"flag": flag, "limit": fmt.Sprint(limit), "raised": fmt.Sprint(2 * limit), "threshold": fmt.Sprint(p.Setting(key)),
						"storage": storage, "consumers": !storage,
						"discardnew": storage && cfg.Discard == "new", "discardold": storage && cfg.Discard != "new"}).Apply(&f)
					found = append(found, f)
				}
			}
			near("messages", "messages", "--max-msgs", int64(r.Info.State.Messages), cfg.MaxMsgs)
			near("bytes", "bytes", "--max-bytes", int64(r.Info.State.Bytes), cfg.MaxBytes)
			near("consumers", "consumers", "--max-consumers", int64(r.Info.State.ConsumerCount), int64(cfg.MaxConsumers))
		}
	}
	return examples(found, warn)
}
