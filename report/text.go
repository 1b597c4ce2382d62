package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/jsforensics/jsforensics/seqset"
)

// maxRelatedEvents bounds the compact timeline printed under a critical
// finding outside --verbose: the newest events matter most, the JSON keeps
// them all.
const maxRelatedEvents = 8

// TextOptions are what a terminal adds to the text report. The zero value
// is the plain form written to files and pipes (and the golden files).
type TextOptions struct {
	// Color marks severities and table headers with ANSI colours.
	Color bool
	// Width, when above zero, is the terminal's width: wide columns wrap and
	// table rows are cut to it.
	Width int
	// Verbose prints every finding's own timeline excerpt in full, even
	// where a cause's excerpt above already showed the events.
	Verbose bool
}

// WriteText writes the plain text report (no colour, no width limit).
func WriteText(w io.Writer, r *Report) error { return WriteTextWith(w, r, TextOptions{}) }

// WriteTextWith writes the report for a person at a terminal: what
// happened and what to do first (the diagnosis), a summary line, the
// findings grouped by cause with their remedy and each timeline excerpt
// once, then the tables (servers, streams, raft groups) in natscli's look.
func WriteTextWith(w io.Writer, r *Report, o TextOptions) error {
	ew := &errWriter{w: w}
	counts := r.CountBySeverity()
	ew.printf("jsforensics %s: %s\n", r.ToolVersion, r.Bundle)
	o.diagnosis(ew, r)
	ew.printf("\n%d servers, %d streams, %d raft groups, %d timeline events; findings: %d critical, %d warning, %d info\n",
		len(r.Servers), len(r.Streams), len(r.Groups), len(r.Timeline), counts[Critical], counts[Warning], counts[Info])
	for _, n := range r.Notes {
		ew.printf("note: %s\n", n)
	}

	ew.printf("\nFINDINGS\n")
	rows := FindingsTable(r).Rows
	if len(rows) == 0 {
		ew.printf("  none\n")
	}
	l := layoutFindings(r, o.Verbose)
	finding := func(row int) {
		cells := rows[row]
		ew.printf("\n%s %s%s\n", o.severity(Severity(cells[findingSeverity])), cells[findingCode], findingWhere(cells))
		ew.printf("  %s\n", cells[findingMessage])
		if cells[findingEvidence] != "" {
			for _, e := range strings.Split(cells[findingEvidence], "\n") {
				ew.printf("  - %s\n", e)
			}
		}
		if cells[findingRemedy] != "" {
			ew.printf("  remedy: %s\n", indentLines(cells[findingRemedy], "    "))
		}
		textExcerpt(ew, r, "  ", l.Own[row], l.OwnElided[row])
	}
	l.visit(func(s causeSection) {
		ew.printf("\n── %s\n", causeHeading(r, s))
		textExcerpt(ew, r, "  ", s.Timeline, s.Elided)
	}, func() { ew.printf("\n── no cause linked\n") }, finding)

	for _, t := range Tables(r) {
		ew.printf("\n")
		o.table(ew, t)
	}
	return ew.err
}

// diagnosis prints what happened and what to do first, two lines a cause:
// the first lines a reader sees.
func (o TextOptions) diagnosis(ew *errWriter, r *Report) {
	unjudged := r.UnjudgedHeadline()
	for _, u := range unjudged {
		ew.printf("COULD NOT JUDGE: %s\n", u)
	}
	if len(r.Diagnosis) == 0 {
		if len(unjudged) > 0 {
			ew.printf("WHAT HAPPENED: not known; no critical or warning finding in what could be read\n")
			return
		}
		ew.printf("WHAT HAPPENED: no critical or warning finding\n")
		return
	}
	ew.printf("WHAT HAPPENED, WHAT TO DO FIRST\n")
	for k, c := range r.Diagnosis {
		ew.printf("%d. %s %s\n", k+1, o.severity(c.Severity), c.Summary)
		if c.FirstStep != "" {
			ew.printf("   first: %s\n", indentLines(c.FirstStep, "   "))
		}
	}
}

