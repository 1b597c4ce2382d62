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
	if len(r.Findings) == 0 {
		ew.printf("None.\n")
	}
	for _, f := range SortedFindings(r.Findings) {
		ew.printf("### %s `%s`%s\n\n%s\n\n", strings.ToUpper(string(f.Severity)), f.Code, mdEscape(findingWhere(f)), mdEscape(f.Message))
		for _, e := range append(append([]string(nil), f.Evidence...), f.Events...) {
			ew.printf("- %s\n", mdEscape(e))
		}
		if len(f.Ranges) > 0 {
			ew.printf("- sequence ranges: %s\n", formatRanges(f.Ranges))
		}
		if len(f.Evidence)+len(f.Events)+len(f.Ranges) > 0 {
			ew.printf("\n")
		}
		if f.Remedy != "" {
			ew.printf("Remedy:\n\n```\n%s\n```\n\n", f.Remedy)
		}
	}

	ew.printf("## Servers\n\n| name | peer id | cluster | version | sources |\n|---|---|---|---|---|\n")
	for _, s := range r.Servers {
		ew.printf("| %s | `%s` | %s | %s | %s |\n", mdCell(s.Name), s.PeerID, mdCell(s.Cluster), mdCell(s.Version), strings.Join(s.Sources, ", "))
	}

	ew.printf("\n## Streams\n\n| account | stream | server | first | last | messages | bytes | deleted | assigned to |\n|---|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, st := range r.Streams {
		for _, d := range st.OnDisk {
			if d.Source == SourceSealed {
				ew.printf("| %s | %s | %s | sealed | | | | | %s |\n", mdCell(st.Account), mdCell(st.Name), mdCell(d.Server), mdCell(strings.Join(st.AssignedTo, ", ")))
				continue
			}
			ew.printf("| %s | %s | %s | %d | %d | %d | %d | %d | %s |\n", mdCell(st.Account), mdCell(st.Name), mdCell(d.Server),
				d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted, mdCell(strings.Join(st.AssignedTo, ", ")))
		}
		if len(st.OnDisk) == 0 {
			ew.printf("| %s | %s | – | | | | | | %s |\n", mdCell(st.Account), mdCell(st.Name), mdCell(strings.Join(st.AssignedTo, ", ")))
		}
	}

	ew.printf("\n## Raft groups\n\n| group | asset | server | size | quorum | term | peers | source |\n|---|---|---|--:|--:|--:|---|---|\n")
	for _, g := range r.Groups {
		asset := g.Kind
		if g.Asset != "" {
			asset = g.Account + " > " + g.Asset
		}
		for _, v := range g.Views {
			ew.printf("| %s | %s | %s | %d | %d | %d | %s | %s |\n", mdCell(g.Name), mdCell(asset), mdCell(v.Server),
				v.ClusterSize, v.Quorum, v.Term, mdCell(strings.Join(v.Peers, " ")), v.Source)
		}
	}

	if len(r.Timeline) > 0 {
		ew.printf("\n## Timeline\n\n| time | server | kind | text |\n|---|---|---|---|\n")
		for _, e := range r.Timeline {
			ew.printf("| %s | %s | %s | %s |\n", e.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), mdCell(e.Server), e.Kind, mdCell(clip(e.Summary(), 160)))
		}
	}
	return ew.err
}

// mdCell makes s safe inside a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func mdEscape(s string) string {
	return strings.ReplaceAll(s, "<", "&lt;")
}
