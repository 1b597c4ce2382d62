package html

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// Replica map geometry.
const (
	replicaLabel = 150.0
	replicaLeft  = replicaLabel
	replicaRight = 860.0
	replicaRowH  = 20.0
	replicaAxis  = 18.0
	// maxStreamsDrawn bounds the replica maps; streams with a replica
	// finding are always drawn, the rest up to this many.
	maxStreamsDrawn = 200
	// maxRangeMarks bounds the gap or divergence marks of one row: ranges
	// closer than a unit merge into one mark.
	maxRangeMarks = 400
)

type streamView struct {
	Key        string // "account > name", the data-stream hook
	Account    string
	Name       string
	Replicas   int
	AssignedTo string
	Height     float64
	Rows       []replicaRow
	Ticks      []tick
	Empty      string
	Findings   []int
}

type replicaRow struct {
	Server string
	Label  string
	Source string // "blocks" or "jsz"
	Y      float64
	BarX   float64
	BarW   float64
	NoData bool
	Text   string
	Title  string
	Marks  []rangeMark
}

type rangeMark struct {
	Index int // the finding, or -1
	Class string
	X, W  float64
	Title string
}

// buildStreams draws, per stream, which server holds which first..last
// range, with the replica-gap and replica-divergence findings' ranges on
// the rows they concern.
func buildStreams(r *report.Report) (views []streamView, omitted int) {
	byStream := map[string][]int{}
	for i, f := range r.Findings {
		if f.Code == "replica-gap" || f.Code == "replica-divergence" {
			k := f.Account + " > " + f.Stream
			byStream[k] = append(byStream[k], i)
		}
	}
	drawn := 0
	for _, st := range r.Streams {
		key := st.Account + " > " + st.Name
		if byStream[key] == nil && drawn >= maxStreamsDrawn {
			omitted++
			continue
		}
		drawn++
		views = append(views, buildStream(r, st, key, byStream[key]))
	}
	return views, omitted
}

func buildStream(r *report.Report, st report.Stream, key string, findings []int) streamView {
	v := streamView{Key: key, Account: st.Account, Name: st.Name, Replicas: st.Replicas, Findings: findings}
	if len(st.AssignedTo) > 0 {
		v.AssignedTo = strings.Join(st.AssignedTo, ", ")
	}
	copies := append(append([]report.OnDisk(nil), st.OnDisk...), st.Captured...)
	var lo, hi uint64
	have := false
	for _, c := range copies {
		if c.LastSeq < c.FirstSeq {
			continue
		}
		if !have || c.FirstSeq < lo {
			lo = c.FirstSeq
		}
		if !have || c.LastSeq > hi {
			hi = c.LastSeq
		}
		have = true
	}
	for _, i := range findings {
		for _, rg := range r.Findings[i].Ranges {
			if !have || rg.First < lo {
				lo = rg.First
			}
			if !have || rg.Last > hi {
				hi = rg.Last
			}
			have = true
		}
	}
	if len(copies) == 0 {
		v.Empty = "no copy on disk or in a capture"
	}
	// x maps sequence s to the left edge of its cell; hi+1 is the right end.
	span := float64(hi-lo) + 1
	x := func(s uint64) float64 {
		if s < lo {
			s = lo
		}
		return replicaLeft + (replicaRight-replicaLeft)*float64(s-lo)/span
	}
	for i, c := range copies {
		row := replicaRow{Server: c.Server, Source: c.Source, Y: replicaAxis + float64(i)*replicaRowH, Label: c.Server}
		if row.Source == "" {
			row.Source = "blocks"
		}
		if row.Source != "blocks" {
			row.Label += " (" + row.Source + ")"
		}
		if c.LastSeq < c.FirstSeq || !have {
			row.NoData = true
			row.Text = fmt.Sprintf("empty (first %d, last %d)", c.FirstSeq, c.LastSeq)
		} else {
			row.BarX = x(c.FirstSeq)
			row.BarW = max(x(c.LastSeq+1)-row.BarX, 1)
			row.Text = fmt.Sprintf("%d..%d · %d msgs", c.FirstSeq, c.LastSeq, c.Messages)
			if c.Deleted > 0 {
				row.Text += fmt.Sprintf(" · %d deleted", c.Deleted)
			}
		}
		row.Title = fmt.Sprintf("%s holds %s of %s (%s, %d bytes) %s", c.Server, row.Text, key, row.Source, c.Bytes, c.Path)
		if row.Source == "blocks" {
			for _, fi := range findings {
				f := r.Findings[fi]
				if !findingOnRow(f, c.Server) {
					continue
				}
				row.Marks = append(row.Marks, findingMarks(fi, f, x)...)
			}
			if len(c.Unreadable) > 0 {
				row.Marks = append(row.Marks, rangeMarks(c.Unreadable, x, -1, "unreadable",
					fmt.Sprintf("%s: records on disk that fail their checksum (not counted)", c.Server))...)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.Height = replicaAxis + float64(len(v.Rows))*replicaRowH + 4
	if have {
		for _, s := range seqTicks(lo, hi) {
			v.Ticks = append(v.Ticks, tick{X: x(s), Label: fmt.Sprint(s)})
		}
	}
	return v
}

// findingOnRow says whether a replica finding concerns a server's copy: a
// gap is on the server that lacks the range, a divergence on every server
// it names (all copies when it names none).
func findingOnRow(f report.Finding, server string) bool {
	if f.Code == "replica-gap" {
		return f.Server == server
	}
	if len(f.Servers) == 0 {
		return true
	}
	for _, s := range f.Servers {
		if s == server {
			return true
		}
	}
	return false
}

// findingMarks draws a replica finding's ranges on a row.
func findingMarks(idx int, f report.Finding, x func(uint64) float64) []rangeMark {
	class := "gap"
	if f.Code == "replica-divergence" {
		class = "diverge"
	}
	return rangeMarks(f.Ranges, x, idx, class, fmt.Sprintf("%s: %s", f.Code, clip(f.Message, 300)))
}

// rangeMarks draws sequence ranges as marks, merging those closer than a
// unit; idx is the finding they come from, or -1.
func rangeMarks(ranges []report.Range, x func(uint64) float64, idx int, class, title string) []rangeMark {
	rs := append([]report.Range(nil), ranges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].First < rs[j].First })
	var out []rangeMark
	for _, rg := range rs {
		x0, x1 := x(rg.First), x(rg.Last+1)
		if n := len(out); n > 0 && (x0 <= out[n-1].X+out[n-1].W+1 || n >= maxRangeMarks) {
			out[n-1].W = max(out[n-1].W, x1-out[n-1].X)
			continue
		}
		out = append(out, rangeMark{Index: idx, Class: class, X: x0, W: max(x1-x0, 2)})
	}
	for i := range out {
		out[i].Title = title
	}
	return out
}

// seqTicks gives the first and last sequence and a few round ones between.
func seqTicks(lo, hi uint64) []uint64 {
	out := []uint64{lo}
	if hi <= lo {
		return out
	}
	step := roundStep(hi - lo)
	for s := (lo/step + 1) * step; s < hi; s += step {
		if s-lo >= step/2 && hi-s >= step/2 {
			out = append(out, s)
		}
	}
	return append(out, hi)
}

// roundStep is the smallest of 1, 2, 5, 10, 20, 50… giving at most six steps over span.
func roundStep(span uint64) uint64 {
	for m := uint64(1); m < 1e18; m *= 10 {
		for _, k := range []uint64{1, 2, 5} {
			if span/(k*m) <= 6 {
				return k * m
			}
		}
	}
	return 1e18
}
