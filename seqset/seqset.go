// Package seqset is the one set of sequences of jsforensics: stream
// sequences or raft indexes kept as sorted, disjoint, non-adjacent inclusive
// ranges, so that a store of millions of messages with a few gaps is a few
// ranges and no operation allocates per sequence.
//
// A Set is a []Range in normal form. The zero Set is empty. Add, AddRange,
// Of and the operations (Union, Intersect, Subtract, Clip) keep it normal;
// a []Range converted to a Set must be normal already (sorted by First,
// ranges apart by at least one sequence), else use Of. Every operation is
// written so that no First-1 or Last+1 wraps at 0 or at the top of uint64.
//
// Its only text form is Format (and String): "5, 12-20".
//
// It imports only the standard library, so the parsers (storeparse,
// acklog, raftlog) can return it and the report can print it.
package seqset

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Range is the inclusive range First..Last (First <= Last).
type Range struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// String is "5" for a single sequence, "12-20" for more.
func (r Range) String() string {
	if r.First == r.Last {
		return strconv.FormatUint(r.First, 10)
	}
	return strconv.FormatUint(r.First, 10) + "-" + strconv.FormatUint(r.Last, 10)
}

// Len is the number of sequences in r, math.MaxUint64 for the whole
// uint64 range (which holds one more).
func (r Range) Len() uint64 {
	if r.Last-r.First == math.MaxUint64 {
		return math.MaxUint64
	}
	return r.Last - r.First + 1
}

// Set is a set of sequences as sorted, disjoint, non-adjacent ranges.
type Set []Range

// joins says whether a range starting at first merges with one ending at
// last (overlaps it or starts right after it), with no overflow.
func joins(last, first uint64) bool { return first <= last || first-1 == last }

// Of returns the set of the given ranges, in any order, overlapping or
// not; a range with First > Last is ignored. rs is not modified.
func Of(rs ...Range) Set {
	out := make(Set, 0, len(rs))
	for _, r := range rs {
		if r.First <= r.Last {
			out = append(out, r)
		}
	}
	if !slices.IsSortedFunc(out, byFirst) {
		slices.SortFunc(out, byFirst)
	}
	return out.merge()
}

func byFirst(a, b Range) int {
	switch {
	case a.First < b.First:
		return -1
	case a.First > b.First:
		return 1
	}
	return 0
}

