package dirfs

import (
	"container/list"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fdFS serves a directory bundle, read-only, with one openat per file and
// per folder. It holds the descriptors of the folders it has opened (the
// most recently used dirCacheSize of them), so a file opens relative to its
// folder's descriptor and a folder relative to its parent's, and a folder
// is listed on the descriptor it is held by. Through os.Root every access
// opens each folder of its path from the root again (16 openat a file on a
// three-server bundle), and listing a folder stats each entry.
//
// Each name is opened as one path element with O_NOFOLLOW below a folder
// opened the same way from the root, and names are fs.ValidPath (no "..",
// not absolute), so nothing resolves outside the bundle. A path that meets
// a symbolic link, or fails with any error but ENOENT, is handed to the
// os.Root, which follows links that stay inside the bundle and refuses the
// others, with its own errors, as before.
type fdFS struct {
	root   *os.Root // the fallback, and what gives files their names
	name   string   // root.Name()
	rootFd *heldDir // the bundle root, never let go

	mu    sync.Mutex
	dirs  map[string]*heldDir // by slash path, "." for the root
	lru   list.List           // of *heldDir, most recently used first
	limit int

	listings map[string][]fs.DirEntry // folders listed, sorted, by path
	listed   int                      // entries in listings, plus one a folder

	opens atomic.Int64 // openat calls made (the fallback's not counted)
}

// heldDir is a folder's open descriptor (O_RDONLY|O_DIRECTORY).
type heldDir struct {
	path    string
	fd      int
	refs    int           // users now; an entry is let go only at 0
	elem    *list.Element // in fdFS.lru; nil for the root
	reading sync.Mutex    // held while its entries are read (the offset is shared)
	listed  bool          // entries were read: seek to the start before reading again
}

// dirCacheSize bounds the folder descriptors held: enough for the folders
// of a few thousand streams, well under the descriptor limit Go raises to
// the hard limit at start.
func dirCacheSize() int {
	n := 4096
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur/4 < uint64(n) {
		n = max(int(lim.Cur/4), 16)
	}
	return n
}

// New serves the folder root was opened on. The function returned
// releases it.
func New(root *os.Root) (fs.FS, func() error, error) {
	s, err := openFdFS(root)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

func openFdFS(root *os.Root) (*fdFS, error) {
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: root.Name(), Err: err}
	}
	unix.CloseOnExec(fd)
	top := &heldDir{path: ".", fd: fd, refs: 1}
	return &fdFS{root: root, name: root.Name(), rootFd: top, dirs: map[string]*heldDir{".": top}, limit: dirCacheSize(),
		listings: map[string][]fs.DirEntry{}}, nil
}

// Close lets every descriptor go. The FS must not be used after.
func (s *fdFS) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dirs {
		unix.Close(d.fd)
	}
	s.dirs, s.listings = nil, nil
	s.lru.Init()
	return nil
}

