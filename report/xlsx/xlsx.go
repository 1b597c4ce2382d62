// Package xlsx exports a report as a spreadsheet for the incident review:
// a summary (diagnosis, counts, check outcomes), then one sheet per
// section, so support engineers can filter and sort findings, replicas,
// peer history and the timeline.
package xlsx

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/jsforensics/jsforensics/report"
)

// Sheet names, in the order they appear.
const (
	SheetSummary     = "Summary"
	SheetFindings    = "Findings"
	SheetOverview    = "Overview"
	SheetServers     = "Servers"
	SheetStreams     = "Streams"
	SheetReplicas    = "Replicas"
	SheetGroups      = "Groups"
	SheetPeerHistory = "PeerHistory"
	SheetTimeline    = "Timeline"
)

// sheet is one sheet and the table it shows.
type sheet struct {
	name  string
	table *report.Table
	// severity is the column (0-based) whose severity or outcome is
	// coloured, or -1.
	severity int
}

// sheets are the workbook's sheets in order: the summary for the incident
// review, the report's tables every format shows (report.FindingsTable,
// Tables, TimelineTable: the timeline as the report holds it, runs
// collapsed unless analyze ran with --timeline full), and the replicas and
// peer history only a workbook lays out.
func sheets(r *report.Report) []sheet {
	t := report.Tables(r) // overview, servers, streams, groups
	return []sheet{
		{SheetSummary, summaryTable(r), 2},
		{SheetFindings, report.FindingsTable(r), 0},
		{SheetOverview, t[0], -1},
		{SheetServers, t[1], -1},
		{SheetStreams, t[2], -1},
		{SheetReplicas, replicasTable(r), -1},
		{SheetGroups, t[3], -1},
		{SheetPeerHistory, peerHistoryTable(r), -1},
		{SheetTimeline, report.TimelineTable(r), -1},
	}
}

// Column widths, in characters: a column is as wide as its longest cell
// within these bounds; wide columns (free text) wrap at their width.
const (
	minWidth  = 6
	maxWidth  = 40
	wideWidth = 80
)

// Write renders r as an .xlsx workbook to w. Every sheet is written with
// excelize's StreamWriter (the timeline of a big bundle has many thousand
// rows), has its header row frozen and bold, an autofilter over the table,
// columns sized to their content, and severities coloured.
func Write(w io.Writer, r *report.Report) error {
	f := excelize.NewFile()
	defer f.Close()
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	for i, sh := range sheets(r) {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", sh.name); err != nil {
				return err
			}
		} else if _, err := f.NewSheet(sh.name); err != nil {
			return err
		}
		if err := writeSheet(f, sh, st); err != nil {
			return fmt.Errorf("sheet %s: %w", sh.name, err)
		}
	}
	return writeSorted(w, f)
}

// styles are the cell styles the sheets share.
type styles struct {
	header, wrap, date int
	// fill holds the conditional formats of severities and outcomes.
	fill map[string]int
}

func newStyles(f *excelize.File) (styles, error) {
	var st styles
	var err error
	if st.header, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true},
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9D9D9"}}}); err != nil {
		return st, err
	}
	if st.wrap, err = f.NewStyle(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}); err != nil {
		return st, err
	}
	// Times are UTC: the header says so, the cells are dates to sort and
	// subtract, shown to the millisecond.
	fmtDate := "yyyy-mm-dd hh:mm:ss.000"
	if st.date, err = f.NewStyle(&excelize.Style{CustomNumFmt: &fmtDate}); err != nil {
		return st, err
	}
	st.fill = map[string]int{}
	// In a fixed order: the styles' ids are in the file, which must be the
	// same for the same report.
	for _, c := range []struct{ value, color string }{{"critical", "F4B6B6"}, {"failed", "F4B6B6"}, {"not-run", "F4B6B6"},
		{"warning", "FCE4A8"}, {"skipped", "FCE4A8"}, {"info", "CFE2F3"}, {"passed", "D5EDD0"}} {
		id, err := f.NewConditionalStyle(&excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{c.color}}})
		if err != nil {
			return st, err
		}
		value := c.value
		st.fill[value] = id
	}
	return st, nil
}

