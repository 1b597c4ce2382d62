package analysis

import (
	"iter"
	"math"
	"slices"
	"sort"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Replica comparison, in memory that depends on the number of copies and
// blocks, not on the number of messages, at any stream size:
//
//  1. The store scan (load_store.go) keeps, per copy, its window digests
//     (the sum of message digests per DigestWindow sequences) and its live
//     map (blocks and delete ranges): see storeparse/digest.go. The blocks
//     are read once for both the figures and these.
//  2. Which sequences each copy holds is compared exactly, by a sweep over
//     the copies' live ranges side by side: every span that some copies hold
//     and others do not is kept (Coverage), and the gap check reads it.
//  3. Content is compared window by window: where every copy holding
//     messages in a window has the same digest and count, they hold the same
//     messages there. The windows that differ are read again, from the
//     blocks overlapping them only, and merged sequence by sequence.
//
// Why windows first rather than a k-way merge of whole scans: the copies are
// scanned one at a time (in parallel within a copy), and whether a record is
// live is known only when its copy's scan ends (a tombstone in a later
// block, index.db, limits), so a merge of live messages would need a second
// read of every block. Windows cost one entry per 4096 sequences and a
// second read only where copies differ.

// digestWindow is the sequences per window digest; a variable so tests can
// show the outcome does not depend on it.
var digestWindow uint64 = storeparse.DefaultDigestWindow

// maxCompared bounds the copies compared at once (servers are bits of a
// mask); more copies of one stream than that is not a real cluster.
const maxCompared = 64

// drillWindows bounds the windows read again at once: at most this many,
// spanning at most 4× as many windows, so a chunk's digests stay small.
const drillWindows = 16

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

// keepForComparison keeps what the replica comparison needs from a copy's
// scan; digests: it was made with DigestWindow: digestWindow.
func keepForComparison(c *StreamCopy, scan *storeparse.StreamScan, digests bool) {
	if c.Encrypted {
		return // nothing readable to compare
	}
	c.Windows, c.Live = scan.Windows(), scan.Live()
	c.noDigests = !digests
}

// sumDigests sums the window digests of a copy scanned without them: one
// whose folder no other clustered store holds, compared after all because
// a meta.inf names another stream than its folder. They come from its live
// messages, reading its blocks only: meta.inf, meta.sum, index.db and the
// consumers were read once, by the scan, and what they removed is already
// out of Live.
func (l *loader) sumDigests(c *StreamCopy) {
	var ws []storeparse.WindowDigest
	err := c.Live.Messages(l.b.FS, 0, math.MaxUint64, func(seq, d uint64) {
		w := seq / digestWindow
		if n := len(ws); n == 0 || ws[n-1].Window != w {
			ws = append(ws, storeparse.WindowDigest{Window: w})
		}
		ws[len(ws)-1].Sum += d
		ws[len(ws)-1].Count++
	})
	if err != nil {
		return // the scan reported the block it cannot read
	}
	// Blocks whose sequences overlap may yield a window twice.
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Window < ws[j].Window })
	out := ws[:0]
	for _, w := range ws {
		if n := len(out); n > 0 && out[n-1].Window == w.Window {
			out[n-1].Sum += w.Sum
			out[n-1].Count += w.Count
			continue
		}
		out = append(out, w)
	}
	c.Windows, c.noDigests = out, false
}

// compareReplicas compares every stream held by more than one server, then
// drops what it read of the copies: the comparison is all the checks need.
func (l *loader) compareReplicas() {
	l.meter.stage(StageReplicas, len(l.m.Streams), 0)
	for _, st := range l.m.Streams {
		l.compareStream(st)
		l.meter.add(1, 0)
		for _, c := range st.Copies {
			c.Windows, c.Live = nil, nil
		}
	}
}

func (l *loader) compareStream(st *Stream) {
	var copies []*StreamCopy
	for _, c := range st.Copies {
		if c.Live != nil && c.Clustered {
			copies = append(copies, c)
		}
	}
	// Replicas live on a cluster's servers only: a non-clustered server's
	// stream of the same name is another stream (another environment or a
	// standalone server in the same bundle), never compared with them.
	for _, c := range st.Copies {
		if c.Live != nil && !c.Clustered && len(st.Copies) > 1 {
			l.note("%s > %s on %s: a non-clustered server's stream (its store holds no raft groups); not compared with the other copies, which it is no replica of", st.Account, st.Name, l.m.Name(c.Server))
		}
	}
	if len(copies) < 2 {
		return
	}
	if len(copies) > maxCompared {
		l.note("%s > %s: %d copies; the first %d are compared", st.Account, st.Name, len(copies), maxCompared)
		copies = copies[:maxCompared]
	}
	for _, c := range copies {
		if c.noDigests {
			l.sumDigests(c)
		}
	}
	st.Comparison = &ReplicaComparison{Copies: copies, Coverage: coverage(copies), Diverged: l.diverged(st, copies)}
}

