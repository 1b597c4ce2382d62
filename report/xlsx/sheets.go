package xlsx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// The sheets only a workbook has, built as report.Tables like the others:
// a summary for the incident review, the replicas side by side, and each
// group's peer-set history.

// summaryTable holds what the review starts with: the diagnosis (what
// happened, what to do first), the counts, and each check's outcome. The
// state column holds a severity or an outcome, which the sheet colours.
func summaryTable(r *report.Report) *report.Table {
	t := &report.Table{Title: "Summary", Columns: []report.Column{
		{Header: "section"}, {Header: "item"}, {Header: "state"}, {Header: "count", Numeric: true},
		{Header: "what", Wide: true}, {Header: "first step", Wide: true},
	}}
	add := func(cells ...string) { t.Rows = append(t.Rows, cells) }
	for _, u := range r.UnjudgedHeadline() {
		add("could not judge", "", r.Status().String(), "", u, "")
	}
	for k, c := range r.Diagnosis {
		add("diagnosis", fmt.Sprintf("cause %d", k+1), string(c.Severity), fmt.Sprint(len(c.Findings)), c.Summary, c.FirstStep)
	}
	counts := r.CountBySeverity()
	for _, s := range []report.Severity{report.Critical, report.Warning, report.Info} {
		add("counts", "findings", string(s), fmt.Sprint(counts[s]), "", "")
	}
	for _, c := range []struct {
		item string
		n    int
	}{{"servers", len(r.Servers)}, {"streams", len(r.Streams)}, {"raft groups", len(r.Groups)}, {"timeline events", len(r.Timeline)}} {
		add("counts", c.item, "", fmt.Sprint(c.n), "", "")
	}
	for _, c := range r.Checks {
		what := c.Reason
		if len(c.Skipped) > 0 {
			what = strings.TrimPrefix(what+"; could not judge: "+strings.Join(c.Skipped, ", "), "; ")
		}
		add("check", c.Code, c.Outcome, fmt.Sprint(c.Findings), what, "")
	}
	add("report", "bundle", "", "", r.Bundle, "")
	add("report", "tool", "", "", r.ToolVersion, "")
	for _, n := range r.Notes {
		add("note", "", "", "", n, "")
	}
	return t
}

// replicasTable compares each stream's copies server by server: the
// figures of each copy, the sequences it lacks that another current
// replica holds (replica-gap: inside its range, and after its last), the
// sequences whose content differs between the copies (replica-divergence)
// and those on disk that fail their checksum.
func replicasTable(r *report.Report) *report.Table {
	t := &report.Table{Title: "Replicas", Columns: []report.Column{
		{Header: "account"}, {Header: "stream"}, {Header: "server"}, {Header: "source"},
		{Header: "first", Numeric: true}, {Header: "last", Numeric: true}, {Header: "messages", Numeric: true},
		{Header: "deleted", Numeric: true}, {Header: "gaps", Wide: true}, {Header: "behind", Wide: true},
		{Header: "divergence", Wide: true}, {Header: "unreadable", Wide: true},
	}}
	for _, st := range r.Streams {
		for _, d := range st.OnDisk {
			var gaps, behind, diverged []report.Range
			for _, f := range r.Findings {
				if f.Account != st.Account || f.Stream != st.Name {
					continue
				}
				switch {
				case f.Code == "replica-gap" && f.Server == d.Server && f.Kind == "behind":
					behind = append(behind, f.Ranges...)
				case f.Code == "replica-gap" && f.Server == d.Server:
					gaps = append(gaps, f.Ranges...)
				case f.Code == "replica-divergence" && slices.Contains(f.Servers, d.Server):
					diverged = append(diverged, f.Ranges...)
				}
			}
			row := []string{st.Account, st.Name, d.Server, d.Source, num(d.FirstSeq), num(d.LastSeq), num(d.Messages), num(d.Deleted),
				report.FormatRanges(gaps), report.FormatRanges(behind), report.FormatRanges(diverged), report.FormatRanges(d.Unreadable)}
			if d.Source == report.SourceSealed { // encrypted, no key: no figures
				for i := 4; i < 8; i++ {
					row[i] = ""
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// peerHistoryTable lists every group's history, oldest first within a
// group: peer-set changes, leaders and terms; peers by name and id.
func peerHistoryTable(r *report.Report) *report.Table {
	t := &report.Table{Title: "PeerHistory", Columns: []report.Column{
		{Header: "group"}, {Header: "asset"}, {Header: "time", Time: true}, {Header: "event"}, {Header: "term", Numeric: true},
		{Header: "index", Numeric: true}, {Header: "peer"}, {Header: "peers", Wide: true}, {Header: "server"}, {Header: "source"},
	}}
	label := report.PeerLabeler(r)
	for _, g := range r.Groups {
		asset := g.Kind
		if g.Asset != "" {
			asset = g.Account + " > " + g.Asset
		}
		for _, h := range g.History {
			peers := make([]string, len(h.Peers))
			for i, p := range h.Peers {
				peers[i] = label(p)
			}
			t.Rows = append(t.Rows, []string{g.Name, asset, report.FormatTime(h.Time), h.Event, optNum(h.Term), optNum(h.Index),
				label(h.Peer), strings.Join(peers, " "), h.Server, h.Source})
		}
	}
	return t
}

func num(n uint64) string { return strconv.FormatUint(n, 10) }

// optNum leaves a zero (not known) empty.
func optNum(n uint64) string {
	if n == 0 {
		return ""
	}
	return num(n)
}
