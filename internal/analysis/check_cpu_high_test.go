package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestCPUHighOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckCPUHigh, gatherModel(nil), "passed")
	// 190 % over 2 cores is 95 %: above 90.
	fs := wantVerdict(t, audit.CheckCPUHigh, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Varz[0].Varz.CPU = 190
		g.Clusters[0].Servers[1].Varz[0].Varz.Cores = 0 // passed over
		g.Clusters[0].Servers[1].Varz[0].Varz.CPU = 500
	}), "critical")
	if len(fs) != 1 || fs[0].Server != "n1" {
		t.Errorf("findings %+v", fs)
	}
}
