package dirfs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func openTestFdFS(t *testing.T, dir string) (*fdFS, fs.FS) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	s, err := openFdFS(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, root.FS()
}

// describe says what an FS gives for name: its error, or its
// information, content or listing.
func describe(fsys fs.FS, name string) string {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return "stat: " + err.Error()
	}
	out := fmt.Sprintf("%s %v %d %v", fi.Name(), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	if fi.IsDir() {
		ents, err := fs.ReadDir(fsys, name)
		for _, e := range ents {
			info, ierr := e.Info()
			if ierr != nil {
				out += fmt.Sprintf(" [%s %v info: %v]", e.Name(), e.Type(), ierr)
				continue
			}
			out += fmt.Sprintf(" [%s %v %v %d]", e.Name(), e.Type(), info.Mode(), info.Size())
		}
		if err != nil {
			out += " readdir: " + err.Error()
		}
		return out
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return out + " read: " + err.Error()
	}
	return out + " " + string(data)
}

// The descriptor-holding FS gives what os.Root's FS gives on every
// committed directory bundle, opening each folder and file once.
func TestDirFSMatchesRootOnFixtures(t *testing.T) {
	srcs, _ := filepath.Glob("../../../testdata/bundles/*/bundle")
	if len(srcs) == 0 {
		t.Fatal("no committed directory bundle")
	}
	for _, src := range srcs {
		name := filepath.Base(filepath.Dir(src))
		s, rootFS := openTestFdFS(t, src)
		elements := 0
		err := fs.WalkDir(rootFS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != "." {
				elements++
			}
			if got, want := describe(s, p), describe(rootFS, p); got != want {
				t.Errorf("%s: %s:\n got %s\nwant %s", name, p, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// describe opens each file twice (Stat does not open, ReadFile does)
		// and lists each folder once: one open a file, one a folder, and the
		// folders are held (the fixtures have fewer than dirCacheSize).
		if n := s.opens.Load(); n > int64(elements) {
			t.Errorf("%s: %d openat for %d files and folders", name, n, elements)
		}
	}
}

// Links: one inside the bundle is followed as os.Root follows it; one
// leading out, absolute or through "..", is refused with os.Root's error;
// names with ".." or a leading "/" are invalid.
func TestDirFSLinks(t *testing.T) {
	tmp := t.TempDir()
	dir, outside := filepath.Join(tmp, "bundle"), filepath.Join(tmp, "outside")
	for _, d := range []string{filepath.Join(dir, "sub", "deep"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"bundle/in.txt": "inside", "bundle/sub/deep/f": "deep", "outside/secret": "secret"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-in": "in.txt", "sub/up": "../in.txt", "dirlink": "sub/deep", "sub/deeplink": "deep",
		"abs-out": outside, "rel-out": "../outside", "sub/rel-out": "../../outside/secret", "dangling": "nope",
		"abs-in": filepath.Join(dir, "in.txt"), "loop": "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s, rootFS := openTestFdFS(t, dir)
	names := []string{".", "in.txt", "sub", "sub/deep", "sub/deep/f", "link-in", "sub/up", "dirlink", "dirlink/f",
		"sub/deeplink/f", "abs-out", "abs-out/secret", "rel-out", "rel-out/secret", "sub/rel-out", "dangling",
		"abs-in", "loop", "loop/x", "nope", "sub/nope", "nope/x", "in.txt/x", "../outside/secret", "/etc/passwd",
		"sub/../in.txt", "sub/", ""}
	for _, name := range names {
		got, want := describe(s, name), describe(rootFS, name)
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", name, got, want)
		}
		if strings.Contains(got, "secret") && !strings.HasPrefix(got, "stat:") {
			t.Errorf("%q: read outside the bundle: %s", name, got)
		}
		f, err := s.Open(name)
		if err == nil {
			f.Close()
		}
		_, rerr := rootFS.Open(name)
		if fmt.Sprint(err) != fmt.Sprint(rerr) {
			t.Errorf("Open(%q): %v, os.Root: %v", name, err, rerr)
		}
	}
	for _, name := range []string{".", "sub", "dirlink"} { // listed again: kept
		if got, want := describe(s, name), describe(rootFS, name); got != want {
			t.Errorf("%q listed again:\n got %s\nwant %s", name, got, want)
		}
	}
	nokeep, _ := openTestFdFS(t, dir)
	nokeep.listings = nil // read again, from the start of the folder
	for range 2 {
		for _, name := range []string{".", "sub", "dirlink"} {
			if got, want := describe(nokeep, name), describe(rootFS, name); got != want {
				t.Errorf("%q listed again, not kept:\n got %s\nwant %s", name, got, want)
			}
		}
	}
	for _, name := range []string{"abs-out/secret", "rel-out/secret", "sub/rel-out"} {
		if data, err := fs.ReadFile(s, name); err == nil || bytes.Contains(data, []byte("secret")) {
			t.Errorf("%q: read outside the bundle (%q, %v)", name, data, err)
		}
	}
}

// A held folder is let go when more than the limit are held, and one in
// use is never let go.
func TestDirFSLimit(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(i), "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i), "in", "f"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := openTestFdFS(t, dir)
	s.limit = 8
	held, err := s.dir("0/in")
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for i := range 40 {
			data, err := fs.ReadFile(s, fmt.Sprintf("%d/in/f", i))
			if err != nil || string(data) != fmt.Sprint(i) {
				t.Fatalf("round %d: %d/in/f: %q %v", round, i, data, err)
			}
		}
		if len(s.dirs) > s.limit+1 || s.lru.Len() > s.limit {
			t.Errorf("round %d: %d folders held, limit %d", round, len(s.dirs), s.limit)
		}
	}
	if s.dirs["0/in"] != held {
		t.Error("a folder in use was let go")
	}
	s.release(held)
}

// Goroutines reading one FS at once, with fewer folders held than they
// use, read what os.Root reads (run with -race).
func TestDirFSConcurrent(t *testing.T) {
	src := filepath.Join("../../../testdata/bundles", "v2.15.2-flat", "bundle")
	s, rootFS := openTestFdFS(t, src)
	s.limit = 3
	var names []string
	if err := fs.WalkDir(rootFS, ".", func(p string, d fs.DirEntry, err error) error {
		names = append(names, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range names {
		want[p] = describe(rootFS, p)
	}
	errs := make(chan string, len(names)*4)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range names {
				p := names[(i*7+g*13)%len(names)]
				if got := describe(s, p); got != want[p] {
					errs <- fmt.Sprintf("%s: got %s, want %s", p, got, want[p])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A file the descriptor-holding FS opens reads, stats, lists and closes as
// the *os.File os.Root's FS gives: ReadAt past the end gives the bytes and
// io.EOF, a folder opened with Open lists its entries, the descriptor is
// reachable for an advice, and a second Close fails.
func TestDirFSFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "small"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, rootFS := openTestFdFS(t, dir)
	for _, name := range []string{"small", "empty"} {
		for _, fsys := range []fs.FS{s, rootFS} {
			f, err := fsys.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			ra := f.(io.ReaderAt)
			buf := make([]byte, 64)
			n, err := ra.ReadAt(buf, 0)
			got := fmt.Sprintf("%d %q %v", n, buf[:n], err)
			n, err = ra.ReadAt(buf[:4], 2)
			got += fmt.Sprintf(" | %d %q %v", n, buf[:n], err)
			fi, err := f.Stat()
			got += fmt.Sprintf(" | %v %s %d", err, fi.Name(), fi.Size())
			all, err := io.ReadAll(f)
			got += fmt.Sprintf(" | %q %v", all, err)
			if _, ok := f.(syscall.Conn); !ok {
				t.Errorf("%s: %T gives no descriptor", name, f)
			}
			if err := f.Close(); err != nil {
				t.Errorf("%s: close: %v", name, err)
			}
			if err := f.Close(); err == nil {
				t.Errorf("%s: a second close gave no error", name)
			}
			want := map[string]string{
				"small": `10 "0123456789" EOF | 4 "2345" <nil> | <nil> small 10 | "0123456789" <nil>`,
				"empty": `0 "" EOF | 0 "" EOF | <nil> empty 0 | "" <nil>`,
			}[name]
			if got != want {
				t.Errorf("%s through %T:\n got %s\nwant %s", name, fsys, got, want)
			}
		}
	}
	f, err := s.Open("sub")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := f.(fs.ReadDirFile).ReadDir(-1)
	if err != nil || len(ents) != 1 || ents[0].Name() != "x" {
		t.Errorf("ReadDir of an opened folder: %v %v", ents, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("close of a listed folder: %v", err)
	}
}
