package html

import (
	"fmt"
	"math"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// History plot geometry: one SVG per client history, bars per bucket
// between histLeft and histRight, the nemesis windows shaded behind them.
const (
	histWidth  = 1200.0
	histLeft   = 56.0
	histRight  = 1184.0
	histTop    = 22.0  // room for the nemesis labels
	histPlotH  = 150.0 // the bars' full height
	histAxis   = 20.0  // the time axis below the bars
	histMinBar = 2.0   // a bar segment of any count is at least this tall
)

// historyView is one history's plot (report.ClientHistory).
type historyView struct {
	File, Stream, Reason string
	Judged               bool
	Totals               report.HistoryCounts
	Untimed              int
	Capped               bool
	NemesisOmitted       int64
	Height, BaseY        float64
	Bars                 []histBar
	Nemesis              []histNemesis
	Ticks                []tick
	YTicks               []histYTick
	Empty                bool
}

// histBar is one bucket: its stacked segments, and a title listing its
// counts and lost values.
type histBar struct {
	Index    int
	X, W     float64
	Title    string
	Segments []histSeg
}

type histSeg struct {
	Kind       string // ok, lost, unknown, fail
	Count      int
	X, W, Y, H float64
}

type histNemesis struct {
	Kind   string // window, open, instant
	F      string
	X, W   float64
	LabelX float64
	Label  string
	Title  string
}

type histYTick struct {
	Y     float64
	Label string
}

func buildHistories(r *report.Report) []historyView {
	var out []historyView
	for _, h := range r.Histories {
		out = append(out, buildHistory(h))
	}
	return out
}

func buildHistory(h report.ClientHistory) historyView {
	v := historyView{File: h.File, Reason: h.Reason, Judged: h.Judged, Totals: h.Totals, Untimed: h.Untimed,
		Capped: h.Capped, NemesisOmitted: h.NemesisOmitted, Height: histTop + histPlotH + histAxis + 4}
	if h.Stream != "" {
		v.Stream = h.Account + " > " + h.Stream
	}
	v.BaseY = histTop + histPlotH
	n := len(h.Buckets)
	if n == 0 || h.BucketNs <= 0 {
		v.Empty = true
		return v
	}
	span := float64(h.BucketNs) * float64(n)
	x := func(ns int64) float64 {
		f := (float64(ns) - float64(h.StartNs)) / span
		return histLeft + math.Max(0, math.Min(1, f))*(histRight-histLeft)
	}
	top := 0
	for _, b := range h.Buckets {
		top = max(top, b.OK+b.Lost+b.Unknown+b.Fail)
	}
	// Room for the minimum heights a bucket's four segments may add.
	scale := (histPlotH - 4*histMinBar) / float64(max(top, 1))
	w := (histRight - histLeft) / float64(n)
	for i, b := range h.Buckets {
		total := b.OK + b.Lost + b.Unknown + b.Fail
		if total == 0 {
			continue
		}
		bar := histBar{Index: i, X: histLeft + float64(i)*w, W: math.Max(w-0.6, 0.6)}
		y := v.BaseY
		// Lost on the axis, where the eye starts; then unknown, fail, ok.
		for _, s := range []struct {
			kind string
			n    int
		}{{"lost", b.Lost}, {"unknown", b.Unknown}, {"fail", b.Fail}, {"ok", b.OK}} {
			if s.n == 0 {
				continue
			}
			hgt := math.Max(float64(s.n)*scale, histMinBar)
			y -= hgt
			bar.Segments = append(bar.Segments, histSeg{Kind: s.kind, Count: s.n, X: bar.X, W: bar.W, Y: y, H: hgt})
		}
		from := h.StartNs + int64(i)*h.BucketNs
		var t strings.Builder
		fmt.Fprintf(&t, "%s – %s: %d ok, %d lost, %d unknown, %d fail", secs(from), secs(from+h.BucketNs), b.OK, b.Lost, b.Unknown, b.Fail)
		if len(b.LostValues) > 0 {
			fmt.Fprintf(&t, "\nlost: %s", strings.Join(b.LostValues, ", "))
			if b.LostOmitted > 0 {
				fmt.Fprintf(&t, " and %d more", b.LostOmitted)
			}
		}
		bar.Title = t.String()
		v.Bars = append(v.Bars, bar)
	}
	end := h.StartNs + int64(n)*h.BucketNs
	labelEnd := 0.0 // where the last label drawn ends: labels never overlap
	for _, nw := range h.Nemesis {
		hn := histNemesis{Kind: nw.Kind, F: nw.F, X: x(nw.StartNs), Label: nw.F}
		var t strings.Builder
		fmt.Fprintf(&t, ":%s at %s (index %d)", nw.F, secs(nw.StartNs), nw.StartIndex)
		if nw.Value != "" {
			fmt.Fprintf(&t, " %s", nw.Value)
		}
		switch {
		case nw.Kind == "window" && nw.StopNs != nil:
			hn.W = x(*nw.StopNs) - hn.X
			hn.Label = nw.F + " → " + nw.StopF
			fmt.Fprintf(&t, "\nhealed by :%s at %s (index %d)", nw.StopF, secs(*nw.StopNs), *nw.StopIndex)
			if nw.StopValue != "" {
				fmt.Fprintf(&t, " %s", nw.StopValue)
			}
		case nw.Kind == "open":
			hn.W = x(end) - hn.X
			t.WriteString("\nnever healed in the history")
		}
		if nw.StartNs < 0 {
			continue // no :time: nowhere on the axis
		}
		hn.W = math.Max(hn.W, 0)
		hn.LabelX = hn.X + 2
		if hn.LabelX < labelEnd {
			hn.Label = "" // its title still says it
		} else {
			labelEnd = hn.LabelX + 6*float64(len([]rune(hn.Label))) + 8
		}
		hn.Title = t.String()
		v.Nemesis = append(v.Nemesis, hn)
	}
	for _, s := range secondTicks(float64(h.StartNs)/1e9, float64(end)/1e9) {
		v.Ticks = append(v.Ticks, tick{X: x(int64(s * 1e9)), Label: trimSecs(s)})
	}
	for _, c := range countTicks(top) {
		v.YTicks = append(v.YTicks, histYTick{Y: v.BaseY - float64(c)*scale, Label: fmt.Sprint(c)})
	}
	return v
}

// secs says a history :time in seconds of the test.
func secs(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

func trimSecs(s float64) string {
	t := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", s), "0"), ".")
	return t + " s"
}

// secondTicks gives round times between lo and hi seconds, 1, 2 or 5 times
// a power of ten apart, some 6 to 12 of them.
func secondTicks(lo, hi float64) []float64 {
	span := hi - lo
	if span <= 0 {
		return []float64{lo}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/10)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 12 {
			step *= m
			break
		}
	}
	var out []float64
	for s := math.Ceil(lo/step) * step; s <= hi+step/1e6; s += step {
		out = append(out, s)
	}
	return out
}

// countTicks gives 0, top and a round count between.
func countTicks(top int) []int {
	if top <= 0 {
		return []int{0}
	}
	mid := top / 2
	if mid > 10 {
		p := int(math.Pow(10, math.Floor(math.Log10(float64(mid)))))
		mid = mid / p * p
	}
	out := []int{0}
	if mid > 0 && mid < top {
		out = append(out, mid)
	}
	return append(out, top)
}
