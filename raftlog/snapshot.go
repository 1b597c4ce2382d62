package raftlog

import (
	"io"
	"strconv"
	"strings"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Snapshot file layout, snapshots/snap.<term>.<index> (raft.go
// encodeSnapshot, loadLastSnapshot):
//
//	 0          8           16       20            20+L         end-8   end
//	+----------+-----------+--------+-------------+------------+-------+
//	| lastTerm | lastIndex | L u32  | peerstate   | data       | HH64  |
//	| u64 LE   | u64 LE    | LE     | (L bytes)   |            |       |
//	+----------+-----------+--------+-------------+------------+-------+
//	HH64 is keyed by SHA-256 of the group name and covers bytes [0, end-8).
const (
	minSnapshotLen  = 28
	snapChecksumLen = 8
	// MaxSnapshotSize bounds a snapshot file read whole (meta snapshots of
	// large clusters reach tens of MiB; a larger file is refused).
	MaxSnapshotSize = binfmt.MaxFileRead
)

// Snapshot is a decoded raft snapshot file.
type Snapshot struct {
	Term  uint64 `json:"term"`
	Index uint64 `json:"index"`
	// PeerState is nil when the peerstate bytes do not decode.
	PeerState    *PeerState `json:"peer_state"`
	PeerStateRaw []byte     `json:"-"`
	// Data is the upper-layer snapshot: meta (DecodeMetaSnapshot), stream
	// (DecodeStreamSnapshot) or consumer (DecodeConsumerSnapshot).
	Data       []byte  `json:"-"`
	DataOffset int64   `json:"data_offset"`
	DataLen    int     `json:"data_len"`
	Sum        [8]byte `json:"-"`
	ChecksumOK bool    `json:"checksum_ok"`
}

// ReadSnapshot reads and decodes a whole snapshot file of group.
func ReadSnapshot(file, group string, r io.ReaderAt, size int64) (*Snapshot, error) {
	b, err := binfmt.ReadFull(file, r, size, MaxSnapshotSize)
	if err != nil {
		return nil, err
	}
	return DecodeSnapshot(file, group, b)
}

// DecodeSnapshot decodes a snapshot file and verifies its HH64 keyed by the
// group name. A checksum mismatch returns the decoded snapshot (fields as
// read, ChecksumOK false) with an ErrChecksum error at the checksum's
// offset. A last index of 0, which the server discards, is ErrFormat.
func DecodeSnapshot(file, group string, b []byte) (*Snapshot, error) {
	v, err := decodeSnapshot(file, group, b)
	return v, binfmt.Stamp(err, natsfmt.StructSnapshotHeader)
}

func decodeSnapshot(file, group string, b []byte) (*Snapshot, error) {
	if len(b) < minSnapshotLen {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrTruncated, "snapshot is %d bytes, minimum %d", len(b), minSnapshotLen)
	}
	hoff := len(b) - snapChecksumLen
	s := &Snapshot{}
	copy(s.Sum[:], b[hoff:])
	want := binfmt.HH64(group, b[:hoff])
	s.ChecksumOK = want == s.Sum
	var first error
	if !s.ChecksumOK {
		first = binfmt.Stamp(binfmt.Errorf(file, int64(hoff), binfmt.ErrChecksum, "snapshot checksum %x, want %x (key %q)", s.Sum, want, group), natsfmt.StructSnapshotTrailer)
	}
	d := binfmt.NewDecbuf(file, 0, b[:hoff])
	s.Term = d.U64()
	s.Index = d.U64()
	lpsOff := d.Offset()
	lps := d.U32()
	if uint64(lps) > uint64(d.Len()) {
		if first == nil {
			first = binfmt.Errorf(file, lpsOff, binfmt.ErrTruncated, "peer state length %d exceeds the %d bytes left", lps, d.Len())
		}
		return s, first
	}
	psOff := d.Offset()
	s.PeerStateRaw = d.Bytes(int(lps))
	ps, err := decodePeerState(file, psOff, s.PeerStateRaw)
	if err == nil {
		s.PeerState = ps
	} else if first == nil {
		first = err
	}
	s.DataOffset = d.Offset()
	s.Data = d.Rest()
	s.DataLen = len(s.Data)
	if s.Index == 0 && first == nil {
		first = binfmt.Errorf(file, 8, binfmt.ErrFormat, "snapshot last index is 0")
	}
	return s, first
}

// ParseSnapshotName parses a snapshot file's base name "snap.<term>.<index>".
// Like the server (termAndIndexFromSnapFile) it accepts only names that
// round-trip through that format exactly: no signs, no leading zeros.
func ParseSnapshotName(name string) (term, index uint64, ok bool) {
	rest, found := strings.CutPrefix(name, "snap.")
	if !found {
		return 0, 0, false
	}
	ts, is, found := strings.Cut(rest, ".")
	if !found {
		return 0, 0, false
	}
	t, err1 := strconv.ParseUint(ts, 10, 64)
	i, err2 := strconv.ParseUint(is, 10, 64)
	if err1 != nil || err2 != nil || strconv.FormatUint(t, 10) != ts || strconv.FormatUint(i, 10) != is {
		return 0, 0, false
	}
	return t, i, true
}
