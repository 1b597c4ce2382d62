package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestGatewaysMismatchOnModel(t *testing.T) {
	c := audit.CheckGatewaysMismatch
	wantVerdict(t, c, gatherModel(nil), "passed")
	configured := capture.RemoteGatewayz{IsConfigured: true}
	learnt := capture.RemoteGatewayz{}
	// Every server names gateway west; a learnt one does not count.
	wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		for i := range g.Clusters[0].Servers {
			g.Clusters[0].Servers[i].Gatewayz[0].Gatewayz.Outbound["west"] = configured
		}
		g.Clusters[0].Servers[1].Gatewayz[0].Gatewayz.Outbound["south"] = learnt
	}), "passed")
	// n2 does not configure west: one outbound finding naming each server.
	fs := wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Gatewayz[0].Gatewayz.Outbound["west"] = configured
		g.Clusters[0].Servers[1].Gatewayz[0].Gatewayz.Outbound["west"] = learnt
		g.Clusters[0].Servers[2].Gatewayz[0].Gatewayz.Outbound["west"] = configured
	}), "critical")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "outbound gateways: n1: [west], n2: [], n3: [west]") {
		t.Errorf("findings %+v", fs)
	}
	// Inbound: a cluster counts when one of its connections is configured.
	fs = wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Gatewayz[0].Gatewayz.Inbound["west"] = []capture.RemoteGatewayz{learnt, configured}
	}), "critical")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "inbound") {
		t.Errorf("findings %+v", fs)
	}
	// A server without /gatewayz: natscli skips.
	wantVerdict(t, c, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[2].Gatewayz = nil }), "skipped")
}
