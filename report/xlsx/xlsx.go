// Package xlsx exports a report as a spreadsheet: one sheet per section, so
// support engineers can filter and sort findings, streams and the timeline.
package xlsx

import (
	"fmt"
	"io"
	"strings"

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

// Write renders r as an .xlsx workbook to w.
func Write(w io.Writer, r *report.Report) error {
	f := excelize.NewFile()
	defer f.Close()

	sheets := []struct {
		name   string
		header []string
		rows   [][]any
	}{
		{SheetFindings, []string{"severity", "code", "server", "group", "peer", "account", "stream", "consumer", "file", "offset", "seq", "message", "evidence", "remedy"}, findingRows(r)},
		{SheetServers, []string{"name", "peer_id", "cluster", "version", "sources", "name_source"}, serverRows(r)},
		{SheetStreams, []string{"account", "stream", "replicas", "group", "server", "first_seq", "last_seq", "messages", "bytes", "deleted", "assigned_to"}, streamRows(r)},
		{SheetGroups, []string{"group", "kind", "account", "asset", "server", "cluster_size", "quorum", "term", "voted_for", "peers", "source"}, groupRows(r)},
		{SheetTimeline, []string{"time", "server", "source", "kind", "group", "account", "stream", "text", "file", "line"}, timelineRows(r)},
	}
	for i, s := range sheets {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", s.name); err != nil {
				return err
			}
		} else if _, err := f.NewSheet(s.name); err != nil {
			return err
		}
		sw, err := f.NewStreamWriter(s.name)
		if err != nil {
			return err
		}
		hdr := make([]any, len(s.header))
		for j, h := range s.header {
			hdr[j] = h
		}
		if err := sw.SetRow("A1", hdr); err != nil {
			return err
		}
		for j, row := range s.rows {
			cell, _ := excelize.CoordinatesToCellName(1, j+2)
			if err := sw.SetRow(cell, row); err != nil {
				return fmt.Errorf("sheet %s row %d: %w", s.name, j+2, err)
			}
		}
		if err := sw.Flush(); err != nil {
			return err
		}
		if err := f.AutoFilter(s.name, fmt.Sprintf("A1:%s%d", colName(len(s.header)), len(s.rows)+1), nil); err != nil {
			return err
		}
	}
	return f.Write(w)
}

func colName(n int) string {
	s, _ := excelize.ColumnNumberToName(n)
	return s
}

func findingRows(r *report.Report) [][]any {
	var rows [][]any
	for _, f := range report.SortedFindings(r.Findings) {
		off := ""
		if f.Offset != nil {
			off = fmt.Sprint(*f.Offset)
		}
		seq := ""
		if f.Seq != 0 {
			seq = fmt.Sprint(f.Seq)
		}
		rows = append(rows, []any{string(f.Severity), f.Code, f.Server, f.Group, f.Peer, f.Account, f.Stream, f.Consumer, f.File, off, seq, f.Message, strings.Join(f.Evidence, "\n"), f.Remedy})
	}
	return rows
}

func serverRows(r *report.Report) [][]any {
	var rows [][]any
	for _, s := range r.Servers {
		rows = append(rows, []any{s.Name, s.PeerID, s.Cluster, s.Version, strings.Join(s.Sources, ","), s.NameSource})
	}
	return rows
}

func streamRows(r *report.Report) [][]any {
	var rows [][]any
	for _, st := range r.Streams {
		asg := strings.Join(st.AssignedTo, ",")
		if len(st.OnDisk) == 0 {
			rows = append(rows, []any{st.Account, st.Name, st.Replicas, st.Group, "", "", "", "", "", "", asg})
		}
		for _, d := range st.OnDisk {
			rows = append(rows, []any{st.Account, st.Name, st.Replicas, st.Group, d.Server, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted, asg})
		}
	}
	return rows
}

func groupRows(r *report.Report) [][]any {
	var rows [][]any
	for _, g := range r.Groups {
		for _, v := range g.Views {
			// Terms can exceed what a spreadsheet number holds exactly; keep them as text.
			rows = append(rows, []any{g.Name, g.Kind, g.Account, g.Asset, v.Server, v.ClusterSize, v.Quorum, fmt.Sprint(v.Term), v.VotedFor, strings.Join(v.Peers, " "), v.Source})
		}
	}
	return rows
}

func timelineRows(r *report.Report) [][]any {
	var rows [][]any
	for _, e := range r.Timeline {
		rows = append(rows, []any{e.Time.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), e.Server, e.Source, e.Kind, e.Group, e.Account, e.Stream, e.Summary(), e.File, e.Line})
	}
	return rows
}
