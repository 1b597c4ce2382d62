package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestReplicaLaggingOnModel(t *testing.T) {
	streams := func(last1, last2, last3 uint64) func(g *model.Gather) {
		return func(g *model.Gather) {
			g.Streams = []capture.AuditStream{
				streamInfo("n1", capture.StreamState{LastSeq: last1}, capture.StreamConfig{}),
				streamInfo("n2", capture.StreamState{LastSeq: last2}, capture.StreamConfig{}),
				streamInfo("n3", capture.StreamState{LastSeq: last3}, capture.StreamConfig{})}
		}
	}
	wantVerdict(t, audit.CheckReplicaLagging, gatherModel(streams(100, 100, 90)), "passed") // 10 % behind: the limit
	fs := wantVerdict(t, audit.CheckReplicaLagging, gatherModel(streams(100, 100, 89)), "critical")
	if len(fs) != 1 || fs[0].Server != "n3" || fs[0].Stream != "S" {
		t.Errorf("findings %+v", fs)
	}
	wantVerdict(t, audit.CheckReplicaLagging, gatherModel(streams(0, 0, 0)), "passed")
}
