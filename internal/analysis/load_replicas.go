package analysis

import (
	"encoding/binary"
	"hash/maphash"
	"sort"

	"github.com/jsforensics/jsforensics/storeparse"
)

// maxDigestSeqs bounds the per-sequence digests kept for one copy: 16 bytes
// (and map overhead) each, so a few tens of MiB per copy at most. Larger
// streams are compared on their figures only, and a note says so.
const maxDigestSeqs = 2 << 20

// replicaDigests reads again every copy of each stream held by more than one
// server and keeps, per live sequence, a digest of its subject, headers and
// payload, so replicas can be compared message by message. Streams on one
// server are not read twice.
func (l *loader) replicaDigests() {
	seed := maphash.MakeSeed()
	for _, st := range l.m.Streams {
		if len(st.Copies) < 2 {
			continue
		}
		for _, c := range st.Copies {
			d, ok := l.copyDigests(seed, st, c)
			if !ok {
				continue
			}
			c.Digests = d
		}
	}
}

func (l *loader) copyDigests(seed maphash.Seed, st *Stream, c *StreamCopy) (map[uint64]uint64, bool) {
	if c.Messages > maxDigestSeqs || c.Encrypted {
		if c.Messages > maxDigestSeqs {
			l.note("%s > %s on %s: %d messages, more than the %d compared one by one; replicas compared on their figures only", st.Account, st.Name, c.Server, c.Messages, maxDigestSeqs)
		}
		return nil, false
	}
	all := map[uint64]uint64{}
	var h maphash.Hash
	h.SetSeed(seed)
	var seqb [8]byte
	scan, err := storeparse.ScanStream(l.b.FS, c.Path, storeparse.ScanOptions{SkipConsumers: true,
		Visit: func(_ storeparse.BlockInfo, r *storeparse.Record) error {
			if r.Tombstone || r.Erased || !r.ChecksumOK || r.Seq == 0 {
				return nil
			}
			if len(all) >= maxDigestSeqs {
				return errTooMany
			}
			h.Reset()
			binary.LittleEndian.PutUint64(seqb[:], r.Seq)
			h.Write(seqb[:])
			h.Write(r.Subject)
			h.WriteByte(0)
			h.Write(r.Header)
			h.WriteByte(0)
			h.Write(r.Data)
			all[r.Seq] = h.Sum64()
			return nil
		}})
	if err != nil || scan == nil {
		return nil, false
	}
	// Keep only the sequences the copy still counts as messages: a deleted
	// record can stay in its block until the block is compacted.
	live := map[uint64]uint64{}
	for seq, d := range all {
		if liveIn(scan.Blocks, seq) {
			live[seq] = d
		}
	}
	return live, true
}

// liveIn says whether seq is a counted message of one of the blocks.
func liveIn(blocks []storeparse.BlockScan, seq uint64) bool {
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].LastSeq >= seq })
	for ; i < len(blocks); i++ {
		b := &blocks[i]
		if b.FirstSeq > seq {
			return false
		}
		if b.Msgs > 0 && seq >= b.FirstSeq && seq <= b.LastSeq {
			return !inRanges(seq, b.Deleted())
		}
	}
	return false
}

var errTooMany = errorString("too many sequences to compare")

type errorString string

func (e errorString) Error() string { return string(e) }

func inRanges(seq uint64, rs []storeparse.SeqRange) bool {
	for _, r := range rs {
		if seq >= r.First && seq <= r.Last {
			return true
		}
	}
	return false
}
