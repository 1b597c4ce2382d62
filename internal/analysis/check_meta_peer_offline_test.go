package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/report"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestMetaPeerOfflineOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckMetaPeerOffline, gatherModel(nil), "passed")
	offline := func(g *model.Gather) {
		g.Clusters[0].Servers[0].Jsz[0].Jsz.Meta.Replicas = []capture.PeerInfo{{Name: "n2", Current: true}, {Name: "n3", Offline: true}}
	}
	fs := wantVerdict(t, audit.CheckMetaPeerOffline, gatherModel(offline), "critical")
	if len(fs) != 1 || fs[0].Server != "n3" {
		t.Errorf("findings %+v", fs)
	}
	wantVerdict(t, audit.CheckMetaPeerOffline, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz = nil }), "skipped")
	// peer-offline reporting n3 covers it: the outcome says so and the
	// finding is left out.
	m := gatherModel(offline)
	byPeerOffline := check.Check{Code: "peer-offline", Severity: report.Warning,
		Run: func(*check.Pass) []report.Finding { return []report.Finding{{Server: "n3", Message: "n3 is offline"}} }}
	fs, outs := runChecks(m, []check.Check{byPeerOffline, audit.CheckMetaPeerOffline}, defaultSettings(), nil)
	if o := outs[1]; o.Outcome != check.OutcomeFailed || o.Findings != 0 || len(o.CoveredBy) != 1 || o.CoveredBy[0] != "peer-offline" || len(fs) != 1 {
		t.Errorf("covered: outcome %+v, findings %+v", o, fs)
	}
}
