package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/jsforensics/jsforensics/seqset"
)

// TextOptions are what a terminal adds to the text report. The zero value
// is the plain form with no width limit (the library's WriteText).
type TextOptions struct {
	// Color marks severities and table headers with ANSI colours.
	Color bool
	// Width, when above zero, is the width the report fits: prose wraps
	// at spaces, a table too wide folds its cells or stacks its rows, and
	// nothing is cut (see fit.go).
	Width int
	// Verbose prints every finding's own timeline excerpt in full, even
	// where a cause's excerpt above already showed the events.
	Verbose bool
	// Brief prints only what happened and what to do first: the
	// diagnosis, what could not be judged, and the counts.
	Brief bool

	// kindWidth is the kind column of timeline lines: the report's longest
	// kind, at most maxKindWidth (set by WriteTextWith).
	kindWidth int
}

// maxKindWidth bounds the kind column of a timeline line, so a kind longer
// than any the server's logs give (the longest, snapshot-install-failed,
// has 23 characters) leaves the text its room; a longer one is cut with …
// and its text still follows.
const maxKindWidth = 24

// kindColumn is the width of the kind column for r's timeline.
func kindColumn(r *Report) int {
	w := 0
	for _, e := range r.Timeline {
		w = max(w, textWidth(e.Kind))
	}
	return min(w, maxKindWidth)
}

// WriteText writes the plain text report (no colour, no width limit).
func WriteText(w io.Writer, r *Report) error { return WriteTextWith(w, r, TextOptions{}) }

// WriteTextWith writes the report for a person at a terminal: what
// happened and what to do first (the diagnosis), a summary line, the
// findings grouped by cause with their remedy and each timeline excerpt
// once, the tables (per-server overview, servers, streams, raft groups)
// in natscli's look, and the timeline.
func WriteTextWith(w io.Writer, r *Report, o TextOptions) error {
	ew := &errWriter{w: w}
	o.kindWidth = kindColumn(r)
	counts := r.CountBySeverity()
	o.para(ew, "", "  ", fmt.Sprintf("jsforensics %s: %s", r.ToolVersion, r.Bundle))
	o.diagnosis(ew, r)
	ew.printf("\n")
	o.para(ew, "", "", fmt.Sprintf("%d servers, %d streams, %d raft groups, %d timeline events; findings: %d critical, %d warning, %d info",
		len(r.Servers), len(r.Streams), len(r.Groups), len(r.Timeline), counts[Critical], counts[Warning], counts[Info]))
	if o.Brief {
		return ew.err
	}
	for _, n := range r.Notes {
		o.para(ew, "note: ", "  ", n)
	}

	ew.printf("\nFINDINGS\n")
	rows := FindingsTable(r).Rows
	if len(rows) == 0 {
		ew.printf("  none\n")
	}
	l := layoutFindings(r, o.Verbose)
	finding := func(row int) {
		cells := rows[row]
		ew.printf("\n")
		o.para(ew, "", "  ", o.severity(Severity(cells[findingSeverity]))+" "+cells[findingCode]+fmt.Sprintf(" #%d", l.ID[row])+findingWhere(cells))
		o.para(ew, "  ", "  ", cells[findingMessage])
		if cells[findingEvidence] != "" {
			for _, e := range strings.Split(cells[findingEvidence], "\n") {
				o.para(ew, "  - ", "    ", e)
			}
		}
		switch sh := l.Shared[row]; {
		case sh != nil && sh.Rows[0] == row:
			o.remedy(ew, "  remedy for "+sh.IDs(l)+": ", "    ", sh.Text)
		case sh != nil:
			o.para(ew, "  remedy: ", "    ", fmt.Sprintf("the one under #%d, for %s", l.ID[sh.Rows[0]], sh.IDs(l)))
		case cells[findingRemedy] != "":
			o.remedy(ew, "  remedy: ", "    ", cells[findingRemedy])
		}
		o.excerpt(ew, r, "  ", l.Own[row])
	}
	l.visit(func(s causeSection) {
		ew.printf("\n")
		o.para(ew, "── ", "   ", causeHeading(r, s))
		o.excerpt(ew, r, "  ", s.Timeline)
	}, func() { ew.printf("\n── no cause linked\n") }, finding)

	for _, t := range Tables(r) {
		ew.printf("\n")
		o.table(ew, t)
	}
	o.timeline(ew, r)
	return ew.err
}

