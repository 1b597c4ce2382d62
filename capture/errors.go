package capture

import "github.com/jsforensics/jsforensics/internal/binfmt"

// CorruptError is the error Decode, the endpoint decoders and the audit
// readers return for a capture that cannot be read: file, byte offset and a
// cause wrapping one of the sentinels below. Test with errors.As(err, &ce)
// where ce is a *CorruptError.
type CorruptError = binfmt.CorruptError

// The sentinels a CorruptError of this package wraps; test with errors.Is.
var (
	// ErrChecksum: a member of an audit archive fails its zip CRC.
	ErrChecksum = binfmt.ErrChecksum
	// ErrTruncated: the JSON or the archive ends early.
	ErrTruncated = binfmt.ErrTruncated
	// ErrFormat: the bytes are not the capture they claim to be.
	ErrFormat = binfmt.ErrFormat
	// ErrTooLarge: a capture or archive member is past this package's limits.
	ErrTooLarge = binfmt.ErrTooLarge
)
