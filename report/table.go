package report

import (
	"fmt"
	"strings"
)

// The tables of a report are built here, once: headers and rows of
// strings (etcdutl's printer.go make*Table). The renderers (text,
// Markdown, report/xlsx) only lay them out, so every format shows the same
// columns in the same order.

// Column describes one column of a Table.
type Column struct {
	Header string
	// Numeric columns hold decimal integers (or are empty): right-aligned,
	// and numbers in a spreadsheet when they fit one exactly.
	Numeric bool
	// Key columns name the thing a row belongs to; a text table leaves them
	// blank where they repeat the row above (one stream, several servers).
	Key bool
	// Wide columns hold free text or lists; on a narrow terminal they wrap.
	Wide bool
}

// Table is one section of a report as rows of cells, one per column.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]string
}

// Headers returns the column headers.
func (t *Table) Headers() []string {
	h := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		h[i] = c.Header
	}
	return h
}

// Tables returns the report's tables in the order renderers show them.
// Findings and the timeline have tables of their own (FindingsTable,
// TimelineTable) because the text layouts show them differently.
func Tables(r *Report) []*Table {
	return []*Table{ServersTable(r), StreamsTable(r), GroupsTable(r)}
}

// ServersTable lists every server.
func ServersTable(r *Report) *Table {
	t := &Table{Title: "Servers", Columns: []Column{
		{Header: "name"}, {Header: "peer id"}, {Header: "cluster"}, {Header: "version"},
		{Header: "sources", Wide: true}, {Header: "name source"},
	}}
	for _, s := range r.Servers {
		t.Rows = append(t.Rows, []string{s.Name, s.PeerID, s.Cluster, s.Version, strings.Join(s.Sources, ", "), s.NameSource})
	}
	return t
}

// StreamsTable lists each stream once per server copy on disk (a stream
// with none gets one row with the server columns empty).
func StreamsTable(r *Report) *Table {
	t := &Table{Title: "Streams", Columns: []Column{
		{Header: "account", Key: true}, {Header: "stream", Key: true}, {Header: "replicas", Numeric: true, Key: true},
		{Header: "group", Key: true}, {Header: "server"}, {Header: "first", Numeric: true}, {Header: "last", Numeric: true},
		{Header: "messages", Numeric: true}, {Header: "bytes", Numeric: true}, {Header: "deleted", Numeric: true},
		{Header: "assigned to", Key: true, Wide: true},
	}}
	for _, st := range r.Streams {
		key := []string{st.Account, st.Name, num(uint64(st.Replicas)), st.Group}
		assigned := strings.Join(st.AssignedTo, ", ")
		if len(st.OnDisk) == 0 {
			t.Rows = append(t.Rows, append(append([]string(nil), key...), "", "", "", "", "", "", assigned))
		}
		for _, d := range st.OnDisk {
			if d.Source == SourceSealed { // encrypted, no key: no figures to show
				t.Rows = append(t.Rows, append(append([]string(nil), key...), d.Server, "sealed", "", "", "", "", assigned))
				continue
			}
			t.Rows = append(t.Rows, append(append([]string(nil), key...), d.Server, num(d.FirstSeq), num(d.LastSeq),
				num(d.Messages), num(d.Bytes), num(d.Deleted), assigned))
		}
	}
	return t
}

// GroupsTable lists each raft group once per server view (see tableViews).
func GroupsTable(r *Report) *Table {
	t := &Table{Title: "Raft groups", Columns: []Column{
		{Header: "group", Key: true}, {Header: "asset", Key: true}, {Header: "server"},
		{Header: "size", Numeric: true}, {Header: "quorum", Numeric: true}, {Header: "term", Numeric: true},
		{Header: "leader"}, {Header: "voted for"}, {Header: "peers", Wide: true}, {Header: "source"},
	}}
	for _, g := range r.Groups {
		asset := g.Kind
		if g.Asset != "" {
			asset = g.Account + " > " + g.Asset
		}
		for _, v := range tableViews(g.Views) {
			t.Rows = append(t.Rows, []string{g.Name, asset, v.Server, num(uint64(v.ClusterSize)), num(uint64(v.Quorum)),
				num(v.Term), v.Leader, v.VotedFor, strings.Join(v.Peers, " "), v.Source})
		}
	}
	return t
}

