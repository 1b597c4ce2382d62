package html

import (
	"fmt"
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// Axis breaks: a bundle's logs often span days around an incident of
// minutes. A quiet stretch (no dated event) longer than a tenth of the span
// is cut out of the axis and drawn as a narrow break, so the busy periods
// keep the width.
const (
	breakWidth   = 16.0
	maxBreaks    = 6
	breakShare   = 0.10 // a gap must exceed this share of the whole span
	minPiece     = 40.0 // the narrowest a busy period is drawn
	tickSpacing  = 110.0
	minBreakSpan = time.Minute
)

// timeScale maps times to x: linear on each busy piece, the gaps between
// pieces squeezed into breaks.
type timeScale struct {
	t0, t1 time.Time
	pieces []piece
}

type piece struct {
	from, to time.Time
	x0, x1   float64
}

type axisBreak struct {
	X     float64
	Label string
}

func (s timeScale) x(t time.Time) float64 {
	ps := s.pieces
	i := sort.Search(len(ps), func(i int) bool { return !ps[i].to.Before(t) })
	if i == len(ps) {
		return ps[len(ps)-1].x1
	}
	p := ps[i]
	if t.Before(p.from) {
		// In the gap before piece i: spread over the break.
		prev := ps[i-1]
		f := float64(t.Sub(prev.to)) / float64(p.from.Sub(prev.to))
		return prev.x1 + (p.x0-prev.x1)*f
	}
	d := p.to.Sub(p.from)
	if d <= 0 {
		return (p.x0 + p.x1) / 2
	}
	return p.x0 + (p.x1-p.x0)*float64(t.Sub(p.from))/float64(d)
}

func newTimeScale(r *report.Report) (timeScale, bool) {
	var times []time.Time
	for _, e := range r.Timeline {
		if !e.Time.IsZero() {
			times = append(times, e.Time)
		}
		if e.Until != nil && !e.Until.IsZero() {
			times = append(times, *e.Until)
		}
	}
	for _, g := range r.Groups {
		for _, h := range g.History {
			if h.Time != nil && !h.Time.IsZero() {
				times = append(times, *h.Time)
			}
		}
	}
	for _, f := range r.Findings {
		if f.Since != nil && !f.Since.IsZero() {
			times = append(times, *f.Since)
		}
	}
	if len(times) == 0 {
		return timeScale{}, false
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	s := timeScale{t0: times[0], t1: times[len(times)-1]}
	if !s.t1.After(s.t0) {
		s.t1 = s.t0.Add(time.Second)
	}
	span := s.t1.Sub(s.t0)

	// The longest quiet stretches, in time order.
	type gap struct{ from, to time.Time }
	var gaps []gap
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d > minBreakSpan && float64(d) > breakShare*float64(span) {
			gaps = append(gaps, gap{times[i-1], times[i]})
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].to.Sub(gaps[i].from) > gaps[j].to.Sub(gaps[j].from) })
	if len(gaps) > maxBreaks {
		gaps = gaps[:maxBreaks]
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].from.Before(gaps[j].from) })

	from := s.t0
	for _, g := range gaps {
		s.pieces = append(s.pieces, piece{from: from, to: g.from})
		from = g.to
	}
	s.pieces = append(s.pieces, piece{from: from, to: s.t1})
	var busy time.Duration
	for _, p := range s.pieces {
		busy += p.to.Sub(p.from)
	}
	width := plotWidth - breakWidth*float64(len(gaps))
	spare := width - minPiece*float64(len(s.pieces))
	x := plotLeft
	for i := range s.pieces {
		p := &s.pieces[i]
		w := width / float64(len(s.pieces))
		if busy > 0 {
			w = minPiece + spare*float64(p.to.Sub(p.from))/float64(busy)
		}
		p.x0, p.x1 = x, x+w
		x += w + breakWidth
	}
	return s, true
}

// breaks are the cut quiet stretches, each labelled with its length.
func (s timeScale) breaks() []axisBreak {
	var out []axisBreak
	for i := 1; i < len(s.pieces); i++ {
		prev, p := s.pieces[i-1], s.pieces[i]
		out = append(out, axisBreak{X: (prev.x1 + p.x0) / 2, Label: shortDuration(p.from.Sub(prev.to))})
	}
	return out
}

func shortDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= 2*time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// tickSteps are the round steps an axis piece may use.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// ticks picks, per piece, a round step giving a tick about every
// tickSpacing units.
func (s timeScale) ticks() []tick {
	var out []tick
	for _, p := range s.pieces {
		// Two ticks where two labels fit, so a short busy piece still
		// reads as a period; one on a narrower piece.
		w := p.x1 - p.x0
		n := max(int(w/tickSpacing+0.5), 1)
		if n < 2 && w >= 120 {
			n = 2
		}
		span := p.to.Sub(p.from)
		step := tickSteps[len(tickSteps)-1]
		for _, st := range tickSteps {
			if span/st <= time.Duration(n) {
				step = st
				break
			}
		}
		for span/step > time.Duration(n) {
			step *= 2
		}
		layout := "15:04:05"
		switch {
		case step < time.Second:
			layout = "15:04:05.000"
		case step >= 24*time.Hour:
			layout = "01-02"
		case step >= time.Hour:
			layout = "01-02 15:04"
		}
		for t := p.from.UTC().Truncate(step); !t.After(p.to); t = t.Add(step) {
			if t.Before(p.from) {
				continue
			}
			x, label := s.x(t), t.Format(layout)
			// Labels are about 5.5 units a character: keep neighbours apart,
			// and clear of the "undated" column's heading at the right.
			if n := len(out); (n > 0 && x-out[n-1].X < 2.75*float64(len(label)+len(out[n-1].Label))+10) || x > plotRight-25 {
				continue
			}
			out = append(out, tick{X: x, Label: label})
		}
	}
	return out
}
