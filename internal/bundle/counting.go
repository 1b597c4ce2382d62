package bundle

import (
	"io/fs"
	"maps"
	"sync"
)

// CountingFS counts, per path, the files opened and the folders listed
// through it: what a test wraps a bundle's FS in (OpenCounted) to see that
// each file is read once per analysis. The files it opens are the inner
// FS's own (io.ReaderAt and all), so readers behave as without it. Open
// never wraps its FS: the real path pays nothing for the count.
type CountingFS struct {
	fs.FS
	mu     sync.Mutex
	opens  map[string]int
	listed map[string]int
}

// NewCountingFS counts the opens of inner.
func NewCountingFS(inner fs.FS) *CountingFS {
	return &CountingFS{FS: inner, opens: map[string]int{}, listed: map[string]int{}}
}

// Open opens name in the inner FS, counting an open of a file or a listing
// of a folder.
func (c *CountingFS) Open(name string) (fs.File, error) {
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

// ReadDir lists name in the inner FS, counting it.
func (c *CountingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.count(c.listed, name)
	return fs.ReadDir(c.FS, name)
}

// Stat is the inner FS's, not counted: it reads no content.
func (c *CountingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

func (c *CountingFS) count(m map[string]int, name string) {
	c.mu.Lock()
	m[name]++
	c.mu.Unlock()
}

// Opens is how often each file was opened, by path.
func (c *CountingFS) Opens() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.opens)
}

// Listed is how often each folder was listed, by path.
func (c *CountingFS) Listed() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.listed)
}

// OpenCounted is Open with the bundle's FS wrapped in a CountingFS before
// the inventory reads it, so the count covers every read of the bundle:
// the sniff's and every later reader's through Bundle.FS.
func OpenCounted(path string, lim Limits) (*Bundle, *CountingFS, error) {
	var c *CountingFS
	b, err := openWith(path, lim, nil, func(inner fs.FS) fs.FS {
		c = NewCountingFS(inner)
		return c
	})
	return b, c, err
}
