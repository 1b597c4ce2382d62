package storeparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// seedBundles are the bundles whose stream files seed the fuzz targets:
// the healthy workload written by each nats-server version (index.db v1,
// v3, v4; S2 and plain blocks; deletes, erase, purges, headers, KV) and the
// lifecycle bundle (atomic batch, whole purge, standalone server).
var seedBundles = []string{"v2.10.22-per-server", "v2.12.1-archive", "v2.15.2-flat", "lifecycle-v2.12.1"}

// fixtureFiles reads the files matching pattern (relative to a stream
// folder, fs.Glob syntax) in every stream of the seed bundles.
func fixtureFiles(t testing.TB, pattern string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range seedBundles {
		for _, bs := range storesOf(t, name) {
			fsys := os.DirFS(bs.Root)
			m, err := fs.Glob(fsys, "*/streams/*/"+pattern)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range m {
				b, err := fs.ReadFile(fsys, f)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixture matches %s", pattern)
	}
	return out
}

// checkErr fails unless err is nil, io.EOF or a *binfmt.CorruptError.
func checkErr(t *testing.T, err error) {
	var ce *binfmt.CorruptError
	if err != nil && err != io.EOF && !errors.As(err, &ce) {
		t.Fatalf("error is not a CorruptError: %T %v", err, err)
	}
}

func FuzzBlockReader(f *testing.F) {
	// Real blocks and their first 4 KiB (a cut block is a torn tail).
	// Note: go1.26.8's engine may show "execs: N (0/sec)" for long stretches
	// with this target; the worker is running, it reports in large batches.
	for _, b := range fixtureFiles(f, "msgs/*.blk") {
		f.Add(b)
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		br, err := NewBlockReader("f.blk", bytes.NewReader(b), int64(len(b)), "ORDERS-1")
		if err != nil {
			checkErr(t, err)
			return
		}
		// The in-memory reader (blocks read whole) must see exactly the same.
		mr, err := newBlockReader("f.blk", nil, b, int64(len(b)), "ORDERS-1")
		if err != nil {
			t.Fatal(err)
		}
		prev := int64(-1)
		for i := 0; ; i++ {
			r, err := br.Next()
			var mrec Record
			merr := mr.next(&mrec)
			if fmt.Sprint(err) != fmt.Sprint(merr) || !sameRecord(r, mrec) {
				t.Fatalf("record %d: ReadAt reader %+v %v, in-memory reader %+v %v", i, r, err, mrec, merr)
			}
			if err == io.EOF {
				return
			}
			checkErr(t, err)
			if err != nil && r.Len == 0 {
				if _, err2 := br.Next(); err2 != err {
					t.Fatalf("framing error not sticky: %v then %v", err, err2)
				}
				return
			}
			if r.Offset <= prev || r.Offset+int64(r.Len) > br.Size() || r.Len < emptyRecord {
				t.Fatalf("record %d at %d len %d after %d, block %d", i, r.Offset, r.Len, prev, br.Size())
			}
			prev = r.Offset
		}
	})
}

func sameRecord(a, b Record) bool {
	return a.Offset == b.Offset && a.Len == b.Len && a.Seq == b.Seq && a.TS == b.TS &&
		bytes.Equal(a.Subject, b.Subject) && bytes.Equal(a.Header, b.Header) && bytes.Equal(a.Data, b.Data) &&
		a.HasHeaders == b.HasHeaders && a.Erased == b.Erased && a.Tombstone == b.Tombstone &&
		a.ChecksumOK == b.ChecksumOK && a.Sum == b.Sum
}

// FuzzScanStreamParallel replaces block 8 of a 5-block stream (the LOGS
// stream of a bundle, blocks 7 and 8 stored decompressed) and checks that
// scanning with several workers gives exactly the one-block-at-a-time scan.
func FuzzScanStreamParallel(f *testing.F) {
	dir, _ := multiBlockStream(f)
	base := readAtFS(f, dir).(fstest.MapFS)
	for _, n := range []string{"6", "7", "8", "9", "10"} {
		b := base["msgs/"+n+".blk"].Data
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := fstest.MapFS{}
		for k, v := range base {
			m[k] = v
		}
		m["msgs/8.blk"] = &fstest.MapFile{Data: b, Mode: 0o644}
		seq, err := ScanStream(m, ".", ScanOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		par, err := ScanStream(m, ".", ScanOptions{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := scanDump(t, seq), scanDump(t, par); a != b {
			t.Fatalf("parallel scan differs:\n%s", cmp.Diff(a, b))
		}
		for _, p := range seq.Problems {
			var ce *binfmt.CorruptError
			if !errors.As(p, &ce) {
				t.Fatalf("problem is not a CorruptError: %T %v", p, p)
			}
		}
	})
}

func FuzzParseIndex(f *testing.F) {
	for _, b := range fixtureFiles(f, "msgs/index.db") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ParseIndex("index.db", b, "")
		checkErr(t, err)
		if x != nil {
			for _, blk := range x.Blocks {
				_ = blk.Deleted.Len()
				blk.Deleted.Each(func(uint64) bool { return true })
			}
		}
	})
}

func FuzzStreamMeta(f *testing.F) {
	// Stream and consumer meta.inf with their meta.sum (same folder: both
	// globs list folders in the same order).
	for _, dir := range []string{"", "obs/*/"} {
		infs := fixtureFiles(f, dir+"meta.inf")
		sums := fixtureFiles(f, dir+"meta.sum")
		if len(infs) != len(sums) {
			f.Fatalf("%d meta.inf, %d meta.sum", len(infs), len(sums))
		}
		for i := range infs {
			f.Add(infs[i], sums[i])
		}
	}
	f.Fuzz(func(t *testing.T, inf, sum []byte) {
		_, err := ParseStreamMeta("meta.inf", inf)
		checkErr(t, err)
		_, err = ParseConsumerMeta("meta.inf", inf)
		checkErr(t, err)
		checkErr(t, CheckMetaSum("meta.sum", sum, inf, "ORDERS"))
	})
}
