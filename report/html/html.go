// Package html renders a report as one self-contained HTML page: the
// summary, the findings with evidence and remedies, an SVG timeline with one
// lane per server, and a replica map per stream. The page loads nothing (no
// network, no script, no external asset), escapes all text through
// html/template, and draws at most a bounded number of SVG elements however
// long the timeline: dense events are drawn as counted aggregates.
//
// DOM hooks, for tests and for anyone scripting the page:
//   - svg#timeline g.lane[data-server=NAME]: one lane per server;
//   - #timeline [data-finding=I]: the marker of r.Findings[I] (I indexes the
//     report's findings as in the JSON); lanes carry ticks [data-finding-tick=I];
//   - article#finding-I[data-finding-card=I]: the finding's card;
//   - section.stream[data-stream="ACCOUNT > NAME"] g.replica[data-server=NAME],
//     with rect[data-finding=I] for a gap or divergence range;
//   - section#histories section.history[data-history=FILE] (data-ok, data-lost,
//     data-unknown, data-fail: the history's totals) svg g.hbar[data-bucket=I]
//     rect[data-kind=KIND][data-count=N], and g.nemesis[data-kind=KIND]: a
//     client history's plot (report.ClientHistory).
//
// It imports report only, no parser.
package html

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

//go:embed page.tmpl rehearsal.tmpl
var files embed.FS

var page = template.Must(template.New("page.tmpl").Funcs(template.FuncMap{
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"add": func(a, b float64) float64 {
		return a + b
	},
	"sub": func(a, b float64) float64 {
		return a - b
	},
	"add1": func(i int) int { return i + 1 },
	"odd":  func(i int) bool { return i%2 == 1 },
	// A first step's lines: each prose line a paragraph with its
	// backquoted spans as code, each run of commands a block.
	"steps": report.StepParts,
	"spans": report.CodeSpans,
}).ParseFS(files, "page.tmpl"))

// timeFormat is how the page prints a moment.
const timeFormat = "2006-01-02T15:04:05.000Z"

type pageView struct {
	Report         *report.Report
	Critical       int
	Warning        int
	Info           int
	Worst          string
	Timeline       timelineView
	Legend         []string
	Findings       []findingCard
	Streams        []streamView
	StreamsOmitted int
	Diagnosis      []causeView
	Tables         []tableView
	Histories      []historyView
}

// tableView is one of the report's tables (report.Tables: the columns every
// format shows), its rows bounded.
type tableView struct {
	*report.Table
	Omitted int
}

// maxTableRows bounds a table on the page; the JSON and xlsx hold them all.
const maxTableRows = 2000

func boundTable(t *report.Table) tableView {
	v := tableView{Table: t}
	if len(t.Rows) > maxTableRows {
		cut := *t
		cut.Rows = t.Rows[:maxTableRows]
		v = tableView{Table: &cut, Omitted: len(t.Rows) - maxTableRows}
	}
	return v
}

// findingPlaces names where a finding is from its row of the findings
// table: the server, group, peer, stream and file columns that are set.
func findingPlaces(t *report.Table, row []string) []string {
	var out []string
	for _, c := range []struct{ header, label string }{
		{"server", "server "}, {"group", "group "}, {"peer", "peer "}, {"stream", "stream "}, {"file", ""},
	} {
		for i, col := range t.Columns {
			if col.Header == c.header && i < len(row) && row[i] != "" {
				out = append(out, c.label+row[i])
			}
		}
	}
	return out
}

// causeView is one cause of the diagnosis: what happened, what to do
// first, the findings it links, and its timeline, shown here once.
type causeView struct {
	Index    int
	C        report.Cause
	Findings []causeFinding
	Excerpt  []excerptLine
	Omitted  int
}

type causeFinding struct {
	Index    int
	Code     string
	Severity string
}

// findingCard is one finding as shown in the findings list.
type findingCard struct {
	Index    int
	F        report.Finding
	Where    []string
	Facts    []string
	Ranges   string
	Excerpt  []excerptLine
	Omitted  int
	MarkedAt float64
	Cause    int // the diagnosis cause that shows its timeline, or -1
}

type excerptLine struct {
	Time, Server, Kind, Text, Where string
	// Skipped is how many events the excerpt leaves out before the line.
	Skipped int
}

