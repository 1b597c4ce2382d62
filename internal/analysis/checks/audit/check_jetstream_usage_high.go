package audit

import (
	"fmt"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckJetStreamUsageHigh is natscli's SERVER_005
// (checkServerResourceLimits): a server's /jsz memory or storage is above
// the threshold share of its configured max_memory or max_storage. WARN.
var CheckJetStreamUsageHigh = check.Check{
	Code:        string(report.CodeJetStreamUsageHigh),
	NatscliCode: "SERVER_005",
	Severity:    report.Warning,
	Description: "natscli SERVER_005: a server of the nats audit gather archive uses more JetStream memory or store than the threshold share of its configured maximum (/jsz)",
	Settings: []check.Setting{
		{Key: "memory", Default: 90, Unit: "percent", Description: "threshold for memory usage, in percent of max_memory"},
		{Key: "store", Default: 90, Unit: "percent", Description: "threshold for store usage, in percent of max_storage"},
	},
	Skip: skipper(needs(judgeJetStreamUsage, jszAnswers)),
	Run:  runner(needs(judgeJetStreamUsage, jszAnswers)),
}

func judgeJetStreamUsage(p *check.Pass, g *model.Gather) verdict {
	memPct, storePct := p.Setting("memory"), p.Setting("store")
	var found []report.Finding
	eachAnswer(g, jszPages, func(_ string, s *model.GatherServer, c capture.Capture) {
		j := c.Jsz
		if j == nil {
			return
		}
		usage := func(what, key string, used uint64, limit int64) report.Finding {
			f := serverFinding(s, c, "%s %s usage: %d of %d bytes", s.Name, what, used, limit)
			remedy.Prescribe(remedy.JetStreamUsageHigh, remedy.Args{"server": s.Name, "id": serverID(s), "what": what, "key": key,
				"used": fmt.Sprint(used), "max": fmt.Sprint(limit)}).Apply(&f)
			return f
		}
		if j.Config.MaxMemory > 0 && j.Memory > uint64(float64(j.Config.MaxMemory)*(memPct/100)) {
			found = append(found, usage("memory", "max_memory_store", j.Memory, j.Config.MaxMemory))
		}
		if j.Config.MaxStorage > 0 && j.Storage > uint64(float64(j.Config.MaxStorage)*(storePct/100)) {
			found = append(found, usage("store", "max_file_store", j.Storage, j.Config.MaxStorage))
		}
	})
	return examples(found, warn)
}
