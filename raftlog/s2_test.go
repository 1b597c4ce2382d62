package raftlog

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/s2"
)

// s2Seeds returns the S2 blocks real servers wrote: the data of every
// _meta_ snapshot in testdata/real.
func s2Seeds(t testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/real/*/*/_meta_/snapshots/snap.*")
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lps := binary.LittleEndian.Uint32(b[16:])
		out = append(out, b[20+lps:len(b)-8])
	}
	if len(out) == 0 {
		t.Fatal("no meta snapshot in testdata/real")
	}
	return out
}

// TestS2BlockLenAgrees: the tag walker gives the claimed length on every
// real block, and the decode equals s2.Decode's.
func TestS2BlockLenAgrees(t *testing.T) {
	for _, b := range s2Seeds(t) {
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
