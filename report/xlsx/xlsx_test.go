package xlsx

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/jsforensics/jsforensics/report"
)

func TestWriteSheets(t *testing.T) {
	r := &report.Report{
		Servers:   []report.Server{{Name: "nats-0", PeerID: "S1Nunr6R", Sources: []string{"store"}}},
		Streams:   []report.Stream{{Account: "$G", Name: "ORDERS", OnDisk: []report.OnDisk{{Server: "nats-0", FirstSeq: 3, LastSeq: 9, Messages: 7, Bytes: 700}}}},
		Groups:    []report.Group{{Name: "_meta_", Kind: "meta", Views: []report.GroupView{{Server: "nats-0", ClusterSize: 10, Quorum: 6, Term: 1191202101440508490}}}},
		Findings:  []report.Finding{{Code: "store-corrupt", Severity: report.Critical, File: "a/1.blk", Offset: report.Ptr(int64(42)), Message: "bad", TimelineRefs: []int{0}}},
		Timeline:  []report.TimelineEvent{{Time: time.Date(2025, 1, 24, 10, 18, 45, 329000000, time.UTC), Server: "nats-0", Kind: "filestore-corrupt", Text: "bad block"}},
		Diagnosis: []report.Cause{{Summary: "bad block", Severity: report.Critical, Findings: []int{0}}},
	}
	f := writeAndOpen(t, r)
	defer f.Close()
	// Times are dates (a number shown in the date format), the finding
	// says when and which cause, the overview says what is not known.
	for _, c := range []struct{ sheet, cell string }{{SheetTimeline, "A2"}, {SheetFindings, "L2"}} {
		if typ, err := f.GetCellType(c.sheet, c.cell); err != nil || typ == excelize.CellTypeSharedString || typ == excelize.CellTypeInlineString {
			t.Errorf("%s!%s is %v (%v), want a date", c.sheet, c.cell, typ, err)
		}
		raw, _ := f.GetCellValue(c.sheet, c.cell, excelize.Options{RawCellValue: true})
		serial, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			t.Errorf("%s!%s holds %q, want a date serial", c.sheet, c.cell, raw)
			continue
		}
		// excelize reads dates back to the second only: the day and the
		// time of day, to the millisecond, are checked on the serial.
		day, err := excelize.ExcelDateToTime(math.Floor(serial), false)
		secs := (serial - math.Floor(serial)) * 86400
		if err != nil || day.Format("2006-01-02") != "2025-01-24" || math.Abs(secs-(10*3600+18*60+45.329)) > 0.001 {
			t.Errorf("%s!%s is %v + %.4fs (%v), want 2025-01-24 10:18:45.329", c.sheet, c.cell, day, secs, err)
		}
	}
	want := []string{SheetSummary, SheetFindings, SheetOverview, SheetServers, SheetStreams, SheetReplicas, SheetGroups, SheetPeerHistory, SheetTimeline}
	got := f.GetSheetList()
	if len(got) != len(want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sheets %v, want %v", got, want)
		}
	}
	check := func(sheet, cell, want string) {
		t.Helper()
		v, err := f.GetCellValue(sheet, cell)
		if err != nil || v != want {
			t.Errorf("%s!%s = %q (%v), want %q", sheet, cell, v, err, want)
		}
	}
	check(SheetFindings, "B2", "store-corrupt")
	check(SheetFindings, "M2", "cause 1")
	check(SheetOverview, "A2", "nats-0 (S1Nunr6R)")
	check(SheetOverview, "I2", "unknown")
	check(SheetFindings, "G2", "a/1.blk @42")
	check(SheetStreams, "E2", "nats-0")
	check(SheetStreams, "H2", "7")
	check(SheetGroups, "F2", "1191202101440508490")
	check(SheetGroups, "D2", "10")
	check(SheetServers, "B2", "S1Nunr6R")
	check(SheetReplicas, "C2", "nats-0")
	check(SheetReplicas, "G2", "7")
	check(SheetSummary, "A2", "diagnosis")
	check(SheetSummary, "D2", "1") // one finding in the cause
	check(SheetSummary, "A3", "counts")
	check(SheetSummary, "D3", "1") // one critical finding
}

// TestWorkbookLayout: every sheet has its header frozen, an autofilter
// over the table and columns sized to their content; the severity and
// outcome columns carry the conditional fills; the same report gives the
// same bytes.
func TestWorkbookLayout(t *testing.T) {
	r := &report.Report{
		Findings: []report.Finding{{Code: "store-corrupt", Severity: report.Critical, Message: "bad"}, {Code: "peer-unknown", Severity: report.Warning, Message: "m"}},
		Checks:   []report.CheckOutcome{{Code: "store-corrupt", Outcome: "failed", Findings: 1}, {Code: "acked-lost", Outcome: "skipped", Reason: "no ack log"}},
	}
	var a, b bytes.Buffer
	if err := Write(&a, r); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same report gave two different workbooks")
	}
	f := writeAndOpen(t, r)
	defer f.Close()
	for _, sh := range sheets(r) {
		panes, err := f.GetPanes(sh.name)
		if err != nil || !panes.Freeze || panes.YSplit != 1 || panes.TopLeftCell != "A2" {
			t.Errorf("%s: panes %+v (%v), want the header frozen", sh.name, panes, err)
		}
		w, err := f.GetColWidth(sh.name, "A")
		if err != nil || w < minWidth || w > wideWidth {
			t.Errorf("%s: column A width %v (%v)", sh.name, w, err)
		}
	}
	filters := 0
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" {
			filters++
		}
	}
	if filters != len(sheets(r)) {
		t.Errorf("%d sheets with a filter, want %d", filters, len(sheets(r)))
	}
	for sheet, col := range map[string]string{SheetFindings: "A2:A3", SheetSummary: "C2:C"} {
		cf, err := f.GetConditionalFormats(sheet)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for ref, rules := range cf {
			if strings.HasPrefix(ref, col) && len(rules) == 7 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: conditional formats %v, want 7 rules on %s", sheet, cf, col)
		}
	}
}

// TestSheetsShowTheReportTables: each sheet's header row is the header of
// its table (for Findings, Servers, Streams, Groups and Timeline the one
// every other format lays out), and it holds all its rows.
func TestSheetsShowTheReportTables(t *testing.T) {
	r := &report.Report{
		Servers:  []report.Server{{Name: "nats-0", Sources: []string{"store"}}, {Name: "nats-1", Sources: []string{"log"}}},
		Streams:  []report.Stream{{Account: "$G", Name: "ORDERS", OnDisk: []report.OnDisk{{Server: "nats-0"}, {Server: "nats-1"}}}},
		Findings: []report.Finding{{Code: "peer-unknown", Severity: report.Warning, Message: "m"}},
	}
	f := writeAndOpen(t, r)
	defer f.Close()
	shs := sheets(r)
	for i, sheet := range f.GetSheetList() {
		table := shs[i].table
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		want := table.Headers()
		if len(rows) == 0 || strings.Join(rows[0], "|") != strings.Join(want, "|") {
			t.Errorf("%s header %q, want %q", sheet, rows, want)
			continue
		}
		if len(rows)-1 != len(table.Rows) {
			t.Errorf("%s has %d rows, the table %d", sheet, len(rows)-1, len(table.Rows))
		}
	}
}

// writeAndOpen writes r as a workbook and reads it back.
func writeAndOpen(t *testing.T, r *report.Report) *excelize.File {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
