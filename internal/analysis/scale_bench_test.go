package analysis

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Scale benchmarks: per-item cost must stay flat from 1k to 100k items.
// Each reports ns per item, CPU seconds per op and peak RSS (usage; the
// machine is shared, CPU time says more than wall time).

var scaleSizes = []int{1000, 10000, 100000}

// emptyFolders copies the v2.15.2-flat bundle and adds n empty stream
// folders to n1's $G account, as a half-finished restore leaves them.
func emptyFolders(tb testing.TB, n int) string {
	dir := copyTreeTB(tb, filepath.Join(bundlesDir, "v2.15.2-flat/bundle"))
	streams := filepath.Join(dir, "store-n1", "$G", "streams")
	for i := range n {
		if err := os.Mkdir(filepath.Join(streams, fmt.Sprintf("EMPTY-%d", i)), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// realStreams copies the v2.15.2-flat bundle and links n1's EVENTS stream
// (its blocks, index.db, meta files and consumer AUDIT, as the server wrote
// them) into n accounts of its own: n streams and n consumers that read
// exactly as the original (block checksums are keyed by the stream name,
// which stays EVENTS), none of them in the meta state.
func realStreams(tb testing.TB, n int) string {
	dir := copyTreeTB(tb, filepath.Join(bundlesDir, "v2.15.2-flat/bundle"))
	src := filepath.Join(dir, "store-n1", "$G", "streams", "EVENTS")
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(src, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		dst := filepath.Join(dir, "store-n1", fmt.Sprintf("ACC%d", i), "streams", "EVENTS")
		for _, f := range files {
			target := filepath.Join(dst, f)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.Link(filepath.Join(src, f), target); err != nil {
				tb.Fatal(err)
			}
		}
		if i%50000 == 49999 { // file systems cap the links to one file (ext4: 65,000)
			src = dst
			fresh := filepath.Join(dir, "fresh")
			if err := os.CopyFS(fresh, os.DirFS(dst)); err != nil {
				tb.Fatal(err)
			}
			if err := os.RemoveAll(dst); err != nil {
				tb.Fatal(err)
			}
			if err := os.Rename(fresh, dst); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}

func BenchmarkEmptyStreamFolders(b *testing.B) { benchScale(b, emptyFolders) }

func BenchmarkRealStreams(b *testing.B) { benchScale(b, realStreams) }

func benchScale(b *testing.B, build func(testing.TB, int) string) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := build(b, n)
			b.ReportAllocs()
			report := usage(b)
			for b.Loop() {
				if _, err := Run(dir, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			report()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/item")
		})
	}
}
