package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Archives inside a bundle (a per-server .tar.gz in a zip, an audit-gather
// zip in a folder) are read as part of it, whatever the bundle's own form:
// the inventory tells them by content among the files outside store roots
// (sniffFile), unpacks each under Limits.TempDir, never beside the
// evidence, and mounts it in the bundle's FS at the archive's path without
// its suffix ("diagnostics/audit.zip" -> "diagnostics/audit/"), or at
// "<path>.unpacked" when that is taken, so a bundle read as a folder, a
// zip or a .tar.gz lists the same paths. Archives are read down to
// maxArchiveLevels, the bundle's own archive counted: a folder holding
// bundle.tar.gz reads what bundle.tar.gz alone reads. Every archive
// shares the bundle's one budget of Limits. An archive that is not read
// (too deep, past a limit, no room, unreadable) is named in Problems with
// why; the rest of the bundle is read.

// maxArchiveLevels is how many archives deep a file may sit and be read:
// a support bundle archive holding per-server archives. It bounds an
// archive that holds itself (a zip quine) before the byte limits do.
const maxArchiveLevels = 2

// nestFS is a bundle's FS with the archives found in it mounted: a path
// under a mount is served from the unpack folder's tree (which holds it at
// the same path), every other path from the bundle itself. Mounts are
// added by the inventory only, before anything else reads the FS.
type nestFS struct {
	base   fs.FS
	tree   fs.FS    // os.DirFS of the unpack folder's tree; nil before the first mount
	mounts []string // sorted
	level  map[string]int
}

// mountOf is the deepest mount holding name ("" for none).
func (n *nestFS) mountOf(name string) string {
	best := ""
	for _, m := range n.mounts {
		if (name == m || strings.HasPrefix(name, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best
}

// kids are the mounts whose parent folder, in the bundle itself, is dir.
func (n *nestFS) kids(dir string) []string {
	var out []string
	for _, m := range n.mounts {
		if path.Dir(m) == dir && n.mountOf(dir) == "" {
			out = append(out, m)
		}
	}
	return out
}

func (n *nestFS) Open(name string) (fs.File, error) {
	if len(n.mounts) == 0 {
		return n.base.Open(name)
	}
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if n.mountOf(name) != "" {
		return n.tree.Open(name)
	}
	f, err := n.base.Open(name)
	if err != nil || len(n.kids(name)) == 0 {
		return f, err
	}
	return &nestDir{File: f, n: n, name: name}, nil
}

// Stat implements fs.StatFS.
func (n *nestFS) Stat(name string) (fs.FileInfo, error) {
	if n.mountOf(name) != "" {
		return fs.Stat(n.tree, name)
	}
	return fs.Stat(n.base, name)
}

// ReadDir implements fs.ReadDirFS: a folder of the bundle lists the mounts
// in it beside its own entries.
func (n *nestFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if n.mountOf(name) != "" {
		return fs.ReadDir(n.tree, name)
	}
	ents, err := fs.ReadDir(n.base, name)
	if err != nil {
		return ents, err
	}
	return n.withMounts(name, ents)
}

func (n *nestFS) withMounts(name string, ents []fs.DirEntry) ([]fs.DirEntry, error) {
	kids := n.kids(name)
	if len(kids) == 0 {
		return ents, nil
	}
	ents = slices.Clone(ents)
	for _, m := range kids {
		fi, err := fs.Stat(n.tree, m)
		if err != nil {
			return nil, err
		}
		ents = append(ents, fs.FileInfoToDirEntry(fi))
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// nestDir is a folder of the bundle that holds a mount, opened: its
// listing has the mount too.
type nestDir struct {
	fs.File
	n    *nestFS
	name string
	ents []fs.DirEntry // nil until listed
	off  int
}

func (d *nestDir) ReadDir(count int) ([]fs.DirEntry, error) {
	if d.ents == nil {
		rd, ok := d.File.(fs.ReadDirFile)
		if !ok {
			return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: errors.New("not a directory")}
		}
		own, err := rd.ReadDir(-1)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(own, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		if d.ents, err = d.n.withMounts(d.name, own); err != nil {
			return nil, err
		}
	}
	rest := d.ents[d.off:]
	if count > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if count > 0 && count < len(rest) {
		rest = rest[:count]
	}
	d.off += len(rest)
	return rest, nil
}

// nested is where the archives found in a bundle are unpacked: a folder
// of its own under Limits.TempDir holding tree/ (the mounts, at their
// bundle paths) and the spooled copies of archives that cannot be read in
// place.
type nested struct {
	dir  string
	root *os.Root // on dir/tree
	x    *extractor
}

// levelOf is how many archives deep p sits: the bundle's own archive
// counts one.
func (b *Bundle) levelOf(p string) int {
	if m := b.nest.mountOf(p); m != "" {
		return b.nest.level[m]
	}
	if b.Archive != "" {
		return 1
	}
	return 0
}

// readArchive reads the archive (kind) at p of the bundle, whose file f is
// open, its first len(head) bytes read, into a mount, or says in Problems
// why not. The mount's files are walked by the inventory afterwards
// (b.pending).
func (b *Bundle) readArchive(p string, f fs.File, size int64, head []byte, kind string) {
	level := b.levelOf(p) + 1
	if level > maxArchiveLevels {
		b.problem(p, "a %s archive %d archives deep: not read (archives are read %d deep, the bundle's own counted); unpack it and analyze its folder", kind, level, maxArchiveLevels)
		return
	}
	dir := p + ".unpacked"
	if suf := archiveSuffix(p); suf != "" {
		dir = p[:len(p)-len(suf)]
	}
	if _, err := fs.Stat(b.FS, dir); err == nil {
		if dir == p+".unpacked" {
			b.problem(p, "%s archive not read: %s already exists", kind, dir)
			return
		}
		dir = p + ".unpacked"
		if _, err := fs.Stat(b.FS, dir); err == nil {
			b.problem(p, "%s archive not read: %s and %s already exist", kind, p[:len(p)-len(archiveSuffix(p))], dir)
			return
		}
	}
	if err := b.unpackNested(p, f, size, head, dir); err != nil {
		b.problem(p, "%s archive not read: %v", kind, err)
		return
	}
	b.nest.mounts = append(b.nest.mounts, dir)
	slices.Sort(b.nest.mounts)
	if b.nest.level == nil {
		b.nest.level = map[string]int{}
	}
	b.nest.level[dir] = level
	b.pending = append(b.pending, dir)
}

// unpackNested unpacks the archive at p into the mount dir of the nested
// tree. On an error nothing of it is kept and the budget it took is given
// back.
func (b *Bundle) unpackNested(p string, f fs.File, size int64, head []byte, dir string) error {
	if err := b.openNested(); err != nil {
		return fmt.Errorf("the temporary folder for archives in the bundle: %w", err)
	}
	x := b.nested.x
	ra, spooled, err := b.randomAccess(f, size, head)
	if err != nil {
		return err
	}
	if spooled != nil {
		defer func() {
			spooled.Close()
			os.Remove(spooled.Name())
		}()
	}
	if err := roomFor(p, ra, size, x.lim); err != nil {
		return err
	}
	problems, notes, undelivered, total, entries := len(x.problems), len(x.notes), len(x.undelivered), x.total, x.entries
	x.mkdir(dir)
	_, err = x.extract(p, ra, size, dir)
	x.closeFolders()
	if err != nil {
		// Refused whole: what was written goes, the budget comes back.
		x.made = nil
		b.nested.root.RemoveAll(dir)
		x.problems, x.notes, x.undelivered = x.problems[:problems], x.notes[:notes], x.undelivered[:undelivered]
		x.total, x.entries = total, entries
		return err
	}
	b.Problems = append(b.Problems, x.problems[problems:]...)
	b.Notes = append(b.Notes, x.notes[notes:]...)
	if len(x.undelivered) > undelivered {
		b.Undelivered = append(b.Undelivered, x.undelivered[undelivered:]...)
		slices.Sort(b.Undelivered)
	}
	return nil
}

// openNested makes the nested unpack folder, once.
func (b *Bundle) openNested() error {
	if b.nested != nil {
		return nil
	}
	dir, err := os.MkdirTemp(b.lim.TempDir, "jsforensics-nested-")
	if err != nil {
		return err
	}
	tree := filepath.Join(dir, "tree")
	if err := os.Mkdir(tree, 0o700); err != nil {
		os.RemoveAll(dir)
		return err
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	b.nested = &nested{dir: dir, root: root,
		x: &extractor{dst: root, lim: b.lim, total: b.spentBytes, entries: b.spentEntries, nested: true}}
	// The tree is ours (made 0700, nothing else writes to it) and holds
	// no link (links are refused): plain paths are safe there, as in an
	// unpack folder.
	b.nest.tree = os.DirFS(tree)
	return nil
}

// randomAccess gives the archive f as an io.ReaderAt: f itself when it
// reads at any offset cheaply (a file of a folder or of an unpack folder,
// an entry of a plain tar or one a .tar.gz keeps in its spill file), else
// a copy spooled into the nested folder (an entry of a zip, or of a
// .tar.gz inflated again from a checkpoint at each read backwards), which
// the caller closes and removes. head is what was read of f already.
func (b *Bundle) randomAccess(f fs.File, size int64, head []byte) (io.ReaderAt, *os.File, error) {
	if ra, ok := f.(io.ReaderAt); ok {
		if _, slow := f.(*gzFile); !slow {
			return ra, nil, nil
		}
	}
	if free, ok := freeBytes(b.nested.dir); ok && free < size {
		return nil, nil, fmt.Errorf("%w: copying it (%d bytes) into %s, which has %d free; choose a folder with more room with --tmpdir or TMPDIR",
			ErrNoRoom, size, b.nested.dir, free)
	}
	sp, err := os.CreateTemp(b.nested.dir, "spool-")
	if err != nil {
		return nil, nil, err
	}
	// The archive's own size bounds the copy: a zip entry whose bytes
	// outrun its directory's size fails its read.
	_, err = io.Copy(sp, io.MultiReader(bytes.NewReader(head), io.LimitReader(f, size-int64(len(head)))))
	if err != nil {
		sp.Close()
		os.Remove(sp.Name())
		return nil, nil, fmt.Errorf("copying it into %s: %w", b.nested.dir, err)
	}
	return sp, sp, nil
}

func (n *nested) close() error {
	if n == nil {
		return nil
	}
	n.x.closeFolders()
	return errors.Join(n.root.Close(), os.RemoveAll(n.dir))
}
