package storeparse

import (
	"io/fs"
	"os"
	"path"
	"sync"
	"testing"
)

// statCountFS counts the Stat calls made through it: by name (fs.Stat) and
// on files it opened (f.Stat), by the file's base name.
type statCountFS struct {
	fs.FS
	mu    sync.Mutex
	named map[string]int
	open  map[string]int
}

func (c *statCountFS) Stat(name string) (fs.FileInfo, error) {
	c.mu.Lock()
	c.named[path.Base(name)]++
	c.mu.Unlock()
	return fs.Stat(c.FS, name)
}

func (c *statCountFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(c.FS, name) }

func (c *statCountFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &statCountFile{f.(*os.File), c, path.Base(name)}, nil
}

type statCountFile struct {
	*os.File
	c    *statCountFS
	base string
}

func (f *statCountFile) Stat() (fs.FileInfo, error) {
	f.c.mu.Lock()
	f.c.open[f.base]++
	f.c.mu.Unlock()
	return f.File.Stat()
}

// TestScanStreamStats: a scan of a real stream folder (v2.15.2, with a
// consumer) asks no name that is not there (meta.key, __msgs__,
// __new_msgs__: its folder's listing answers) and stats no small file it
// reads whole (meta.inf, meta.sum, index.db, o.dat: one read gives them);
// only blocks, read in pieces, are stat'ed for their size.
func TestScanStreamStats(t *testing.T) {
	root := "../testdata/bundles/v2.15.2-flat/bundle/store-n3/$G/streams"
	c := &statCountFS{FS: os.DirFS(root), named: map[string]int{}, open: map[string]int{}}
	sc, err := ScanStream(c, "ORDERS", ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Consumers) == 0 || sc.State.Msgs == 0 {
		t.Fatalf("fixture changed: %d consumers, %d messages", len(sc.Consumers), sc.State.Msgs)
	}
	for _, name := range []string{"__msgs__", "__new_msgs__"} {
		if n := c.named[name]; n != 0 {
			t.Errorf("%s asked by name %d times", name, n)
		}
	}
	if n := c.named["meta.key"]; n > len(sc.Consumers) {
		t.Errorf("meta.key asked by name %d times: only each consumer folder's (%d) may be", n, len(sc.Consumers))
	}
	for name, n := range c.open {
		if path.Ext(name) != ".blk" {
			t.Errorf("%s stat'ed %d times after it was opened", name, n)
		}
	}
	t.Logf("stats by name %v, of opened files %v", c.named, c.open)
}
