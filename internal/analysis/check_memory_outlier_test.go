package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestMemoryOutlierOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckMemoryOutlier, gatherModel(nil), "passed")
	// 100, 100, 400 MiB: the mean is 200, 400 is above 1.5 times it.
	fs := wantVerdict(t, audit.CheckMemoryOutlier, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[2].Varz[0].Varz.Mem = 400 << 20 }), "warning")
	if len(fs) != 1 || fs[0].Server != "n3" {
		t.Errorf("findings %+v", fs)
	}
	wantVerdict(t, audit.CheckMemoryOutlier, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[2].Varz = nil }), "skipped")
}
