package bundle

import (
	"archive/tar"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jsforensics/jsforensics/internal/bundle/gzseek"
)

// A .tar or .tar.gz is read in place, without unpacking it, when every
// entry can be served from it: a folder, or a regular file that is not
// sparse (an archive among the entries is read like any archive inside a
// bundle: nest.go). Otherwise it is unpacked as before.
//
// A plain .tar serves each file from the archive's own bytes. A .tar.gz is
// inflated once (pass 1) to list its entries, check the limits and each
// entry's bytes, and keep in the spill file (a temporary file of at most
// Limits.SpillBytes) the small files; a file not kept is read later by
// inflating again from a checkpoint taken just before it (gzseek), whose
// 32 KiB window is kept in the spill file too. Damage met on that second
// read (the archive changed) is archive damage, as for a zip read in place.

// errNotInPlace says an archive cannot be read in place and is unpacked.
var errNotInPlace = errors.New("not readable in place")

// DefaultSpillBytes bounds the temporary space a .tar.gz read in place
// takes.
const DefaultSpillBytes = 256 << 20

// holdMax is the largest file kept in the spill file: message blocks and
// WAL blocks are larger and are read again from a checkpoint. (A variable
// for the tests that read every file from its checkpoint.)
var holdMax int64 = 1 << 20

// Checkpoint spacing.
const (
	// ringGap spaces the checkpoints the inflater offers, in output bytes;
	// a file read again starts inflating at most about this much before it.
	ringGap = 256 << 10
	// ringSize checkpoints are offered at a time: they must span the
	// read-ahead (aheadChunks+2 chunks of copyBufSize) and more.
	ringSize = 16
)

// tnode is a file or folder of an archive read in place.
type tnode struct {
	name  string
	dir   bool
	mtime time.Time
	kids  map[string]*tnode
	list  []*tnode // kids sorted by name, once listed
	// size is the bytes delivered: the entry's size, less for a torn one.
	size int64
	// data is where the bytes start: in the archive (plain tar) or in the
	// decompressed stream (tar.gz).
	data int64
	held int64 // offset in the spill file, -1 when not kept
	pin  int   // checkpoint to read it from (tar.gz, not held)
	crc  uint32
}

// pin is a checkpoint whose window is in the spill file.
type pin struct {
	cp     gzseek.Checkpoint // Window nil
	winOff int64
	winLen int
}

// tarFS serves the files of a .tar or .tar.gz read in place.
type tarFS struct {
	b     *Bundle
	name  string // the archive, for messages
	f     *os.File
	size  int64
	gz    bool
	root  *tnode
	spill *os.File
	pins  []pin
	bufs  sync.Pool
}

// openTarInPlace opens the tar or tar.gz at path in place, or says
// errNotInPlace (or an error of the archive itself, as unpacking would).
func (b *Bundle) openTarInPlace(path string, size int64, lim Limits, unpacked func(read, size int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	kind := sniffArchive(f, size)
	if kind != kindTar && kind != kindTarGz {
		f.Close()
		return errNotInPlace
	}
	t := &tarFS{b: b, name: basename(path), f: f, size: size, gz: kind == kindTarGz,
		root: &tnode{dir: true, kids: map[string]*tnode{}, held: -1}}
	x := &extractor{lim: lim, watch: newReadWatch(size, unpacked)}
	if t.gz {
		err = t.readGz(x, lim)
	} else {
		err = t.readTar(x)
	}
	if err != nil {
		t.close()
		if b.tmp != "" {
			os.RemoveAll(b.tmp)
			b.tmp = ""
		}
		return err
	}
	x.watch.end()
	b.spentBytes, b.spentEntries = x.total, x.entries
	t.sortTree(t.root)
	b.Archive, b.FS, b.inPlace = kind, t, t
	b.Problems = append(b.Problems, x.problems...)
	b.Notes = append(b.Notes, x.notes...)
	b.Undelivered = append(b.Undelivered, x.undelivered...)
	sort.Strings(b.Undelivered)
	return nil
}

func basename(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func (t *tarFS) close() error {
	var errs []error
	if t.spill != nil {
		errs = append(errs, t.spill.Close())
	}
	errs = append(errs, t.f.Close())
	return errors.Join(errs...)
}

// Close closes the archive and the spill file (Bundle.Close removes its
// folder).
func (t *tarFS) Close() error { return t.close() }

// servable says whether a regular entry can be served in place.
func servable(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return false
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return false
		}
	}
	return true
}

