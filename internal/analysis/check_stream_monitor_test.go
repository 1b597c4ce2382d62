package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestStreamMonitorOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckStreamMonitor, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{}, capture.StreamConfig{Metadata: map[string]string{"_nats.req.level": "0"}})}
	}), "passed")
	wantVerdict(t, audit.CheckStreamMonitor, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{}, capture.StreamConfig{Metadata: map[string]string{"io.nats.monitor.enabled": "true"}})}
	}), "skipped")
}
