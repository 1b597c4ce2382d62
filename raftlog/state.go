package raftlog

import (
	"encoding/json"
	"slices"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Stream snapshot (stream group snapshot data and EntrySnapshot; store.go
// DecodeStreamState, filestore.go EncodedStreamState):
//
//	0x2A | version 1|2 | uvarint msgs, bytes, firstSeq, lastSeq, failed |
//	[v2: uvarint numSources, per source: uvarint len+name, uvarint seq, uvarint len+ident] |
//	uvarint numDeleted | delete blocks to the end:
//	    0x16 … AVL seqset            0x21 uvarint first, uvarint num (run)
//
// Legacy JSON (jetstream_cluster.go streamSnapshot) when the data does not
// start with 0x2A and version 1 or 2.
const (
	streamStateMagic = 42
	streamStateV1    = 1
	streamStateV2    = 2 // with sources, v2.15.2
	runLengthMagic   = 33
)

// SeqRange is the inclusive range First..Last of sequences.
type SeqRange = natsfmt.SeqRange

// DeleteBlock is one delete block of a stream snapshot: a run (Kind "run",
// First and Num), a seqset (Kind "avl", Set kept as its stored bitmaps so
// memory stays proportional to the bytes read), or the legacy JSON list
// (turned into one "run" block per maximal run).
type DeleteBlock struct {
	Offset int64           `json:"offset"`
	Kind   string          `json:"kind"`
	First  uint64          `json:"first,omitempty"`
	Num    uint64          `json:"num,omitempty"`
	Set    *natsfmt.SeqSet `json:"-"`
	// Size is the seqset's stored size (which should equal Count()).
	Size uint32 `json:"size,omitempty"`
}

// Count is the number of sequences in the block.
func (b *DeleteBlock) Count() uint64 {
	if b.Kind == "run" {
		return b.Num
	}
	return uint64(b.Set.Len())
}

// Contains reports whether seq is in the block.
func (b *DeleteBlock) Contains(seq uint64) bool {
	if b.Kind == "run" {
		return b.Num > 0 && seq >= b.First && seq-b.First < b.Num
	}
	return b.Set.Contains(seq)
}

// Ranges returns the block's sequences as maximal ascending runs. It
// allocates in proportion to the runs, so callers printing huge sets may
// prefer Count and Contains.
func (b *DeleteBlock) Ranges() []SeqRange {
	if b.Kind == "run" {
		if b.Num == 0 || b.First+b.Num-1 < b.First {
			return nil
		}
		return []SeqRange{{First: b.First, Last: b.First + b.Num - 1}}
	}
	return b.Set.Ranges()
}

// SourceState is the per-source state of a version 2 stream snapshot.
type SourceState struct {
	Name  string `json:"name"`
	Seq   uint64 `json:"seq"`
	Ident string `json:"ident"`
}

// StreamSnapshot is a stream group's replicated state.
type StreamSnapshot struct {
	Version    uint8         `json:"version"` // 1 or 2; 0 for legacy JSON
	Legacy     bool          `json:"legacy"`
	Msgs       uint64        `json:"msgs"`
	Bytes      uint64        `json:"bytes"`
	FirstSeq   uint64        `json:"first_seq"`
	LastSeq    uint64        `json:"last_seq"`
	Failed     uint64        `json:"failed"`
	Sources    []SourceState `json:"sources,omitempty"`
	NumDeleted uint64        `json:"num_deleted"`
	Deleted    []DeleteBlock `json:"deleted,omitempty"`
}

// DeletedCount sums the sequences listed in the delete blocks.
func (s *StreamSnapshot) DeletedCount() uint64 {
	var n uint64
	for i := range s.Deleted {
		n += s.Deleted[i].Count()
	}
	return n
}

// IsDeleted reports whether seq is in one of the delete blocks.
func (s *StreamSnapshot) IsDeleted(seq uint64) bool {
	for i := range s.Deleted {
		if s.Deleted[i].Contains(seq) {
			return true
		}
	}
	return false
}

// DecodeStreamSnapshot decodes stream snapshot data; base is the file
// offset of data[0].
func DecodeStreamSnapshot(file string, base int64, data []byte) (*StreamSnapshot, error) {
	v, err := decodeStreamSnapshot(file, base, data)
	return v, binfmt.Stamp(err, natsfmt.StructSnapshotData)
}

func decodeStreamSnapshot(file string, base int64, data []byte) (*StreamSnapshot, error) {
	if len(data) < 2 || data[0] != streamStateMagic || (data[1] != streamStateV1 && data[1] != streamStateV2) {
		return decodeLegacyStreamSnapshot(file, base, data)
	}
	d := binfmt.NewDecbuf(file, base, data)
	d.Skip(1)
	s := &StreamSnapshot{Version: d.Byte()}
	s.Msgs, s.Bytes, s.FirstSeq, s.LastSeq, s.Failed = d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint()
	if s.Version == streamStateV2 {
		// Each source takes at least 3 bytes (three one-byte uvarints).
		n := d.Count(3, "source")
		for range n {
			src := SourceState{Name: string(d.Bytes(d.Count(1, "name byte")))}
			src.Seq = d.Uvarint()
			src.Ident = string(d.Bytes(d.Count(1, "ident byte")))
			if d.Err() != nil {
				break
			}
			s.Sources = append(s.Sources, src)
		}
	}
	s.NumDeleted = d.Uvarint()
	if d.Err() != nil {
		return s, d.Err()
	}
	if s.NumDeleted == 0 {
		return s, nil
	}
	for d.Len() > 0 {
		off := d.Offset()
		switch d.Rest()[0] {
		case natsfmt.SeqSetMagic:
			set, n, err := natsfmt.DecodeSeqSet(file, off, d.Rest())
			if err != nil {
				return s, err
			}
			d.Skip(n)
			s.Deleted = append(s.Deleted, DeleteBlock{Offset: off, Kind: "avl", Set: set, Size: uint32(set.Size())})
		case runLengthMagic:
			d.Skip(1)
			first, num := d.Uvarint(), d.Uvarint()
			if d.Err() != nil {
				return s, d.Err()
			}
			if num > 0 && first+num-1 < first {
				return s, binfmt.Errorf(file, off, binfmt.ErrFormat, "run %d+%d overflows", first, num)
			}
			s.Deleted = append(s.Deleted, DeleteBlock{Offset: off, Kind: "run", First: first, Num: num})
		default:
			return s, binfmt.Errorf(file, off, binfmt.ErrFormat, "delete block type %#x is neither seqset (0x16) nor run (0x21)", d.Rest()[0])
		}
	}
	return s, nil
}

func decodeLegacyStreamSnapshot(file string, base int64, data []byte) (*StreamSnapshot, error) {
	var js struct {
		Msgs     uint64   `json:"messages"`
		Bytes    uint64   `json:"bytes"`
		FirstSeq uint64   `json:"first_seq"`
		LastSeq  uint64   `json:"last_seq"`
		Failed   uint64   `json:"clfs"`
		Deleted  []uint64 `json:"deleted,omitempty"`
	}
	if err := decodeJSON(file, base, data, &js); err != nil {
		return nil, binfmt.Errorf(file, base, binfmt.ErrFormat, "stream snapshot is neither binary (0x2A 1|2) nor legacy JSON: %v", err)
	}
	s := &StreamSnapshot{Legacy: true, Msgs: js.Msgs, Bytes: js.Bytes, FirstSeq: js.FirstSeq, LastSeq: js.LastSeq, Failed: js.Failed, NumDeleted: uint64(len(js.Deleted))}
	if len(js.Deleted) > 0 {
		seqs := slices.Clone(js.Deleted)
		slices.Sort(seqs)
		seqs = slices.Compact(seqs)
		// One run block per maximal run: memory stays within the input.
		for _, q := range seqs {
			if n := len(s.Deleted); n > 0 && s.Deleted[n-1].First+s.Deleted[n-1].Num == q {
				s.Deleted[n-1].Num++
			} else {
				s.Deleted = append(s.Deleted, DeleteBlock{Offset: base, Kind: "run", First: q, Num: 1})
			}
		}
	}
	return s, nil
}

// Consumer state (consumer group snapshot data, the same encoding as
// obs/<c>/o.dat) is decoded by natsfmt, shared with storeparse.
type (
	ConsumerSnapshot = natsfmt.ConsumerState
	SequencePair     = natsfmt.SeqPair
	PendingAck       = natsfmt.PendingAck
	Redelivery       = natsfmt.Redelivery
)

// DecodeConsumerSnapshot decodes consumer state bytes (a consumer group's
// snapshot data, or o.dat); base is the file offset of data[0].
func DecodeConsumerSnapshot(file string, base int64, data []byte) (*ConsumerSnapshot, error) {
	s, err := natsfmt.DecodeConsumerState(file, base, data)
	return s, binfmt.Stamp(err, natsfmt.StructSnapshotData)
}

// MarshalJSON prints a delete block with its count and ranges.
func (b DeleteBlock) MarshalJSON() ([]byte, error) {
	type plain DeleteBlock
	return json.Marshal(struct {
		plain
		Count  uint64     `json:"count"`
		Ranges []SeqRange `json:"ranges"`
	}{plain(b), b.Count(), b.Ranges()})
}
