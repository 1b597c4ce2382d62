package report

import (
	"io"
	"strings"
)

// WriteMarkdown writes the report as Markdown, for tickets and chat.
func WriteMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	counts := r.CountBySeverity()
	ew.printf("# jsforensics report\n\n")
	ew.printf("Bundle `%s`, tool %s: **%d critical**, %d warning, %d info findings; %d servers, %d streams, %d raft groups.\n",
		r.Bundle, r.ToolVersion, counts[Critical], counts[Warning], counts[Info], len(r.Servers), len(r.Streams), len(r.Groups))
	for _, n := range r.Notes {
		ew.printf("\n> %s\n", mdEscape(n))
	}

	ew.printf("\n## Findings\n\n")
	findings := FindingsTable(r)
	if len(findings.Rows) == 0 {
		ew.printf("None.\n")
	}
	for _, row := range findings.Rows {
		ew.printf("### %s `%s`%s\n\n%s\n\n", strings.ToUpper(row[findingSeverity]), row[findingCode], mdEscape(findingWhere(row)), mdEscape(row[findingMessage]))
		if row[findingEvidence] != "" {
			for _, e := range strings.Split(row[findingEvidence], "\n") {
				ew.printf("- %s\n", mdEscape(e))
			}
			ew.printf("\n")
		}
		if row[findingRemedy] != "" {
			ew.printf("Remedy:\n\n```\n%s\n```\n\n", row[findingRemedy])
		}
	}

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

// mdTable lays t out as a GitHub table under a second-level heading.
func mdTable(ew *errWriter, t *Table) {
	ew.printf("## %s\n\n", t.Title)
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
	s = strings.ReplaceAll(s, "|", `\|`)
	return mdEscape(strings.ReplaceAll(s, "\n", " "))
}

func mdEscape(s string) string {
	return strings.ReplaceAll(s, "<", "&lt;")
}
