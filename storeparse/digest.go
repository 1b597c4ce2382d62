package storeparse

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"iter"
	"sort"

	"github.com/jsforensics/jsforensics/seqset"
)

// Replica comparison support: what ScanStream collects, in the same read of
// the blocks, so that several copies of one stream can be compared message
// by message without holding anything per message.
//
//   - Messages (ScanOptions.Messages): each block's counted message records
//     as (sequence, MessageDigest) pairs, handed over in block order while
//     the scan goes on; the analysis merges the copies' pairs by sequence
//     as they come (copies read in lockstep).
//   - Live: per block, its file, range and delete ranges after every removal
//     (tombstones, index.db, limits), so which sequences a copy holds is
//     exact, without a set of sequences; what the pairs are cut to once the
//     scans end.
//   - Window digests (ScanOptions.DigestWindow): per fixed window of
//     sequences, the sum of MessageDigest over the messages a block counts
//     (count included). Sums add in any order, so parallel block scans
//     merge them freely; two copies whose window entries are equal hold the
//     same (sequence, content) pairs there. Memory: one entry per window
//     that holds a message, whatever the number of messages.
//   - Live.Messages: the digests of the live messages in a range of
//     sequences, re-reading only the blocks overlapping it.
//
// Window entries count what the blocks hold before later removals, so a
// window where a deleted record is still on disk in one copy and compacted
// away in another differs; Live.Messages applies the final liveness.

// DefaultDigestWindow is the number of sequences per window digest.
const DefaultDigestWindow = 4096

// digestSeed is shared by every scan of a process, so digests of different
// copies compare; it is not persisted.
var digestSeed = maphash.MakeSeed()

// MessageDigest is a digest of a message record's sequence, subject, headers
// and payload: equal for the same message whatever block or copy holds it
// (the record checksum is keyed by block, so it cannot serve), within one
// process.
func MessageDigest(r *Record) uint64 {
	// One hash per part, straight from the record's bytes (maphash.Bytes
	// copies nothing), then one over the sequence and the three: a
	// streaming maphash.Hash would copy every short part into its buffer.
	var parts [32]byte
	binary.LittleEndian.PutUint64(parts[0:], r.Seq)
	binary.LittleEndian.PutUint64(parts[8:], maphash.Bytes(digestSeed, r.Subject))
	binary.LittleEndian.PutUint64(parts[16:], maphash.Bytes(digestSeed, r.Header))
	binary.LittleEndian.PutUint64(parts[24:], maphash.Bytes(digestSeed, r.Data))
	return maphash.Bytes(digestSeed, parts[:])
}

// WindowDigest covers sequences [Window×size, (Window+1)×size) of a copy.
type WindowDigest struct {
	Window uint64
	Sum    uint64 // of MessageDigest, mod 2^64
	Count  uint64
	// Dirty: a message of the window was removed after its block was read
	// and its digest was no longer known, so Sum and Count are not the live
	// messages': the window must be compared by reading it.
	Dirty bool
}

// addDigest adds a counted message record to the block's window digests,
// and its digest to the record-length cache, so a later removal (tombstone,
// index.db, limits) can take it out again. Counted sequences rise within a
// block, so the last entry is the only one that can be this record's window.
func (b *BlockScan) addDigest(size uint64, r *Record) {
	if size == 0 {
		return
	}
	b.dwin = size
	var d uint64
	if r.ChecksumOK { // a record whose content fails its checksum is not compared
		d = MessageDigest(r)
		w := r.Seq / size
		if n := len(b.windows); n == 0 || b.windows[n-1].Window != w {
			b.windows = append(b.windows, WindowDigest{Window: w})
		}
		e := &b.windows[len(b.windows)-1]
		e.Sum += d
		e.Count++
	}
	// Keep dgs in step with rls (cacheRL just appended this record, padded
	// or dropped the cache).
	switch {
	case b.rls == nil:
		b.dgs = nil
	case len(b.dgs) < len(b.rls):
		if b.dgs == nil {
			b.dgs = make([]uint64, 0, cap(b.rls))
		}
		for len(b.dgs) < len(b.rls)-1 {
			b.dgs = append(b.dgs, 0)
		}
		b.dgs = append(b.dgs, d)
	}
}

// digestCacheMax bounds the message digests kept for removals after the
// read (8 bytes each): 1M entries, 8 MiB. Older blocks lose theirs first;
// a removal there marks its window dirty instead. A variable for tests.
var digestCacheMax = 1 << 20

// trimDigestCache keeps the digests of the newest blocks, at most
// digestCacheMax in all, after a block was appended.
func (s *StreamScan) trimDigestCache() {
	s.dgTotal += len(s.Blocks[len(s.Blocks)-1].dgs)
	for s.dgTotal > digestCacheMax && s.dgLo < len(s.Blocks) {
		b := &s.Blocks[s.dgLo]
		s.dgTotal -= len(b.dgs)
		b.dgs = nil
		s.dgLo++
	}
}