// Columns of FindingsTable, by position: the text layouts build a
// finding's heading from the "where" columns (server … file).
const (
	findingSeverity = iota
	findingCode
	findingServer
	findingGroup
	findingPeer
	findingStream
	findingFile
	findingKind
	findingMessage
	findingEvidence
	findingRemedy
)

// FindingsTable lists the findings, most severe first (SortedFindings):
// row i is SortedFindings(r.Findings)[i]. Evidence holds one item a line:
// the evidence, the events, and the sequence ranges.
func FindingsTable(r *Report) *Table {
	t := &Table{Title: "Findings", Columns: []Column{
		findingSeverity: {Header: "severity"}, findingCode: {Header: "code"}, findingServer: {Header: "server"},
		findingGroup: {Header: "group"}, findingPeer: {Header: "peer"}, findingStream: {Header: "stream"},
		findingFile: {Header: "file"}, findingKind: {Header: "kind"}, findingMessage: {Header: "message", Wide: true},
		findingEvidence: {Header: "evidence", Wide: true}, findingRemedy: {Header: "remedy", Wide: true},
	}}
	for _, f := range SortedFindings(r.Findings) {
		stream := ""
		if f.Stream != "" {
			stream = f.Account + " > " + f.Stream
			if f.Consumer != "" {
				stream += " > " + f.Consumer
			}
		}
		file := f.File
		if file != "" && f.Offset != nil {
			file += fmt.Sprintf(" @%d", *f.Offset)
		}
		if file != "" && f.Seq != 0 {
			file += fmt.Sprintf(" seq %d", f.Seq)
		}
		evidence := append(append([]string(nil), f.Evidence...), f.Events...)
		if len(f.Ranges) > 0 {
			evidence = append(evidence, "sequence ranges: "+FormatRanges(f.Ranges))
		}
		row := make([]string, len(t.Columns))
		row[findingSeverity], row[findingCode], row[findingServer], row[findingGroup] = string(f.Severity), f.Code, f.Server, f.Group
		row[findingPeer], row[findingStream], row[findingFile], row[findingKind] = f.Peer, stream, file, f.Kind
		row[findingMessage], row[findingEvidence], row[findingRemedy] = f.Message, strings.Join(evidence, "\n"), f.Remedy
		t.Rows = append(t.Rows, row)
	}
	return t
}

// findingWhere is the short "where" of a finding row for a heading line.
func findingWhere(row []string) string {
	var parts []string
	for _, w := range []struct {
		col   int
		label string
	}{{findingServer, "server "}, {findingGroup, "group "}, {findingPeer, "peer "}, {findingStream, "stream "}, {findingFile, ""}} {
		if row[w.col] != "" {
			parts = append(parts, w.label+row[w.col])
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}

// TimelineTable lists every timeline event, oldest first; a run of routine
// events is one row whose text says how many and until when.
func TimelineTable(r *Report) *Table {
	t := &Table{Title: "Timeline", Columns: []Column{
		{Header: "time"}, {Header: "server"}, {Header: "source"}, {Header: "kind"}, {Header: "group"},
		{Header: "stream"}, {Header: "text", Wide: true}, {Header: "file"},
	}}
	for _, e := range r.Timeline {
		stream := ""
		if e.Stream != "" {
			stream = e.Account + " > " + e.Stream
		}
		file := e.File
		if file != "" && e.Line > 0 {
			file += fmt.Sprintf(":%d", e.Line)
		}
		t.Rows = append(t.Rows, []string{e.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), e.Server, e.Source, e.Kind,
			e.Group, stream, e.Summary(), file})
	}
	return t
}

func num(n uint64) string { return fmt.Sprint(n) }
