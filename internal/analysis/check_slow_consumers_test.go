package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestSlowConsumersOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckSlowConsumers, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckSlowConsumers, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Varz[0].Varz.SlowConsumers = 4
	}), "warning")
}
