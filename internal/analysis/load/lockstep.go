package load

import (
	"slices"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// lockstep is what the copies of one stream read together found: the runs
// of sequences where their records differ, before liveness. Bit i of a side
// is the i-th copy read (member i).
type lockstep struct {
	Runs []model.DivergedSpan
	// Late counts the records a copy yielded below sequences already
	// compared (blocks whose sequences overlap): not compared.
	Late []int
}

// msgBatch is one block's message records: sequences ascending, digests
// beside them.
type msgBatch struct{ Seqs, Digests []uint64 }

// merge takes the copies' batches as they come and keeps, in lk.Runs, every
// sequence where the copies' records differ. It returns when every feed is
// closed. A batch it is done with goes to free[i], when free is not nil
// and that channel has room.
func (lk *lockstep) merge(feeds, free []chan msgBatch) {
	type cursor struct {
		b    msgBatch
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
