package analysis

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/klauspost/compress/gzip"
)

// BenchmarkTarGz compares analyze of a .tar.gz with `tar xzf` of the same
// file. The archive holds copies of the orphan bundle (real v2.10.22 state,
// three servers) side by side: JSFORENSICS_BENCH_COPIES of them (default
// 40: 8,800 files, 6 MB), so it is moderate, not production-sized; or
// it is $JSF_TARGZ, any .tar.gz (the README says how one past 8 GiB is
// made). Run one sub-benchmark per process for a true peak RSS.
//
//	go test ./internal/analysis -run '^$' -bench TarGz -benchtime 3x
func BenchmarkTarGz(b *testing.B) {
	archive, unpacked := os.Getenv("JSF_TARGZ"), int64(0)
	if archive == "" {
		archive, unpacked = copiesArchive(b)
	}
	benchTarGz(b, archive, unpacked)
}

// copiesArchive writes the .tar.gz of JSFORENSICS_BENCH_COPIES copies of
// the orphan bundle; it returns its path and its unpacked bytes.
func copiesArchive(b *testing.B) (string, int64) {
	copies := 40
	if s := os.Getenv("JSFORENSICS_BENCH_COPIES"); s != "" {
		copies, _ = strconv.Atoi(s)
	}
	one := packDir(b, bundlesDir+"/orphan-v2.10.22/bundle", "tar.gz")
	archive := filepath.Join(b.TempDir(), "bundle.tar.gz")
	f, err := os.Create(archive)
	if err != nil {
		b.Fatal(err)
	}
	gw := gzip.NewWriter(f)
	tw := tar.NewWriter(gw)
	var unpacked int64
	for i := range copies {
		gr, err := gzip.NewReader(bytes.NewReader(one))
		if err != nil {
			b.Fatal(err)
		}
		tr := tar.NewReader(gr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			h.Name = "site" + strconv.Itoa(i) + "/" + h.Name
			tw.WriteHeader(h)
			n, _ := io.Copy(tw, tr)
			unpacked += n
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	gw.Close()
	f.Close()
	fi, _ := os.Stat(archive)
	b.Logf("%d copies: %d bytes compressed, %d unpacked", copies, fi.Size(), unpacked)
	return archive, unpacked
}

// benchTarGz times open, analyze and tar xzf of archive (unpacked bytes
// when known, for MB/s).
func benchTarGz(b *testing.B, archive string, unpacked int64) {

	// Unpacking and inventory alone, to set beside tar xzf.
	b.Run("open", func(b *testing.B) {
		b.SetBytes(unpacked)
		defer usage(b)()
		for b.Loop() {
			bb, err := bundle.Open(archive, bundle.Limits{})
			if err != nil {
				b.Fatal(err)
			}
			bb.Close()
		}
	})
	b.Run("analyze", func(b *testing.B) {
		b.SetBytes(unpacked)
		defer usage(b)()
		for b.Loop() {
			if _, err := Run(archive, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tar-xzf", func(b *testing.B) {
		if _, err := exec.LookPath("tar"); err != nil {
			b.Skip("no tar")
		}
		b.SetBytes(unpacked)
		defer usageOf(b, syscall.RUSAGE_CHILDREN)()
		for b.Loop() {
			dst := b.TempDir()
			if out, err := exec.Command("tar", "xzf", archive, "-C", dst).CombinedOutput(); err != nil {
				b.Fatalf("tar: %v: %s", err, out)
			}
		}
	})
}
