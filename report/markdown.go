package report

import (
	"fmt"
	"io"
	"strings"
)

// MarkdownOptions change what the Markdown report shows.
type MarkdownOptions struct {
	// Verbose prints every finding's own timeline excerpt in full (see
	// TextOptions.Verbose).
	Verbose bool
	// Brief writes only what happened and what to do first (see
	// TextOptions.Brief).
	Brief bool
}

// WriteMarkdown writes the report as Markdown, for tickets and chat.
func WriteMarkdown(w io.Writer, r *Report) error { return WriteMarkdownWith(w, r, MarkdownOptions{}) }

// WriteMarkdownWith writes the report as Markdown: what happened and what
// to do first, the findings grouped by cause (each timeline excerpt once),
// then the tables.
func WriteMarkdownWith(w io.Writer, r *Report, o MarkdownOptions) error {
	ew := &errWriter{w: w}
	counts := r.CountBySeverity()
	ew.printf("# jsforensics report\n\n")
	ew.printf("## What happened, what to do first\n\n")
	unjudged := r.UnjudgedHeadline()
	for _, u := range unjudged {
		ew.printf("**Could not judge**: %s\n\n", mdEscape(u))
	}
	if len(r.Diagnosis) == 0 {
		if len(unjudged) > 0 {
			ew.printf("Not known: no critical or warning finding in what could be read.\n")
		} else {
			ew.printf("No critical or warning finding.\n")
		}
	}
	for k, c := range r.Diagnosis {
		if k > 0 {
			ew.printf("\n")
		}
		ew.printf("%d. **%s**: %s\n", k+1, c.Severity, mdEscape(c.Summary))
		if c.FirstStep != "" {
			ew.printf("\n")
			mdSteps(ew, "   ", "First: ", c.FirstStep)
		}
	}
	ew.printf("\nBundle `%s`, tool %s: **%d critical**, %d warning, %d info findings; %d servers, %d streams, %d raft groups.\n",
		r.Bundle, r.ToolVersion, counts[Critical], counts[Warning], counts[Info], len(r.Servers), len(r.Streams), len(r.Groups))
	if o.Brief {
		return ew.err
	}
	for _, n := range r.Notes {
		ew.printf("\n> %s\n", mdEscape(n))
	}

	ew.printf("\n## Findings\n\n")
	findings := FindingsTable(r)
	if len(findings.Rows) == 0 {
		ew.printf("None.\n")
	}
	l := layoutFindings(r, o.Verbose)
	finding := func(row int) {
		cells := findings.Rows[row]
		ew.printf("### %s `%s` #%d%s\n\n%s\n\n", strings.ToUpper(cells[findingSeverity]), cells[findingCode], l.ID[row], mdEscape(findingWhere(cells)), mdEscape(cells[findingMessage]))
		if cells[findingEvidence] != "" {
			for _, e := range strings.Split(cells[findingEvidence], "\n") {
				ew.printf("- %s\n", mdEscape(e))
			}
			ew.printf("\n")
		}
		switch sh := l.Shared[row]; {
		case sh != nil && sh.Rows[0] == row:
			ew.printf("Remedy for %s:\n\n", sh.IDs(l))
			mdSteps(ew, "", "", sh.Text)
			ew.printf("\n")
		case sh != nil:
			ew.printf("Remedy: the one under #%d, for %s.\n\n", l.ID[sh.Rows[0]], sh.IDs(l))
		case cells[findingRemedy] != "":
			ew.printf("Remedy:\n\n")
			mdSteps(ew, "", "", cells[findingRemedy])
			ew.printf("\n")
		}
		mdExcerpt(ew, r, l.Own[row])
	}
	l.visit(func(s causeSection) {
		ew.printf("### %s\n\n", mdEscape(causeHeading(r, s)))
		mdExcerpt(ew, r, s.Timeline)
	}, func() { ew.printf("### No cause linked\n\n") }, finding)

	for i, t := range Tables(r) {
		if i > 0 {
			ew.printf("\n")
		}
		mdTable(ew, t)
	}
	if len(r.Timeline) > 0 {
		ew.printf("\n")
		mdTable(ew, TimelineTable(r))
	}
	return ew.err
}

