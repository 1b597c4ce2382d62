package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// monitorEnabled is the metadata key with which a stream or consumer opts
// in to `nats server check` health checks (jsm.go monitor/stream.go
// MonitorMetaEnabled).
const monitorEnabled = "io.nats.monitor.enabled"

// CheckStreamMonitor is natscli's JETSTREAM_004
// (checkStreamMetadataMonitoring): the health checks a stream asks for in
// its io.nats.monitor.* metadata, judged on its leader's stream info. It
// passes when no stream opts in, as natscli does; the metadata checks
// themselves (jsm.go monitor CheckStreamInfoHealth) are not computed
// here, so a stream that opts in makes it skip.
var CheckStreamMonitor = check.Check{
	Code:        string(report.CodeStreamMonitor),
	NatscliCode: "JETSTREAM_004",
	Severity:    report.Critical,
	Description: "natscli JETSTREAM_004: a stream of the nats audit gather archive fails the health checks its io.nats.monitor.* metadata asks for (passes when none opts in; skipped when one does: those checks are not computed here)",
	Skip:        skipper(judgeStreamMonitor),
	Run:         runner(judgeStreamMonitor),
}

func judgeStreamMonitor(_ *check.Pass, g *model.Gather) verdict {
	for _, st := range streamsOf(g) {
		for _, r := range st.Replicas {
			if r.Info.Cluster != nil && r.Info.Cluster.Leader != r.Server {
				continue
			}
			if r.Info.Config != nil && optedIn(r.Info.Config.Metadata) {
				return verdict{outcome: skip, reason: fmt.Sprintf("stream %s in %s opts in to io.nats.monitor checks, which are not computed here", st.Stream, st.Account)}
			}
		}
	}
	return verdict{outcome: pass}
}

// optedIn says whether metadata enables the monitor checks: natscli parses
// the value as a Go bool; a value that does not parse makes natscli pass
// the asset over, as here.
func optedIn(md map[string]string) bool {
	switch md[monitorEnabled] {
	case "1", "t", "T", "TRUE", "true", "True":
		return true
	}
	return false
}