// coverage sweeps the copies' live ranges side by side and returns the
// spans that not every copy holds.
func coverage(copies []*StreamCopy) []CoverageSpan {
	type cursor struct {
		next func() (storeparse.SeqRange, bool)
		cur  storeparse.SeqRange
		ok   bool
	}
	cs := make([]cursor, len(copies))
	for i, c := range copies {
		next, stop := iter.Pull(withoutRanges(c.Live.Ranges(), c.Resurrected))
		cs[i] = cursor{next: next}
		cs[i].cur, cs[i].ok = next()
		defer stop()
	}
	all := uint64(1)<<len(copies) - 1
	var out []CoverageSpan
	add := func(first, last, holders uint64) {
		if holders == all || holders == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Holders == holders && out[n-1].Last+1 == first {
			out[n-1].Last = last
			return
		}
		out = append(out, CoverageSpan{Range: report.Range{First: first, Last: last}, Holders: holders})
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

// diverged finds the windows whose digests differ between copies and reads
// them again to name every sequence whose content differs.
func (l *loader) diverged(st *Stream, copies []*StreamCopy) []DivergedSpan {
	windows := differingWindows(copies)
	var out []DivergedSpan
	for len(windows) > 0 {
		n := 1
		for n < len(windows) && n < drillWindows && windows[n]-windows[0] < 4*drillWindows {
			n++
		}
		chunk := windows[:n]
		windows = windows[n:]
		out = l.drill(st, copies, chunk, out)
	}
	return out
}

// differingWindows merges the copies' window digests (each ordered by
// window) and returns the windows where two copies holding messages there
// disagree.
func differingWindows(copies []*StreamCopy) []uint64 {
	pos := make([]int, len(copies))
	var out []uint64
	for {
		w, any := uint64(0), false
		for i, c := range copies {
			if pos[i] < len(c.Windows) && (!any || c.Windows[pos[i]].Window < w) {
				w, any = c.Windows[pos[i]].Window, true
			}
		}
		if !any {
			return out
		}
		var first *storeparse.WindowDigest
		differ := false
		for i, c := range copies {
			if pos[i] >= len(c.Windows) || c.Windows[pos[i]].Window != w {
				continue
			}
			e := &c.Windows[pos[i]]
			pos[i]++
			differ = differ || e.Dirty
			if first == nil {
				first = e
			} else if e.Sum != first.Sum || e.Count != first.Count {
				differ = true
			}
		}
		if differ {
			out = append(out, w)
		}
	}
}

type seqDigest struct{ seq, digest uint64 }

// drill reads the messages of the windows in chunk from every copy and
// appends to out the sequences whose content differs.
func (l *loader) drill(st *Stream, copies []*StreamCopy, chunk []uint64, out []DivergedSpan) []DivergedSpan {
	first, last := chunk[0]*digestWindow, (chunk[len(chunk)-1]+1)*digestWindow-1
	msgs := make([][]seqDigest, len(copies))
	for i, c := range copies {
		err := c.Live.Messages(l.b.FS, first, last, func(seq, d uint64) {
			if _, ok := slices.BinarySearch(chunk, seq/digestWindow); ok {
				msgs[i] = append(msgs[i], seqDigest{seq, d})
			}
		})
		if err != nil {
			l.note("%s > %s on %s: sequences %d-%d not compared: %v", st.Account, st.Name, l.m.Name(c.Server), first, last, err)
		}
		sort.Slice(msgs[i], func(a, b int) bool { return msgs[i][a].seq < msgs[i][b].seq })
	}
	pos := make([]int, len(copies))
	for {
		seq, any := uint64(0), false
		for i := range msgs {
			if pos[i] < len(msgs[i]) && (!any || msgs[i][pos[i]].seq < seq) {
				seq, any = msgs[i][pos[i]].seq, true
			}
		}
		if !any {
			return out
		}
		var digests []uint64
		var sides []uint64
		for i := range msgs {
			for pos[i] < len(msgs[i]) && msgs[i][pos[i]].seq == seq {
				d := msgs[i][pos[i]].digest
				pos[i]++
				k := slices.Index(digests, d)
				if k < 0 {
					digests, sides = append(digests, d), append(sides, 0)
					k = len(digests) - 1
				}
				sides[k] |= 1 << i
			}
		}
		if len(sides) < 2 {
			continue
		}
		slices.Sort(sides)
		if n := len(out); n > 0 && out[n-1].Last+1 == seq && slices.Equal(out[n-1].Sides, sides) {
			out[n-1].Last = seq
			continue
		}
		out = append(out, DivergedSpan{Range: report.Range{First: seq, Last: seq}, Sides: sides})
	}
}
