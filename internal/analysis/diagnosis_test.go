package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/diagnosis"
	"github.com/jsforensics/jsforensics/report"
)

// TestDiagnosisOfIncident000: the first incident's findings (five corrupt
// ids, quorum 6 of 10 with 5 servers, no meta leader) are one cause, which
// names every id, the three figures and the way out.
func TestDiagnosisOfIncident000(t *testing.T) {
	rep := analyze(t, bundlesDir+"/incident-000-captures/bundle")
	if len(rep.Diagnosis) != 1 {
		t.Fatalf("want one cause, got %d: %+v", len(rep.Diagnosis), rep.Diagnosis)
	}
	c := rep.Diagnosis[0]
	if c.Severity != report.Critical || len(c.Findings) != len(rep.Findings) {
		t.Errorf("cause %+v does not cover the %d findings", c, len(rep.Findings))
	}
	for _, f := range rep.Findings {
		if f.Code == "peer-id-corrupt" && !strings.Contains(c.Summary, f.Peer) {
			t.Errorf("summary lacks corrupt id %q: %s", f.Peer, c.Summary)
		}
	}
	for _, want := range []string{"to 10 peers", "quorum of 6", "with the 5 peers", "no leader"} {
		if !strings.Contains(c.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, c.Summary)
		}
	}
	// The first step is the remedy's save step and its first action, from
	// its structure: no removal is advised before the stores are saved.
	if !strings.Contains(c.FirstStep, "Save first: back up every server's store") || !strings.Contains(c.FirstStep, "temporary") {
		t.Errorf("first step: %s", c.FirstStep)
	}
	if !slices.IsSorted(c.TimelineRefs) || len(slices.Compact(slices.Clone(c.TimelineRefs))) != len(c.TimelineRefs) {
		t.Errorf("timeline refs not each once, in order: %v", c.TimelineRefs)
	}
}

// TestDiagnosisChains: on small finding lists, each chain takes exactly its
// findings (a missing or an extra one fails), and what no chain explains
// stands alone; info findings make no cause.
func TestDiagnosisChains(t *testing.T) {
	fs := []report.Finding{
		{Code: "unsafe-membership-change", Severity: report.Warning, Account: "A", Stream: "S", Message: "moved"},
		{Code: "replica-divergence", Severity: report.Critical, Account: "A", Stream: "S", Message: "differ", Remedy: "Keep every copy. Then more."},
		{Code: "replica-gap", Severity: report.Critical, Account: "A", Stream: "OTHER", Message: "gap"},
		{Code: "orphan-risk", Severity: report.Critical, Server: "n1", Account: "A", Stream: "X"},
		{Code: "orphan-risk", Severity: report.Critical, Server: "n1", Account: "A", Stream: "Y", Consumer: "C"},
		{Code: "orphan-risk", Severity: report.Critical, Server: "n2", Account: "A", Stream: "X"},
		{Code: "index-mismatch", Severity: report.Info, Message: "outdated"},
	}
	got := diagnosis.Diagnose(fs)
	want := [][]int{{0, 1}, {2}, {3, 4}, {5}}
	if len(got) != len(want) {
		t.Fatalf("causes %+v", got)
	}
	by := map[string]report.Cause{}
	for _, c := range got {
		by[fmtInts(c.Findings)] = c
	}
	for _, w := range want {
		if _, ok := by[fmtInts(w)]; !ok {
			t.Errorf("no cause with findings %v in %+v", w, got)
		}
	}
	if c := by[fmtInts([]int{0, 1})]; c.FirstStep != "Keep every copy." || c.Severity != report.Critical {
		t.Errorf("membership chain: first step is the divergence remedy's first sentence, severity critical: %+v", c)
	}
	if c := by[fmtInts([]int{3, 4})]; !strings.Contains(c.Summary, "1 stream(s) (A > X) and 1 consumer(s) (Y > C)") {
		t.Errorf("n1's orphans not named together: %q", c.Summary)
	}
}

func fmtInts(xs []int) string { return fmt.Sprint(xs) }
