package raftlog

import (
	"encoding/json"
	"math/bits"
	"slices"

	"github.com/jsforensics/jsforensics/internal/binfmt"
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
	streamStateMagic   = 42
	streamStateV1      = 1
	streamStateV2      = 2 // with sources, v2.15.2
	runLengthMagic     = 33
	seqSetMagic        = 22
	seqSetHeaderLen    = 10 // magic, version, u32 nodes, u32 size
	seqSetBuckets      = 32
	seqSetBucketsV1    = 64
	seqSetNodeLen      = 8 + seqSetBuckets*8 + 2   // 266
	seqSetNodeLenV1    = 8 + seqSetBucketsV1*8 + 2 // 522
	consumerStateMagic = 22
	consumerStateV1    = 1
	consumerStateV2    = 2
)

// SeqRange is the inclusive range First..Last of sequences.
type SeqRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// SeqSetNode is one node of an AVL seqset: bit i of Bits[j] is sequence
// Base + 64·j + i.
type SeqSetNode struct {
	Base uint64   `json:"base"`
	Bits []uint64 `json:"-"`
}

// DeleteBlock is one delete block of a stream snapshot: a run (Kind "run",
// First and Num), a seqset (Kind "avl", Nodes kept as stored bitmaps so
// memory stays proportional to the bytes read), or the legacy JSON list
// (turned into one "run" block per maximal run).
type DeleteBlock struct {
	Offset int64        `json:"offset"`
	Kind   string       `json:"kind"`
	First  uint64       `json:"first,omitempty"`
	Num    uint64       `json:"num,omitempty"`
	Nodes  []SeqSetNode `json:"-"`
	// Size is the seqset's stored size (which should equal Count()).
	Size uint32 `json:"size,omitempty"`
}

// Count is the number of sequences in the block.
func (b *DeleteBlock) Count() uint64 {
	if b.Kind == "run" {
		return b.Num
	}
	var n uint64
	for _, nd := range b.Nodes {
		for _, w := range nd.Bits {
			n += uint64(bits.OnesCount64(w))
		}
	}
	return n
}

// Contains reports whether seq is in the block.
func (b *DeleteBlock) Contains(seq uint64) bool {
	if b.Kind == "run" {
		return b.Num > 0 && seq >= b.First && seq-b.First < b.Num
	}
	for _, nd := range b.Nodes {
		if seq < nd.Base {
			continue
		}
		i := (seq - nd.Base) / 64
		if i < uint64(len(nd.Bits)) && nd.Bits[i]&(1<<((seq-nd.Base)%64)) != 0 {
			return true
		}
	}
	return false
}

