package model

import (
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