// entry is what pass 1 does with one header; the readers below share it.
// It returns the node of a regular file to fill, nil when there is none.
func (t *tarFS) entry(x *extractor, hdr *tar.Header) (*tnode, string, error) {
	if err := x.count(t.name, hdr.Name); err != nil {
		return nil, "", err
	}
	p, ok := x.target(t.name, ".", hdr.Name, hdr.Name)
	if !ok {
		return nil, "", nil
	}
	n, err := t.node(x, hdr, p)
	return n, p, err
}

func (t *tarFS) node(x *extractor, hdr *tar.Header, p string) (*tnode, error) {
	switch hdr.Typeflag {
	case tar.TypeDir:
		if _, err := t.folder(p, hdr.ModTime); err != nil {
			x.problem(p, "cannot create folder: %v", err)
		}
	case tar.TypeReg, tar.TypeGNUSparse:
		if !servable(hdr) {
			return nil, errNotInPlace
		}
		if hdr.Size > x.lim.MaxEntryBytes {
			return nil, fmt.Errorf("%w: %s: entry %q is %d bytes, more than the %d-byte entry limit",
				ErrLimit, t.name, hdr.Name, hdr.Size, x.lim.MaxEntryBytes)
		}
		parent, err := t.folder(path.Dir(p), time.Time{})
		if err != nil {
			x.problem(p, "cannot create parent folder: %v", err)
			return nil, nil
		}
		base := path.Base(p)
		if _, ok := parent.kids[base]; ok {
			x.problem(p, "duplicate entry in %s: first kept", t.name)
			return nil, nil
		}
		n := &tnode{name: base, mtime: hdr.ModTime, held: -1}
		parent.kids[base] = n
		return n, nil
	case tar.TypeSymlink:
		x.problem(p, "symlink to %q in %s not created", hdr.Linkname, t.name)
	case tar.TypeLink:
		x.problem(p, "hard link to %q in %s not created", hdr.Linkname, t.name)
	default:
		x.problem(p, "entry of tar type %q in %s not created", hdr.Typeflag, t.name)
	}
	return nil, nil
}

// folder gives the folder p, made (with its parents) if need be.
func (t *tarFS) folder(p string, mtime time.Time) (*tnode, error) {
	if p == "." {
		return t.root, nil
	}
	parent, err := t.folder(path.Dir(p), time.Time{})
	if err != nil {
		return nil, err
	}
	base := path.Base(p)
	n, ok := parent.kids[base]
	if !ok {
		n = &tnode{name: base, dir: true, kids: map[string]*tnode{}, held: -1}
		parent.kids[base] = n
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "mkdir", Path: p, Err: fs.ErrExist}
	}
	if !mtime.IsZero() {
		n.mtime = mtime
	}
	return n, nil
}

// sortTree turns every folder's kids into its sorted list, which lookups
// search from then on: the maps are let go (on a bundle of tens of
// thousands of folders they weigh more than the nodes).
func (t *tarFS) sortTree(n *tnode) {
	if !n.dir {
		return
	}
	n.list = make([]*tnode, 0, len(n.kids))
	for _, k := range n.kids {
		n.list = append(n.list, k)
		t.sortTree(k)
	}
	n.kids = nil
	slices.SortFunc(n.list, func(a, b *tnode) int { return strings.Compare(a.name, b.name) })
}

// kid is the entry of the sorted folder n named el.
func (n *tnode) kid(el string) (*tnode, bool) {
	i, ok := slices.BinarySearchFunc(n.list, el, func(k *tnode, el string) int { return strings.Compare(k.name, el) })
	if !ok {
		return nil, false
	}
	return n.list[i], true
}

