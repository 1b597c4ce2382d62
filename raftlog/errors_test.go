package raftlog_test

import (
	"errors"
	"testing"

	"github.com/jsforensics/jsforensics/raftlog"
)

// TestErrorsPublic: a library user tells damage apart with this package's
// own names: errors.As to *raftlog.CorruptError, errors.Is with its
// sentinels.
func TestErrorsPublic(t *testing.T) {
	_, badSum := raftlog.DecodeCommitIndex("S-R3F-x/commit.idx", "S-R3F-x", make([]byte, 16))
	_, short := raftlog.DecodeCommitIndex("S-R3F-x/commit.idx", "S-R3F-x", make([]byte, 3))
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{{"checksum", badSum, raftlog.ErrChecksum}, {"short", short, raftlog.ErrTruncated}} {
		var ce *raftlog.CorruptError
		if !errors.As(tc.err, &ce) || ce.File != "S-R3F-x/commit.idx" || ce.Structure == "" {
			t.Errorf("%s: %v is no *raftlog.CorruptError on commit.idx naming its structure", tc.name, tc.err)
			continue
		}
		if !errors.Is(tc.err, tc.want) || errors.Is(tc.err, raftlog.ErrFormat) {
			t.Errorf("%s: %v, want it to wrap %v only", tc.name, tc.err, tc.want)
		}
	}
}
