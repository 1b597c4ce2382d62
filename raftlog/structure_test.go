package raftlog_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

// TestErrorsNameTheirStructure breaks the raft files a real v2.15.2 server
// wrote (v2.15.2-flat, n1, _meta_) and checks that each decoder's error
// names the structure that failed, so no verdict is read off a file name.
func TestErrorsNameTheirStructure(t *testing.T) {
	dir := filepath.Join("../testdata/bundles/v2.15.2-flat/bundle/store-n1", "$SYS", "_js_", "_meta_")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	flipped := func(b []byte, at int) []byte {
		b = append([]byte(nil), b...)
		b[at] ^= 0x01
		return b
	}
	snap := read("snapshots/snap.1.11")
	// The payload of the WAL's first record holding one: an append entry.
	blk := read("msgs/3.blk")
	br, err := storeparse.NewBlockReader("3.blk", bytes.NewReader(blk), int64(len(blk)), "_meta_-3")
	if err != nil {
		t.Fatal(err)
	}
	var entry []byte
	for len(entry) == 0 {
		r, err := br.Next()
		if err != nil {
			t.Fatalf("no record with data in 3.blk: %v", err)
		}
		entry = r.Data
	}
	if _, err := raftlog.DecodeAppendEntry("3.blk", 0, entry); err != nil {
		t.Fatalf("intact append entry: %v", err)
	}
	peers := read("peers.idx")
	for _, c := range []struct {
		name string
		err  error
		want binfmt.Structure
		is   error
	}{
		{"peers.idx cut", second(raftlog.DecodePeerState("peers.idx", peers[:12])), natsfmt.StructPeersIdx, binfmt.ErrTruncated},
		{"tav.idx cut", second(raftlog.DecodeTermVote("tav.idx", read("tav.idx")[:5])), natsfmt.StructTermVote, binfmt.ErrTruncated},
		{"commit.idx flipped", second(raftlog.DecodeCommitIndex("commit.idx", "_meta_", flipped(read("commit.idx"), 0))), natsfmt.StructCommitIdx, binfmt.ErrChecksum},
		{"snapshot flipped", second(raftlog.DecodeSnapshot("snap", "_meta_", flipped(snap, len(snap)/2))), natsfmt.StructSnapshotTrailer, binfmt.ErrChecksum},
		{"snapshot cut", second(raftlog.DecodeSnapshot("snap", "_meta_", snap[:27])), natsfmt.StructSnapshotHeader, binfmt.ErrTruncated},
		{"append entry cut", second(raftlog.DecodeAppendEntry("3.blk", 0, entry[:30])), natsfmt.StructAppendEntry, binfmt.ErrTruncated},
	} {
		var ce *binfmt.CorruptError
		if !errors.As(c.err, &ce) || ce.Structure != c.want || !errors.Is(c.err, c.is) {
			t.Errorf("%s: %v (structure %q), want %v in %q", c.name, c.err, binfmt.StructureOf(c.err), c.is, c.want)
		}
	}
	// The WAL's own files go through storeparse, which stamps its own.
	if _, err := storeparse.ParseIndex("index.db", []byte{1, 2}, "_meta_"); binfmt.StructureOf(err) != natsfmt.StructIndexDB {
		t.Errorf("index.db: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
