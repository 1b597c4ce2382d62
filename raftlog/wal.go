package raftlog

import (
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// A raft WAL is a filestore named after its group: its blocks hold records
// in the message-block frame (internal/natsfmt record.go), each record's
// payload one append entry. The block framing reader (storeparse) gives the
// frame; DecodeWALRecord is the one place the frame, the payload's place in
// the file and the append entry with its ops are joined, for analyze,
// extract and dump alike:
//
//	Offset           Offset+22       +SubjectLen   [+4+HeaderLen]          Offset+Len-8  Offset+Len
//	+----------------+---------------+-------------+-----------------------+-------------+
//	| rl seq ts slen | subject       | [hlen hdrs] | payload: append entry | HH64        |
//	+----------------+---------------+-------------+-----------------------+-------------+
//	                                               ^ PayloadOffset
//
// raft writes no subject and no headers (raft.go storeToWAL,
// n.wal.StoreMsg(_EMPTY_, nil, ae.buf, …), v2.10.27 to v2.15.3), so on every
// real WAL the payload starts 22 bytes after the record; a damaged frame
// may say otherwise, and its payload is placed where the frame puts it.

// WALFrame is what the block framing says of one record of a raft WAL block.
type WALFrame struct {
	// Offset is the record's first byte in the block; in the decompressed
	// block when Compressed (raft never compresses its WAL).
	Offset int64 `json:"record_offset"`
	// Len is the whole record, header and checksum included.
	Len int    `json:"len"`
	Seq uint64 `json:"seq"` // the record's sequence: the raft index
	TS  int64  `json:"ts"`
	// SubjectLen and, with HasHeaders, HeaderLen (the NATS headers after
	// their u32 length) place the payload.
	SubjectLen int  `json:"subject_len,omitempty"`
	HasHeaders bool `json:"headers,omitempty"`
	HeaderLen  int  `json:"header_len,omitempty"`
	Erased     bool `json:"erased,omitempty"`
	Tombstone  bool `json:"tombstone,omitempty"`
	// ChecksumOK: the record's checksum holds (false when it failed or was
	// not verified).
	ChecksumOK bool `json:"checksum_ok"`
	Compressed bool `json:"compressed,omitempty"`
}

// PayloadOffset is the block offset of the payload's first byte: past the
// record header, the subject and, with headers, their length and the
// headers.
func (f *WALFrame) PayloadOffset() int64 {
	off := f.Offset + natsfmt.RecordHeaderLen + int64(f.SubjectLen)
	if f.HasHeaders {
		off += walHeaderLenLen + int64(f.HeaderLen)
	}
	return off
}

// walHeaderLenLen is the u32 length before a record's NATS headers.
const walHeaderLenLen = 4

// WALRecord is one record of a raft WAL, decoded by DecodeWALRecord.
type WALRecord struct {
	File string `json:"-"`
	WALFrame
	// PayloadOffset is WALFrame.PayloadOffset(): the base of every offset
	// in Entry, Ops and Err. Offsets are file offsets unless Compressed.
	PayloadOffset int64  `json:"payload_offset"`
	Payload       []byte `json:"-"`
	// Entry is the append entry (what decoded before a fault when Err is
	// set); nil for a tombstone, an erased record or a payload shorter than
	// an append entry's fixed part.
	Entry *AppendEntry `json:"-"`
	Err   error        `json:"-"`
	// Ops holds the op of every EntryNormal entry of Entry, in order.
	Ops []WALOp `json:"-"`
}

// WALOp is the op carried by one EntryNormal entry.
type WALOp struct {
	Entry  int   // index in Entry.Entries
	Offset int64 // of the op byte: the entry's DataOffset
	Op     *Op   // nil when nothing decodes
	Err    error // DecodeOp's
}

// DecodeWALRecord joins the frame of one WAL record of file to its payload
// (the bytes between the frame's subject or headers and its checksum):
// the payload's offset, the append entry decoded at that offset, and the
// op of each EntryNormal entry. Tombstones and erased records carry no
// entry. The decoded values point into payload.
func DecodeWALRecord(file string, f WALFrame, payload []byte) *WALRecord {
	r := &WALRecord{File: file, WALFrame: f, PayloadOffset: f.PayloadOffset(), Payload: payload}
	if f.Tombstone || f.Erased {
		return r
	}
	r.Entry, r.Err = DecodeAppendEntry(file, r.PayloadOffset, payload)
	if r.Entry == nil {
		return r
	}
	for i := range r.Entry.Entries {
		e := &r.Entry.Entries[i]
		if e.Type != EntryNormal {
			continue
		}
		op, err := DecodeOp(file, e.DataOffset, e.Data)
		r.Ops = append(r.Ops, WALOp{Entry: i, Offset: e.DataOffset, Op: op, Err: err})
	}
	return r
}

// IndexMismatch reports whether the append entry's raft index (pindex+1)
// differs from the record's sequence, which the server makes equal.
func (r *WALRecord) IndexMismatch() bool {
	return r.Entry != nil && r.Entry.Index() != r.Seq
}
