package acklog

import "sort"

// Run is an inclusive range of sequences.
type Run struct{ First, Last uint64 }

// Runs is a set of sequences kept as sorted, disjoint, non-adjacent runs:
// a publisher's acks are increasing, so adding one extends the last run in
// constant time; an ack out of order is merged in place.
type Runs struct {
	runs []Run
}

// add inserts seq (at least 1; comparisons are written so that no +1
// overflows at the top of the range); false when the set is full
// (MaxRunsPerStream) and seq would need a run of its own.
func (r *Runs) add(seq uint64) bool {
	if seq == 0 {
		return true // no message has sequence 0; Read reports such lines
	}
	n := len(r.runs)
	if n == 0 {
		r.runs = append(r.runs, Run{seq, seq})
		return true
	}
	last := &r.runs[n-1]
	switch {
	case seq >= last.First && seq <= last.Last:
		return true
	case seq-1 == last.Last:
		last.Last = seq
		return true
	case seq > last.Last:
		if n >= MaxRunsPerStream {
			return false
		}
		r.runs = append(r.runs, Run{seq, seq})
		return true
	}
	// Out of order (seq < last.First): i is the first run ending at or
	// after seq-1; there is one, the last run.
	i := sort.Search(n, func(i int) bool { return r.runs[i].Last >= seq-1 })
	cur := &r.runs[i]
	switch {
	case seq >= cur.First && seq <= cur.Last:
		return true
	case seq-1 == cur.Last: // extends cur, maybe up to the next run
		cur.Last = seq
		if i+1 < n && r.runs[i+1].First-1 == seq {
			cur.Last = r.runs[i+1].Last
			r.runs = append(r.runs[:i+1], r.runs[i+2:]...)
		}
		return true
	case cur.First-1 == seq:
		cur.First = seq
		return true
	}
	if n >= MaxRunsPerStream {
		return false
	}
	r.runs = append(r.runs, Run{})
	copy(r.runs[i+1:], r.runs[i:])
	r.runs[i] = Run{seq, seq}
	return true
}

// Add inserts seq (for callers building a set to compare with).
func (r *Runs) Add(seq uint64) bool { return r.add(seq) }

// Contains says whether seq is in the set.
func (r *Runs) Contains(seq uint64) bool {
	i := sort.Search(len(r.runs), func(i int) bool { return r.runs[i].Last >= seq })
	return i < len(r.runs) && r.runs[i].First <= seq
}

// Count is the number of sequences in the set.
func (r *Runs) Count() uint64 {
	var n uint64
	for _, x := range r.runs {
		n += x.Last - x.First + 1
	}
	return n
}

// Len is the number of runs.
func (r *Runs) Len() int { return len(r.runs) }

// List returns the runs in order (a copy).
func (r *Runs) List() []Run { return append([]Run(nil), r.runs...) }

// Max is the highest sequence (0 for an empty set).
func (r *Runs) Max() uint64 {
	if len(r.runs) == 0 {
		return 0
	}
	return r.runs[len(r.runs)-1].Last
}

// Intersect returns the runs of r that fall inside [first, last].
func (r *Runs) Intersect(first, last uint64) []Run {
	var out []Run
	i := sort.Search(len(r.runs), func(i int) bool { return r.runs[i].Last >= first })
	for ; i < len(r.runs) && r.runs[i].First <= last; i++ {
		out = append(out, Run{max(r.runs[i].First, first), min(r.runs[i].Last, last)})
	}
	return out
}
