package bundle

import (
	"io/fs"
	"reflect"
	"sort"
	"sync"
	"testing"
)

// countingFS counts, per path, the files opened and the folders listed
// through it.
type countingFS struct {
	fs.FS
	mu     sync.Mutex
	opens  map[string]int
	listed map[string]int
}

func newCountingFS(inner fs.FS) *countingFS {
	return &countingFS{FS: inner, opens: map[string]int{}, listed: map[string]int{}}
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			c.count(c.listed, name) // an Open to list it
		} else {
			c.count(c.opens, name)
		}
	}
	return f, err
}

func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.count(c.listed, name)
	return fs.ReadDir(c.FS, name)
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

func (c *countingFS) count(m map[string]int, name string) {
	c.mu.Lock()
	m[name]++
	c.mu.Unlock()
}

// The inventory (the walk, store sniffing, file sniffing) opens each file of
// every committed bundle at most once, and finds what it finds through a
// plain FS.
func TestInventoryOpensEachFileOnce(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, src := range fx.sources {
			b, err := Open(src, Limits{})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			c := newCountingFS(b.FS)
			again := &Bundle{Path: b.Path, Root: b.Root, Archive: b.Archive, FS: c}
			if err := again.inventory(Limits{}.withDefaults()); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if !reflect.DeepEqual(again.Stores, b.Stores) || !reflect.DeepEqual(again.Logs, b.Logs) ||
				!reflect.DeepEqual(again.Captures, b.Captures) || !reflect.DeepEqual(again.AckLogs, b.AckLogs) {
				t.Errorf("%s: the inventory through a counting FS differs from Open's", src)
			}
			var twice []string
			for p, n := range c.opens {
				if n > 1 {
					twice = append(twice, p)
				}
			}
			sort.Strings(twice)
			if len(twice) > 0 {
				t.Errorf("%s: files opened more than once by the inventory: %v", src, twice)
			}
			if len(c.opens) == 0 {
				t.Errorf("%s: the inventory opened no file (logs and captures are sniffed)", src)
			}
			b.Close()
		}
	}
}
