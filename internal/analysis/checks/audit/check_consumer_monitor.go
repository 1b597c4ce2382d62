package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// CheckConsumerMonitor is natscli's JETSTREAM_005
// (checkConsumerMetadataMonitoring): the health checks a consumer asks
// for in its io.nats.monitor.* metadata, judged on its leader's consumer
// info (the stream infos' consumer_detail). It passes when no consumer
// opts in, as natscli does; the checks themselves (jsm.go monitor
// CheckConsumerInfoHealth) are not computed here, so a consumer that opts
// in makes it skip.
var CheckConsumerMonitor = check.Check{
	Code:        string(report.CodeConsumerMonitor),
	NatscliCode: "JETSTREAM_005",
	Severity:    report.Critical,
	Description: "natscli JETSTREAM_005: a consumer of the nats audit gather archive fails the health checks its io.nats.monitor.* metadata asks for (passes when none opts in; skipped when one does: those checks are not computed here)",
	Skip:        skipper(needs(judgeConsumerMonitor, streamAnswers)),
	Run:         runner(needs(judgeConsumerMonitor, streamAnswers)),
}

func judgeConsumerMonitor(_ *check.Pass, g *model.Gather) verdict {
	for _, st := range streamsOf(g) {
		for _, r := range st.Replicas {
			for _, ci := range r.Info.Consumers {
				if ci.Cluster != nil && ci.Cluster.Leader != r.Server {
					continue
				}
				if ci.Config != nil && optedIn(ci.Config.Metadata) {
					return verdict{outcome: skip, reason: fmt.Sprintf("consumer %s > %s in %s opts in to io.nats.monitor checks, which are not computed here", st.Stream, ci.Name, st.Account)}
				}
			}
		}
	}
	return verdict{outcome: pass}
}
