package raftlog

import (
	"encoding/binary"
	"io"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// commit.idx layout (v2.15.2, _meta_ only; raft.go openCommitFile,
// writeCommitIndexLocked):
//
//	+---------------+--------------------------------------+
//	| commit u64 LE | HH64(key = group name, commit bytes) |
//	+---------------+--------------------------------------+
const (
	commitLen = 16
	// MaxCommitSize bounds a commit.idx read whole; a real one is 16 bytes.
	MaxCommitSize = 4 << 10
)

// CommitIndex is a decoded commit.idx.
type CommitIndex struct {
	Commit     uint64  `json:"commit"`
	Sum        [8]byte `json:"-"`
	ChecksumOK bool    `json:"checksum_ok"`
	Trailing   int     `json:"trailing,omitempty"`
}

// ReadCommitIndex reads and decodes a whole commit.idx of group.
func ReadCommitIndex(file, group string, r io.ReaderAt, size int64) (*CommitIndex, error) {
	b, err := binfmt.ReadFull(file, r, size, MaxCommitSize)
	if err != nil {
		return nil, err
	}
	return DecodeCommitIndex(file, group, b)
}

// DecodeCommitIndex decodes commit.idx bytes and verifies the checksum keyed
// by the group name. On a mismatch the decoded value is returned together
// with an ErrChecksum error at offset 8 (the server ignores such a file:
// "Commit file corrupt, checksums did not match").
func DecodeCommitIndex(file, group string, b []byte) (*CommitIndex, error) {
	v, err := decodeCommitIndex(file, group, b)
	return v, binfmt.Stamp(err, natsfmt.StructCommitIdx)
}

func decodeCommitIndex(file, group string, b []byte) (*CommitIndex, error) {
	d := binfmt.NewDecbuf(file, 0, b)
	if d.Len() < commitLen {
		d.Fail(binfmt.ErrTruncated, "commit file needs %d bytes, has %d", commitLen, d.Len())
		return nil, d.Err()
	}
	ci := &CommitIndex{}
	raw := d.Bytes(8)
	ci.Commit = binary.LittleEndian.Uint64(raw)
	copy(ci.Sum[:], d.Bytes(8))
	ci.Trailing = d.Len()
	want := binfmt.HH64(group, raw)
	ci.ChecksumOK = want == ci.Sum
	if !ci.ChecksumOK {
		return ci, binfmt.Errorf(file, 8, binfmt.ErrChecksum, "commit checksum %x, want %x (key %q)", ci.Sum, want, group)
	}
	return ci, nil
}