// dir gives the held folder p (a cleaned slash path), opening it (and the
// folders above it not held) when not held. errno is the failure of the
// first element that failed. release must follow a success.
func (s *fdFS) dir(p string) (*heldDir, error) {
	s.mu.Lock()
	if d := s.dirs[p]; d != nil {
		d.refs++
		if d.elem != nil {
			s.lru.MoveToFront(d.elem)
		}
		s.mu.Unlock()
		return d, nil
	}
	s.mu.Unlock()
	if p == "." {
		return nil, os.ErrClosed
	}
	parent, err := s.dir(path.Dir(p))
	if err != nil {
		return nil, err
	}
	fd, err := rawOpenat(parent.fd, path.Base(p), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	s.opens.Add(1)
	s.release(parent)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.dirs == nil { // closed meanwhile
		s.mu.Unlock()
		unix.Close(fd)
		return nil, os.ErrClosed
	}
	if d := s.dirs[p]; d != nil { // opened meanwhile by another goroutine
		d.refs++
		if d.elem != nil {
			s.lru.MoveToFront(d.elem)
		}
		s.mu.Unlock()
		rawClose(fd)
		return d, nil
	}
	d := &heldDir{path: p, fd: fd, refs: 1}
	d.elem = s.lru.PushFront(d)
	s.dirs[p] = d
	// The descriptors let go are closed after the lock: past the cache's
	// size every new folder lets one go, and a close under the lock keeps
	// the other readers waiting. At most four go per folder opened (one is
	// added), so a cache grown past its size while folders were in use
	// shrinks back.
	var evicted [4]int
	n := 0
	for e := s.lru.Back(); e != nil && s.lru.Len() > s.limit && n < len(evicted); {
		prev := e.Prev()
		if old := e.Value.(*heldDir); old.refs == 0 {
			s.lru.Remove(e)
			delete(s.dirs, old.path)
			evicted[n] = old.fd
			n++
		}
		e = prev
	}
	s.mu.Unlock()
	for _, fd := range evicted[:n] {
		rawClose(fd)
	}
	return d, nil
}

func (s *fdFS) release(d *heldDir) {
	s.mu.Lock()
	d.refs--
	s.mu.Unlock()
}

// Open opens name read-only, as os.Root's FS does (an *os.File).
func (s *fdFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	var fd int
	var err error
	s.opens.Add(1)
	if name == "." {
		fd, err = rawOpenat(s.rootFd.fd, ".", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	} else {
		var d *heldDir
		if d, err = s.dir(path.Dir(name)); err == nil {
			fd, err = rawOpenat(d.fd, path.Base(name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			s.release(d)
		}
	}
	if err == unix.ENOENT {
		return nil, &os.PathError{Op: "openat", Path: name, Err: syscall.ENOENT}
	}
	if err != nil {
		return s.root.Open(name) // a link, or an error the Root words
	}
	f := &heldFile{fd: fd, name: joinPath(s.name, name)}
	// As an *os.File, a file let go without Close closes its descriptor.
	f.cleanup = runtime.AddCleanup(f, func(fd int) { unix.Close(fd) }, fd)
	return f, nil
}

// heldFile is a file Open gave: its descriptor read with pread and read,
// as an *os.File would, without what os.NewFile costs a file (an fcntl to
// ask whether it is non-blocking, 10,400 calls on a 1,500-stream bundle).
// A folder opened this way is listed through an *os.File made from the
// descriptor on the first ReadDir.
type heldFile struct {
	fd      int
	name    string
	dir     *os.File // after ReadDir: it owns fd
	mu      sync.Mutex
	done    bool
	cleanup runtime.Cleanup
}

func (f *heldFile) pathErr(op string, err error) error {
	return &os.PathError{Op: op, Path: f.name, Err: err}
}

// Name is the file's name as os.Root names it.
func (f *heldFile) Name() string { return f.name }

func (f *heldFile) Stat() (fs.FileInfo, error) {
	fi := &statInfo{name: f.name}
	if err := ignoringEINTR(func() error { return rawFstat(f.fd, &fi.st) }); err != nil {
		return nil, f.pathErr("stat", err)
	}
	return fi, nil
}

func (f *heldFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, f.pathErr("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// ReadAt reads len(p) bytes at off, or fewer and io.EOF at the end, as
// (*os.File).ReadAt, but a pread that gives fewer bytes than asked ends
// it: of a regular file that is its end (the kernel fills a read of a
// regular file but at the end), so a small file read into a larger buffer
// costs one call, not a second one returning 0 as os.File makes.
func (f *heldFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, f.pathErr("readat", errors.New("negative offset"))
	}
	done := 0
	for done < len(p) {
		n, err := rawPread(f.fd, p[done:], off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, f.pathErr("read", err)
		}
		done += n
		if n == 0 || done < len(p) {
			return done, io.EOF
		}
	}
	return done, nil
}

func (f *heldFile) Seek(offset int64, whence int) (int64, error) {
	off, err := unix.Seek(f.fd, offset, whence)
	if err != nil {
		return 0, f.pathErr("seek", err)
	}
	return off, nil
}

// ReadDir lists a folder opened with Open, as (*os.File).ReadDir.
func (f *heldFile) ReadDir(n int) ([]fs.DirEntry, error) {
	f.mu.Lock()
	if f.dir == nil && !f.done {
		f.cleanup.Stop() // the os.File closes it now
		f.dir = os.NewFile(uintptr(f.fd), f.name)
	}
	d := f.dir
	f.mu.Unlock()
	if d == nil {
		return nil, f.pathErr("readdirent", os.ErrClosed)
	}
	return d.ReadDir(n)
}

func (f *heldFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return f.pathErr("close", os.ErrClosed)
	}
	f.done = true
	if f.dir != nil {
		return f.dir.Close()
	}
	f.cleanup.Stop()
	if err := rawClose(f.fd); err != nil {
		return f.pathErr("close", err)
	}
	return nil
}

// SyscallConn gives the descriptor to Control (a read-ahead advice).
func (f *heldFile) SyscallConn() (syscall.RawConn, error) { return heldConn{f}, nil }

type heldConn struct{ f *heldFile }

func (c heldConn) Control(fn func(fd uintptr)) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	if c.f.done {
		return os.ErrClosed
	}
	fn(uintptr(c.f.fd))
	return nil
}

func (c heldConn) Read(func(fd uintptr) bool) error  { return errors.ErrUnsupported }
func (c heldConn) Write(func(fd uintptr) bool) error { return errors.ErrUnsupported }

// Stat gives name's information, following a last link as os.Root does.
func (s *fdFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &os.PathError{Op: "stat", Path: name, Err: os.ErrInvalid}
	}
	var fi fs.FileInfo
	d, err := s.dir(path.Dir(name))
	if err == nil {
		fi, err = statAt(d.fd, path.Base(name))
		s.release(d)
	}
	switch {
	case err == unix.ENOENT:
		return nil, &os.PathError{Op: "statat", Path: name, Err: syscall.ENOENT}
	case err != nil || fi.Mode()&fs.ModeSymlink != 0:
		return s.root.Stat(name)
	}
	return fi, nil
}

// ReadDir lists name on its held descriptor, sorted by name, or gives the
// listing it made before (up to maxListed entries are kept). An entry's
// type is the one the folder records (lstat only when it records none);
// Info stats it relative to the folder.
func (s *fdFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: os.ErrInvalid}
	}
	s.mu.Lock()
	ents, ok := s.listings[name]
	s.mu.Unlock()
	if ok {
		return slices.Clone(ents), nil
	}
	d, err := s.dir(name)
	if err == unix.ENOENT {
		return nil, &os.PathError{Op: "openat", Path: name, Err: syscall.ENOENT}
	}
	if err != nil {
		return fs.ReadDir(s.root.FS(), name)
	}
	defer s.release(d)
	ents, err = s.entries(d)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return ents, &os.PathError{Op: "readdirent", Path: joinPath(s.name, name), Err: err}
	}
	s.mu.Lock()
	if s.listed+len(ents)+1 <= maxListed && s.listings != nil {
		s.listings[name] = ents
		s.listed += len(ents) + 1
	}
	s.mu.Unlock()
	return slices.Clone(ents), nil
}

