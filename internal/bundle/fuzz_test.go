package bundle

import (
	"archive/tar"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realFiles returns the committed real-server bundle archives and a sample of
// the logs and captures inside the directory bundles (bounded in size, to
// keep fuzzing quick).
func realFiles(t testing.TB, match func(p string) bool, maxSize int64) []string {
	var out []string
	filepath.WalkDir(bundlesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Size() <= maxSize && match(p) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// smallRealEntries picks small real files of the first directory fixture
// (and the head of its logs) so that the seed archives stay a few KiB: large
// seeds make the fuzzer's minimisation crawl.
func smallRealEntries(testing.TB) []entry {
	var out []entry
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "*", "bundle"))
	for _, root := range dirs {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || len(out) >= 40 {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(filepath.Dir(root), p)
			switch {
			case strings.HasSuffix(p, ".log"):
				data, _ := os.ReadFile(p)
				out = append(out, entry{name: filepath.ToSlash(rel), body: data[:min(len(data), 2048)]})
			case fi.Size() <= 1024:
				data, _ := os.ReadFile(p)
				out = append(out, entry{name: filepath.ToSlash(rel), body: data})
			}
			return nil
		})
	}
	return out
}

func FuzzOpenArchive(f *testing.F) {
	if real := smallRealEntries(f); len(real) > 0 {
		f.Add(mkZip(f, real))
		f.Add(mkTar(f, real))
		f.Add(gz(f, mkTar(f, real)))
	}
	normal := entry{name: "ok/readme.txt", body: []byte("hello\n")}
	f.Add(mkZip(f, []entry{normal, {name: "../evil.txt", body: []byte("x")}}))
	f.Add(mkTar(f, []entry{normal, {name: "ln", typ: tar.TypeSymlink, link: "../../"}, {name: "ln/x", body: []byte("x")}}))
	f.Add(gz(f, mkTar(f, []entry{normal, {name: "n1.tgz", body: gz(f, mkTar(f, []entry{normal}))}})))
	f.Add(mkZip(f, []entry{normal, {name: "n1.zip", body: mkZip(f, []entry{normal})}}))

	src := f.TempDir()
	lim := Limits{MaxTotalBytes: 8 << 20, MaxEntries: 2000, MaxEntryBytes: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(src, "fuzz.bin")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(file, lim)
		if err != nil {
			return
		}
		root := b.Root
		for _, s := range b.Stores {
			if _, err := fs.Stat(b.FS, s.Dir); err != nil {
				t.Errorf("store %s: %v", s.Dir, err)
			}
		}
		for _, l := range b.Logs {
			if _, err := fs.Stat(b.FS, l.Path); err != nil {
				t.Errorf("log %s: %v", l.Path, err)
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Fatalf("unpack folder %s left after Close", root)
		}
	})
}

func FuzzSniff(f *testing.F) {
	for _, p := range realFiles(f, func(p string) bool {
		return strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl")
	}, 1<<20) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data[:min(len(data), 8<<10)]) // a short head: the sniffers read prefixes anyway
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if lg, ok := sniffLog(data, true); ok && lg.Format == "" {
			t.Errorf("log without a format")
		}
		if c, _, ok := classifyCapture("fuzz.json", data); ok && (c.Kind == "" || c.Shape == "") {
			t.Errorf("capture without kind or shape: %+v", c)
		}
		var c candidates
		c.fromPath(string(data))
		if c.nfull > len(c.list) {
			t.Errorf("nfull %d > %d", c.nfull, len(c.list))
		}
	})
}