// merge joins overlapping and adjacent ranges of s, sorted by First, in
// place.
func (s Set) merge() Set {
	out := s[:0]
	for _, r := range s {
		if n := len(out); n > 0 && joins(out[n-1].Last, r.First) {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Add adds seq; the next sequence after the last range, the usual case,
// extends it in place.
func (s *Set) Add(seq uint64) {
	if n := len(*s); n > 0 && (*s)[n-1].Last+1 == seq && seq != 0 {
		(*s)[n-1].Last = seq
		return
	}
	s.AddRange(seq, seq)
}

// AddRange adds first..last (nothing when first > last), in any order
// relative to what s holds. Adding in increasing order, the usual case,
// extends or appends the last range in constant time; an earlier range is
// found by binary search and merged with its neighbours in place.
func (s *Set) AddRange(first, last uint64) {
	if first > last {
		return
	}
	r := *s
	n := len(r)
	if n == 0 || r[n-1].First <= first { // at or after the last range
		if n > 0 && joins(r[n-1].Last, first) {
			r[n-1].Last = max(r[n-1].Last, last)
			return
		}
		*s = append(r, Range{first, last})
		return
	}
	// i: the first range that ends at or after first-1 (it may join);
	// j: the first range past i that starts after last+1 (it does not).
	i := sort.Search(n, func(k int) bool { return joins(r[k].Last, first) })
	j := i + sort.Search(n-i, func(k int) bool { return !joins(last, r[i+k].First) })
	if i == j {
		r = append(r, Range{})
		copy(r[i+1:], r[i:])
		r[i] = Range{first, last}
		*s = r
		return
	}
	r[i] = Range{min(first, r[i].First), max(last, r[j-1].Last)}
	*s = append(r[:i+1], r[j:]...)
}

// NewRuns is how many ranges adding first..last would add to s: 1 for a
// range apart from all, 0 for one that extends one range, negative for one
// that joins several. It lets a caller bound the memory a set takes.
func (s Set) NewRuns(first, last uint64) int {
	if first > last {
		return 0
	}
	i := sort.Search(len(s), func(k int) bool { return joins(s[k].Last, first) })
	j := i + sort.Search(len(s)-i, func(k int) bool { return !joins(last, s[i+k].First) })
	return 1 - (j - i)
}

// Contains says whether seq is in s.
func (s Set) Contains(seq uint64) bool {
	_, ok := s.RangeOf(seq)
	return ok
}

// RangeOf returns the range of s holding seq.
func (s Set) RangeOf(seq uint64) (Range, bool) {
	if n := len(s); n == 0 || seq > s[n-1].Last {
		return Range{}, false // the usual case while reading in order
	}
	i := sort.Search(len(s), func(k int) bool { return s[k].Last >= seq })
	if s[i].First <= seq {
		return s[i], true
	}
	return Range{}, false
}

// Count is the number of sequences in s (at most math.MaxUint64).
func (s Set) Count() uint64 {
	var n uint64
	for _, r := range s {
		l := r.Len()
		if n+l < n {
			return math.MaxUint64
		}
		n += l
	}
	return n
}

// Min is the lowest sequence of s, 0 for an empty set.
func (s Set) Min() uint64 {
	if len(s) == 0 {
		return 0
	}
	return s[0].First
}

// Max is the highest sequence of s, 0 for an empty set.
func (s Set) Max() uint64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].Last
}

// Clone returns a copy of s that shares no memory with it.
func (s Set) Clone() Set { return slices.Clone(s) }

// Union returns the sequences in s or in t.
func (s Set) Union(t Set) Set {
	out := make(Set, 0, len(s)+len(t))
	i, j := 0, 0
	for i < len(s) || j < len(t) {
		var r Range
		if j == len(t) || i < len(s) && s[i].First <= t[j].First {
			r, i = s[i], i+1
		} else {
			r, j = t[j], j+1
		}
		if n := len(out); n > 0 && joins(out[n-1].Last, r.First) {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Intersect returns the sequences in both s and t.
func (s Set) Intersect(t Set) Set {
	var out Set
	for i, j := 0, 0; i < len(s) && j < len(t); {
		lo, hi := max(s[i].First, t[j].First), min(s[i].Last, t[j].Last)
		if lo <= hi {
			out = append(out, Range{lo, hi})
		}
		if s[i].Last < t[j].Last {
			i++
		} else {
			j++
		}
	}
	return out
}

// Clip returns the sequences of s in first..last, finding the first range
// by binary search.
func (s Set) Clip(first, last uint64) Set {
	var out Set
	i := sort.Search(len(s), func(k int) bool { return s[k].Last >= first })
	for ; i < len(s) && s[i].First <= last; i++ {
		out = append(out, Range{max(s[i].First, first), min(s[i].Last, last)})
	}
	return out
}

// Subtract returns the sequences of s that t does not hold.
func (s Set) Subtract(t Set) Set {
	var out Set
	j := 0
	for _, r := range s {
		for j < len(t) && t[j].Last < r.First {
			j++
		}
		lo := r.First
		k := j
		for ; k < len(t) && t[k].First <= r.Last; k++ {
			if t[k].First > lo {
				out = append(out, Range{lo, t[k].First - 1})
			}
			if t[k].Last >= r.Last {
				break
			}
			lo = t[k].Last + 1 // t[k].Last < r.Last: no overflow
		}
		if k == len(t) || t[k].First > r.Last || t[k].Last < r.Last {
			out = append(out, Range{lo, r.Last})
		}
	}
	return out
}

// String is Format(s, 0).
func (s Set) String() string { return Format(s, 0) }

// Format lists rs as "5, 12-20", "" for none. With limit > 0 it lists at
// most limit ranges, then "and N more ranges".
func Format(rs []Range, limit int) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		if limit > 0 && i == limit {
			b.WriteString("and " + strconv.Itoa(len(rs)-i) + " more ranges")
			break
		}
		b.WriteString(r.String())
	}
	return b.String()
}
