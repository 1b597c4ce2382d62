package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
)

// maxRelatedEvents bounds the compact timeline printed under a critical
// finding: the newest events matter most, the JSON keeps them all.
const maxRelatedEvents = 8

// TextOptions are what a terminal adds to the text report. The zero value
// is the plain form written to files and pipes (and the golden files).
type TextOptions struct {
	// Color marks severities and table headers with ANSI colours.
	Color bool
	// Width, when above zero, is the terminal's width: wide columns wrap and
	// table rows are cut to it.
	Width int
}

// WriteText writes the plain text report (no colour, no width limit).
func WriteText(w io.Writer, r *Report) error { return WriteTextWith(w, r, TextOptions{}) }

// WriteTextWith writes the report for a person at a terminal: a summary
// line, findings by severity with their remedy, then the tables (servers,
// streams, raft groups) in natscli's look.
func WriteTextWith(w io.Writer, r *Report, o TextOptions) error {
	ew := &errWriter{w: w}
	counts := r.CountBySeverity()
	ew.printf("jsforensics %s: %s\n", r.ToolVersion, r.Bundle)
	ew.printf("%d servers, %d streams, %d raft groups, %d timeline events; findings: %d critical, %d warning, %d info\n",
		len(r.Servers), len(r.Streams), len(r.Groups), len(r.Timeline), counts[Critical], counts[Warning], counts[Info])
	for _, n := range r.Notes {
		ew.printf("note: %s\n", n)
	}

	ew.printf("\nFINDINGS\n")
	findings := SortedFindings(r.Findings)
	if len(findings) == 0 {
		ew.printf("  none\n")
	}
	for i, row := range FindingsTable(r).Rows {
		f := findings[i]
		ew.printf("\n%s %s%s\n", o.severity(f.Severity), row[findingCode], findingWhere(row))
		ew.printf("  %s\n", row[findingMessage])
		if row[findingEvidence] != "" {
			for _, e := range strings.Split(row[findingEvidence], "\n") {
				ew.printf("  - %s\n", e)
			}
		}
		if row[findingRemedy] != "" {
			ew.printf("  remedy: %s\n", indentLines(row[findingRemedy], "    "))
		}
		if f.Severity == Critical && len(f.TimelineRefs) > 0 {
			refs := f.TimelineRefs
			if len(refs) > maxRelatedEvents {
				ew.printf("  timeline (last %d of %d events):\n", maxRelatedEvents, len(refs))
				refs = refs[len(refs)-maxRelatedEvents:]
			} else {
				ew.printf("  timeline:\n")
			}
			for _, i := range refs {
				if i < 0 || i >= len(r.Timeline) {
					continue
				}
				e := r.Timeline[i]
				ew.printf("    %s %-8s %-16s %s\n", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Server, e.Kind, clip(e.Summary(), 100))
			}
		}
	}

	for _, t := range Tables(r) {
		ew.printf("\n")
		o.table(ew, t)
	}
	return ew.err
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
	out := append([]Finding(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() < b.Severity.Rank()
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		return a.File < b.File
	})
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

// formatRanges renders inclusive sequence ranges compactly.
func formatRanges(rs []Range) string {
	var parts []string
	for _, r := range rs {
		if r.First == r.Last {
			parts = append(parts, fmt.Sprint(r.First))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	return strings.Join(parts, ", ")
}

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
