package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestSubjectsHighOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckSubjectsHigh, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{NumSubjects: 1_000_000}, capture.StreamConfig{})}
	}), "passed")
	wantVerdict(t, audit.CheckSubjectsHigh, gatherModel(func(g *model.Gather) {
		g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{NumSubjects: 1_000_001}, capture.StreamConfig{})}
	}), "warning")
}
