package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// openWorkbook runs analyze --format xlsx on a fixture and reads the
// workbook back.
func openWorkbook(t *testing.T, fixture string, args ...string) *excelize.File {
	t.Helper()
	b := fileOut(t, append([]string{"analyze", filepath.Join(bundles, fixture, "bundle"), "--format", "xlsx"}, args...)...)
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestIncidentWorkbook: the first incident's workbook opens with the
// Summary (the cause, its first step, the counts and every check's
// outcome), and has the review's nine sheets, each with its header.
func TestIncidentWorkbook(t *testing.T) {
	f := openWorkbook(t, "incident-000-captures")
	want := "Summary Findings Overview Servers Streams Replicas Groups PeerHistory Timeline"
	if got := strings.Join(f.GetSheetList(), " "); got != want {
		t.Fatalf("sheets %s, want %s", got, want)
	}
	rows, err := f.GetRows("Summary")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], "|") != "section|item|state|count|what|first step" {
		t.Errorf("Summary header %q", rows[0])
	}
	cause := rows[1]
	if len(cause) < 6 || cause[0] != "diagnosis" || cause[2] != "critical" || cause[3] != "7" ||
		!strings.Contains(cause[4], "inflated raft group _meta_ to 10 peers") || !strings.Contains(cause[5], "Save first: back up every server's store") {
		t.Errorf("Summary row 2 %q, want the cause", cause)
	}
	outcomes := map[string]string{}
	for _, r := range rows[1:] {
		if len(r) > 2 && r[0] == "check" {
			outcomes[r[1]] = r[2]
		}
	}
	if outcomes["peer-id-corrupt"] != "failed" || outcomes["store-corrupt"] != "skipped" || outcomes["meta-split"] != "passed" || len(outcomes) < 14 {
		t.Errorf("check outcomes %v", outcomes)
	}
	findings, _ := f.GetRows("Findings")
	if len(findings) != 8 || findings[1][0] != "critical" {
		t.Errorf("Findings: %d rows, first %q", len(findings), findings[1])
	}
	for _, sheet := range f.GetSheetList() {
		if p, err := f.GetPanes(sheet); err != nil || !p.Freeze || p.YSplit != 1 {
			t.Errorf("%s: header not frozen (%+v, %v)", sheet, p, err)
		}
	}
}

// TestReplicasSheet: the scale-down fixture's lagging replica n5 shows the
// replica-gap range after its last sequence on its own row, and the
// membership fixture's diverged sequences show on every copy it compares.
func TestReplicasSheet(t *testing.T) {
	f := openWorkbook(t, "scaledown-v2.12.1")
	rows, _ := f.GetRows("Replicas")
	if strings.Join(rows[0], "|") != "account|stream|server|source|first|last|messages|deleted|gaps|behind|divergence|unreadable" {
		t.Fatalf("Replicas header %q", rows[0])
	}
	behind := 0
	for _, r := range rows[1:] {
		if len(r) > 9 && r[9] != "" {
			behind++
			if r[2] != "n5" {
				t.Errorf("behind on %s: %q", r[2], r)
			}
		}
	}
	if behind == 0 {
		t.Error("no replica shows the gap of the replica-gap finding")
	}
	f = openWorkbook(t, "membership-v2.12.1")
	rows, _ = f.GetRows("Replicas")
	diverged := 0
	for _, r := range rows[1:] {
		if len(r) > 10 && r[10] != "" {
			diverged++
		}
	}
	if diverged < 2 {
		t.Errorf("%d copies show the divergence, want every copy compared", diverged)
	}
	hist, _ := f.GetRows("PeerHistory")
	if len(hist) < 2 || hist[0][0] != "group" {
		t.Errorf("PeerHistory %d rows", len(hist))
	}
}

// TestTimelineSheetFull: --timeline full puts every event in the Timeline
// sheet, more rows than the runs collapsed by default.
func TestTimelineSheetFull(t *testing.T) {
	runs, _ := openWorkbook(t, "v2.10.22-incident-phantom-peers").GetRows("Timeline")
	full, _ := openWorkbook(t, "v2.10.22-incident-phantom-peers", "--timeline", "full").GetRows("Timeline")
	if len(full) <= len(runs) {
		t.Errorf("Timeline: %d rows in full, %d with runs", len(full), len(runs))
	}
}