// readTar lists a plain tar, skipping the data (the files are read from
// the archive itself later).
func (t *tarFS) readTar(x *extractor) error {
	sr := io.NewSectionReader(t.f, 0, t.size)
	tr := tar.NewReader(sr)
	for i := 0; ; i++ {
		off, _ := sr.Seek(0, io.SeekCurrent)
		x.watch.read(off)
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if i == 0 {
				return fmt.Errorf("%s: tar: %w", t.name, err)
			}
			x.problem(".", "archive damage: %s: tar stream unreadable at offset %d after %d entries: %v; entries after it not read", t.name, off, i, err)
			return nil
		}
		data, _ := sr.Seek(0, io.SeekCurrent)
		n, p, err := t.entry(x, hdr)
		if err != nil {
			return err
		}
		if n == nil {
			continue
		}
		n.data, n.size = data, hdr.Size
		if n.size > x.lim.MaxTotalBytes-x.total {
			return fmt.Errorf("%w: %s: entry %q expands past the %d-byte total limit", ErrLimit, t.name, hdr.Name, x.lim.MaxTotalBytes)
		}
		x.total += n.size
		if data+hdr.Size > t.size {
			n.size = max(0, t.size-data)
			x.torn(p, "archive damage: entry %q of %s, data at offset %d of the tar stream: %d of %d bytes: %v; not delivered intact", hdr.Name, t.name, data, n.size, hdr.Size, io.ErrUnexpectedEOF)
			return nil
		}
	}
}

// readGz is pass 1 over a .tar.gz.
func (t *tarFS) readGz(x *extractor, lim Limits) error {
	z, err := gzseek.NewReader(t.f, t.size)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	sp := &spiller{t: t, budget: lim.SpillBytes, dir: lim.TempDir}
	if err := sp.create(); err != nil {
		return fmt.Errorf("%s: the spill file of an archive read in place: %w", t.name, err)
	}
	defer sp.finish(x)
	ring := &cpRing{}
	z.Boundary = func(out int64) { ring.offer(z, out) }
	ra := newReadAhead(z, z.In, x.watch)
	defer ra.Stop()
	cr := &countReader{r: ra}
	tr := tar.NewReader(cr)
	buf := make([]byte, copyBufSize)
	for i := 0; ; i++ {
		off := cr.n
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if i == 0 {
				return fmt.Errorf("%s: tar: %w", t.name, err)
			}
			x.problem(".", "archive damage: %s: tar stream unreadable at offset %d after %d entries: %v; entries after it not read", t.name, off, i, err)
			return nil
		}
		data := cr.n
		n, p, err := t.entry(x, hdr)
		if err != nil {
			return err
		}
		if n == nil {
			continue
		}
		// The entry cannot take more compressed bytes than the archive
		// has left.
		read := ra.compressed()
		if err := x.ratioCheck(t.name, hdr.Name, hdr.Size, t.size-read); err != nil {
			return err
		}
		body := x.ratioLimited(t.name, hdr.Name, tr, func() int64 { return ra.compressed() - read + 1 })
		n.data = data
		hold := hdr.Size <= holdMax && sp.room(hdr.Size)
		if !hold {
			n.pin = sp.pinFor(ring, data)
		}
		got, crc, err := t.pass(x, hdr, body, buf, sp, n, hold)
		n.size, n.crc = got, crc
		if hold && n.held < 0 {
			n.pin = sp.pinFor(ring, data) // the spill file could not take it
		}
		if err != nil {
			if errors.Is(err, ErrLimit) {
				return err
			}
			x.torn(p, "archive damage: entry %q of %s, data at offset %d of the tar stream: %d of %d bytes: %v; not delivered intact", hdr.Name, t.name, data, got, hdr.Size, err)
			return nil
		}
	}
	// The rest of the stream: the tar's end blocks and the gzip trailer,
	// whose CRC-32 covers every byte above.
	if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{ra}, buf); err != nil {
		x.problem(".", "archive damage: %s: after the last tar entry: %v", t.name, err)
	}
	return nil
}

