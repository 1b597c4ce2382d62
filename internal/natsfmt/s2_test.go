package natsfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/klauspost/compress/s2"
)

// s2BlockSeeds returns the S2 blocks real servers wrote: the data of every
// non-empty _meta_ snapshot in the committed bundles (a snapshot of zero
// streams has empty data, which is no S2 block).
func s2BlockSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, b := range snapshotData(t, "_meta_") {
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatal("no non-empty meta snapshot in ../../testdata/bundles")
	}
	return out
}

// s2StreamSeeds returns the S2 streams of the compressed message blocks
// real servers wrote ("cmp\x01" uvarint size, stream, raw last 8 bytes),
// keyed by file.
func s2StreamSeeds(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for k, b := range bundleFiles(t, isBlock) {
		if !bytes.HasPrefix(b, []byte("cmp\x01")) {
			continue
		}
		_, n := binary.Uvarint(b[4:])
		out[k] = b[4+n : len(b)-ChecksumLen]
	}
	if len(out) == 0 {
		t.Fatal("no compressed message block in ../../testdata/bundles")
	}
	return out
}

// TestS2BlockLenAgrees: the tag walker gives the claimed length on every
// real block, and the decode equals s2.Decode's.
func TestS2BlockLenAgrees(t *testing.T) {
	seeds := s2BlockSeeds(t)
	for _, b := range seeds {
		want, err := s2.Decode(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeS2Block("snap", 0, b, 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("DecodeS2Block: %v (%d bytes, want %d)", err, len(got), len(want))
		}
		// Truncations are refused, never mis-decoded.
		for _, n := range []int{1, 2, len(b) / 2, len(b) - 1} {
			if _, err := DecodeS2Block("snap", 0, b[:n], 0); err == nil {
				t.Errorf("block cut to %d of %d bytes decoded", n, len(b))
			}
		}
	}
	t.Logf("%d real S2 blocks", len(seeds))
}

// TestS2StreamRealBlocks: every compressed message block a real server
// wrote decodes to what klauspost's stream reader yields; a stream cut short
// or with a flipped byte fails, at the offset of the chunk that failed
// (never past the bytes given).
func TestS2StreamRealBlocks(t *testing.T) {
	seeds := s2StreamSeeds(t)
	for _, k := range sortedKeys(seeds) {
		b := seeds[k]
		want, err := io.ReadAll(s2.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("%s: s2.Reader: %v", k, err)
		}
		const base = 7 // where the stream sits in its file, in errors
		got, err := DecodeS2Stream(k, base, bytes.NewReader(b), int64(len(b)), 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: DecodeS2Stream: %v (%d bytes, want %d)", k, err, len(got), len(want))
		}
		if _, err := DecodeS2Stream(k, base, bytes.NewReader(b), int64(len(b)), len(want)-1); !errors.Is(err, binfmt.ErrTooLarge) {
			t.Errorf("%s: limit one byte short: %v, want ErrTooLarge", k, err)
		}
		for _, n := range []int{3, len(b) / 2, len(b) - 1} {
			_, err := DecodeS2Stream(k, base, bytes.NewReader(b), int64(n), 0)
			var ce *binfmt.CorruptError
			if !errors.As(err, &ce) || ce.Offset < base || ce.Offset >= base+int64(n) {
				t.Errorf("%s cut to %d bytes: %v", k, n, err)
			}
		}
		// A flipped payload byte breaks the chunk's CRC or its tags.
		bad := bytes.Clone(b)
		bad[len(bad)-1] ^= 0x40
		if _, err := DecodeS2Stream(k, base, bytes.NewReader(bad), int64(len(bad)), 0); err == nil {
			t.Errorf("%s: flipped last byte decoded", k)
		}
	}
	t.Logf("%d real compressed blocks", len(seeds))
}

// FuzzS2Block: DecodeS2Block accepts exactly what s2.Decode accepts (within
// the size limit) and yields the same bytes.
func FuzzS2Block(f *testing.F) {
	for _, b := range s2BlockSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeS2Block("f", 0, b, 1<<20)
		if claim, n := binary.Uvarint(b); n <= 0 || claim > 1<<20 {
			if err == nil {
				t.Fatal("accepted a block with a bad or oversized length header")
			}
			return
		}
		want, werr := s2.Decode(nil, b)
		if (err == nil) != (werr == nil) {
			t.Fatalf("DecodeS2Block err %v, s2.Decode err %v", err, werr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatal("decoded bytes differ")
		}
	})
}

// FuzzS2Stream: whatever DecodeS2Stream accepts, klauspost's reader decodes
// to the same bytes; errors are CorruptErrors inside the input.
func FuzzS2Stream(f *testing.F) {
	seeds := s2StreamSeeds(f)
	for _, k := range sortedKeys(seeds) {
		f.Add(seeds[k])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeS2Stream("f", 0, bytes.NewReader(b), int64(len(b)), 1<<20)
		checkErr(t, err)
		var ce *binfmt.CorruptError
		if errors.As(err, &ce) && (ce.Offset < 0 || ce.Offset > int64(len(b))) {
			t.Fatalf("error offset %d outside %d bytes", ce.Offset, len(b))
		}
		if err != nil {
			return
		}
		want, werr := io.ReadAll(s2.NewReader(bytes.NewReader(b), s2.ReaderMaxBlockSize(4<<20)))
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatal("decoded bytes differ from s2.Reader's")
		}
	})
}
