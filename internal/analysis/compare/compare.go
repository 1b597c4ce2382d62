// Package compare holds the replica comparison's algorithms: the lockstep
// merge of the copies' message records read together, and the sweeps of
// their live ranges for the spans not every copy holds and the sequences
// whose content diverges. The loader feeds them; they read nothing.
package compare

import (
	"iter"
	"slices"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Lockstep is what the copies of one stream read together found: the runs
// of sequences where their records differ, before liveness. Bit i of a side
// is the i-th copy read (member i).
type Lockstep struct {
	Runs []model.DivergedSpan
	// Late counts the records a copy yielded below sequences already
	// compared (blocks whose sequences overlap): not compared.
	Late []int
}

// Batch is one block's message records: sequences ascending, digests
// beside them.
type Batch struct{ Seqs, Digests []uint64 }

// Merge takes the copies' batches as they come and keeps, in lk.Runs, every
// sequence where the copies' records differ. It returns when every feed is
// closed. A batch it is done with goes to free[i], when free is not nil
// and that channel has room.
func (lk *Lockstep) Merge(feeds, free []chan Batch) {
	type cursor struct {
		b    Batch
		pos  int
		open bool
	}
	cs := make([]cursor, len(feeds))
	for i := range cs {
		cs[i].open = true
	}
	var compared uint64 // sequences up to this one are compared
	any := false
	var digests []uint64
	var sides []uint64
	for {
		// Every copy still read has records pending, or is done.
		for i := range cs {
			for cs[i].open && cs[i].pos >= len(cs[i].b.Seqs) {
				b, ok := <-feeds[i]
				if !ok {
					cs[i].open = false
					break
				}
				if free != nil && cs[i].b.Seqs != nil {
					select {
					case free[i] <- cs[i].b:
					default:
					}
				}
				cs[i].b, cs[i].pos = b, 0
				// Records at or below what was compared (blocks whose
				// sequences overlap) cannot be merged any more.
				for any && cs[i].pos < len(b.Seqs) && b.Seqs[cs[i].pos] <= compared {
					cs[i].pos++
					lk.Late[i]++
				}
			}
		}
		// Compare up to the lowest last pending sequence of the copies
		// still read: beyond it, one of them may still yield records.
		upto, pending := ^uint64(0), false
		for i := range cs {
			if cs[i].pos < len(cs[i].b.Seqs) {
				pending = true
				if cs[i].open {
					upto = min(upto, cs[i].b.Seqs[len(cs[i].b.Seqs)-1])
				}
			}
		}
		if !pending {
			return
		}
		for {
			seq, have := uint64(0), false
			for i := range cs {
				if c := &cs[i]; c.pos < len(c.b.Seqs) && c.b.Seqs[c.pos] <= upto && (!have || c.b.Seqs[c.pos] < seq) {
					seq, have = c.b.Seqs[c.pos], true
				}
			}
			if !have {
				break
			}
			digests, sides = digests[:0], sides[:0]
			for i := range cs {
				c := &cs[i]
				if c.pos >= len(c.b.Seqs) || c.b.Seqs[c.pos] != seq {
					continue
				}
				d := c.b.Digests[c.pos]
				c.pos++
				k := slices.Index(digests, d)
				if k < 0 {
					digests, sides = append(digests, d), append(sides, 0)
					k = len(digests) - 1
				}
				sides[k] |= 1 << i
			}
			compared, any = seq, true
			if len(sides) < 2 {
				continue
			}
			slices.Sort(sides)
			if n := len(lk.Runs); n > 0 && lk.Runs[n-1].Last+1 == seq && slices.Equal(lk.Runs[n-1].Sides, sides) {
				lk.Runs[n-1].Last = seq
				continue
			}
			lk.Runs = append(lk.Runs, model.DivergedSpan{Range: report.Range{First: seq, Last: seq}, Sides: slices.Clone(sides)})
		}
	}
}

// Restrict cuts the runs of sequences where the records of the copies read
// together differ (member[j]: copy j's bit in them) to the copies' live
// messages: a sequence diverges where at least two of the copies holding it
// as a message hold different content. Sides are then masks of copies.
func Restrict(runs []model.DivergedSpan, lives []*storeparse.Live, member []int) []model.DivergedSpan {
	type cursor struct {
		next func() (storeparse.SeqRange, bool)
		cur  storeparse.SeqRange
		ok   bool
	}
	cs := make([]cursor, len(lives))
	for j, live := range lives {
		next, stop := iter.Pull(live.Ranges())
		defer stop()
		cs[j].next = next
		cs[j].cur, cs[j].ok = next()
	}
	var out []model.DivergedSpan
	var sides []uint64
	for _, r := range runs {
		for p := r.First; ; {
			// The copies live at p, and how far that stays so.
			var live uint64
			end := r.Last
			for j := range cs {
				c := &cs[j]
				for c.ok && c.cur.Last < p {
					c.cur, c.ok = c.next()
				}
				switch {
				case !c.ok:
				case c.cur.First <= p:
					live |= 1 << j
					end = min(end, c.cur.Last)
				default:
					end = min(end, c.cur.First-1)
				}
			}
			sides = sides[:0]
			for _, side := range r.Sides {
				var m uint64
				for j := range lives {
					if live&(1<<j) != 0 && side&(1<<member[j]) != 0 {
						m |= 1 << j
					}
				}
				if m != 0 {
					sides = append(sides, m)
				}
			}
			if len(sides) >= 2 {
				slices.Sort(sides)
				if n := len(out); n > 0 && out[n-1].Last+1 == p && slices.Equal(out[n-1].Sides, sides) {
					out[n-1].Last = end
				} else {
					out = append(out, model.DivergedSpan{Range: report.Range{First: p, Last: end}, Sides: slices.Clone(sides)})
				}
			}
			if end >= r.Last {
				break
			}
			p = end + 1
		}
	}
	return out
}

// Coverage sweeps the copies' live ranges side by side and returns the
// spans that not every copy holds.
func Coverage(copies []*model.StreamCopy, lives []*storeparse.Live) []model.CoverageSpan {
	type cursor struct {
		next func() (storeparse.SeqRange, bool)
		cur  storeparse.SeqRange
		ok   bool
	}
	cs := make([]cursor, len(copies))
	for i, c := range copies {
		next, stop := iter.Pull(withoutRanges(lives[i].Ranges(), c.Resurrected))
		cs[i] = cursor{next: next}
		cs[i].cur, cs[i].ok = next()
		defer stop()
	}
	all := uint64(1)<<len(copies) - 1
	var out []model.CoverageSpan
	add := func(first, last, holders uint64) {
		if holders == all || holders == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Holders == holders && out[n-1].Last+1 == first {
			out[n-1].Last = last
			return
		}
		out = append(out, model.CoverageSpan{Range: report.Range{First: first, Last: last}, Holders: holders})
	}
	var p uint64
	started := false
	for {
		// p: the first sequence not yet swept; it starts at the lowest held.
		lo, any := uint64(0), false
		for i := range cs {
			if cs[i].ok && (!any || cs[i].cur.First < lo) {
				lo, any = cs[i].cur.First, true
			}
		}
		if !any {
			return out
		}
		if !started || lo > p {
			p, started = max(p, lo), true
		}
		// The span from p on where the set of holders stays the same.
		var holders uint64
		end := ^uint64(0)
		for i := range cs {
			if !cs[i].ok {
				continue
			}
			if r := cs[i].cur; r.First <= p {
				holders |= 1 << i
				end = min(end, r.Last)
			} else {
				end = min(end, r.First-1)
			}
		}
		add(p, end, holders)
		for i := range cs {
			for cs[i].ok && cs[i].cur.Last <= end {
				cs[i].cur, cs[i].ok = cs[i].next()
			}
		}
		if end == ^uint64(0) {
			return out
		}
		p = end + 1
	}
}

// withoutRanges yields the ranges of live (ascending, disjoint) less the
// sorted, disjoint ranges drop: a copy's live ranges without the deleted
// messages its lost tombstones would bring back (StreamCopy.Resurrected).
func withoutRanges(live iter.Seq[storeparse.SeqRange], drop []storeparse.SeqRange) iter.Seq[storeparse.SeqRange] {
	if len(drop) == 0 {
		return live
	}
	return func(yield func(storeparse.SeqRange) bool) {
		j := 0
		for r := range live {
			for ; j < len(drop) && drop[j].Last < r.First; j++ {
			}
			lo := r.First
			for k := j; k < len(drop) && drop[k].First <= r.Last; k++ {
				if drop[k].First > lo && !yield(storeparse.SeqRange{First: lo, Last: drop[k].First - 1}) {
					return
				}
				if drop[k].Last >= r.Last {
					lo = 0
					break
				}
				lo = max(lo, drop[k].Last+1)
			}
			if lo != 0 && lo <= r.Last && !yield(storeparse.SeqRange{First: lo, Last: r.Last}) {
				return
			}
		}
	}
}
