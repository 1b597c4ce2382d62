package analysis

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// readCounter is a bundle FS that counts, per file, the opens that read
// from it (a Stat or a directory listing is no read).
type readCounter struct {
	fs.FS
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCounter) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, name: name, c: c}, nil
}

func (c *readCounter) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

func (c *readCounter) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.FS, name) }

type countedFile struct {
	fs.File
	name    string
	c       *readCounter
	counted bool
}

func (f *countedFile) count() {
	if f.counted {
		return
	}
	f.counted = true
	f.c.mu.Lock()
	f.c.reads[f.name]++
	f.c.mu.Unlock()
}

func (f *countedFile) Read(p []byte) (int, error) { f.count(); return f.File.Read(p) }

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	f.count()
	if ra, ok := f.File.(io.ReaderAt); ok {
		return ra.ReadAt(p, off)
	}
	return 0, fs.ErrInvalid
}

func (f *countedFile) Seek(off int64, whence int) (int64, error) {
	if s, ok := f.File.(io.Seeker); ok {
		return s.Seek(off, whence)
	}
	return 0, fs.ErrInvalid
}

func (f *countedFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d, ok := f.File.(fs.ReadDirFile); ok {
		return d.ReadDir(n)
	}
	return nil, fs.ErrInvalid
}

// TestStreamFilesReadOnce: one analysis (loading and every check) reads
// each stream copy's meta.inf, meta.sum and index.db, and each consumer's
// meta.inf, meta.sum and o.dat, at most once: on real bundles, on one whose
// meta.sum fails (which read both files of every copy again), on one whose
// folder is not named for its stream (scanned again for its digests), and on the
// perturbed stores whose index.db disagrees with the blocks.
func TestStreamFilesReadOnce(t *testing.T) {
	sumFlipped := copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(sumFlipped, "store-n1", "$G", "streams", "ORDERS", "meta.sum"), flipBit(3, 1))
	infFlipped := copyTree(t, corruptBundle)
	rewrite(t, filepath.Join(infFlipped, "store-n1", "$G", "streams", "ORDERS", "meta.inf"), func(b []byte) []byte {
		b[strings.Index(string(b), `"old"`)+1] ^= 1
		return b
	})
	// A folder no other store holds whose meta.inf names a stream others
	// hold: compared after all, and its blocks summed then.
	renamed := copyTree(t, corruptBundle)
	if err := os.Rename(filepath.Join(renamed, "store-n1", "$G", "streams", "ORDERS"), filepath.Join(renamed, "store-n1", "$G", "streams", "ORDERS-MOVED")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{corruptBundle, sumFlipped, infFlipped, renamed, bundlesDir + "/lifecycle-v2.12.1/bundle",
		"../../testdata/perturbed/perturbed-blocks-v2.15.3/bundle", "../../testdata/perturbed/perturbed-replica-v2.12.15/bundle"} {
		b, err := bundle.Open(dir, bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		rc := &readCounter{FS: b.FS, reads: map[string]int{}}
		b.FS = rc
		m := Load(b)
		Build(m, Checks, nil)
		b.Close()
		checked := 0
		for name, n := range rc.reads {
			switch path.Base(name) {
			case "meta.inf", "meta.sum", "index.db", "o.dat":
			default:
				continue
			}
			if !strings.Contains(name, "/streams/") {
				continue
			}
			checked++
			if n > 1 {
				t.Errorf("%s: %s read %d times", dir, name, n)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no stream file read", dir)
		}
	}
}

// TestConfigFilesReadOnce: the configs the bundle reader sniffed are not
// opened again for their sync setting, and an include two configs name is
// read for them once (the sniff reads every file's head besides).
func TestConfigFilesReadOnce(t *testing.T) {
	dir := copyTree(t, filepath.Join(bundlesDir, "v2.15.2-leader-kill-debug", "bundle"))
	files := map[string]string{
		"conf/a/nats.conf": helmConfig(`,
    include '../../shared/js.inc'`),
		"conf/b/nats.conf": helmConfig(`,
    include '../../shared/js.inc'`),
		"shared/js.inc": "sync_interval: always\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.Open(dir, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rc := &readCounter{FS: b.FS, reads: map[string]int{}}
	b.FS = rc
	if len(b.Configs) != 2 {
		t.Fatalf("the bundle reader holds %d configs, want the 2 nats.conf", len(b.Configs))
	}
	Build(Load(b), Checks, nil)
	for _, p := range []string{"conf/a/nats.conf", "conf/b/nats.conf"} {
		if n := rc.reads[p]; n != 0 {
			t.Errorf("%s read %d times after the sniff", p, n)
		}
	}
	if n := rc.reads["shared/js.inc"]; n != 1 {
		t.Errorf("shared/js.inc read %d times after the sniff, want 1", n)
	}
}
