package natsfmt

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// plainBlocks returns the uncompressed, unencrypted message blocks of the
// committed bundles (stream blocks and raft WAL blocks), keyed by file,
// with their checksum key "<stream or group>-<N>".
func plainBlocks(t testing.TB) (blocks map[string][]byte, keys map[string]string) {
	blocks, keys = map[string][]byte{}, map[string]string{}
	for k, b := range bundleFiles(t, isBlock) {
		if strings.HasPrefix(k, "encrypted-") || bytes.HasPrefix(b, []byte("cmp\x01")) || len(b) == 0 {
			continue
		}
		blocks[k] = b
		keys[k] = path.Base(path.Dir(path.Dir(k))) + "-" + strings.TrimSuffix(path.Base(k), ".blk")
	}
	if len(blocks) == 0 {
		t.Fatal("no plain message block in the bundles")
	}
	return blocks, keys
}

// TestRecordFrameRealBlocks walks every record real servers wrote with the
// one frame reader: each header frames a record, each checksum matches, and
// the walk ends exactly at the end of the block. A flipped payload bit
// fails the checksum; a length over the limit fails the frame.
func TestRecordFrameRealBlocks(t *testing.T) {
	blocks, keys := plainBlocks(t)
	records := 0
	for _, k := range sortedKeys(blocks) {
		b, hh := blocks[k], binfmt.NewHH64(keys[k])
		off := int64(0)
		for off+RecordHeaderLen <= int64(len(b)) {
			h := ParseRecordHeader(b[off:])
			if why := h.FrameError(); why != "" || off+h.Len > int64(len(b)) {
				t.Fatalf("%s at %d: %q (rl %d, %d bytes left)", k, off, why, h.Len, int64(len(b))-off)
			}
			rec := b[off : off+h.Len]
			if _, ok := RecordChecksum(hh, h, rec); !ok {
				t.Fatalf("%s at %d (seq %d): checksum mismatch with key %q", k, off, h.Seq, keys[k])
			}
			if h.Tombstone && h.Len != EmptyRecordLen {
				t.Errorf("%s at %d: tombstone of %d bytes", k, off, h.Len)
			}
			if h.Len > EmptyRecordLen {
				bad := bytes.Clone(rec)
				bad[h.Len-ChecksumLen-1] ^= 0x08
				if _, ok := RecordChecksum(hh, h, bad); ok {
					t.Fatalf("%s at %d: flipped payload bit still matches", k, off)
				}
			}
			records++
			off += h.Len
		}
		if off != int64(len(b)) {
			t.Errorf("%s: walk ends at %d of %d", k, off, len(b))
		}
		over := bytes.Clone(b[:RecordHeaderLen])
		over[3] = 0x7f // rl ≥ 2 GiB with the headers bit clear: over the limit
		if ParseRecordHeader(over).FrameError() == "" {
			t.Errorf("%s: rl %d accepted", k, ParseRecordHeader(over).Len)
		}
	}
	t.Logf("%d records in %d blocks", records, len(blocks))
}

// FuzzRecordHeader: any 22 bytes parse; a header that frames a record never
// makes the checksum read outside it.
func FuzzRecordHeader(f *testing.F) {
	blocks, keys := plainBlocks(f)
	for _, k := range sortedKeys(blocks)[:min(len(blocks), 20)] {
		b := blocks[k]
		f.Add(b[:min(len(b), 512)], keys[k])
	}
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		if len(b) < RecordHeaderLen {
			return
		}
		h := ParseRecordHeader(b)
		if h.Len > RLBadThresh && h.FrameError() == "" {
			t.Fatal("length over the limit frames a record")
		}
		if h.FrameError() != "" || h.Len > int64(len(b)) {
			return
		}
		if h.Len < EmptyRecordLen {
			t.Fatalf("record of %d bytes framed", h.Len)
		}
		RecordChecksum(binfmt.NewHH64(key), h, b[:h.Len])
		_ = h.Subject(b)
	})
}
