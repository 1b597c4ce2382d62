package seqset

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

const top = math.MaxUint64

func TestAddRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  []Range
		want string
	}{
		{"empty", nil, ""},
		{"in order, adjacent", []Range{{1, 1}, {2, 2}, {3, 5}}, "1-5"},
		{"in order, apart", []Range{{1, 2}, {4, 4}}, "1-2, 4"},
		{"reversed", []Range{{9, 9}, {5, 5}, {1, 1}}, "1, 5, 9"},
		{"unordered delete joins both sides", []Range{{1, 3}, {7, 9}, {4, 6}}, "1-9"},
		{"unordered delete before the last range", []Range{{10, 12}, {20, 20}, {5, 5}}, "5, 10-12, 20"},
		{"unordered extends a range's start", []Range{{5, 8}, {20, 20}, {4, 4}}, "4-8, 20"},
		{"spans several", []Range{{1, 1}, {3, 3}, {5, 5}, {9, 9}, {2, 6}}, "1-6, 9"},
		{"deletes in any order", []Range{{5, 5}, {6, 6}, {7, 7}, {3, 3}, {8, 8}, {1, 1}, {2, 2}, {10, 10}}, "1-3, 5-8, 10"},
		{"covered", []Range{{1, 10}, {20, 30}, {3, 4}}, "1-10, 20-30"},
		{"first > last ignored", []Range{{5, 4}}, ""},
		{"zero", []Range{{0, 0}, {1, 1}}, "0-1"},
		{"top", []Range{{top, top}, {top - 1, top - 1}}, "18446744073709551614-18446744073709551615"},
		{"top apart", []Range{{1, 1}, {top, top}, {top - 2, top - 2}}, "1, 18446744073709551613, 18446744073709551615"},
		{"whole", []Range{{top, top}, {0, top - 1}}, "0-18446744073709551615"},
	} {
		var s Set
		for _, r := range tc.add {
			s.AddRange(r.First, r.Last)
		}
		if got := s.String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if got := Of(tc.add...).String(); got != tc.want {
			t.Errorf("%s: Of gives %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestOperations(t *testing.T) {
	a := Of(Range{1, 10}, Range{20, 30}, Range{top - 5, top})
	b := Of(Range{5, 22}, Range{28, 40}, Range{top, top})
	for _, tc := range []struct {
		name, got, want string
	}{
		{"intersect", a.Intersect(b).String(), "5-10, 20-22, 28-30, 18446744073709551615"},
		{"subtract", a.Subtract(b).String(), "1-4, 23-27, 18446744073709551610-18446744073709551614"},
		{"subtract reversed", b.Subtract(a).String(), "11-19, 31-40"},
		{"union", a.Union(b).String(), "1-40, 18446744073709551610-18446744073709551615"},
		{"clip", a.Clip(8, 25).String(), "8-10, 20-25"},
		{"clip top", a.Clip(top-1, top).String(), "18446744073709551614-18446744073709551615"},
		{"subtract all", a.Subtract(Of(Range{0, top})).String(), ""},
		{"subtract nothing", a.Subtract(nil).String(), a.String()},
		{"intersect nothing", a.Intersect(nil).String(), ""},
		{"format limit", Format(Of(Range{1, 1}, Range{3, 3}, Range{5, 6}, Range{8, 8}), 2), "1, 3, and 2 more ranges"},
		{"format within limit", Format(Of(Range{1, 1}, Range{3, 3}), 2), "1, 3"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	if n := a.Count(); n != 10+11+6 {
		t.Errorf("count %d", n)
	}
	if n := Of(Range{0, top}).Count(); n != top {
		t.Errorf("count of everything %d, want saturated", n)
	}
	if !a.Contains(20) || a.Contains(11) || a.Contains(0) || !a.Contains(top) || a.Contains(top-6) {
		t.Error("contains")
	}
	if r, ok := a.RangeOf(25); !ok || r != (Range{20, 30}) {
		t.Errorf("RangeOf(25) = %v %v", r, ok)
	}
	if a.Min() != 1 || a.Max() != top || Set(nil).Max() != 0 {
		t.Error("min/max")
	}
	for _, tc := range []struct {
		r    Range
		want int
	}{{Range{12, 15}, 1}, {Range{11, 19}, -1}, {Range{31, 31}, 0}, {Range{0, 0}, 0}, {Range{9, 100}, -1}, {Range{50, 60}, 1}} {
		if got := a.NewRuns(tc.r.First, tc.r.Last); got != tc.want {
			t.Errorf("NewRuns(%v) = %d, want %d", tc.r, got, tc.want)
		}
	}
}

// TestJSON: a Set and a Range encode as the report contract's ranges.
func TestJSON(t *testing.T) {
	b, err := json.Marshal(Of(Range{3, 3}, Range{5, 9}))
	if err != nil || string(b) != `[{"first":3,"last":3},{"first":5,"last":9}]` {
		t.Errorf("%s %v", b, err)
	}
}

// model is the naive set: the sequences of two windows, one at each end of
// uint64, so that wrapping at 0 and at the top is exercised.
type model map[uint64]bool

const window = 48

func universe(yield func(uint64) bool) {
	for i := uint64(0); i < window; i++ {
		if !yield(i) || !yield(top-i) {
			return
		}
	}
}

func (m model) check(t *testing.T, what string, s Set) {
	t.Helper()
	for i := 1; i < len(s); i++ {
		if s[i].First <= s[i-1].Last || s[i].First-1 == s[i-1].Last {
			t.Fatalf("%s: not normal: %v", what, s)
		}
	}
	for _, r := range s {
		if r.First > r.Last {
			t.Fatalf("%s: bad range %v in %v", what, r, s)
		}
	}
	var n uint64
	for q := range universe {
		if s.Contains(q) != m[q] {
			t.Fatalf("%s: Contains(%d) = %v, model %v; set %v", what, q, s.Contains(q), m[q], s)
		}
		if m[q] {
			n++
		}
	}
	if s.Count() != n {
		t.Fatalf("%s: count %d, model %d; set %v", what, s.Count(), n, s)
	}
}

// ranges turns fuzz bytes into ranges inside the windows.
func ranges(b []byte) []Range {
	var out []Range
	for ; len(b) >= 2; b = b[2:] {
		lo, n := uint64(b[0]%window), uint64(b[1]%8)
		hi := min(lo+n, window-1)
		if b[0]&0x80 != 0 {
			lo, hi = top-hi, top-lo
		}
		out = append(out, Range{lo, hi})
	}
	return out
}

func modelOf(rs []Range) model {
	m := model{}
	for _, r := range rs {
		for q := r.First; ; q++ {
			m[q] = true
			if q == r.Last {
				break
			}
		}
	}
	return m
}

// FuzzSet holds Set to the naive model under random adds (in any order),
// union, intersection, subtraction and clipping.
func FuzzSet(f *testing.F) {
	f.Add([]byte{1, 2, 10, 3, 5, 1}, []byte{2, 7})
	f.Add([]byte{0x80, 3, 0x81, 0, 0, 7, 47, 7}, []byte{0x80, 0, 3, 3})
	f.Add([]byte{9, 0, 5, 0, 7, 0, 6, 0, 8, 0}, []byte{6, 2, 0x85, 1})
	f.Fuzz(func(t *testing.T, ab, bb []byte) {
		ra, rb := ranges(ab), ranges(bb)
		var a Set
		for _, r := range ra {
			grow := a.NewRuns(r.First, r.Last)
			n := len(a)
			a.AddRange(r.First, r.Last)
			if len(a) != n+grow {
				t.Fatalf("NewRuns(%v) said %d, runs went %d -> %d", r, grow, n, len(a))
			}
		}
		b := Of(rb...)
		ma, mb := modelOf(ra), modelOf(rb)
		ma.check(t, "add", a)
		mb.check(t, "of", b)
		if !slices.Equal(a, Of(ra...)) {
			t.Fatalf("add %v, of %v", a, Of(ra...))
		}
		union, inter, diff := model{}, model{}, model{}
		for q := range universe {
			union[q] = ma[q] || mb[q]
			inter[q] = ma[q] && mb[q]
			diff[q] = ma[q] && !mb[q]
		}
		union.check(t, "union", a.Union(b))
		inter.check(t, "intersect", a.Intersect(b))
		diff.check(t, "subtract", a.Subtract(b))
		for _, r := range rb {
			clip := model{}
			for q := range universe {
				clip[q] = ma[q] && q >= r.First && q <= r.Last
			}
			clip.check(t, "clip", a.Clip(r.First, r.Last))
		}
	})
}

// BenchmarkAddContiguous adds 10M sequences in order with a gap every
// 100,000 (a store with a few deletes): 100 ranges, no allocation per
// sequence.
func BenchmarkAddContiguous(b *testing.B) {
	const n = 10_000_000
	b.ReportAllocs()
	for b.Loop() {
		var s Set
		for q := uint64(1); q <= n; q++ {
			if q%100_000 != 0 {
				s.Add(q)
			}
		}
		if len(s) != 100 {
			b.Fatalf("%d ranges", len(s))
		}
	}
}