// maxListed bounds the entries of the listings kept (about 100 bytes each):
// a folder is listed by the inventory and again by a loader, and a bundle
// does not change while it is read.
const maxListed = 256 << 10

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// entries reads d's entries from its start.
func (s *fdFS) entries(d *heldDir) ([]fs.DirEntry, error) {
	d.reading.Lock()
	defer d.reading.Unlock()
	if d.listed {
		if _, err := unix.Seek(d.fd, 0, 0); err != nil {
			return nil, err
		}
	}
	d.listed = true
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var ents []fs.DirEntry
	for {
		n, err := rawGetdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ents, err
		}
		if n <= 0 {
			return ents, nil
		}
		for b := buf[:n]; len(b) >= direntHeader; {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < direntHeader || reclen > len(b) {
				return ents, unix.EIO
			}
			rec := b[:reclen]
			b = b[reclen:]
			ino := *(*uint64)(unsafe.Pointer(&rec[0]))
			nameb := rec[direntHeader:]
			if i := slices.Index(nameb, 0); i >= 0 {
				nameb = nameb[:i]
			}
			if ino == 0 || string(nameb) == "." || string(nameb) == ".." {
				continue
			}
			e := &fdDirEntry{fsys: s, dir: d.path, name: string(nameb), typ: direntType(rec[18])}
			if e.typ == ^fs.FileMode(0) {
				fi, err := statAt(d.fd, e.name)
				if err != nil {
					continue // gone since it was listed
				}
				e.typ, e.info = fi.Mode().Type(), fi
			}
			ents = append(ents, e)
		}
	}
}

// direntHeader is the fixed part of a linux_dirent64: d_ino, d_off,
// d_reclen, d_type.
const direntHeader = 19

func direntType(t byte) fs.FileMode {
	switch t {
	case unix.DT_REG:
		return 0
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return ^fs.FileMode(0) // unknown: lstat it
}

type fdDirEntry struct {
	fsys *fdFS
	dir  string
	name string
	typ  fs.FileMode
	info fs.FileInfo
}

func (e *fdDirEntry) Name() string               { return e.name }
func (e *fdDirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *fdDirEntry) Type() fs.FileMode          { return e.typ }
func (e *fdDirEntry) String() string             { return fs.FormatDirEntry(e) }
func (e *fdDirEntry) Info() (fs.FileInfo, error) { return e.lstat() }

// lstat stats the entry itself (a link is not followed), relative to its
// folder.
func (e *fdDirEntry) lstat() (fs.FileInfo, error) {
	if e.info != nil {
		return e.info, nil
	}
	d, err := e.fsys.dir(e.dir)
	if err == nil {
		var fi fs.FileInfo
		fi, err = statAt(d.fd, e.name)
		e.fsys.release(d)
		if err == nil {
			return fi, nil
		}
	}
	return nil, &os.PathError{Op: "lstat", Path: joinPath(e.fsys.name, path.Join(e.dir, e.name)), Err: err}
}

// statAt lstats name in the folder dirfd.
func statAt(dirfd int, name string) (fs.FileInfo, error) {
	fi := &statInfo{name: name}
	for {
		err := unix.Fstatat(dirfd, name, &fi.st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return fi, nil
	}
}

// statInfo is an fs.FileInfo from a stat; Sys is its *unix.Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *statInfo) Name() string       { return path.Base(fi.name) }
func (fi *statInfo) Size() int64        { return fi.st.Size }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.st }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }

// Mode maps the stat mode as os does (fillFileStatFromSys).
func (fi *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// joinPath names a file below the root as os.Root does.
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}
