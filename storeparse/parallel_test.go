package storeparse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// scanDump renders everything a StreamScan holds, the unexported block state
// (delete ranges, record-length cache, where counting stopped) included, so
// that two scans can be compared exactly.
func scanDump(t testing.TB, sc *StreamScan) string {
	t.Helper()
	type blockDump struct {
		BlockScan
		DeletedRanges []SeqRange
		RLBase        uint64
		RLs           []uint32
		CountEnd      int64
	}
	type problemDump struct {
		File   string
		Offset int64
		Seq    uint64
		Error  string
	}
	c := *sc
	var d struct {
		Scan     StreamScan
		Blocks   []blockDump
		Problems []problemDump
	}
	for _, b := range c.Blocks {
		d.Blocks = append(d.Blocks, blockDump{BlockScan: b, DeletedRanges: b.deleted, RLBase: b.rlBase, RLs: b.rls, CountEnd: b.countEnd})
	}
	for _, p := range c.Problems {
		pd := problemDump{Offset: -1, Error: p.Error()}
		var ce *binfmt.CorruptError
		if errors.As(p, &ce) {
			pd.File, pd.Offset, pd.Seq = ce.File, ce.Offset, ce.Seq
		}
		d.Problems = append(d.Problems, pd)
	}
	c.Blocks, c.Problems = nil, nil
	d.Scan = c
	out, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// readAtFS serves the files of an os.DirFS through fstest.MapFS: files with
// ReadAt that are not *os.File.
func readAtFS(t testing.TB, root string) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// streamOnlyFS hides ReadAt: blocks are read whole through Read.
type streamOnlyFS struct{ fs.FS }

type streamOnlyFile struct{ f fs.File }

func (f streamOnlyFile) Stat() (fs.FileInfo, error) { return f.f.Stat() }
func (f streamOnlyFile) Read(p []byte) (int, error) { return f.f.Read(p) }
func (f streamOnlyFile) Close() error               { return f.f.Close() }

func (s streamOnlyFS) Open(name string) (fs.File, error) {
	f, err := s.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return f, nil
	}
	return streamOnlyFile{f}, nil
}