// Write renders r as one HTML page.
func Write(w io.Writer, r *report.Report) error {
	counts := r.CountBySeverity()
	v := pageView{Report: r, Critical: counts[report.Critical], Warning: counts[report.Warning], Info: counts[report.Info],
		Legend: markOrder}
	v.Worst = r.Status().String()
	cards := make([]findingCard, len(r.Findings))
	for i, f := range r.Findings {
		cards[i] = newCard(r, i, f)
	}
	for ci, c := range r.Diagnosis {
		cv := causeView{Index: ci, C: c}
		for _, fi := range c.Findings {
			if fi < 0 || fi >= len(cards) {
				continue
			}
			cv.Findings = append(cv.Findings, causeFinding{Index: fi, Code: r.Findings[fi].Code, Severity: string(r.Findings[fi].Severity)})
			// The cause shows the chain's timeline once; its findings'
			// cards point there instead of repeating it.
			if len(c.TimelineRefs) > 0 && cards[fi].Cause < 0 {
				cards[fi].Cause, cards[fi].Excerpt, cards[fi].Omitted = ci, nil, 0
			}
		}
		cv.Excerpt, cv.Omitted = excerpt(r, c.TimelineRefs)
		v.Diagnosis = append(v.Diagnosis, cv)
	}
	v.Timeline = buildTimeline(r, cards)
	// Cards in the order of the other renderers: by severity, then code.
	sorted := report.SortedFindings(r.Findings)
	byIdentity := map[string][]int{}
	for i := range r.Findings {
		k := cardKey(r.Findings[i])
		byIdentity[k] = append(byIdentity[k], i)
	}
	// The card's "where" is the findings table's row (row k is sorted[k]),
	// so the page names places as the other formats do.
	ft := report.FindingsTable(r)
	for k, f := range sorted {
		key := cardKey(f)
		i := byIdentity[key][0]
		byIdentity[key] = byIdentity[key][1:]
		if k < len(ft.Rows) {
			cards[i].Where = findingPlaces(ft, ft.Rows[k])
		}
		v.Findings = append(v.Findings, cards[i])
	}
	for _, t := range report.Tables(r) {
		v.Tables = append(v.Tables, boundTable(t))
	}
	v.Streams, v.StreamsOmitted = buildStreams(r)
	v.Histories = buildHistories(r)
	return page.Execute(w, v)
}

// cardKey identifies a finding well enough to find it again after sorting;
// equal keys are taken in their original order, as the sort is stable.
func cardKey(f report.Finding) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s", f.Severity, f.Code, f.Server, f.File, f.Message)
}

func newCard(r *report.Report, i int, f report.Finding) findingCard {
	c := findingCard{Index: i, F: f, MarkedAt: -1, Cause: -1}
	if o := f.LikelyOrigin; o != nil {
		c.Facts = append(c.Facts, fmt.Sprintf("likely a corrupted copy of %s (%s), %d bit(s) away", o.Peer, o.Server, o.Bits))
	}
	if f.ClusterSize > 0 {
		s := fmt.Sprintf("cluster size %d, quorum %d", f.ClusterSize, f.Quorum)
		if f.Reachable != nil {
			s += fmt.Sprintf(", %d reachable", *f.Reachable)
		}
		c.Facts = append(c.Facts, s)
	}
	label := report.PeerLabeler(r)
	if len(f.Missing) > 0 {
		c.Facts = append(c.Facts, "missing: "+labelAll(label, f.Missing, ", "))
	}
	if len(f.Servers) > 0 {
		c.Facts = append(c.Facts, "servers: "+strings.Join(f.Servers, ", "))
	}
	if f.Messages != nil || f.Bytes != nil {
		var parts []string
		if f.Messages != nil {
			parts = append(parts, fmt.Sprintf("%d messages", *f.Messages))
		}
		if f.Bytes != nil {
			parts = append(parts, fmt.Sprintf("%d bytes", *f.Bytes))
		}
		c.Facts = append(c.Facts, "at stake: "+strings.Join(parts, ", "))
	}
	if f.Since != nil {
		c.Facts = append(c.Facts, "since "+f.Since.UTC().Format(timeFormat))
	}
	for _, sv := range f.Views {
		// A figure the view does not give is unknown, not 0.
		size, peers, term := "unknown", "unknown", "an unknown term"
		if sv.ClusterSize > 0 {
			size = fmt.Sprint(sv.ClusterSize)
		}
		if len(sv.Peers) > 0 {
			peers = labelAll(label, sv.Peers, " ")
		}
		if sv.Term > 0 {
			term = fmt.Sprintf("term %d", sv.Term)
		}
		s := fmt.Sprintf("view of %s: cluster size %s, peers %s", strings.Join(sv.Servers, ", "), size, peers)
		if sv.Leader != "" {
			s += fmt.Sprintf(", leader %s in %s", label(sv.Leader), term)
		}
		c.Facts = append(c.Facts, s)
	}
	var rs []string
	for _, rg := range f.Ranges {
		if rg.First == rg.Last {
			rs = append(rs, fmt.Sprint(rg.First))
		} else {
			rs = append(rs, fmt.Sprintf("%d-%d", rg.First, rg.Last))
		}
	}
	c.Ranges = strings.Join(rs, ", ")

	c.Excerpt, c.Omitted = excerpt(r, f.TimelineRefs)
	return c
}

// excerpt returns the newest n of the timeline events refs index, and how
// many older ones it left out.
func excerpt(r *report.Report, refs []int) ([]excerptLine, int) {
	lines, omitted := report.FoldExcerpt(r, refs)
	var out []excerptLine
	for _, l := range lines {
		e := l.Event
		where := e.File
		if e.Line > 0 {
			where += fmt.Sprintf(":%d", e.Line)
		}
		out = append(out, excerptLine{Time: e.Time.UTC().Format(timeFormat), Server: l.Server, Kind: e.Kind, Text: clip(l.Text, 240), Where: where, Skipped: l.Skipped})
	}
	return out, omitted
}

// clip shortens s to n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// labelAll labels each peer by name and id, joined by sep.
func labelAll(label func(string) string, ids []string, sep string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = label(id)
	}
	return strings.Join(out, sep)
}