// Ranges returns the block's sequences as maximal ascending runs. It
// allocates in proportion to the runs, so callers printing huge sets may
// prefer Count and Contains.
func (b *DeleteBlock) Ranges() []SeqRange {
	if b.Kind == "run" {
		if b.Num == 0 || b.First+b.Num-1 < b.First {
			return nil
		}
		return []SeqRange{{b.First, b.First + b.Num - 1}}
	}
	nodes := slices.Clone(b.Nodes)
	slices.SortFunc(nodes, func(x, y SeqSetNode) int { return cmpU64(x.Base, y.Base) })
	var out []SeqRange
	for _, nd := range nodes {
		for j, w := range nd.Bits {
			for w != 0 {
				q := nd.Base + uint64(j)*64 + uint64(bits.TrailingZeros64(w))
				w &= w - 1
				if n := len(out); n > 0 && out[n-1].Last+1 == q {
					out[n-1].Last = q
				} else if n == 0 || q > out[n-1].Last {
					out = append(out, SeqRange{q, q})
				}
			}
		}
	}
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
		case seqSetMagic:
			blk, n, err := decodeSeqSet(file, off, d.Rest())
			if err != nil {
				return s, err
			}
			d.Skip(n)
			s.Deleted = append(s.Deleted, blk)
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

// decodeSeqSet decodes an AVL seqset (avl/seqset.go Encode/Decode) at
// file offset off and returns it with the number of bytes it took.
//
//	0x16 | version 1|2 | u32 numNodes | u32 size | numNodes × node
//	node v2: u64 base | 32 × u64 buckets | u16 height   (266 bytes)
//	node v1: u64 base | 64 × u64 buckets | u16 height   (522 bytes)
func decodeSeqSet(file string, off int64, b []byte) (DeleteBlock, int, error) {
	d := binfmt.NewDecbuf(file, off, b)
	blk := DeleteBlock{Offset: off, Kind: "avl"}
	d.Skip(1)
	ver := d.Byte()
	nodeLen, buckets := seqSetNodeLen, seqSetBuckets
	switch ver {
	case 2:
	case 1:
		nodeLen, buckets = seqSetNodeLenV1, seqSetBucketsV1
	default:
		if d.Err() == nil {
			return blk, 0, binfmt.Errorf(file, off+1, binfmt.ErrFormat, "seqset version %d", ver)
		}
	}
	cntOff := d.Offset()
	nn := d.U32()
	blk.Size = d.U32()
	if d.Err() != nil {
		return blk, 0, d.Err()
	}
	// The node count is bounded by the bytes that hold the nodes.
	if uint64(nn) > uint64(d.Len()/nodeLen) {
		return blk, 0, binfmt.Errorf(file, cntOff, binfmt.ErrTruncated, "seqset of %d nodes needs %d bytes, %d left", nn, uint64(nn)*uint64(nodeLen), d.Len())
	}
	blk.Nodes = make([]SeqSetNode, 0, nn)
	for range nn {
		nd := SeqSetNode{Base: d.U64(), Bits: make([]uint64, buckets)}
		for j := range nd.Bits {
			nd.Bits[j] = d.U64()
		}
		d.U16() // height
		blk.Nodes = append(blk.Nodes, nd)
	}
	return blk, int(d.Offset() - off), d.Err()
}

// Consumer state (consumer group snapshot data, and obs/<c>/o.dat; store.go
// encodeConsumerState, filestore.go decodeConsumerState):
//
//	0x16 | version 1|2 | uvarint ackFloor.consumer, ackFloor.stream,
//	delivered.consumer, delivered.stream | uvarint numPending |
//	[varint mints | numPending × (uvarint sseq-ackFloor.stream,
//	 v2: uvarint dseq-ackFloor.consumer, varint ts delta)] |
//	uvarint numRedelivered | numRedelivered × (uvarint sseq-ackFloor.stream, uvarint count)

// SequencePair is a consumer and a stream sequence.
type SequencePair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

// PendingAck is one delivered, unacknowledged message.
type PendingAck struct {
	Stream   uint64 `json:"stream_seq"`
	Consumer uint64 `json:"consumer_seq"`
	TS       int64  `json:"ts"` // ns, to the second
}

// Redelivery is a message delivered more than once.
type Redelivery struct {
	Stream uint64 `json:"stream_seq"`
	Count  uint64 `json:"count"`
}

// ConsumerSnapshot is a consumer's state.
type ConsumerSnapshot struct {
	Version     uint8        `json:"version"`
	Delivered   SequencePair `json:"delivered"`
	AckFloor    SequencePair `json:"ack_floor"`
	Pending     []PendingAck `json:"pending,omitempty"`
	Redelivered []Redelivery `json:"redelivered,omitempty"`
}

// DecodeConsumerSnapshot decodes consumer state bytes (a consumer group's
// snapshot data, or o.dat); base is the file offset of data[0].
func DecodeConsumerSnapshot(file string, base int64, data []byte) (*ConsumerSnapshot, error) {
	d := binfmt.NewDecbuf(file, base, data)
	if d.Byte() != consumerStateMagic && d.Err() == nil {
		return nil, binfmt.Errorf(file, base, binfmt.ErrFormat, "consumer state magic %#x, want 0x16", data[0])
	}
	c := &ConsumerSnapshot{Version: d.Byte()}
	if d.Err() != nil {
		return nil, d.Err()
	}
	if c.Version != consumerStateV1 && c.Version != consumerStateV2 {
		return nil, binfmt.Errorf(file, base+1, binfmt.ErrFormat, "consumer state version %d", c.Version)
	}
	c.AckFloor.Consumer, c.AckFloor.Stream = d.Uvarint(), d.Uvarint()
	c.Delivered.Consumer, c.Delivered.Stream = d.Uvarint(), d.Uvarint()
	if d.Err() != nil {
		return c, d.Err()
	}
	if c.Version == consumerStateV1 {
		// Version 1 stored delivered as "next to deliver".
		if c.AckFloor.Consumer > 1 {
			c.Delivered.Consumer += c.AckFloor.Consumer - 1
		}
		if c.AckFloor.Stream > 1 {
			c.Delivered.Stream += c.AckFloor.Stream - 1
		}
	}
	const hbit = 1 << 63
	if c.AckFloor.Stream&hbit != 0 || c.Delivered.Stream&hbit != 0 {
		return c, binfmt.Errorf(file, base+2, binfmt.ErrFormat, "stream sequence with bit 63 set (ack floor %d, delivered %d)", c.AckFloor.Stream, c.Delivered.Stream)
	}
	// A pending entry takes at least 2 bytes (3 in v2).
	minPending := 2
	if c.Version == consumerStateV2 {
		minPending = 3
	}
	if np := d.Count(minPending, "pending"); np > 0 {
		mints := d.Varint()
		for range np {
			entOff := d.Offset()
			p := PendingAck{Stream: d.Uvarint() + c.AckFloor.Stream}
			if c.Version == consumerStateV2 {
				p.Consumer = d.Uvarint() + c.AckFloor.Consumer
			}
			ts := d.Varint()
			if d.Err() != nil {
				return c, d.Err()
			}
			if p.Stream == 0 {
				return c, binfmt.Errorf(file, entOff, binfmt.ErrFormat, "pending stream sequence 0")
			}
			if c.Version == consumerStateV1 {
				p.TS = (ts + mints) * 1e9
			} else {
				p.TS = (mints - ts) * 1e9
			}
			c.Pending = append(c.Pending, p)
		}
	}
	nr := d.Count(2, "redelivered")
	for range nr {
		seq, n := d.Uvarint(), d.Uvarint()
		if d.Err() != nil {
			break
		}
		if seq > 0 && n > 0 {
			c.Redelivered = append(c.Redelivered, Redelivery{Stream: seq + c.AckFloor.Stream, Count: n})
		}
	}
	return c, d.Err()
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
