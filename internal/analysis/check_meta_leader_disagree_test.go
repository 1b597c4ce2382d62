package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestMetaLeaderDisagreeOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckMetaLeaderDisagree, gatherModel(nil), "passed")
	wantVerdict(t, audit.CheckMetaLeaderDisagree, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[2].Jsz[0].Jsz.Meta.Leader = "n3" }), "critical")
	noLeader := func(g *model.Gather) { g.Clusters[0].Servers[2].Jsz[0].Jsz.Meta.Leader = "" }
	wantVerdict(t, audit.CheckMetaLeaderDisagree, gatherModel(noLeader), "critical")
	// Disabled JetStream is passed over.
	wantVerdict(t, audit.CheckMetaLeaderDisagree, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[2].Jsz[0].Jsz = &capture.Jsz{Disabled: true}
	}), "passed")
	// meta-no-leader on _meta_ covers it.
	byNoLeader := check.Check{Code: "meta-no-leader", Severity: report.Critical,
		Run: func(*check.Pass) []report.Finding {
			return []report.Finding{{Group: natsfmt.MetaGroup, Message: "no leader"}}
		}}
	fs, outs := runChecks(gatherModel(noLeader), []check.Check{byNoLeader, audit.CheckMetaLeaderDisagree}, defaultSettings(), nil)
	if o := outs[1]; o.Outcome != check.OutcomeFailed || o.Findings != 0 || len(o.CoveredBy) != 1 || len(fs) != 1 {
		t.Errorf("covered: outcome %+v, findings %+v", o, fs)
	}
}
