package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestVersionsMixedOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckVersionsMixed, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckVersionsMixed, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[2].Varz[0].Varz.Version = "2.14.10"
	}), "critical")
	wantVerdict(t, audit.CheckVersionsMixed, gatherModel(func(g *model.Gather) {
		for i := range g.Clusters[0].Servers {
			g.Clusters[0].Servers[i].Varz = nil
		}
	}), "skipped")
}