// pass reads one entry's bytes in pass 1, keeping them in the spill file
// when hold, and charges them against the limits.
func (t *tarFS) pass(x *extractor, hdr *tar.Header, body io.Reader, buf []byte, sp *spiller, n *tnode, hold bool) (int64, uint32, error) {
	budget := min(x.lim.MaxEntryBytes, x.lim.MaxTotalBytes-x.total)
	r := io.LimitReader(body, budget+1)
	var got int64
	var crc uint32
	if hold {
		n.held = sp.used
	}
	for {
		k, err := r.Read(buf)
		if k > 0 {
			crc = crc32.Update(crc, crc32.IEEETable, buf[:k])
			got += int64(k)
			if got <= budget && hold && !sp.write(buf[:k]) {
				hold, n.held = false, -1
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			x.total += got
			return got, crc, err
		}
	}
	x.total += got
	if got > budget {
		if budget == x.lim.MaxEntryBytes {
			return got, crc, fmt.Errorf("%w: %s: entry %q expands past the %d-byte entry limit", ErrLimit, t.name, hdr.Name, x.lim.MaxEntryBytes)
		}
		return got, crc, fmt.Errorf("%w: %s: entry %q expands past the %d-byte total limit", ErrLimit, t.name, hdr.Name, x.lim.MaxTotalBytes)
	}
	return got, crc, nil
}

// cpRing holds the last checkpoints the inflater offered, for pass 1 to
// pin the one just before a file it does not keep. The inflater runs
// ahead of the tar reader on its own goroutine.
type cpRing struct {
	mu   sync.Mutex
	cps  [ringSize]gzseek.Checkpoint
	n    int // checkpoints offered so far
	last int64
}

func (r *cpRing) offer(z *gzseek.Reader, out int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 0 && out-r.last < ringGap {
		return
	}
	r.cps[r.n%ringSize] = z.Checkpoint()
	r.n++
	r.last = out
}

// before gives the latest checkpoint at or before out.
func (r *cpRing) before(out int64) (gzseek.Checkpoint, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := r.n - 1; i >= max(0, r.n-ringSize); i-- {
		if cp := r.cps[i%ringSize]; cp.Out <= out {
			return cp, true
		}
	}
	return gzseek.Checkpoint{}, false
}

// spiller is the spill file of a .tar.gz read in place: the files kept,
// and the windows of the checkpoints pinned.
type spiller struct {
	t      *tarFS
	dir    string
	budget int64
	used   int64
	full   bool // no more room (budget, or the disk)
	far    int  // files read from a checkpoint further back than ringGap
	err    error
}

// pinShare is the part of the budget the checkpoints' windows may take:
// 2,048 of them at 32 KiB each with the default budget.
func (s *spiller) pinShare() int64 { return s.budget / 4 }

// room says whether a file of size bytes may be kept.
func (s *spiller) room(size int64) bool {
	return !s.full && s.used+size <= s.budget-s.pinShare()
}

// create makes the spill file, in a folder of its own that Bundle.Close
// removes.
func (s *spiller) create() error {
	tmp, err := os.MkdirTemp(s.dir, "jsforensics-bundle-")
	if err != nil {
		return err
	}
	s.t.b.tmp = tmp
	f, err := os.OpenFile(tmp+"/spill", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	s.t.spill = f
	return nil
}

func (s *spiller) open() bool { return !s.full }

func (s *spiller) write(p []byte) bool {
	if !s.open() {
		return false
	}
	if _, err := s.t.spill.WriteAt(p, s.used); err != nil {
		s.full, s.err = true, err
		return false
	}
	s.used += int64(len(p))
	return true
}

// pinFor pins the checkpoint to read the file at out from, and gives its
// index.
func (s *spiller) pinFor(ring *cpRing, out int64) int {
	pins := s.t.pins
	cp, ok := ring.before(out)
	if ok && len(pins) > 0 && pins[len(pins)-1].cp.Out == cp.Out {
		return len(pins) - 1
	}
	pinned := int64(len(pins)) * maxWindow
	if !ok || pinned+maxWindow > s.pinShare() || !s.open() {
		s.far++
		return s.lastPin()
	}
	at := s.used
	if !s.write(cp.Window) {
		s.far++
		return s.lastPin()
	}
	w := len(cp.Window)
	cp.Window = nil
	s.t.pins = append(pins, pin{cp: cp, winOff: at, winLen: w})
	return len(s.t.pins) - 1
}

const maxWindow = 32 << 10

// lastPin is the latest pin, or -1: read from the start of the archive.
func (s *spiller) lastPin() int { return len(s.t.pins) - 1 }

// finish says in the notes when the budget ran out.
func (s *spiller) finish(x *extractor) {
	if s.far > 0 {
		why := fmt.Sprintf("its %d-byte budget", s.budget)
		if s.err != nil {
			why = s.err.Error()
		}
		x.note("%s read in place: the temporary space ran out (%s): %d files are read by inflating the archive from further before them (slower, same result)", s.t.name, why, s.far)
	}
}

// Open opens a file or folder of the archive.
func (t *tarFS) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return &tarDir{n: n, info: tinfo{n}}, nil
	}
	switch {
	case !t.gz:
		return &tarSection{SectionReader: io.NewSectionReader(t.f, n.data, n.size), info: tinfo{n}}, nil
	case n.held >= 0:
		return &tarSection{SectionReader: io.NewSectionReader(t.spill, n.held, n.size), info: tinfo{n}}, nil
	}
	return &gzFile{t: t, n: n, path: name}, nil
}

