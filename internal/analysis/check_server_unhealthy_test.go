package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestServerUnhealthyOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckServerUnhealthy, gatherModel(nil), "passed")
	fs := wantVerdict(t, audit.CheckServerUnhealthy, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[1].Healthz[0].Healthz = &capture.Healthz{Status: "unavailable", StatusCode: 503}
	}), "warning")
	if len(fs) != 1 || fs[0].Server != "n2" {
		t.Errorf("findings %+v", fs)
	}
	// A server without /healthz is passed over, as natscli does.
	wantVerdict(t, audit.CheckServerUnhealthy, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Healthz = nil }), "passed")
	wantVerdict(t, audit.CheckServerUnhealthy, &model.Model{}, "skipped")
}
