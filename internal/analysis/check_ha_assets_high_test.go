package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestHAAssetsHighOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckHAAssetsHigh, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckHAAssetsHigh, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz[0].Jsz.HAAssets = 1001 }), "warning")
	wantVerdict(t, audit.CheckHAAssetsHigh, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz = nil }), "skipped")
}