func (t *tarFS) lookup(op, name string) (*tnode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := t.root
	if name == "." {
		return n, nil
	}
	for rest, more := name, true; more; {
		var el string
		el, rest, more = strings.Cut(rest, "/")
		if !n.dir {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		k, ok := n.kid(el)
		if !ok {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		n = k
	}
	return n, nil
}

// Stat implements fs.StatFS.
func (t *tarFS) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return tinfo{n}, nil
}

// ReadDir implements fs.ReadDirFS.
func (t *tarFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(n.list))
	for i, k := range n.list {
		out[i] = fs.FileInfoToDirEntry(tinfo{k})
	}
	return out, nil
}

// tinfo is a node's fs.FileInfo.
type tinfo struct{ n *tnode }

func (i tinfo) Name() string {
	if i.n.name == "" {
		return "."
	}
	return i.n.name
}
func (i tinfo) Size() int64 { return i.n.size }
func (i tinfo) Mode() fs.FileMode {
	if i.n.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i tinfo) ModTime() time.Time { return i.n.mtime }
func (i tinfo) IsDir() bool        { return i.n.dir }
func (i tinfo) Sys() any           { return nil }

type tarDir struct {
	n    *tnode
	info tinfo
	off  int
}

func (d *tarDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *tarDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.n.name, Err: errors.New("is a directory")}
}
func (d *tarDir) Close() error { return nil }

func (d *tarDir) ReadDir(count int) ([]fs.DirEntry, error) {
	rest := d.n.list[d.off:]
	if count > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if count > 0 && count < len(rest) {
		rest = rest[:count]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, len(rest))
	for i, k := range rest {
		out[i] = fs.FileInfoToDirEntry(tinfo{k})
	}
	return out, nil
}

// tarSection is a file served from the archive itself (plain tar) or the
// spill file.
type tarSection struct {
	*io.SectionReader
	info tinfo
}

func (f *tarSection) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *tarSection) Close() error               { return nil }

// gzFile is a file of a .tar.gz read again from its checkpoint. It reads
// forward; a read before the current offset starts again from the
// checkpoint. Its CRC-32 is compared with pass 1's when it is read whole.
type gzFile struct {
	t    *tarFS
	n    *tnode
	path string
	mu   sync.Mutex
	z    *gzseek.Reader
	pos  int64 // file offset of the next byte z gives
	crc  uint32
	err  error
	// back holds the last bytes ReadAt gave, ending at pos: a block
	// reader asks again for the record cut at the end of its chunk.
	back []byte
}

// backMax bounds gzFile.back; a read further back starts again from the
// checkpoint.
const backMax = 256 << 10

