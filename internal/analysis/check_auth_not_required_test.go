package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestAuthNotRequiredOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckAuthNotRequired, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckAuthNotRequired, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[2].Varz[0].Varz.AuthRequired = false }), "warning")
}