// mdSteps writes a remedy or a first step (StepParts): each line of prose a
// paragraph, wrapped by the reader, its backquoted commands as code spans;
// each run of commands a fenced code block, as typed. Every line starts
// with indent (a list item's continuation); lead comes before the first
// paragraph.
func mdSteps(ew *errWriter, indent, lead, s string) {
	for i, p := range StepParts(s) {
		if i > 0 {
			ew.printf("\n")
		}
		if p.Commands == nil {
			if i == 0 {
				ew.printf("%s%s%s\n", indent, mdEscape(lead), mdProse(p.Text))
			} else {
				ew.printf("%s%s\n", indent, mdProse(p.Text))
			}
			continue
		}
		fence := "```"
		for strings.Contains(strings.Join(p.Commands, "\n"), fence) {
			fence += "`"
		}
		ew.printf("%s%s\n", indent, fence)
		for _, c := range p.Commands {
			ew.printf("%s%s\n", indent, c)
		}
		ew.printf("%s%s\n", indent, fence)
	}
}

// mdProse escapes a line of prose but for its backquoted spans, which stay
// code spans.
func mdProse(s string) string {
	var b strings.Builder
	for i, part := range CodeSpans(s) {
		switch {
		case i%2 == 0:
			b.WriteString(mdEscape(part))
		case part == "":
			b.WriteString(mdEscape("``"))
		default:
			b.WriteString("`" + part + "`")
		}
	}
	return b.String()
}

// mdExcerpt prints an excerpt as a short table.
func mdExcerpt(ew *errWriter, r *Report, x excerpt) {
	if len(x.Lines) == 0 {
		return
	}
	ew.printf("Timeline%s:\n\n| time | server | kind | text |\n|---|---|---|---|\n", mdEscape(x.note()))
	for _, l := range x.Lines {
		if g := gapLine(l); g != "" {
			ew.printf("| | | | %s |\n", mdCell(g))
		}
		e := r.Timeline[l.Ref]
		server := e.Server
		if len(l.Servers) > 1 {
			server = fmt.Sprintf("%d servers", len(l.Servers))
		}
		ew.printf("| %s | %s | %s | %s |\n", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), mdCell(server), mdCell(e.Kind), mdCell(r.lineText(l)))
	}
	ew.printf("\n")
}

// mdTable lays t out as a GitHub table under a second-level heading.
func mdTable(ew *errWriter, t *Table) {
	ew.printf("## %s\n\n", mdEscape(t.Title))
	if len(t.Rows) == 0 {
		ew.printf("None.\n")
		return
	}
	ew.printf("|")
	for _, c := range t.Columns {
		ew.printf(" %s |", c.Header)
	}
	ew.printf("\n|")
	for _, c := range t.Columns {
		if c.Numeric {
			ew.printf("--:|")
		} else {
			ew.printf("---|")
		}
	}
	ew.printf("\n")
	for _, row := range t.Rows {
		ew.printf("|")
		for _, v := range row {
			ew.printf(" %s |", mdCell(v))
		}
		ew.printf("\n")
	}
}

// mdCell makes s safe inside a table cell.
func mdCell(s string) string {
	return mdEscape(strings.ReplaceAll(s, "\n", " "))
}

// mdSpecial are the characters that can start emphasis, code, links, HTML,
// entities, strikethrough or a table cell in CommonMark and GitHub's
// tables; a backslash before any ASCII punctuation is that character
// (CommonMark 0.31 §2.4), so escaping them keeps `_meta_` and `$G > ORDERS`
// as written in GitHub, Jira and Confluence.
var mdSpecial = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `|`, `\|`, `~`, `\~`, `&`, `\&`, `#`, `\#`, `!`, `\!`,
)

func mdEscape(s string) string { return mdSpecial.Replace(s) }
