package report

import (
	"fmt"
	"slices"
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
	// Time columns hold RFC 3339 times in UTC (or are empty): dates in a
	// spreadsheet.
	Time bool
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
	return []*Table{OverviewTable(r), ServersTable(r), StreamsTable(r), GroupsTable(r)}
}

// OverviewTable is one row a server, as natscli's `nats server report
// jetstream`: whether it ran at the end of what the bundle shows, the
// meta leader marked, and what its store (or, without one, its captured
// /jsz) holds. A figure the bundle does not give is "unknown", never 0.
func OverviewTable(r *Report) *Table {
	t := &Table{Title: "Overview (* meta leader)", Columns: []Column{
		{Header: "server"}, {Header: "cluster"}, {Header: "state"}, {Header: "leader"},
		{Header: "streams", Numeric: true}, {Header: "consumers", Numeric: true}, {Header: "messages", Numeric: true},
		{Header: "bytes", Numeric: true}, {Header: "lag", Numeric: true}, {Header: "from"},
	}}
	n := newNamer(r)
	var meta *Group
	for i := range r.Groups {
		if r.Groups[i].Kind == "meta" {
			meta = &r.Groups[i]
			break
		}
	}
	// The meta leaders of the last moment, and the leader's commit index.
	var leaders []string
	var leaderCommit uint64
	if meta != nil {
		leaders = metaLeaders(n, meta.Views)
		for _, v := range meta.Views {
			if len(leaders) == 1 && n.same(v.Server, leaders[0]) && v.Commit > 0 {
				leaderCommit = max(leaderCommit, v.Commit)
			}
		}
	}
	for _, s := range r.Servers {
		row := []string{n.label(s.Name), s.Cluster, serverState(r, s.Name), unknown, unknown, unknown, unknown, unknown, unknown, ""}
		if meta != nil && len(leaders) == 0 {
			row[3] = "none named"
		}
		if len(leaders) > 0 {
			row[3] = ""
			if slices.ContainsFunc(leaders, func(l string) bool { return n.same(l, s.Name) }) {
				row[0] += "*"
				row[3] = "*"
			}
		}
		var streams, consumers, msgs, bytes uint64
		figures, sealed := "", false
		for _, from := range []string{"blocks", "jsz"} {
			if figures != "" {
				break
			}
			for _, st := range r.Streams {
				copies := st.OnDisk
				if from == "jsz" {
					copies = st.Captured
				}
				for _, d := range copies {
					if d.Server != s.Name || (from == "blocks" && d.Source == "jsz") {
						continue
					}
					figures = from
					streams++
					consumers += uint64(len(d.Consumers))
					if d.Source == SourceSealed {
						sealed = true
					}
					msgs += d.Messages
					bytes += d.Bytes
				}
			}
		}
		if figures == "" && slices.Contains(s.Sources, "store") {
			figures = "blocks"
		}
		if figures != "" {
			row[4], row[5], row[6], row[7], row[9] = num(streams), num(consumers), num(msgs), num(bytes), figures
			if figures == "jsz" {
				row[5] = unknown // /jsz per stream does not list consumers here
			}
			if sealed {
				row[6], row[7], row[9] = unknown, unknown, figures+", sealed copies not opened"
			}
		}
		if meta != nil && leaderCommit > 0 {
			for _, v := range meta.Views {
				if v.Server == s.Name && v.Applied > 0 {
					if v.Applied >= leaderCommit {
						row[8] = "0"
					} else {
						row[8] = num(leaderCommit - v.Applied)
					}
					break
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// metaLeaders are the meta leaders the overview marks: one per meta group
// at the last moment the bundle shows. Where captures date the views, each
// server counts with the leader its last capture names (none, when that
// said the group had no leader): a leader an earlier capture named is no
// leader at the end (acked-lost-v2.15.2: ack-2 led when the first /jsz
// were taken, ack-0 twenty seconds later when the last were), nor is one
// an undated view of a server with dated ones names. Servers whose last
// captures name different leaders are in different meta groups, each
// marked. Without any dated view, every leader a view names.
func metaLeaders(n namer, views []GroupView) []string {
	by := map[string][]GroupView{}
	dated := false
	for _, v := range views {
		by[v.Server] = append(by[v.Server], v)
		dated = dated || v.Time != nil
	}
	var out []string
	for _, v := range views {
		if v.Leader == "" {
			continue
		}
		if last, _ := lastMoment(by[v.Server]); dated && !atLast(v, last) {
			continue
		}
		if !slices.ContainsFunc(out, func(l string) bool { return n.same(l, v.Leader) }) {
			out = append(out, v.Leader)
		}
	}
	return out
}

// serverState is what the last dated sign of a server says: "stopped"
// after a logged stop, "running" after a start or a capture of its
// monitoring endpoints, "unknown" without either.
func serverState(r *Report, name string) string {
	state := unknown
	for _, e := range r.Timeline {
		if e.Server != name {
			continue
		}
		switch {
		case e.Kind == "stop":
			state = "stopped"
		case e.Kind == "start" || e.Source == "jsz" || e.Source == "varz" || e.Source == "healthz" || e.Source == "raftz":
			state = "running"
		}
	}
	return state
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
		acc := st.Account
		if st.AccountName != "" && st.AccountName != st.Account {
			acc = st.AccountName + " (" + st.Account + ")"
		}
		key := []string{acc, st.Name, num(uint64(st.Replicas)), st.Group}
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

// GroupsTable lists each raft group once per server: that server's views
// from every source merged (mergeViews), the sources listed, and when the
// last capture among them was answered; peers by name and id, the leader
// marked "*".
func GroupsTable(r *Report) *Table {
	t := &Table{Title: "Raft groups (* leader)", Columns: []Column{
		{Header: "group", Key: true}, {Header: "asset", Key: true}, {Header: "server"},
		{Header: "size", Numeric: true}, {Header: "quorum", Numeric: true}, {Header: "term", Numeric: true},
		{Header: "leader"}, {Header: "voted for"}, {Header: "peers", Wide: true}, {Header: "sources"},
		{Header: "captured", Time: true},
	}}
	n := newNamer(r)
	for _, g := range r.Groups {
		asset := g.Kind
		if g.Asset != "" {
			asset = g.Account + " > " + g.Asset
		}
		for _, v := range mergeViews(n, g.Views) {
			server := n.label(v.Server)
			if n.same(v.Server, v.leader) {
				server += "*"
			}
			t.Rows = append(t.Rows, []string{g.Name, asset, server, v.Size, v.Quorum, v.Term, v.Leader, v.VotedFor, v.Peers, strings.Join(v.Sources, ", "), v.Captured})
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
	findingTime
	findingCause
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
		findingTime: {Header: "time", Time: true}, findingCause: {Header: "cause"},
	}}
	n := newNamer(r)
	cause := map[int]int{} // finding index -> 1-based cause number
	for k, c := range r.Diagnosis {
		for _, i := range c.Findings {
			if _, ok := cause[i]; !ok {
				cause[i] = k + 1
			}
		}
	}
	order := findingOrder(r.Findings)
	for _, fi := range order {
		f := r.Findings[fi]
		stream := ""
		if f.Stream != "" {
			stream = f.AccountLabel() + " > " + f.Stream
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
		row[findingPeer], row[findingStream], row[findingFile], row[findingKind] = n.label(f.Peer), stream, file, f.Kind
		row[findingMessage], row[findingEvidence], row[findingRemedy] = f.Message, strings.Join(evidence, "\n"), f.Remedy
		row[findingTime] = findingTimeOf(r, f)
		if k, ok := cause[fi]; ok {
			row[findingCause] = fmt.Sprintf("cause %d", k)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// findingTimeOf is when a finding's evidence dates it: its Since, else its
// first timeline event; "" when nothing does.
func findingTimeOf(r *Report, f Finding) string {
	if f.Since != nil {
		return FormatTime(f.Since)
	}
	for _, i := range f.TimelineRefs {
		if i >= 0 && i < len(r.Timeline) {
			t := r.Timeline[i].Time
			return FormatTime(&t)
		}
	}
	return ""
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
		{Header: "time", Time: true}, {Header: "server"}, {Header: "source"}, {Header: "kind"}, {Header: "group"},
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