// textExcerpt prints the timeline events at refs, one a line.
func textExcerpt(ew *errWriter, r *Report, indent string, refs []int, elided int) {
	if len(refs) == 0 {
		return
	}
	ew.printf("%stimeline%s:\n", indent, excerptNote(len(refs), elided))
	for _, i := range refs {
		e := r.Timeline[i]
		ew.printf("%s  %s %-8s %-16s %s\n", indent, e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Server, e.Kind, clip(e.Summary(), 100))
	}
}

// severity is the upper-case severity, coloured on a terminal.
func (o TextOptions) severity(s Severity) string {
	word := strings.ToUpper(string(s))
	if !o.Color {
		return word
	}
	switch s {
	case Critical:
		return text.Colors{text.FgHiRed, text.Bold}.Sprint(word)
	case Warning:
		return text.FgYellow.Sprint(word)
	}
	return text.FgCyan.Sprint(word)
}

// table lays t out with go-pretty in natscli's style (rounded box, title
// above, headers as written); key columns are left blank where they repeat.
func (o TextOptions) table(w io.Writer, t *Table) {
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "%s: none\n", t.Title)
		return
	}
	tw := table.NewWriter()
	tw.SetStyle(table.StyleRounded)
	tw.Style().Title.Align = text.AlignCenter
	tw.Style().Format.Header = text.FormatDefault
	tw.SetTitle(t.Title)
	if o.Color {
		tw.Style().Color.Header = text.Colors{text.Bold}
		tw.Style().Color.Border = text.Colors{text.Faint}
		tw.Style().Color.Separator = text.Colors{text.Faint}
	}
	var cfg []table.ColumnConfig
	header := make(table.Row, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Header
		cc := table.ColumnConfig{Number: i + 1}
		if c.Numeric {
			cc.Align, cc.AlignHeader = text.AlignRight, text.AlignRight
		}
		if c.Wide && o.Width > 0 {
			cc.WidthMax = max(16, o.Width/4)
			cc.WidthMaxEnforcer = text.WrapSoft
		}
		cfg = append(cfg, cc)
	}
	tw.SetColumnConfigs(cfg)
	tw.AppendHeader(header)
	if o.Width > 0 {
		tw.Style().Size.WidthMax = o.Width
	}
	var prev []string
	for _, row := range t.Rows {
		cells := make(table.Row, len(row))
		repeats := prev != nil
		for i, c := range t.Columns {
			if repeats && c.Key && row[i] != prev[i] {
				repeats = false
			}
		}
		for i, v := range row {
			if repeats && t.Columns[i].Key {
				v = ""
			}
			cells[i] = v
		}
		tw.AppendRow(cells)
		prev = row
	}
	fmt.Fprintln(w, tw.Render())
}

// SortedFindings orders findings by severity, then code, server, file.
func SortedFindings(in []Finding) []Finding {
	out := make([]Finding, len(in))
	for row, i := range findingOrder(in) {
		out[row] = in[i]
	}
	return out
}

func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// FormatTime renders an optional time for tables.
func FormatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// errWriter keeps the first write error so renderers can write freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// FormatRanges renders inclusive sequence ranges compactly: "5, 12-20"
// (seqset.Format, the one formatter of ranges).
func FormatRanges(rs []Range) string { return seqset.Format(rs, 0) }

// tableViews keeps, for the text table, the views that list peers, and a
// peerless one (a /jsz or /varz summary) only for a server that has no
// other; the JSON keeps them all.
func tableViews(vs []GroupView) []GroupView {
	withPeers := map[string]bool{}
	for _, v := range vs {
		if len(v.Peers) > 0 {
			withPeers[v.Server] = true
		}
	}
	var out []GroupView
	seen := map[string]bool{}
	for _, v := range vs {
		if len(v.Peers) == 0 && (withPeers[v.Server] || seen[v.Server]) {
			continue
		}
		seen[v.Server] = true
		out = append(out, v)
	}
	return out
}
