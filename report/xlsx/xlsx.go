// Package xlsx exports a report as a spreadsheet: one sheet per section, so
// support engineers can filter and sort findings, streams and the timeline.
package xlsx

import (
	"fmt"
	"io"
	"strconv"

	"github.com/xuri/excelize/v2"

	"github.com/jsforensics/jsforensics/report"
)

// Sheet names, in the order they appear.
const (
	SheetFindings = "Findings"
	SheetServers  = "Servers"
	SheetStreams  = "Streams"
	SheetGroups   = "Groups"
	SheetTimeline = "Timeline"
)

// Write renders r as an .xlsx workbook to w: the report's tables
// (report.FindingsTable, Tables, TimelineTable), one sheet each, with the
// columns every other format shows.
func Write(w io.Writer, r *report.Report) error {
	f := excelize.NewFile()
	defer f.Close()

	names := []string{SheetFindings, SheetServers, SheetStreams, SheetGroups, SheetTimeline}
	for i, t := range sheetTables(r) {
		name := names[i]
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				return err
			}
		} else if _, err := f.NewSheet(name); err != nil {
			return err
		}
		sw, err := f.NewStreamWriter(name)
		if err != nil {
			return err
		}
		hdr := make([]any, len(t.Columns))
		for j, h := range t.Headers() {
			hdr[j] = h
		}
		if err := sw.SetRow("A1", hdr); err != nil {
			return err
		}
		for j, row := range t.Rows {
			cells := make([]any, len(row))
			for k, v := range row {
				cells[k] = cellValue(t.Columns[k], v)
			}
			cell, _ := excelize.CoordinatesToCellName(1, j+2)
			if err := sw.SetRow(cell, cells); err != nil {
				return fmt.Errorf("sheet %s row %d: %w", name, j+2, err)
			}
		}
		if err := sw.Flush(); err != nil {
			return err
		}
		if err := f.AutoFilter(name, fmt.Sprintf("A1:%s%d", colName(len(t.Columns)), len(t.Rows)+1), nil); err != nil {
			return err
		}
	}
	return f.Write(w)
}

// sheetTables are the report's tables in sheet order.
func sheetTables(r *report.Report) []*report.Table {
	tables := append([]*report.Table{report.FindingsTable(r)}, report.Tables(r)...)
	return append(tables, report.TimelineTable(r))
}

// maxExact is the largest integer a spreadsheet number (a float64) holds
// exactly; raft terms can exceed it and stay text.
const maxExact = 1 << 53

// cellValue is a number for a numeric column when it fits one exactly,
// else the text.
func cellValue(c report.Column, v string) any {
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
