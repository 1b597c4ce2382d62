package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestStreamLimitsNearOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckStreamLimitsNear, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{Bytes: 119920, Messages: 5}, capture.StreamConfig{MaxBytes: -1, MaxMsgs: -1})}
	}), "passed")
	// The LOGS stream of the audit-gather fixture: 119920 of 120000 bytes.
	fs := wantVerdict(t, audit.CheckStreamLimitsNear, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{Bytes: 119920, Messages: 5, ConsumerCount: 10}, capture.StreamConfig{MaxBytes: 120000, MaxMsgs: 100, MaxConsumers: 10})}
	}), "warning")
	if len(fs) != 2 {
		t.Errorf("findings %+v", fs)
	}
}
