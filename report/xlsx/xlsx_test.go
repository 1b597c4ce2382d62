package xlsx

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/jsforensics/jsforensics/report"
)

func TestWriteSheets(t *testing.T) {
	r := &report.Report{
		Servers:  []report.Server{{Name: "nats-0", PeerID: "S1Nunr6R", Sources: []string{"store"}}},
		Streams:  []report.Stream{{Account: "$G", Name: "ORDERS", OnDisk: []report.OnDisk{{Server: "nats-0", FirstSeq: 3, LastSeq: 9, Messages: 7, Bytes: 700}}}},
		Groups:   []report.Group{{Name: "_meta_", Kind: "meta", Views: []report.GroupView{{Server: "nats-0", ClusterSize: 10, Quorum: 6, Term: 1191202101440508490}}}},
		Findings: []report.Finding{{Code: "store-corrupt", Severity: report.Critical, File: "a/1.blk", Offset: report.Ptr(int64(42)), Message: "bad"}},
	}
	f := writeAndOpen(t, r)
	defer f.Close()
	want := []string{SheetFindings, SheetServers, SheetStreams, SheetGroups, SheetTimeline}
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
	check(SheetFindings, "G2", "a/1.blk @42")
	check(SheetStreams, "E2", "nats-0")
	check(SheetStreams, "H2", "7")
	check(SheetGroups, "F2", "1191202101440508490")
	check(SheetGroups, "D2", "10")
	check(SheetServers, "B2", "S1Nunr6R")
}

// TestSheetsShowTheReportTables: each sheet's header row is the header of
// the report table every other format lays out, and it holds all its rows.
func TestSheetsShowTheReportTables(t *testing.T) {
	r := &report.Report{
		Servers:  []report.Server{{Name: "nats-0", Sources: []string{"store"}}, {Name: "nats-1", Sources: []string{"log"}}},
		Streams:  []report.Stream{{Account: "$G", Name: "ORDERS", OnDisk: []report.OnDisk{{Server: "nats-0"}, {Server: "nats-1"}}}},
		Findings: []report.Finding{{Code: "peer-unknown", Severity: report.Warning, Message: "m"}},
	}
	f := writeAndOpen(t, r)
	defer f.Close()
	tables := sheetTables(r)
	for i, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		want := tables[i].Headers()
		if len(rows) == 0 || strings.Join(rows[0], "|") != strings.Join(want, "|") {
			t.Errorf("%s header %q, want %q", sheet, rows, want)
			continue
		}
		if len(rows)-1 != len(tables[i].Rows) {
			t.Errorf("%s has %d rows, the table %d", sheet, len(rows)-1, len(tables[i].Rows))
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
