package natsfmt

import (
	"sort"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// Consumer state: obs/<consumer>/o.dat and a consumer group's snapshot data
// (store.go encodeConsumerState, filestore.go decodeConsumerState; the same
// in v2.10.22, v2.12.1 and v2.15.2). No checksum.
//
//	0x16 | version 1|2 | uvarint ackFloor.consumer, ackFloor.stream,
//	delivered.consumer, delivered.stream | uvarint numPending |
//	[varint mints | numPending × (uvarint sseq-ackFloor.stream,
//	 v2: uvarint dseq-ackFloor.consumer, varint ts delta)] |
//	uvarint numRedelivered | numRedelivered × (uvarint sseq-ackFloor.stream, uvarint count)
const (
	ConsumerStateMagic = 0x16
	consumerStateV1    = 1
	consumerStateV2    = 2
	seqHiBit           = 1 << 63 // set in a stream sequence only by corruption
)

// SeqPair is a consumer and a stream sequence.
type SeqPair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

// PendingAck is a delivered, not yet acknowledged message.
type PendingAck struct {
	StreamSeq   uint64 `json:"stream_seq"`
	ConsumerSeq uint64 `json:"consumer_seq"` // 0 in version 1
	TS          int64  `json:"ts"`           // Unix ns, second resolution
}

// Redelivery counts deliveries of one stream sequence.
type Redelivery struct {
	StreamSeq uint64 `json:"stream_seq"`
	Count     uint64 `json:"count"`
}

// ConsumerState is a decoded consumer state. The server keeps Pending and
// Redelivered in maps; here they are sorted by stream sequence so output is
// stable.
type ConsumerState struct {
	Version     byte         `json:"version"`
	Delivered   SeqPair      `json:"delivered"`
	AckFloor    SeqPair      `json:"ack_floor"`
	Pending     []PendingAck `json:"pending,omitempty"`
	Redelivered []Redelivery `json:"redelivered,omitempty"`
	// Trailing counts the bytes after the state; o.dat has none.
	Trailing int `json:"trailing,omitempty"`
}

// DecodeConsumerState decodes consumer state bytes, versions 1 and 2; base
// is data[0]'s offset in file. On an error the fields decoded so far come
// back with it when the header was readable.
func DecodeConsumerState(file string, base int64, data []byte) (*ConsumerState, error) {
	d := binfmt.NewDecbuf(file, base, data)
	if m := d.Byte(); d.Err() == nil && m != ConsumerStateMagic {
		return nil, binfmt.Errorf(file, base, binfmt.ErrFormat, "consumer state magic 0x%02x, want 0x16 (encrypted?)", m)
	}
	s := &ConsumerState{Version: d.Byte()}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if s.Version != consumerStateV1 && s.Version != consumerStateV2 {
		return nil, binfmt.Errorf(file, base+1, binfmt.ErrFormat, "consumer state version %d unknown", s.Version)
	}
	s.AckFloor.Consumer, s.AckFloor.Stream = d.Uvarint(), d.Uvarint()
	s.Delivered.Consumer, s.Delivered.Stream = d.Uvarint(), d.Uvarint()
	if err := d.Err(); err != nil {
		return s, err
	}
	if s.Version == consumerStateV1 { // v1 stored "next to deliver"
		if s.AckFloor.Consumer > 1 {
			s.Delivered.Consumer += s.AckFloor.Consumer - 1
		}
		if s.AckFloor.Stream > 1 {
			s.Delivered.Stream += s.AckFloor.Stream - 1
		}
	}
	if s.AckFloor.Stream&seqHiBit != 0 || s.Delivered.Stream&seqHiBit != 0 {
		return s, binfmt.Errorf(file, base+2, binfmt.ErrFormat, "stream sequence with bit 63 set (ack floor %d, delivered %d)", s.AckFloor.Stream, s.Delivered.Stream)
	}
	// Each pending entry takes at least 2 bytes (3 in v2).
	per := 2
	if s.Version == consumerStateV2 {
		per = 3
	}
	if np := d.Count(per, "pending"); np > 0 {
		seen := make(map[uint64]bool, np)
		mints := d.Varint()
		for range np {
			at := d.Offset()
			p := PendingAck{StreamSeq: d.Uvarint() + s.AckFloor.Stream}
			if s.Version == consumerStateV2 {
				p.ConsumerSeq = d.Uvarint() + s.AckFloor.Consumer
			}
			ts := d.Varint()
			if d.Err() != nil {
				return s, d.Err()
			}
			if p.StreamSeq == 0 { // the server's errCorruptState
				return s, binfmt.Errorf(file, at, binfmt.ErrFormat, "pending entry with stream sequence 0")
			}
			// A pending message is one delivered past the ack floor; the
			// server writes each once (a map). Zeroed bytes decode to
			// entries at the floor itself, all alike.
			if p.StreamSeq <= s.AckFloor.Stream && s.AckFloor.Stream > 0 {
				return s, binfmt.Errorf(file, at, binfmt.ErrFormat, "pending entry at stream sequence %d, not above the ack floor %d", p.StreamSeq, s.AckFloor.Stream)
			}
			if p.StreamSeq > s.Delivered.Stream || p.ConsumerSeq > s.Delivered.Consumer {
				return s, binfmt.Errorf(file, at, binfmt.ErrFormat, "pending entry at stream sequence %d (consumer %d), past the last delivered %d (consumer %d)", p.StreamSeq, p.ConsumerSeq, s.Delivered.Stream, s.Delivered.Consumer)
			}
			if seen[p.StreamSeq] {
				return s, binfmt.Errorf(file, at, binfmt.ErrFormat, "pending entry for stream sequence %d listed twice", p.StreamSeq)
			}
			seen[p.StreamSeq] = true
			if s.Version == consumerStateV1 {
				p.TS = (ts + mints) * 1e9
			} else {
				p.TS = (mints - ts) * 1e9
			}
			s.Pending = append(s.Pending, p)
		}
	}
	for range d.Count(2, "redelivered") {
		seq, n := d.Uvarint(), d.Uvarint()
		if d.Err() != nil {
			break
		}
		// The server keeps only entries with a sequence and a count
		// (decodeConsumerState: seq > 0 && n > 0).
		if seq > 0 && n > 0 {
			s.Redelivered = append(s.Redelivered, Redelivery{StreamSeq: seq + s.AckFloor.Stream, Count: n})
		}
	}
	sort.Slice(s.Pending, func(i, j int) bool { return s.Pending[i].StreamSeq < s.Pending[j].StreamSeq })
	sort.Slice(s.Redelivered, func(i, j int) bool { return s.Redelivered[i].StreamSeq < s.Redelivered[j].StreamSeq })
	s.Trailing = d.Len()
	return s, d.Err()
}
