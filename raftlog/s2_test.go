package raftlog

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

// s2Seeds returns the S2 blocks real servers wrote: the data of every
// _meta_ snapshot in the generator's bundles (directory bundles and
// bundle.zip archives), stopped servers' stores included. A snapshot of
// zero streams has empty data (formats.md 6.3), which is no S2 block:
// callers that need one skip it.
func s2Seeds(t testing.TB) [][]byte {
	var snaps [][]byte
	isMetaSnap := func(p string) bool {
		return strings.HasSuffix(path.Dir(p), "/_meta_/snapshots") && strings.HasPrefix(path.Base(p), "snap.")
	}
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	for _, dir := range dirs {
		var fsys fs.FS
		if fi, err := os.Stat(filepath.Join(dir, "bundle")); err == nil && fi.IsDir() {
			fsys = os.DirFS(filepath.Join(dir, "bundle"))
		} else if b, err := os.ReadFile(filepath.Join(dir, "bundle.zip")); err == nil {
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			fsys = zr
		} else {
			continue
		}
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !isMetaSnap(p) {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			snaps = append(snaps, b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out [][]byte
	for _, b := range snaps {
		lps := binary.LittleEndian.Uint32(b[16:])
		out = append(out, b[20+lps:len(b)-8])
	}
	if len(out) == 0 {
		t.Fatal("no meta snapshot in ../testdata/bundles")
	}
	return out
}

// TestS2BlockLenAgrees: the tag walker gives the claimed length on every
// real block, and the decode equals s2.Decode's.
func TestS2BlockLenAgrees(t *testing.T) {
	seeds := s2Seeds(t)
	empty := 0
	for _, b := range seeds {
		if len(b) == 0 {
			// No S2 block at all: a meta snapshot of zero streams has an
			// empty payload (formats.md 6.3; membership-v2.12.1's killed
			// servers at index 6). It must read as zero streams.
			empty++
			if sas, err := DecodeMetaSnapshot("snap", 0, b); err != nil || len(sas) != 0 {
				t.Errorf("empty meta snapshot data: %d streams, %v", len(sas), err)
			}
			continue
		}
		want, err := s2.Decode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeS2Block("snap", 0, b, 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("decodeS2Block: %v (%d bytes, want %d)", err, len(got), len(want))
		}
		// Truncations are refused, never mis-decoded.
		for _, n := range []int{1, 2, len(b) / 2, len(b) - 1} {
			if _, err := decodeS2Block("snap", 0, b[:n], 0); err == nil {
				t.Errorf("block cut to %d of %d bytes decoded", n, len(b))
			}
		}
	}
	t.Logf("%d real S2 blocks, %d empty meta snapshot payloads", len(seeds)-empty, empty)
	if len(seeds) == empty {
		t.Fatal("no non-empty S2 block in ../testdata/bundles")
	}
}

// FuzzS2Block: decodeS2Block accepts exactly what s2.Decode accepts (within
// the size limit) and yields the same bytes.
func FuzzS2Block(f *testing.F) {
	for _, b := range s2Seeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeS2Block("f", 0, b, 1<<20)
		if claim, n := binary.Uvarint(b); n <= 0 || claim > 1<<20 {
			if err == nil {
				t.Fatal("accepted a block with a bad or oversized length header")
			}
			return
		}
		want, werr := s2.Decode(nil, b)
		if (err == nil) != (werr == nil) {
			t.Fatalf("decodeS2Block err %v, s2.Decode err %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatal("decoded bytes differ")
		}
	})
}
