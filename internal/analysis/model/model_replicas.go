package model

import (
	"slices"
	"sort"

	"github.com/jsforensics/jsforensics/report"
)

// lacks returns the spans copy i does not hold that another copy in
// assigned holds: holes inside its own first..last range, and the part after
// its last sequence (behind). Below its first sequence the server may have
// removed messages by age or purge without a record, so nothing is claimed.
func (cmp *ReplicaComparison) Lacks(i int, assigned uint64) (holes, behind []CoverageSpan) {
	c := cmp.Copies[i]
	for _, sp := range cmp.Coverage {
		sp.Holders &= assigned
		if sp.Holders&(1<<i) != 0 || sp.Holders == 0 || sp.Last < c.FirstSeq {
			continue
		}
		sp.First = max(sp.First, c.FirstSeq)
		if c.Messages > 0 && sp.First <= c.LastSeq {
			h := sp
			h.Last = min(h.Last, c.LastSeq)
			holes = append(holes, h)
			sp.First = c.LastSeq + 1
		}
		if sp.First <= sp.Last {
			behind = append(behind, sp)
		}
	}
	return holes, behind
}

// servers names the copies in mask, sorted.
func (cmp *ReplicaComparison) Servers(m *Model, mask uint64) []string {
	var out []string
	for i, c := range cmp.Copies {
		if mask&(1<<i) != 0 {
			out = append(out, m.Name(c.Server))
		}
	}
	sort.Strings(out)
	return out
}

// ReplicaComparison is what the copies of one stream hold against each other.
type ReplicaComparison struct {
	Copies []*StreamCopy // compared; bit i of a mask is Copies[i]
	// Coverage lists, in order, the spans that some copies hold as messages
	// and others do not, with the copies that hold them.
	Coverage []CoverageSpan
	// Diverged lists, in order, the sequences held by several copies with
	// different content, with the groups of copies that agree.
	Diverged []DivergedSpan
}

// CoverageSpan is a range of sequences held by exactly the copies in Holders.
type CoverageSpan struct {
	report.Range
	Holders uint64
}

// DivergedSpan is a range of sequences whose content splits the copies
// holding it into Sides (one mask per distinct content, ascending).
type DivergedSpan struct {
	report.Range
	Sides []uint64
}

// lockstep is what the copies of one stream read together found: the runs
// of sequences where their records differ, before liveness. Bit i of a side
// is the i-th copy read (member i).
type Lockstep struct {
	Runs []DivergedSpan
	// late counts the records a copy yielded below sequences already
	// compared (blocks whose sequences overlap): not compared.
	Late []int
}

// msgBatch is one block's message records: sequences ascending, digests
// beside them.
type MsgBatch struct{ Seqs, Digests []uint64 }

// merge takes the copies' batches as they come and keeps, in lk.runs, every
// sequence where the copies' records differ. It returns when every feed is
// closed. A batch it is done with goes to free[i], when free is not nil
// and that channel has room.
func (lk *Lockstep) Merge(feeds, free []chan MsgBatch) {
	type cursor struct {
		b    MsgBatch
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
			lk.Runs = append(lk.Runs, DivergedSpan{Range: report.Range{First: seq, Last: seq}, Sides: slices.Clone(sides)})
		}
	}
}
