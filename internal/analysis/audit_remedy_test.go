package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// TestAuditChecksPrescribeRemedies: every audit check (a check with a
// natscli code) that can raise a warning or critical finding of its own
// gives it remedy steps, every parameter of them filled. The checks whose
// findings another check covers (CoveredBy) and those that only pass or
// skip are left out; every other one needs a model here that makes it
// fire.
func TestAuditChecksPrescribeRemedies(t *testing.T) {
	day := 24 * time.Hour
	onlyPassOrSkip := map[string]bool{
		audit.CheckConsumerMonitor.Code: true,
	}
	firing := map[string]struct {
		change func(g *model.Gather)
		want   string
	}{
		audit.CheckServerUnhealthy.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[1].Healthz[0].Healthz = &capture.Healthz{Status: "unavailable", StatusCode: 503}
		}, "warning"},
		audit.CheckVersionsMixed.Code: {func(g *model.Gather) { g.Clusters[0].Servers[2].Varz[0].Varz.Version = "2.14.10" }, "critical"},
		audit.CheckCPUHigh.Code:       {func(g *model.Gather) { g.Clusters[0].Servers[0].Varz[0].Varz.CPU = 190 }, "critical"},
		audit.CheckSlowConsumers.Code: {func(g *model.Gather) { g.Clusters[0].Servers[0].Varz[0].Varz.SlowConsumers = 4 }, "warning"},
		audit.CheckJetStreamUsageHigh.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[0].Varz[0].Varz.ServerID = "NSERVER1"
			j := g.Clusters[0].Servers[0].Jsz[0].Jsz
			j.Config.MaxStorage, j.Storage = 1000, 901
			j.Config.MaxMemory, j.Memory = 1000, 950
		}, "warning"},
		audit.CheckDomainWhitespace.Code: {func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz[0].Jsz.Config.Domain = "my hub" }, "warning"},
		audit.CheckAuthNotRequired.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[2].Varz[0].Varz.AuthRequired = false
			g.Clusters[0].Servers[2].Varz[0].Varz.ServerID = "NSERVER3"
		}, "warning"},
		audit.CheckTLSExpiring.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[0].Varz[0].Varz.Cluster.TLSCertNotAfter = gatherNow.Add(20 * day)
			g.Clusters[0].Servers[1].Varz[0].Varz.LeafNode.TLSCertNotAfter = gatherNow.Add(-day)
			g.Clusters[0].Servers[1].Varz[0].Varz.ServerID = "NSERVER2"
		}, "critical"},
		audit.CheckMemoryOutlier.Code:         {func(g *model.Gather) { g.Clusters[0].Servers[2].Varz[0].Varz.Mem = 400 << 20 }, "warning"},
		audit.CheckHAAssetsHigh.Code:          {func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz[0].Jsz.HAAssets = 1001 }, "warning"},
		audit.CheckClusterNameWhitespace.Code: {func(g *model.Gather) { g.Clusters[0].Name = "east 1" }, "critical"},
		audit.CheckSubjectsHigh.Code: {func(g *model.Gather) {
			g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{NumSubjects: 1_000_001}, capture.StreamConfig{})}
		}, "warning"},
		audit.CheckStreamLimitsNear.Code: {func(g *model.Gather) {
			g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{Bytes: 119920, Messages: 5, ConsumerCount: 10},
				capture.StreamConfig{MaxBytes: 120000, MaxMsgs: 100, MaxConsumers: 10})}
		}, "warning"},
		audit.CheckStreamMonitor.Code: {func(g *model.Gather) {
			g.Streams = []capture.AuditStream{streamInfo("n1", capture.StreamState{Messages: 3},
				capture.StreamConfig{Replicas: 1, Metadata: map[string]string{"io.nats.monitor.enabled": "true", "io.nats.monitor.msgs-critical": "5"}})}
		}, "critical"},
		audit.CheckAccountLimitsNear.Code: {func(g *model.Gather) { accountLimits(g, 1, 10, 10, 95, 100) }, "warning"},
		audit.CheckGatewaysMismatch.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[0].Gatewayz[0].Gatewayz.Outbound["west"] = capture.RemoteGatewayz{IsConfigured: true}
		}, "critical"},
		audit.CheckLeafnodeNameWhitespace.Code: {func(g *model.Gather) {
			g.Clusters[0].Servers[2].Leafz[0].Leafz.Leafs = []capture.LeafInfo{{Name: "leaf\t1", Account: "A"}}
		}, "critical"},
	}
	n := 0
	for _, c := range Checks {
		if c.NatscliCode == "" || c.CoveredBy != nil || onlyPassOrSkip[c.Code] {
			continue
		}
		n++
		fire, ok := firing[c.Code]
		if !ok {
			t.Errorf("%s (%s): no model here that makes it fire", c.Code, c.NatscliCode)
			continue
		}
		fs := wantVerdict(t, c, gatherModel(fire.change), fire.want)
		if len(fs) == 0 {
			t.Errorf("%s: no finding", c.Code)
		}
		for _, f := range fs {
			wantRemedy(t, c, f)
		}
	}
	if n != len(firing) {
		t.Errorf("%d audit checks prescribe remedies, %d models here", n, len(firing))
	}
}

// wantRemedy fails t unless finding f of audit check c, of severity
// warning or critical, has remedy steps with every parameter filled.
func wantRemedy(t *testing.T, c check.Check, f report.Finding) {
	t.Helper()
	if f.Severity != report.Warning && f.Severity != report.Critical {
		return
	}
	if len(f.RemedySteps) == 0 || f.RemedyID == "" {
		t.Errorf("%s (%s): %s finding with no remedy steps: %s", c.Code, c.NatscliCode, f.Severity, f.Message)
		return
	}
	hasVerify := false
	for _, s := range f.RemedySteps {
		hasVerify = hasVerify || s.Kind == "verify"
		for _, text := range append([]string{s.Text}, s.Commands...) {
			if strings.Contains(text, "{{") {
				t.Errorf("%s: remedy %s has a parameter not filled: %q", c.Code, f.RemedyID, text)
			}
		}
	}
	if !hasVerify {
		t.Errorf("%s: remedy %s has no verify step", c.Code, f.RemedyID)
	}
}
