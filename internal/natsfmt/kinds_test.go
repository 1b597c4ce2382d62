package natsfmt

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// TestKindOf: the corruption kind follows the sentinel and the stamped
// structure, whatever the file is called.
func TestKindOf(t *testing.T) {
	stamped := func(s binfmt.Structure, sentinel error) error {
		return binfmt.Stamp(binfmt.Errorf("copied-away.bin", 8, sentinel, "x"), s)
	}
	for _, c := range []struct {
		err  error
		want CorruptionKind
	}{
		{stamped(StructIndexDB, binfmt.ErrChecksum), CorruptIndex},
		{stamped(StructIndexDB, binfmt.ErrFormat), CorruptIndex},
		{stamped(StructIndexDB, binfmt.ErrTooLarge), CorruptIndex},
		// Cut or emptied too: a cache the server rebuilds, as a garbled one.
		{stamped(StructIndexDB, binfmt.ErrTruncated), CorruptIndex},
		{stamped(StructMetaSum, binfmt.ErrChecksum), CorruptMetaChecksum},
		{stamped(StructMetaInf, binfmt.ErrChecksum), CorruptMetaChecksum},
		{stamped(StructMetaInf, binfmt.ErrFormat), CorruptUnparsable},
		{stamped(StructBlockRecord, binfmt.ErrChecksum), CorruptChecksum},
		{stamped(StructBlockRecord, binfmt.ErrTruncated), CorruptTruncated},
		{stamped(StructIndexDB, binfmt.ErrEncrypted), CorruptEncrypted},
		// Unstamped: a file named index.db is not taken for one.
		{binfmt.Errorf("msgs/index.db", 0, binfmt.ErrFormat, "x"), CorruptUnparsable},
		{fmt.Errorf("wrapped: %w", stamped(StructMetaSum, binfmt.ErrChecksum)), CorruptMetaChecksum},
		{errors.New("permission denied"), CorruptUnreadable},
		{binfmt.Stamp(&binfmt.CorruptError{File: "x", Err: fmt.Errorf("%w: meta.inf %w", binfmt.ErrTruncated, fs.ErrNotExist)}, StructMetaInf), CorruptMissing},
	} {
		if got := KindOf(c.err); got != c.want {
			t.Errorf("KindOf(%v, %q) = %s, want %s", c.err, binfmt.StructureOf(c.err), got, c.want)
		}
	}
	// The innermost reader's stamp stays.
	e := stamped(StructSnapshotTrailer, binfmt.ErrChecksum)
	if binfmt.Stamp(e, StructSnapshotHeader); binfmt.StructureOf(e) != StructSnapshotTrailer {
		t.Errorf("restamped to %q", binfmt.StructureOf(e))
	}
}
