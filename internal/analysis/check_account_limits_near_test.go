package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

func TestAccountLimitsNearOnModel(t *testing.T) {
	c := audit.CheckAccountLimitsNear
	// No JWT (not operator mode): not judged, whatever the counts.
	wantVerdict(t, c, gatherModel(nil), "passed")
	// Limits set, usage at the threshold (90 % is not above it).
	wantVerdict(t, c, gatherModel(func(g *model.Gather) { accountLimits(g, 0, 9, 10, 90, 100) }), "passed")
	// Above 90 % of the connection limit on one server: WARN.
	fs := wantVerdict(t, c, gatherModel(func(g *model.Gather) { accountLimits(g, 0, 10, 10, 1, 100) }), "warning")
	if len(fs) != 1 || fs[0].Server != "n1" || !strings.Contains(fs[0].Message, "100.0% of its client connections limit (10/10)") {
		t.Errorf("findings %+v", fs)
	}
	// Above the subscription limit on one server, near on another: FAIL,
	// one finding each.
	fs = wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		accountLimits(g, 0, 1, 10, 101, 100)
		accountLimits(g, 2, 1, 10, 91, 100)
	}), "critical")
	if len(fs) != 2 {
		t.Errorf("%d findings, want 2: %+v", len(fs), fs)
	}
	// A limit of 0 or -1 is no limit.
	wantVerdict(t, c, gatherModel(func(g *model.Gather) { accountLimits(g, 0, 50, -1, 50, 0) }), "passed")
	// A lower threshold set by the user.
	m := gatherModel(func(g *model.Gather) { accountLimits(g, 0, 5, 10, 1, 100) })
	o, fs := auditVerdictWith(t, c, m, map[string]float64{c.Code + ".connections": 40})
	if o.Outcome != "failed" || len(fs) != 1 {
		t.Errorf("with connections 40 %%: %s, %d findings", o.Outcome, len(fs))
	}
}

// auditVerdictWith is auditVerdict with settings set by the user.
func auditVerdictWith(t *testing.T, c check.Check, m *model.Model, values map[string]float64) (report.CheckOutcome, []report.Finding) {
	t.Helper()
	fs, outs := runChecks(m, []check.Check{c}, defaultSettings(), values)
	if len(outs) != 1 {
		t.Fatalf("%d outcomes", len(outs))
	}
	return outs[0], fs
}
