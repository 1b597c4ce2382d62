package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// maxRelatedEvents bounds the compact timeline printed under a critical
// finding: the newest events matter most, the JSON keeps them all.
const maxRelatedEvents = 8

// WriteText writes the report for a person at a terminal: a summary line,
// findings by severity with their remedy, then servers, streams, raft groups.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	counts := r.CountBySeverity()
	ew.printf("jsforensics %s: %s\n", r.ToolVersion, r.Bundle)
	ew.printf("%d servers, %d streams, %d raft groups, %d timeline events; findings: %d critical, %d warning, %d info\n",
		len(r.Servers), len(r.Streams), len(r.Groups), len(r.Timeline), counts[Critical], counts[Warning], counts[Info])
	for _, n := range r.Notes {
		ew.printf("note: %s\n", n)
	}

	ew.printf("\nFINDINGS\n")
	if len(r.Findings) == 0 {
		ew.printf("  none\n")
	}
	for _, f := range SortedFindings(r.Findings) {
		ew.printf("\n%s %s%s\n", strings.ToUpper(string(f.Severity)), f.Code, findingWhere(f))
		ew.printf("  %s\n", f.Message)
		for _, e := range f.Evidence {
			ew.printf("  - %s\n", e)
		}
		for _, e := range f.Events {
			ew.printf("  - %s\n", e)
		}
		if len(f.Ranges) > 0 {
			ew.printf("  - sequence ranges: %s\n", formatRanges(f.Ranges))
		}
		if f.Remedy != "" {
			ew.printf("  remedy: %s\n", indentLines(f.Remedy, "    "))
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

	ew.printf("\nSERVERS\n")
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  NAME\tPEER ID\tCLUSTER\tVERSION\tSOURCES\n")
	for _, s := range r.Servers {
		name := s.Name
		if s.NameSource == "unknown" {
			name += " (name not established)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", name, dash(s.PeerID), dash(s.Cluster), dash(s.Version), strings.Join(s.Sources, ","))
	}
	tw.Flush()

	ew.printf("\nSTREAMS\n")
	if len(r.Streams) == 0 {
		ew.printf("  none\n")
	} else {
		tw = tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  ACCOUNT\tSTREAM\tR\tSERVER\tFIRST\tLAST\tMESSAGES\tBYTES\tDELETED\tASSIGNED\t\n")
		for _, st := range r.Streams {
			assigned := strings.Join(st.AssignedTo, ",")
			if len(st.OnDisk) == 0 {
				fmt.Fprintf(tw, "  %s\t%s\t%d\t-\t\t\t\t\t\t%s\t\n", st.Account, st.Name, st.Replicas, dash(assigned))
			}
			for i, d := range st.OnDisk {
				acc, name, rep, asg := st.Account, st.Name, fmt.Sprint(st.Replicas), dash(assigned)
				if i > 0 {
					acc, name, rep, asg = "", "", "", ""
				}
				if d.Source == SourceSealed {
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tsealed\t\t\t\t\t%s\t\n", acc, name, rep, d.Server, asg)
					continue
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", acc, name, rep, d.Server, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted, asg)
			}
		}
		tw.Flush()
	}

	ew.printf("\nRAFT GROUPS\n")
	if len(r.Groups) == 0 {
		ew.printf("  none\n")
	} else {
		tw = tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  GROUP\tASSET\tSERVER\tSIZE\tQUORUM\tTERM\tPEERS\tSOURCE\n")
		for _, g := range r.Groups {
			asset := g.Kind
			if g.Asset != "" {
				asset = g.Account + " > " + g.Asset
			}
			for i, v := range tableViews(g.Views) {
				name, as := g.Name, asset
				if i > 0 {
					name, as = "", ""
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", name, as, v.Server, v.ClusterSize, v.Quorum, v.Term, strings.Join(v.Peers, " "), v.Source)
			}
		}
		tw.Flush()
	}
	return ew.err
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

// findingWhere is the short "where" of a finding for a heading line.
func findingWhere(f Finding) string {
	var parts []string
	if f.Server != "" {
		parts = append(parts, "server "+f.Server)
	}
	if f.Group != "" {
		parts = append(parts, "group "+f.Group)
	}
	if f.Peer != "" {
		parts = append(parts, "peer "+f.Peer)
	}
	if f.Stream != "" {
		s := "stream " + f.Account + " > " + f.Stream
		if f.Consumer != "" {
			s += " > " + f.Consumer
		}
		parts = append(parts, s)
	}
	if f.File != "" {
		s := f.File
		if f.Offset != nil {
			s += fmt.Sprintf(" @%d", *f.Offset)
		}
		if f.Seq != 0 {
			s += fmt.Sprintf(" seq %d", f.Seq)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return ""
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}

func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
