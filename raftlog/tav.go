package raftlog

import (
	"io"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// tav.idx layout (raft.go writeTermVote, readTermVote):
//
//	+-------------+------------------------------+
//	| term u64 LE | vote: 0 or 8 bytes (peer id) |
//	+-------------+------------------------------+
const (
	termLen     = 8
	termVoteLen = termLen + natsfmt.PeerIDLen
	// MaxTavSize bounds a tav.idx read whole; a real one is 8 or 16 bytes.
	MaxTavSize = 4 << 10
)

// TermVote is a decoded tav.idx.
type TermVote struct {
	Term uint64 `json:"term"`
	// Vote is the peer voted for in Term; empty when no vote was stored.
	Vote string `json:"vote,omitempty"`
	// HasTerm is false for a file shorter than 8 bytes, which the server
	// reads as "no term" without error.
	HasTerm bool `json:"has_term"`
	// Trailing counts bytes beyond term+vote. The server would take them
	// as part of the vote string; a real file has none.
	Trailing int `json:"trailing,omitempty"`
}

// ReadTermVote reads and decodes a whole tav.idx.
func ReadTermVote(file string, r io.ReaderAt, size int64) (*TermVote, error) {
	b, err := binfmt.ReadFull(file, r, size, MaxTavSize)
	if err != nil {
		return nil, err
	}
	return DecodeTermVote(file, b)
}

// DecodeTermVote decodes tav.idx bytes. A file shorter than 8 bytes is
// "no term" for the server, but the bytes were written as a term, so it is
// returned with an ErrTruncated error as well. A vote of 1..7 bytes is also
// ErrTruncated; the term is still returned.
func DecodeTermVote(file string, b []byte) (*TermVote, error) {
	v, err := decodeTermVote(file, b)
	return v, binfmt.Stamp(err, natsfmt.StructTermVote)
}

func decodeTermVote(file string, b []byte) (*TermVote, error) {
	tv := &TermVote{}
	if len(b) == 0 {
		return tv, nil
	}
	d := binfmt.NewDecbuf(file, 0, b)
	if d.Len() < termLen {
		d.Fail(binfmt.ErrTruncated, "term needs %d bytes, has %d", termLen, d.Len())
		return tv, d.Err()
	}
	tv.Term, tv.HasTerm = d.U64(), true
	switch {
	case d.Len() == 0:
	case d.Len() < natsfmt.PeerIDLen:
		d.Fail(binfmt.ErrTruncated, "vote needs %d bytes, has %d", natsfmt.PeerIDLen, d.Len())
	default:
		tv.Vote = string(d.Bytes(natsfmt.PeerIDLen))
		tv.Trailing = d.Len()
	}
	return tv, d.Err()
}
