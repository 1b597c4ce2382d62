package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestClusterNameWhitespaceOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckClusterNameWhitespace, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckClusterNameWhitespace, gatherModel(func(g *model.Gather) { g.Clusters[0].Name = "east 1" }), "critical")
}