// forgetDigest takes a removed message out of its window's digest, or marks
// the window dirty when its digest is not cached.
func (b *BlockScan) forgetDigest(seq uint64) {
	if b.dwin == 0 {
		return
	}
	w := seq / b.dwin
	i := sort.Search(len(b.windows), func(i int) bool { return b.windows[i].Window >= w })
	if i == len(b.windows) || b.windows[i].Window != w {
		return // never summed (its checksum failed)
	}
	e := &b.windows[i]
	if k := seq - b.rlBase; b.rls != nil && len(b.dgs) == len(b.rls) && seq >= b.rlBase && k < uint64(len(b.dgs)) && b.dgs[k] != 0 {
		e.Sum -= b.dgs[k]
		e.Count--
		b.dgs[k] = 0
		return
	}
	e.Dirty = true
}

// Windows returns the copy's window digests, ordered by window (nil unless
// ScanOptions.DigestWindow was set).
func (s *StreamScan) Windows() []WindowDigest {
	var all []WindowDigest
	for i := range s.Blocks {
		all = append(all, s.Blocks[i].windows...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Window < all[j].Window })
	out := all[:0]
	for _, w := range all {
		if w.Count == 0 && !w.Dirty && w.Sum == 0 {
			continue // every message of it was removed
		}
		if n := len(out); n > 0 && out[n-1].Window == w.Window {
			out[n-1].Sum += w.Sum
			out[n-1].Count += w.Count
			out[n-1].Dirty = out[n-1].Dirty || w.Dirty
			continue
		}
		out = append(out, w)
	}
	return out
}

// Live says which sequences a scanned copy holds as messages, and in which
// block: per block and per delete range, never per message.
type Live struct {
	name   string // checksum key prefix
	blocks []liveBlock
}

type liveBlock struct {
	file        string
	index       uint32
	first, last uint64
	deleted     seqset.Set
}

// Live returns what the scan counts as messages after every removal.
// Encrypted blocks hold nothing readable and are left out.
func (s *StreamScan) Live() *Live {
	l := &Live{name: s.Name}
	for i := range s.Blocks {
		b := &s.Blocks[i]
		if b.Msgs == 0 || b.Encrypted {
			continue
		}
		l.blocks = append(l.blocks, liveBlock{file: b.File, index: b.Index, first: b.FirstSeq, last: b.LastSeq, deleted: b.deleted})
	}
	sort.SliceStable(l.blocks, func(i, j int) bool { return l.blocks[i].first < l.blocks[j].first })
	return l
}

// Ranges yields the live sequences as ascending, disjoint, non-adjacent
// ranges.
func (l *Live) Ranges() iter.Seq[SeqRange] {
	return func(yield func(SeqRange) bool) {
		var cur SeqRange
		have := false
		var next uint64 // first sequence not yet yielded or pending
		emit := func(r SeqRange) bool {
			if r.Last < next || r.First > r.Last {
				return true
			}
			r.First = max(r.First, next)
			next = r.Last + 1
			if have && cur.Last+1 == r.First {
				cur.Last = r.Last
				return true
			}
			if have && !yield(cur) {
				return false
			}
			cur, have = r, true
			return true
		}
		for _, b := range l.blocks {
			for _, r := range (seqset.Set{{First: b.first, Last: b.last}}).Subtract(b.deleted) {
				if !emit(r) {
					return
				}
			}
		}
		if have {
			yield(cur)
		}
	}
}

func (b *liveBlock) live(seq uint64) bool {
	return seq >= b.first && seq <= b.last && !b.deleted.Contains(seq)
}

// Messages calls f with the sequence and MessageDigest of every live message
// of l in first..last whose checksum holds, block by block, reading only the
// blocks that overlap the range. Records outside the range are skipped.
func (l *Live) Messages(fsys fs.FS, first, last uint64, f func(seq, digest uint64)) error {
	for i := range l.blocks {
		b := &l.blocks[i]
		if b.last < first || b.first > last {
			continue
		}
		if err := b.messages(fsys, l.name, first, last, f); err != nil {
			return err
		}
	}
	return nil
}

func (b *liveBlock) messages(fsys fs.FS, name string, first, last uint64, f func(seq, digest uint64)) error {
	ra, size, closeFn, err := openBlock(fsys, b.file)
	if err != nil {
		return err
	}
	defer closeFn()
	br, err := NewBlockReader(b.file, ra, size, fmt.Sprintf("%s-%d", name, b.index))
	if err != nil {
		return err
	}
	var r Record
	seen := uint64(0) // a repeated sequence is the server's duplicate: the first counts
	for {
		err := br.next(&r)
		if err == io.EOF || (err != nil && r.Len == 0) {
			return nil
		}
		if r.Tombstone || r.Seq == 0 || r.Seq <= seen {
			continue
		}
		seen = r.Seq
		if r.Seq > last {
			return nil
		}
		if !r.Erased && r.ChecksumOK && r.Seq >= first && b.live(r.Seq) {
			f(r.Seq, MessageDigest(&r))
		}
	}
}
