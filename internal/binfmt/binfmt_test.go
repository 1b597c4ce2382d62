package binfmt

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

func TestDecbufStickyError(t *testing.T) {
	d := NewDecbuf("f", 100, []byte{1, 2, 3})
	if d.U16() != 0x0201 {
		t.Fatal("u16")
	}
	if d.U32() != 0 || d.Err() == nil {
		t.Fatal("short read did not fail")
	}
	var ce *CorruptError
	if !errors.As(d.Err(), &ce) || ce.Offset != 102 || ce.File != "f" || !errors.Is(d.Err(), ErrTruncated) {
		t.Fatalf("error %v", d.Err())
	}
	// Sticky: later reads return zero and keep the first error.
	first := d.Err()
	if d.Byte() != 0 || d.Err() != first {
		t.Fatal("error not sticky")
	}
}

func TestDecbufCountBoundedByBytes(t *testing.T) {
	// A count of 1<<40 items in 3 bytes is refused before anything is allocated.
	b := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0}
	d := NewDecbuf("f", 0, b)
	if n := d.Count(8, "peers"); n != 0 || !errors.Is(d.Err(), ErrFormat) {
		t.Fatalf("count %d err %v", n, d.Err())
	}
}

func TestDecbufVarints(t *testing.T) {
	d := NewDecbuf("f", 0, []byte{0xac, 0x02, 0x03})
	if d.Uvarint() != 300 || d.Varint() != -2 || d.Err() != nil || d.Len() != 0 {
		t.Fatal("varints")
	}
	d = NewDecbuf("f", 0, []byte{0xff, 0xff})
	d.Uvarint()
	if !errors.Is(d.Err(), ErrTruncated) {
		t.Fatalf("unterminated uvarint: %v", d.Err())
	}
}

func TestReadFullBounded(t *testing.T) {
	r := bytes.NewReader([]byte("hello"))
	if _, err := ReadFull("f", r, 1<<40, 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("claimed size not refused: %v", err)
	}
	b, err := ReadFull("f", r, 8, 0)
	if !errors.Is(err, ErrTruncated) || string(b) != "hello" {
		t.Fatalf("short file: %q %v", b, err)
	}
	b, err = ReadFull("f", r, 5, 0)
	if err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
}

// TestHH64MatchesServer checks the checksum against a file nats-server
// wrote: a v2.15.2 _meta_ commit.idx holds the commit index and its HH64
// keyed with the group name.
func TestHH64MatchesServer(t *testing.T) {
	b, err := os.ReadFile("../../testdata/bundles/v2.15.2-flat/bundle/store-n1/$SYS/_js_/_meta_/commit.idx")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 16 {
		t.Fatalf("%d bytes", len(b))
	}
	got := HH64("_meta_", b[:8])
	if !bytes.Equal(got[:], b[8:]) {
		t.Fatalf("HH64 %x, server wrote %x", got, b[8:])
	}
	if other := HH64("S-R3F-x", b[:8]); bytes.Equal(other[:], b[8:]) {
		t.Fatal("key ignored")
	}
}

// TestReadFileFS: a file under the kept buffer, an empty one, one past the
// buffer, one over the limit, a folder and a missing file, through
// fstest.MapFS (whose files are io.ReaderAt, as the bundle's are).
func TestReadFileFS(t *testing.T) {
	small := []byte("meta.inf")
	big := bytes.Repeat([]byte{7}, 40<<10) // past the 32 KiB first read
	fsys := fstest.MapFS{
		"small":     {Data: small},
		"empty":     {Data: nil},
		"big":       {Data: big},
		"dir/child": {Data: small},
	}
	for _, tc := range []struct {
		name  string
		limit int64
		want  []byte
		err   error
	}{
		{"small", 1 << 10, small, nil},
		{"empty", 1 << 10, []byte{}, nil},
		{"big", 1 << 20, big, nil},
		{"big", 1 << 10, nil, ErrTooLarge},
		{"small", 4, nil, ErrTooLarge},
	} {
		got, err := ReadFileFS(fsys, tc.name, tc.limit)
		if !errors.Is(err, tc.err) || !bytes.Equal(got, tc.want) || (err == nil && got == nil) {
			t.Errorf("%s (limit %d): %d bytes, %v; want %d bytes, %v", tc.name, tc.limit, len(got), err, len(tc.want), tc.err)
		}
	}
	if _, err := ReadFileFS(fsys, "dir", 1<<10); err == nil {
		t.Error("a folder read as a file")
	}
	if _, err := ReadFileFS(fsys, "missing", 1<<10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
