package storeparse

import (
	"sort"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// o.dat (consumer state; store.go encodeConsumerState, filestore.go
// decodeConsumerState). No checksum. See FORMAT.md.
const (
	odatMagic = 0x16
	seqHiBit  = 1 << 63 // set in a stream sequence only by corruption
)

// SeqPair is a consumer/stream sequence pair.
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

// ConsumerState is a decoded o.dat (also the consumer raft snapshot payload).
type ConsumerState struct {
	Version     byte         `json:"version"`
	AckFloor    SeqPair      `json:"ack_floor"`
	Delivered   SeqPair      `json:"delivered"`
	Pending     []PendingAck `json:"pending,omitempty"`     // by stream seq
	Redelivered []Redelivery `json:"redelivered,omitempty"` // by stream seq
}

// ParseConsumerState decodes o.dat bytes, versions 1 and 2.
func ParseConsumerState(file string, data []byte) (*ConsumerState, error) {
	d := binfmt.NewDecbuf(file, 0, data)
	if m := d.Byte(); d.Err() == nil && m != odatMagic {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrFormat, "o.dat magic 0x%02x, want 0x16 (encrypted?)", m)
	}
	s := &ConsumerState{Version: d.Byte()}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if s.Version != 1 && s.Version != 2 {
		return nil, binfmt.Errorf(file, 1, binfmt.ErrFormat, "o.dat version %d unknown", s.Version)
	}
	s.AckFloor.Consumer = d.Uvarint()
	s.AckFloor.Stream = d.Uvarint()
	s.Delivered.Consumer = d.Uvarint()
	s.Delivered.Stream = d.Uvarint()
	if err := d.Err(); err != nil {
		return nil, err
	}
	if s.Version == 1 { // v1 stored "next to deliver"
		if s.AckFloor.Consumer > 1 {
			s.Delivered.Consumer += s.AckFloor.Consumer - 1
		}
		if s.AckFloor.Stream > 1 {
			s.Delivered.Stream += s.AckFloor.Stream - 1
		}
	}
	if s.AckFloor.Stream&seqHiBit != 0 || s.Delivered.Stream&seqHiBit != 0 {
		return s, binfmt.Errorf(file, 2, binfmt.ErrFormat, "stream sequence with bit 63 set (ack floor %d, delivered %d)", s.AckFloor.Stream, s.Delivered.Stream)
	}
	// Each pending entry takes at least 2 bytes (3 in v2).
	per := 2
	if s.Version == 2 {
		per = 3
	}
	if np := d.Count(per, "pending"); np > 0 {
		mints := d.Varint()
		for i := 0; i < np && d.Err() == nil; i++ {
			at := d.Offset()
			p := PendingAck{StreamSeq: d.Uvarint() + s.AckFloor.Stream}
			if s.Version == 2 {
				p.ConsumerSeq = d.Uvarint() + s.AckFloor.Consumer
			}
			ts := d.Varint()
			if d.Err() != nil {
				break
			}
			if p.StreamSeq == 0 {
				return s, binfmt.Errorf(file, at, binfmt.ErrFormat, "pending entry with stream sequence 0")
			}
			if s.Version == 1 {
				p.TS = (ts + mints) * 1e9
			} else {
				p.TS = (mints - ts) * 1e9
			}
			s.Pending = append(s.Pending, p)
		}
	}
	if nr := d.Count(2, "redelivered"); nr > 0 {
		for i := 0; i < nr && d.Err() == nil; i++ {
			r := Redelivery{StreamSeq: d.Uvarint() + s.AckFloor.Stream, Count: d.Uvarint()}
			if d.Err() == nil {
				s.Redelivered = append(s.Redelivered, r)
			}
		}
	}
	if err := d.Err(); err != nil {
		return s, err
	}
	sort.Slice(s.Pending, func(i, j int) bool { return s.Pending[i].StreamSeq < s.Pending[j].StreamSeq })
	sort.Slice(s.Redelivered, func(i, j int) bool { return s.Redelivered[i].StreamSeq < s.Redelivered[j].StreamSeq })
	return s, nil
}
