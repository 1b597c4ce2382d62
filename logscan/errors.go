package logscan

import "github.com/jsforensics/jsforensics/internal/binfmt"

// CorruptError is what Scanner.Err returns when the log itself cannot be
// read on (a truncated or damaged gzip stream): the file, the offset in
// the decompressed text reached and a cause wrapping ErrTruncated,
// ErrChecksum or ErrFormat. Test with errors.As(err, &ce) where ce is a
// *CorruptError.
type CorruptError = binfmt.CorruptError

// The sentinels a CorruptError of this package wraps; test with errors.Is.
var (
	// ErrTruncated: a compressed log ends in the middle of its stream.
	ErrTruncated = binfmt.ErrTruncated
	// ErrChecksum: a compressed log fails its gzip checksum.
	ErrChecksum = binfmt.ErrChecksum
	// ErrFormat: a compressed log's stream is damaged.
	ErrFormat = binfmt.ErrFormat
)
