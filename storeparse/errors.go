package storeparse

import "github.com/jsforensics/jsforensics/internal/binfmt"

// CorruptError is the error every decoder of this package returns for
// damaged data: the file, the byte offset, the sequence concerned (0 if
// unknown), the Structure that failed (block record, index.db, meta.inf,
// o.dat, …) and the cause, which wraps one of the sentinels below. Test
// with errors.As(err, &ce) where ce is a *CorruptError; StreamScan.Problems
// holds such errors too.
type CorruptError = binfmt.CorruptError

// Structure names the on-disk structure a CorruptError is about.
type Structure = binfmt.Structure

// The sentinels a CorruptError wraps; test with errors.Is.
var (
	// ErrChecksum: a record's, index.db's or meta.sum's checksum does not
	// match bytes that are all there.
	ErrChecksum = binfmt.ErrChecksum
	// ErrTruncated: a block, index.db or o.dat ends before a length says.
	ErrTruncated = binfmt.ErrTruncated
	// ErrFormat: a magic byte, version, length or count is impossible.
	ErrFormat = binfmt.ErrFormat
	// ErrTooLarge: a length claims more than the file or a limit allows.
	ErrTooLarge = binfmt.ErrTooLarge
	// ErrEncrypted: the store is encrypted at rest and no key was given.
	ErrEncrypted = binfmt.ErrEncrypted
)