func writeSheet(f *excelize.File, sh sheet, st styles) error {
	t := sh.table
	// The filter and the colours go on the sheet before the stream writer
	// takes it: set after Flush they would be lost (the streamed XML
	// replaces the sheet).
	last := len(t.Rows) + 1
	if err := f.AutoFilter(sh.name, fmt.Sprintf("A1:%s%d", colName(len(t.Columns)), last), nil); err != nil {
		return err
	}
	if sh.severity >= 0 && len(t.Rows) > 0 {
		col := colName(sh.severity + 1)
		var rules []excelize.ConditionalFormatOptions
		for _, value := range []string{"critical", "warning", "info", "failed", "not-run", "skipped", "passed"} {
			format := st.fill[value]
			rules = append(rules, excelize.ConditionalFormatOptions{Type: "cell", Criteria: "==", Value: `"` + value + `"`, Format: &format})
		}
		if err := f.SetConditionalFormat(sh.name, fmt.Sprintf("%s2:%s%d", col, col, last), rules); err != nil {
			return err
		}
	}
	sw, err := f.NewStreamWriter(sh.name)
	if err != nil {
		return err
	}
	// The stream writer takes widths and panes before the first row;
	// excelize puts each column set before the earlier ones, so they are set
	// last first to come out in order.
	for j := len(t.Columns) - 1; j >= 0; j-- {
		if t.Columns[j].Wide {
			if err := sw.SetColStyle(j+1, j+1, st.wrap); err != nil {
				return err
			}
		}
		if err := sw.SetColWidth(j+1, j+1, columnWidth(t, j)); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	hdr := make([]any, len(t.Columns))
	for j, h := range t.Headers() {
		hdr[j] = h
	}
	if err := sw.SetRow("A1", hdr, excelize.RowOpts{StyleID: st.header}); err != nil {
		return err
	}
	for j, row := range t.Rows {
		cells := make([]any, len(row))
		for k, v := range row {
			cells[k] = cellValue(t.Columns[k], v)
			if tm, ok := cells[k].(time.Time); ok {
				cells[k] = excelize.Cell{StyleID: st.date, Value: tm}
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, j+2)
		if err := sw.SetRow(cell, cells); err != nil {
			return fmt.Errorf("row %d: %w", j+2, err)
		}
	}
	return sw.Flush()
}

// columnWidth fits column j to its longest line (a wide column to
// wideWidth at most, where it wraps).
func columnWidth(t *report.Table, j int) float64 {
	w := len(t.Columns[j].Header) + 2 // room for the filter button
	for _, row := range t.Rows {
		for _, line := range strings.Split(row[j], "\n") {
			w = max(w, utf8.RuneCountInString(line)+1)
		}
	}
	limit := maxWidth
	if t.Columns[j].Wide {
		limit = wideWidth
	}
	return float64(min(max(w, minWidth), limit))
}

// maxExact is the largest integer a spreadsheet number (a float64) holds
// exactly; raft terms can exceed it and stay text.
const maxExact = 1 << 53

// cellValue is a number for a numeric column when it fits one exactly, a
// time for a time column, else the text.
func cellValue(c report.Column, v string) any {
	if c.Time {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UTC()
		}
		return v
	}
	if !c.Numeric {
		return v
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n <= maxExact && n >= -maxExact {
		return n
	}
	return v
}

func colName(n int) string {
	s, _ := excelize.ColumnNumberToName(n)
	return s
}

// writeSorted writes the workbook with its zip entries in name order:
// excelize writes them in map order, so the same report would give other
// bytes each run, and render of a saved report could not reproduce
// analyze's file. The entries are copied as they are, not recompressed.
func writeSorted(w io.Writer, f *excelize.File) error {
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		return err
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	zw := zip.NewWriter(w)
	for _, zf := range files {
		if err := zw.Copy(zf); err != nil {
			return err
		}
	}
	return zw.Close()
}
