package natsfmt

import (
	"encoding/binary"
	"fmt"
	"hash"
)

// Message-block record frame (filestore.go writeMsgRecordLocked,
// rebuildStateFromBufLocked; the same in v2.10.22, v2.12.1 and v2.15.2). A
// stream's msgs/N.blk and a raft group's WAL msgs/N.blk are both records
// back to back:
//
//	0        4          12         20     22              22+slen
//	+--------+----------+----------+------+---------------+---------------------+---------+---------+
//	| rl u32 | seq u64  | ts i64   | slen | subject       | [hlen u32][headers] | payload | HH64 (8)|
//	+--------+----------+----------+------+---------------+---------------------+---------+---------+
//	  bit31:   bit63: erased                              only with the rl bit            rl-8 .. rl
//	  headers  bit62: tombstone
//
// Every reader of a record header goes through ParseRecordHeader and
// FrameError, and every checksum through RecordChecksum: the block reader,
// its resync after a framing error, and the first-sequence peek.
const (
	RecordHeaderLen = 22 // rl + seq + ts + slen
	ChecksumLen     = 8  // trailing HighwayHash-64
	// EmptyRecordLen is a record with nothing in it (a tombstone).
	EmptyRecordLen = RecordHeaderLen + ChecksumLen
	// RLBadThresh is the largest record length nats-server accepts on read
	// (rlBadThresh). A length above it is corruption, never a record, so it
	// also bounds a reader's buffer.
	RLBadThresh = 32 << 20

	rlHeadersBit = 1 << 31 // in rl: the record carries NATS headers
	seqErasedBit = 1 << 63 // in seq: erased (secure delete)
	seqTombBit   = 1 << 62 // in seq: delete tombstone
	hdrLenLen    = 4       // the u32 header length after the subject
)

// RecordHeader is the fixed head of a record, flag bits split off.
type RecordHeader struct {
	Len        int64  // rl without the headers bit: the whole record, header and checksum included
	Seq        uint64 // stream sequence (raft index in a WAL), flag bits masked off
	TS         int64  // Unix ns; 0 in erased records
	SubjectLen int
	HasHeaders bool
	Erased     bool
	Tombstone  bool
}

// ParseRecordHeader decodes the first RecordHeaderLen bytes of b, which the
// caller has made sure are there.
func ParseRecordHeader(b []byte) RecordHeader {
	rl := binary.LittleEndian.Uint32(b[0:])
	seq := binary.LittleEndian.Uint64(b[4:])
	return RecordHeader{
		Len:        int64(rl &^ rlHeadersBit),
		Seq:        seq &^ (seqErasedBit | seqTombBit),
		TS:         int64(binary.LittleEndian.Uint64(b[12:])),
		SubjectLen: int(binary.LittleEndian.Uint16(b[20:])),
		HasHeaders: rl&rlHeadersBit != 0,
		Erased:     seq&seqErasedBit != 0,
		Tombstone:  seq&seqTombBit != 0,
	}
}

// FrameError says why h cannot frame a record, or "" when it can: rl at
// most RLBadThresh, room for the checksum, and the subject (and the header
// length when flagged) inside the body. This is v2.15.2's rule; v2.10.22
// omits the 4 bytes of the header length, the stricter rule is used.
func (h RecordHeader) FrameError() string {
	switch {
	case h.Len > RLBadThresh:
		return fmt.Sprintf("record length %d over the %d limit", h.Len, RLBadThresh)
	case !h.Framed():
		return fmt.Sprintf("impossible record: rl %d slen %d headers %v", h.Len, h.SubjectLen, h.HasHeaders)
	}
	return ""
}

// Framed is FrameError() == "" without building the message: a resync
// tries it at every offset of a damaged block (formatting there cost 15 s
// on a 64 MiB block of random bytes).
func (h RecordHeader) Framed() bool {
	shlen := int64(h.SubjectLen)
	if h.HasHeaders {
		shlen += hdrLenLen
	}
	dlen := h.Len - RecordHeaderLen
	return h.Len <= RLBadThresh && dlen >= ChecksumLen && shlen <= dlen-ChecksumLen
}

// Subject returns the subject of rec, a whole record framed by h.
func (h RecordHeader) Subject(rec []byte) []byte {
	return rec[RecordHeaderLen : RecordHeaderLen+h.SubjectLen : RecordHeaderLen+h.SubjectLen]
}

// StoredChecksum returns the checksum stored at the end of rec.
func (h RecordHeader) StoredChecksum(rec []byte) []byte { return rec[h.Len-ChecksumLen : h.Len] }

// RecordChecksum computes rec's checksum with hh (binfmt.NewHH64 of the key
// "<stream or raft group>-<block index>"): seq and ts, the subject, then
// headers and payload; the 4-byte header length is not hashed. rec is a
// whole record that passed FrameError. ok reports whether the computed sum
// equals the stored one.
func RecordChecksum(hh hash.Hash64, h RecordHeader, rec []byte) (sum uint64, ok bool) {
	hh.Reset()
	hh.Write(rec[4:20])
	hh.Write(h.Subject(rec))
	body := rec[RecordHeaderLen+h.SubjectLen : h.Len-ChecksumLen]
	if h.HasHeaders {
		body = body[hdrLenLen:]
	}
	hh.Write(body)
	sum = hh.Sum64()
	return sum, sum == binary.LittleEndian.Uint64(h.StoredChecksum(rec))
}
