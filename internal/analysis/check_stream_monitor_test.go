package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestStreamMonitorOnModel(t *testing.T) {
	c := audit.CheckStreamMonitor
	with := func(st capture.StreamState, cfg capture.StreamConfig, replicas ...capture.PeerInfo) *model.Model {
		return gatherModel(func(g *model.Gather) {
			s := streamInfo("n1", st, cfg)
			s.Info.Cluster.Replicas = replicas
			g.Streams = []capture.AuditStream{s}
		})
	}
	md := func(kv ...string) map[string]string {
		m := map[string]string{"io.nats.monitor.enabled": "true"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// No opt-in, or an opt-in asking for nothing: passed.
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Metadata: map[string]string{"_nats.req.level": "0"}}), "passed")
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Metadata: md()}), "passed")
	// Fewer messages than msgs-warn (natscli: "<= warn" warns).
	fs := wantVerdict(t, c, with(capture.StreamState{Messages: 10}, capture.StreamConfig{Replicas: 3, Metadata: md("io.nats.monitor.msgs-warn", "100", "io.nats.monitor.peer-expect", "3")},
		capture.PeerInfo{Name: "n2"}, capture.PeerInfo{Name: "n3"}), "warning")
	if len(fs) != 1 || fs[0].Message != "WARNING: stream S in A: 10 messages" {
		t.Errorf("findings %+v", fs)
	}
	// Two peers of the three expected, one offline: critical.
	fs = wantVerdict(t, c, with(capture.StreamState{Messages: 1000}, capture.StreamConfig{Replicas: 3, Metadata: md("io.nats.monitor.peer-expect", "2")},
		capture.PeerInfo{Name: "n2", Offline: true}), "critical")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "1 replicas offline") {
		t.Errorf("findings %+v", fs)
	}
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Replicas: 3, Metadata: md("io.nats.monitor.peer-expect", "3")},
		capture.PeerInfo{Name: "n2"}), "critical")
	// An R1 stream asked for peers is not clustered.
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Replicas: 1, Metadata: md("io.nats.monitor.peer-expect", "1")}), "critical")
	// A value that does not parse: natscli passes the stream over.
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Metadata: md("io.nats.monitor.msgs-critical", "many")}), "passed")
	// Source and mirror checks are not computed here.
	wantVerdict(t, c, with(capture.StreamState{}, capture.StreamConfig{Metadata: md("io.nats.monitor.lag-critical", "10")}), "skipped")
}
