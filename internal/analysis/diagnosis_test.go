package analysis

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestDiagnosisHeadlinesBounded: on every committed fixture, each cause's
// headline (the first lines a reader sees) is at most diagnosis.MaxHeadline
// characters.
func TestDiagnosisHeadlinesBounded(t *testing.T) {
	var dirs []string
	for _, fx := range fixtures(t) {
		dirs = append(dirs, fx.forms[0])
	}
	perturbed, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "bundle"))
	dirs = append(dirs, perturbed...)
	causes := 0
	for _, dir := range dirs {
		for k, c := range analyze(t, dir).Diagnosis {
			causes++
			if n := utf8.RuneCountInString(c.Summary); n > diagnosis.MaxHeadline {
				t.Errorf("%s: cause %d: headline of %d characters, more than %d: %s", dir, k+1, n, diagnosis.MaxHeadline, c.Summary)
			}
		}
	}
	if causes < 20 {
		t.Fatalf("only %d causes over %d fixtures: the bound is hardly tried", causes, len(dirs))
	}
}

// TestDiagnosisHeadlineFoldsLists: the lists a headline builds are folded
// ("and K more") and a finding message longer than the bound is cut at a
// clause, saying so: 40 corrupt peer ids of one stream group, 30 orphaned
// streams of one server, 20 departed servers, 12 renamed ones, and a
// finding whose message alone is 2000 characters.
func TestDiagnosisHeadlineFoldsLists(t *testing.T) {
	var fs []report.Finding
	var missing []string
	for i := range 40 {
		id := fmt.Sprintf("bad%05d", i)
		missing = append(missing, id)
		fs = append(fs, report.Finding{Code: "peer-id-corrupt", Severity: report.Critical, Group: "S-R3F-big", Peer: id, Message: "corrupt " + id,
			LikelyOrigin: &report.Origin{Peer: "x", Server: fmt.Sprintf("server-%02d", i), Bits: 1}})
	}
	fs = append(fs, report.Finding{Code: "quorum-unreachable", Severity: report.Critical, Group: "S-R3F-big", Missing: missing, ClusterSize: 45, Quorum: 23, Reachable: report.Ptr(5), Message: "no quorum"})
	for i := range 30 {
		fs = append(fs, report.Finding{Code: "orphan-risk", Severity: report.Critical, Server: "n9", Account: "ACC", Stream: fmt.Sprintf("STREAM_%02d", i)})
	}
	for i := range 20 {
		fs = append(fs, report.Finding{Code: "peer-offline", Severity: report.Warning, Server: fmt.Sprintf("gone-%02d", i), Peer: fmt.Sprintf("gone%04d", i), Group: "_meta_"})
	}
	for i := range 12 {
		fs = append(fs, report.Finding{Code: "server-renamed", Severity: report.Critical, Server: fmt.Sprintf("new-%02d", i), Peer: fmt.Sprintf("old%05d", i),
			Message: fmt.Sprintf("server new-%02d is old-%02d renamed (old-%02d -> new-%02d): and more", i, i, i, i)})
	}
	long := "a finding whose message goes on; " + strings.Repeat("and on, ", 250) + "to its end"
	fs = append(fs, report.Finding{Code: "store-corrupt", Severity: report.Warning, Server: "n1", Message: long})
	got := diagnosis.Diagnose(fs)
	if len(got) != 5 {
		t.Fatalf("%d causes, want 5: %+v", len(got), got)
	}
	wants := []string{"40 corrupted peer id(s) (\"bad00000\"", "n9 stores 30 stream(s) (ACC > STREAM_00", "20 server(s) left without peer-remove (gone-00", "12 server(s) renamed in place", "a finding whose message goes on"}
	folds := []string{"and 34 more", "and 24 more", "and 14 more", "and 6 more", "(the rest in this cause's findings)"}
	for _, c := range got {
		if n := utf8.RuneCountInString(c.Summary); n > diagnosis.MaxHeadline {
			t.Errorf("headline of %d characters: %s", n, c.Summary)
		}
		k := slices.IndexFunc(wants, func(w string) bool { return strings.HasPrefix(c.Summary, w) })
		if k < 0 {
			t.Errorf("unexpected headline: %s", c.Summary)
			continue
		}
		if !strings.Contains(c.Summary, folds[k]) {
			t.Errorf("headline lacks %q: %s", folds[k], c.Summary)
		}
	}
	if c := got[len(got)-1]; strings.Contains(c.Summary, "to its end") || !strings.HasSuffix(c.Summary, "(the rest in this cause's findings)") {
		t.Errorf("long message not cut, or not said: %s", c.Summary)
	}
}
