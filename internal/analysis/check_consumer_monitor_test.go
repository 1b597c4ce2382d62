package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestConsumerMonitorOnModel(t *testing.T) {
	consumer := func(md map[string]string) func(g *model.Gather) {
		return func(g *model.Gather) {
			s := streamInfo("n1", capture.StreamState{}, capture.StreamConfig{})
			s.Info.Consumers = []capture.ConsumerInfo{{Name: "C", Cluster: &capture.ClusterInfo{Leader: "n1"}, Config: &capture.ConsumerConfig{Metadata: md}}}
			g.Streams = []capture.AuditStream{s}
		}
	}
	wantVerdict(t, audit.CheckConsumerMonitor, gatherModel(consumer(nil)), "passed")
	wantVerdict(t, audit.CheckConsumerMonitor, gatherModel(consumer(map[string]string{"io.nats.monitor.enabled": "true"})), "skipped")
}
