package storeparse

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Benchmarks over a large store written by testdata/gen (`go run . big`),
// named by $JSF_BIG_STORE: a jetstream root, an account folder's streams/,
// or one stream folder. Each reports cpu-ns/op (user + system time of the
// process) beside ns/op: the machine the figures are taken on is shared.

// bigStreams returns the stream folders under $JSF_BIG_STORE (relative to
// it) and the bytes of their blocks.
func bigStreams(b *testing.B) (root string, dirs []string, size int64) {
	root = os.Getenv("JSF_BIG_STORE")
	if root == "" {
		b.Skip("JSF_BIG_STORE not set")
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "msgs" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		if !d.IsDir() && filepath.Ext(p) == ".blk" {
			fi, _ := d.Info()
			size += fi.Size()
		}
		return nil
	})
	return root, dirs, size
}

// cpuMetric reports the process's CPU time per iteration from now on.
func cpuMetric(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkScanStream scans every stream folder under $JSF_BIG_STORE.
func BenchmarkScanStream(b *testing.B) {
	root, dirs, size := bigStreams(b)
	fsys := os.DirFS(root)
	b.SetBytes(size)
	b.ReportAllocs()
	defer cpuMetric(b)()
	for b.Loop() {
		for _, d := range dirs {
			sc, err := ScanStream(fsys, d, ScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(sc.State.Msgs), "msgs")
		}
	}
}

// BenchmarkScanFloor is what no scan of the same blocks can go below, with
// as many goroutines as ScanStream uses by default, each taking the next
// block: "read" reads every block the way the scanner does (ReadAt,
// readChunk bytes at a time, into one buffer per goroutine) and touches
// nothing; "checksum" also walks the records by their length and computes
// each one's checksum exactly as the scanner must (natsfmt.RecordChecksum,
// keyed "<stream>-<block>"), and fails on any mismatch. Plain (uncompressed,
// unencrypted) blocks only. ScanStream's ns/op over "checksum"'s is the
// scan loop's cost above its floor.
func BenchmarkScanFloor(b *testing.B) {
	root, dirs, size := bigStreams(b)
	type block struct {
		path, key string
	}
	var blocks []block
	for _, d := range dirs {
		name := filepath.Base(filepath.Join(root, d))
		if m, err := os.ReadFile(filepath.Join(root, d, "meta.inf")); err == nil {
			if sm, err := ParseStreamMeta("meta.inf", m); err == nil && sm.Name != "" {
				name = sm.Name
			}
		}
		ents, _ := os.ReadDir(filepath.Join(root, d, "msgs"))
		var idxs []int
		for _, e := range ents {
			if n, ok := strings.CutSuffix(e.Name(), ".blk"); ok {
				if i, err := strconv.Atoi(n); err == nil {
					idxs = append(idxs, i)
				}
			}
		}
		sort.Ints(idxs)
		for _, i := range idxs {
			blocks = append(blocks, block{filepath.Join(root, d, "msgs", fmt.Sprintf("%d.blk", i)), fmt.Sprintf("%s-%d", name, i)})
		}
	}
	workers := min(runtime.GOMAXPROCS(0), maxScanWorkers)
	run := func(b *testing.B, hash bool) {
		b.SetBytes(size)
		defer cpuMetric(b)()
		for b.Loop() {
			var next, records, bad atomic.Int64
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					buf := make([]byte, readChunk)
					for {
						i := int(next.Add(1) - 1)
						if i >= len(blocks) {
							return
						}
						n, nbad := floorBlock(b, blocks[i].path, blocks[i].key, buf, hash)
						records.Add(n)
						bad.Add(nbad)
					}
				})
			}
			wg.Wait()
			if bad.Load() != 0 {
				b.Fatalf("%d of %d records fail their checksum", bad.Load(), records.Load())
			}
			if hash {
				b.ReportMetric(float64(records.Load()), "records")
			}
		}
	}
	b.Run("read", func(b *testing.B) { run(b, false) })
	b.Run("checksum", func(b *testing.B) { run(b, true) })
}

// floorBlock reads one block through buf and, when hash, checks every
// record's checksum; it returns the records read and how many failed.
func floorBlock(b *testing.B, path, key string, buf []byte, hash bool) (records, bad int64) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	hh := binfmt.NewHH64(key)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		if n == 0 {
			if err != nil && err != io.EOF {
				b.Fatal(err)
			}
			return records, bad
		}
		if !hash {
			off += int64(n)
			continue
		}
		p := buf[:n]
		for len(p) >= msgHdrSize {
			h := natsfmt.ParseRecordHeader(p)
			if !h.Framed() {
				b.Fatalf("%s: record at %d unframed", path, off)
			}
			if h.Len > int64(len(p)) {
				break // read again from this record
			}
			if _, ok := natsfmt.RecordChecksum(hh, h, p[:h.Len]); !ok {
				bad++
			}
			records++
			off += h.Len
			p = p[h.Len:]
		}
		if len(p) > 0 && n < len(buf) && err == io.EOF {
			b.Fatalf("%s: %d bytes after the last record", path, len(p))
		}
	}
}
