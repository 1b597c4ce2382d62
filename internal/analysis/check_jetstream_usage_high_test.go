package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestJetStreamUsageHighOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckJetStreamUsageHigh, gatherModel(func(g *model.Gather) {
		j := g.Clusters[0].Servers[0].Jsz[0].Jsz
		j.Config.MaxStorage, j.Storage = 1000, 900 // at 90 %, not above
	}), "passed")
	fs := wantVerdict(t, audit.CheckJetStreamUsageHigh, gatherModel(func(g *model.Gather) {
		j := g.Clusters[0].Servers[0].Jsz[0].Jsz
		j.Config.MaxStorage, j.Storage = 1000, 901
		j.Config.MaxMemory, j.Memory = 1000, 950
	}), "warning")
	if len(fs) != 2 {
		t.Errorf("findings %+v", fs)
	}
}