// diagnosis prints what happened and what to do first, two lines a cause:
// the first lines a reader sees.
func (o TextOptions) diagnosis(ew *errWriter, r *Report) {
	unjudged := r.UnjudgedHeadline()
	for _, u := range unjudged {
		o.para(ew, "COULD NOT JUDGE: ", "  ", u)
	}
	if len(r.Diagnosis) == 0 {
		if len(unjudged) > 0 {
			o.para(ew, "", "  ", "WHAT HAPPENED: not known; no critical or warning finding in what could be read")
			return
		}
		ew.printf("WHAT HAPPENED: no critical or warning finding\n")
		return
	}
	ew.printf("WHAT HAPPENED, WHAT TO DO FIRST\n")
	for k, c := range r.Diagnosis {
		o.para(ew, fmt.Sprintf("%d. ", k+1), "   ", o.severity(c.Severity)+" "+c.Summary)
		if c.FirstStep != "" {
			o.remedy(ew, "   first: ", "   ", c.FirstStep)
		}
	}
}

// remedy prints a remedy's lines: its first after first, the others after
// rest; a line indented by two spaces is a command, kept whole for the
// shell (continued with a backslash where too wide).
func (o TextOptions) remedy(ew *errWriter, first, rest, s string) {
	for i, line := range strings.Split(s, "\n") {
		switch {
		case i == 0:
			o.para(ew, first, rest, line)
		case strings.HasPrefix(line, "  "):
			o.command(ew, rest+"  ", strings.TrimLeft(line, " "))
		default:
			o.para(ew, rest, rest, line)
		}
	}
}

// excerpt prints an excerpt's lines, one event or run a line (wrapped
// under its text).
func (o TextOptions) excerpt(ew *errWriter, r *Report, indent string, x excerpt) {
	if len(x.Lines) == 0 {
		return
	}
	o.para(ew, indent, indent+"  ", "timeline"+x.note()+":")
	for _, l := range x.Lines {
		if g := gapLine(l); g != "" {
			ew.printf("%s  %s\n", indent, g)
		}
		e := r.Timeline[l.Ref]
		server := e.Server
		if len(l.Servers) > 1 {
			server = fmt.Sprintf("%d servers", len(l.Servers))
		}
		o.event(ew, indent+"  ", e.Time, server, e.Kind, r.lineText(l))
	}
}

// event prints one timeline event: time, server, kind, then its text.
func (o TextOptions) event(ew *errWriter, indent string, t time.Time, server, kind, body string) {
	if textWidth(kind) > o.kindWidth {
		kind = string([]rune(kind)[:max(o.kindWidth-1, 0)]) + "…"
	}
	head := fmt.Sprintf("%s%s %-9s %s ", indent, t.UTC().Format("2006-01-02T15:04:05.000Z"), server, kind+strings.Repeat(" ", o.kindWidth-textWidth(kind)))
	if o.Width > 0 && textWidth(head)+longestWord(body) > o.Width {
		// Narrow: the text goes under the heading.
		ew.printf("%s\n", strings.TrimRight(head, " "))
		o.para(ew, indent+"    ", indent+"    ", body)
		return
	}
	rest := strings.Repeat(" ", textWidth(head))
	if o.Width > 0 && o.Width-textWidth(head) < 30 {
		rest = indent + "    "
	}
	o.para(ew, head, rest, body)
}

// timeline prints the whole timeline, oldest first, a run of routine
// events as one line that says how many and until when.
func (o TextOptions) timeline(ew *errWriter, r *Report) {
	ew.printf("\nTIMELINE (%d events)\n", len(r.Timeline))
	if len(r.Timeline) == 0 {
		ew.printf("  none\n")
	}
	for _, e := range r.Timeline {
		o.event(ew, "  ", e.Time, e.Server, e.Kind, e.Summary())
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

// SortedFindings orders findings by severity, then code, server, file.
func SortedFindings(in []Finding) []Finding {
	out := make([]Finding, len(in))
	for row, i := range findingOrder(in) {
		out[row] = in[i]
	}
	return out
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