func (f *gzFile) Stat() (fs.FileInfo, error) { return tinfo{f.n}, nil }
func (f *gzFile) Close() error {
	f.mu.Lock()
	f.z = nil
	f.mu.Unlock()
	return nil
}

func (f *gzFile) damage(err error) error {
	f.err = fmt.Errorf("archive damage: entry %q of %s, data at offset %d of the tar stream: unreadable after %d bytes: %v; not delivered", f.path, f.t.name, f.n.data, f.pos, err)
	f.t.b.readDamage(f.path, f.err.Error())
	return f.err
}

// start sets z at the file's first byte.
func (f *gzFile) start() error {
	var cp gzseek.Checkpoint
	if f.n.pin >= 0 {
		p := f.t.pins[f.n.pin]
		cp = p.cp
		cp.Window = make([]byte, p.winLen)
		if _, err := f.t.spill.ReadAt(cp.Window, p.winOff); err != nil {
			return f.damage(fmt.Errorf("checkpoint window in the spill file: %w", err))
		}
		f.z = gzseek.Resume(f.t.f, f.t.size, cp)
	} else {
		z, err := gzseek.NewReader(f.t.f, f.t.size)
		if err != nil {
			return f.damage(err)
		}
		f.z = z
	}
	f.pos, f.crc = 0, 0
	if skip := f.n.data - f.z.Out(); skip > 0 {
		if _, err := io.CopyN(io.Discard, struct{ io.Reader }{f.z}, skip); err != nil {
			return f.damage(err)
		}
	}
	return nil
}

// next reads the next bytes of the file into p (at most to its end).
func (f *gzFile) next(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.pos >= f.n.size {
		return 0, io.EOF
	}
	if f.z == nil {
		if err := f.start(); err != nil {
			return 0, err
		}
	}
	p = p[:min(int64(len(p)), f.n.size-f.pos)]
	k, err := f.z.Read(p)
	f.crc = crc32.Update(f.crc, crc32.IEEETable, p[:k])
	f.pos += int64(k)
	if f.pos == f.n.size {
		if f.crc != f.n.crc {
			return k, f.damage(fmt.Errorf("CRC-32 %08x, %08x when the archive was opened", f.crc, f.n.crc))
		}
		return k, nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return k, f.damage(err)
	}
	return k, nil
}

func (f *gzFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.back = f.back[:0]
	return f.next(p)
}

// ReadAt reads forward from where the last read ended; an offset before
// it starts again from the checkpoint.
func (f *gzFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.path, Err: fs.ErrInvalid}
	}
	done := 0
	if off < f.pos && off >= f.pos-int64(len(f.back)) {
		done = copy(p, f.back[int64(len(f.back))-(f.pos-off):])
		if done == len(p) {
			return done, nil
		}
		off += int64(done)
	}
	if off < f.pos || f.z == nil {
		f.z = nil
		f.pos = 0
		f.back = f.back[:0]
		if f.err == nil && f.n.size > 0 {
			if err := f.start(); err != nil {
				return 0, err
			}
		}
	}
	if f.pos < off {
		f.back = f.back[:0]
	}
	for f.pos < off {
		scratch := f.scratch()
		k, err := f.next((*scratch)[:min(int64(len(*scratch)), off-f.pos)])
		f.t.bufs.Put(scratch)
		if err != nil {
			return 0, err
		}
		if k == 0 {
			return 0, io.EOF
		}
	}
	read := done
	defer func() { f.keep(p[read:done]) }()
	for done < len(p) {
		k, err := f.next(p[done:])
		done += k
		if err == io.EOF {
			return done, io.EOF
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// keep makes back end with b, the bytes just read up to pos.
func (f *gzFile) keep(b []byte) {
	if len(b) >= backMax {
		f.back = append(f.back[:0], b[len(b)-backMax:]...)
		return
	}
	if drop := len(f.back) + len(b) - backMax; drop > 0 {
		f.back = f.back[:copy(f.back, f.back[drop:])]
	}
	f.back = append(f.back, b...)
}

func (f *gzFile) scratch() *[]byte {
	if b, ok := f.t.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, copyBufSize)
	return &b
}
