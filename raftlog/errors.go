package raftlog

import "github.com/jsforensics/jsforensics/internal/binfmt"

// CorruptError is the error the decoders of peers.idx, tav.idx,
// commit.idx, snapshots, append entries and ops return for damaged data:
// file, byte offset, raft index (Seq, 0 if unknown), the Structure that
// failed and a cause wrapping one of the sentinels below. Test with
// errors.As(err, &ce) where ce is a *CorruptError.
type CorruptError = binfmt.CorruptError

// Structure names the raft structure a CorruptError is about.
type Structure = binfmt.Structure

// The sentinels a CorruptError of this package wraps; test with errors.Is.
var (
	// ErrChecksum: a snapshot's or commit.idx's checksum does not match
	// (the value decoded is returned with the error).
	ErrChecksum = binfmt.ErrChecksum
	// ErrTruncated: a file or entry ends before its lengths say.
	ErrTruncated = binfmt.ErrTruncated
	// ErrFormat: a version, entry type, length or count is impossible.
	ErrFormat = binfmt.ErrFormat
	// ErrTooLarge: a length claims more than the limits of this package.
	ErrTooLarge = binfmt.ErrTooLarge
)