// checkSameScans scans dir of root one block at a time and with several
// workers, through os.DirFS, a ReadAt and a Read-only fs.FS, and fails on
// any difference. It returns the sequential scan.
func checkSameScans(t *testing.T, root, dir string) *StreamScan {
	t.Helper()
	osfs := os.DirFS(root)
	ref, err := ScanStream(osfs, dir, ScanOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := scanDump(t, ref)
	type variant struct {
		name string
		fsys fs.FS
		opts ScanOptions
	}
	vs := []variant{
		{"os/2 workers", osfs, ScanOptions{Workers: 2}},
		{"os/3 workers", osfs, ScanOptions{Workers: 3}},
		{"os/8 workers", osfs, ScanOptions{Workers: 8}},
		{"os/default", osfs, ScanOptions{}},
		{"ReadAt/1 worker", readAtFS(t, root), ScanOptions{Workers: 1}},
		{"ReadAt/4 workers", readAtFS(t, root), ScanOptions{Workers: 4}},
		{"Read/4 workers", streamOnlyFS{osfs}, ScanOptions{Workers: 4}},
	}
	for _, v := range vs {
		sc, err := ScanStream(v.fsys, dir, v.opts)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if diff := cmp.Diff(want, scanDump(t, sc)); diff != "" {
			t.Errorf("%s %s: %s differs from the one-block-at-a-time scan (-want +got):\n%s", root, dir, v.name, diff)
		}
	}
	// Visit forces one block at a time; the figures must not move either.
	n := 0
	sc, err := ScanStream(osfs, dir, ScanOptions{Workers: 4, Visit: func(BlockInfo, *Record) error { n++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, scanDump(t, sc)); diff != "" {
		t.Errorf("%s %s: scan with Visit differs (-want +got):\n%s", root, dir, diff)
	}
	recs := 0
	for _, b := range ref.Blocks {
		recs += b.Records
	}
	if n != recs {
		t.Errorf("%s %s: visited %d records, blocks hold %d", root, dir, n, recs)
	}
	return ref
}

func TestParallelScanSameAsSequential(t *testing.T) {
	n, multi := 0, 0
	for _, bs := range allStores(t) {
		for _, dir := range streamDirs(t, bs.Root) {
			ref := checkSameScans(t, bs.Root, dir)
			n++
			if len(ref.Blocks) > 1 {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Fatal("no multi-block stream among the bundles: the parallel path was not exercised")
	}
	t.Logf("%d bundle streams (%d with several blocks) compared", n, multi)
}

// logsStores are the servers holding the LOGS stream of the three healthy
// bundles, one per nats-server version: 5 blocks (6-9 S2-compressed, 10
// plain), max_bytes having removed the oldest messages of block 6 (written
// in index.db only) and the blocks before it.
func logsStores(t testing.TB) []bundleStore {
	t.Helper()
	var out []bundleStore
	for _, b := range []string{"v2.10.22-per-server", "v2.12.1-archive", "v2.15.2-flat"} {
		for _, s := range storesOf(t, b) {
			if _, ok := findWant(s, "$G", "LOGS"); ok {
				out = append(out, s)
			}
		}
	}
	if len(out) != 3 {
		t.Fatalf("%d LOGS streams in the healthy bundles, want 3", len(out))
	}
	return out
}

// multiBlockStream is logsCopy of the LOGS stream of the v2.15.2-flat bundle.
func multiBlockStream(t testing.TB) (string, []recInfo) {
	t.Helper()
	return logsCopy(t, store(t, "v2.15.2-flat", "n3"))
}

// logsCopy copies the LOGS stream of bs (blocks 6-9 S2-compressed, 10
// plain) and stores blocks 7 and 8 decompressed, as a plain block
// nats-server reads the same: three plain blocks, two of them in the
// middle. It returns the copy's folder and the records of block 8.
func logsCopy(t testing.TB, bs bundleStore) (string, []recInfo) {
	t.Helper()
	src := filepath.Join(bs.Root, "$G", "streams", "LOGS")
	dst := copyDir(t, src)
	for _, n := range []int{7, 8} {
		f := filepath.Join(dst, "msgs", fmt.Sprintf("%d.blk", n))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		br, err := NewBlockReader(f, strings.NewReader(string(b)), int64(len(b)), "")
		if err != nil || !br.Compressed() {
			t.Fatalf("%s: block %d of the fixture is not compressed (%v)", bs, n, err)
		}
		plain := make([]byte, br.Size())
		if _, err := br.src.ReadAt(plain, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, plain, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The copy reads as the original: same figures, no problem.
	orig, err := ScanStream(os.DirFS(src), ".", ScanOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := ScanStream(os.DirFS(dst), ".", ScanOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if cp.State != orig.State || len(cp.Problems) != 0 || len(cp.Blocks) != 5 || cp.IndexRemoved != orig.IndexRemoved {
		t.Fatalf("%s: decompressed copy: state %+v problems %v, original %+v", bs, cp.State, cp.Problems, orig.State)
	}
	return dst, records(t, filepath.Join(dst, "msgs", "8.blk"), "LOGS-8")
}

func TestParallelScanCorruptMiddle(t *testing.T) {
	_, recs := multiBlockStream(t)
	if len(recs) < 4 {
		t.Fatalf("block 8 has %d records", len(recs))
	}
	mid := recs[len(recs)/2]
	cases := []struct {
		name string
		file string // under msgs/
		f    func([]byte) []byte
		want error // a problem in file with this sentinel
	}{
		{"payload bit flip", "8.blk", func(b []byte) []byte { b[mid.off+int64(mid.len)-9] ^= 0x10; return b }, binfmt.ErrChecksum},
		{"length bit flip", "8.blk", func(b []byte) []byte { b[mid.off+2] ^= 0x01; return b }, binfmt.ErrFormat},
		{"impossible length", "8.blk", func(b []byte) []byte { b[mid.off+3] = 0x7f; return b }, binfmt.ErrFormat},
		{"truncated mid-record", "8.blk", func(b []byte) []byte { return b[:mid.off+int64(mid.len)/2] }, binfmt.ErrTruncated},
		{"zeroed tail", "8.blk", func(b []byte) []byte { clear(b[mid.off:]); return b }, binfmt.ErrTruncated},
		{"garbage block", "7.blk", func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i*7 + 3)
			}
			return b
		}, binfmt.ErrFormat},
		{"compressed block bit flip", "9.blk", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }, nil},
		{"empty block", "8.blk", func(b []byte) []byte { return b[:0] }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := multiBlockStream(t)
			modify(t, filepath.Join(dir, "msgs", c.file), c.f)
			ref := checkSameScans(t, dir, ".")
			if c.want != nil && findProblem(ref, "msgs/"+c.file, c.want) == nil {
				t.Errorf("no %v problem in %s: %v", c.want, c.file, ref.Problems)
			}
			if c.want == nil && len(ref.Problems) == 0 && c.name != "empty block" {
				t.Errorf("corrupted copy scans clean")
			}
		})
	}
	t.Run("block missing", func(t *testing.T) {
		dir, _ := multiBlockStream(t)
		if err := os.Remove(filepath.Join(dir, "msgs", "8.blk")); err != nil {
			t.Fatal(err)
		}
		checkSameScans(t, dir, ".")
	})
	t.Run("block encrypted", func(t *testing.T) {
		dir, _ := multiBlockStream(t)
		if err := os.WriteFile(filepath.Join(dir, "msgs", "8.key"), []byte("not a key"), 0o644); err != nil {
			t.Fatal(err)
		}
		ref := checkSameScans(t, dir, ".")
		if findProblem(ref, "msgs/8.blk", binfmt.ErrEncrypted) == nil {
			t.Errorf("no encryption problem: %v", ref.Problems)
		}
	})
	// Corruption in the first of the plain blocks of each version's LOGS.
	for _, bs := range logsStores(t) {
		t.Run(bs.Version+"/LOGS block 7", func(t *testing.T) {
			dir, _ := logsCopy(t, bs)
			r7 := records(t, filepath.Join(dir, "msgs", "7.blk"), "LOGS-7")
			m := r7[len(r7)/2]
			modify(t, filepath.Join(dir, "msgs/7.blk"), func(b []byte) []byte { b[m.off+2] ^= 0x01; return b })
			if ref := checkSameScans(t, dir, "."); len(ref.Lost) == 0 {
				t.Errorf("no lost range: %v", ref.Problems)
			}
		})
	}
}

// TestBlockShrinks truncates a block after it was opened (and its size
// taken) and before it is read: ReadAt ends early, and the scan must read
// the block again at its new size, giving what reading it now gives.
func TestBlockShrinks(t *testing.T) {
	dir, recs := multiBlockStream(t)
	blk := filepath.Join(dir, "msgs", "8.blk")
	mid := recs[len(recs)/2]
	sc := &blockScanner{dir: ".", name: "LOGS"}
	shrank := false
	sc.afterOpen = func(src *blockSource) {
		if shrank {
			return
		}
		if err := os.Truncate(blk, mid.off+int64(mid.len)/2); err != nil {
			t.Fatal(err)
		}
		shrank = true
	}
	got := sc.scan(os.DirFS(dir), 8, false)
	if got.panicked != nil || got.err != nil || sc.rereads != 1 {
		t.Fatalf("panic %v err %v rereads %d", got.panicked, got.err, sc.rereads)
	}
	want := (&blockScanner{dir: ".", name: "LOGS"}).scan(os.DirFS(dir), 8, false)
	if !got.bs.Torn || got.bs.Stopped != mid.off || !cmp.Equal(got.problems, want.problems, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })) {
		t.Errorf("after the file shrank: torn %v stopped %d problems %v; reading it now gives %v", got.bs.Torn, got.bs.Stopped, got.problems, want.problems)
	}
}

// TestMemBudget checks the budget never lets more than its total in.
func TestMemBudget(t *testing.T) {
	m := newMemBudget(10)
	done := make(chan bool)
	m.acquire(6)
	go func() {
		m.acquire(5) // waits: 6+5 > 10
		done <- true
		m.release(5)
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("acquired past the budget")
	default:
	}
	m.release(6)
	<-done
	m.acquire(100) // more than the total: cut to it, runs alone
	m.release(100)
	if m.used != 0 {
		t.Fatalf("used %d after all releases", m.used)
	}
}

// Keep the helpers honest: the stream-only FS really hides ReadAt.
func TestStreamOnlyFS(t *testing.T) {
	root := os.DirFS(store(t, "v2.15.2-flat", "n3").Root)
	f, err := streamOnlyFS{root}.Open("$G/streams/LOGS/msgs/10.blk")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.(io.ReaderAt); ok {
		t.Fatal("ReadAt visible")
	}
	names := []string{}
	ents, _ := fs.ReadDir(streamOnlyFS{root}, "$G/streams/LOGS/msgs")
	for _, e := range ents {
		names = append(names, path.Base(e.Name()))
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "10.blk,6.blk,7.blk,8.blk,9.blk,index.db" {
		t.Fatalf("ReadDir through the wrapper: %v", names)
	}
}
