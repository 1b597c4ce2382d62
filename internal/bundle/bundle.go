// Package bundle opens a NATS JetStream support bundle — a directory, a .zip,
// a .tar.gz/.tgz, a plain .tar, or one file (a server log, a capture, an ack
// log: single.go) — and inventories it by content: JetStream
// store roots, nats-server logs and monitoring captures, wherever they sit and
// whatever they are called. It does not parse stores, logs or captures beyond
// what it takes to recognise them; other packages do that through Bundle.FS.
//
// Archives are read in place where they can be (a zip, a tar, a tar.gz:
// inplace.go, tarplace.go), else unpacked into a temporary folder that Close
// removes. Entries that would escape the bundle, links, and entries past
// the Limits are refused and reported; the bundle itself is never written to.
package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/bundle/dirfs"
)

// Limits bound what Open unpacks and walks. A zero field takes its default.
// No limit is a fixed size: a bundle of several servers' stores is tens of
// GiB, so what bounds an archive by default is the room in the temporary
// folder (checked before unpacking starts) and the ratio of what an entry
// expands to against what it is compressed to.
type Limits struct {
	// MaxTotalBytes caps the bytes unpacked from the bundle's archive and
	// the archives inside the bundle (a folder bundle's too). Default 1 TiB.
	MaxTotalBytes int64
	// MaxEntries caps the archive entries unpacked (and the files and folders
	// walked in any bundle). Default 2,000,000 (100,000 streams of a few
	// files each).
	MaxEntries int
	// MaxEntryBytes caps one unpacked entry. Default 1 TiB.
	MaxEntryBytes int64
	// MaxRatio refuses, before its bytes are written, an entry that
	// expands more than MaxRatio times its compressed size once past
	// RatioFloor bytes: a decompression bomb. Default 1000 (deflate cannot
	// do better than about 1032:1; real store files compress 2-20:1).
	MaxRatio int64
	// RatioFloor is the size below which the ratio is not checked (a
	// folder of zeroed preallocated files is small and honest). Default
	// 1 GiB.
	RatioFloor int64
	// TempDir is where an archive is unpacked, and the archives inside a
	// bundle of any form; "" is os.TempDir() (TMPDIR).
	TempDir string
	// SpillBytes caps the temporary space a .tar.gz read in place takes
	// (the small files it keeps, the checkpoints it reads the others
	// from), whatever the archive's size. Default 256 MiB.
	SpillBytes int64
}

// Default limits.
const (
	DefaultMaxTotalBytes = 1 << 40
	DefaultMaxEntries    = 2_000_000
	DefaultMaxEntryBytes = 1 << 40
	DefaultMaxRatio      = 1000
	DefaultRatioFloor    = 1 << 30
)

func (l Limits) withDefaults() Limits {
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	if l.RatioFloor <= 0 {
		l.RatioFloor = DefaultRatioFloor
	}
	if l.SpillBytes <= 0 {
		l.SpillBytes = DefaultSpillBytes
	}
	return l
}

// ErrLimit is wrapped by the error Open returns when an archive goes past a
// Limits cap. Test with errors.Is.
var ErrLimit = errors.New("bundle limit exceeded")

// ErrNoRoom is wrapped by the error Open returns when the temporary folder
// has too little free space for what an archive unpacks to.
var ErrNoRoom = errors.New("not enough free space to unpack")

// ErrNotBundle is wrapped by the error Open returns when the path is neither a
// directory, nor an archive, nor one file it reads as a bundle (single.go).
var ErrNotBundle = errors.New("not a bundle")

// Bundle is an opened support bundle and its inventory. Every path in it is a
// slash-separated path relative to the bundle root, usable with FS.
type Bundle struct {
	Path string `json:"path"` // as given to Open
	FS   fs.FS  `json:"-"`    // read-only view of the bundle's files; refuses paths escaping Root
	// Root is the on-disk folder behind FS (the directory itself, or the
	// temporary unpack folder); "" for an archive read in place. The
	// archives found inside the bundle are served from a folder of their
	// own (nest.go).
	Root string `json:"-"`
	// Archive is the archive format Open unpacked ("zip", "tar", "tar.gz"),
	// empty for a directory bundle.
	Archive string `json:"archive,omitempty"`

	Stores   []Store   `json:"stores"`   // sorted by Dir
	Logs     []Log     `json:"logs"`     // sorted by Path
	Captures []Capture `json:"captures"` // sorted by Path
	Problems []Problem `json:"problems"` // sorted by Path, then Reason
	// Notes say how the bundle was read where nothing went unread (an
	// archive read more slowly for want of temporary space).
	Notes []string `json:"notes,omitempty"`
	// Undelivered are the files the archive held but could not deliver
	// intact (a torn or unreadable entry: archive damage, said in
	// Problems): missing, or only a prefix of them. They are not store
	// damage. Sorted.
	Undelivered []string `json:"undelivered,omitempty"`
	// AckLogs are the publishers' ack logs, found by content (acklog.Sniff); sorted.
	AckLogs []string `json:"ack_logs,omitempty"`
	// Configs are the nats-server config files, found by content
	// (natsconf.Sniff), with their bytes; sorted by Path.
	Configs []Config `json:"configs,omitempty"`
	// JWTs are the files holding a NATS JWT (jwt.go), found by content, with
	// their bytes; sorted by Path. A file named *.jwt that holds none is a
	// Problem.
	JWTs []JWT `json:"jwts,omitempty"`
	// AuditEntries are the entries of `nats audit gather` archives that
	// their content alone does not make captures (an empty answer such as
	// an account's /raftz {}), decoded in the sniff's read as the kind their
	// manifest tags them with (capture.EntryKind), by path: the archive's
	// reader takes them from here and does not read them again.
	AuditEntries map[string]AuditEntry `json:"-"`

	manifests map[string]capture.AuditIndex // audit manifests' indexes by path, for naming their captures
	held      heldLogs                      // logs and ack logs the sniff left open for their reader (OpenLog)
	root      *os.Root
	closeFS   func() error // releases FS of a directory bundle
	zipFile   *os.File     // a zip read in place
	inPlace   io.Closer    // a tar or tar.gz read in place (tarplace.go)
	late      lateDamage
	tmp       string // temporary folder to remove, "" for a directory bundle
	closed    bool

	lim     Limits  // as Open took them, for the archives inside the bundle
	nest    *nestFS // FS beneath any wrap: the bundle with its archives mounted
	nested  *nested // where those archives are unpacked; nil until one is
	pending []string
	// spentBytes and spentEntries are what the bundle's own archive
	// unpacked: the archives inside it draw on the rest of the Limits.
	spentBytes   int64
	spentEntries int
}

// Config is one nats-server config file of the bundle, as read.
type Config struct {
	Path string `json:"path"`
	Data []byte `json:"-"`
}

// Problem is an entry that was refused or could not be read.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Open opens the bundle at path and inventories it. On error nothing is left
// behind (any temporary folder is removed).
func Open(path string, lim Limits) (*Bundle, error) { return OpenWatched(path, lim, nil) }

// OpenWatched is Open that, while it unpacks an archive, calls unpacked
// with the archive's bytes read so far and its size: growing, at most about
// once a MiB, and last with size itself. A directory or a zip read in
// place is not unpacked and makes no call. unpacked may be nil.
func OpenWatched(path string, lim Limits, unpacked func(read, size int64)) (*Bundle, error) {
	return openWith(path, lim, unpacked, nil)
}

// openWith is OpenWatched that, when wrap is set, reads the bundle through
// wrap(FS) from the inventory on (OpenCounted).
func openWith(path string, lim Limits, unpacked func(read, size int64), wrap func(fs.FS) fs.FS) (*Bundle, error) {
	lim = lim.withDefaults()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Path: path}
	if fi.IsDir() {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		b.Root = abs
	} else {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w: it is a %s, neither a folder nor a regular file; %s", path, ErrNotBundle, fileType(fi.Mode()), bundleForms)
		}
		if zr, zf, ok := zipInPlace(path, fi.Size(), lim); ok {
			b.Archive, b.zipFile = kindZip, zf
			b.spentEntries = len(zr.File)
			for _, e := range zr.File {
				b.spentBytes += int64(e.UncompressedSize64) // zipInPlace bounds their sum
			}
			b.FS = &zipFS{zr: zr, b: b, name: filepath.Base(path)}
			if err := b.wrapAndInventory(lim, wrap); err != nil {
				b.Close()
				return nil, err
			}
			return b, nil
		}
		switch err := b.openTarInPlace(path, fi.Size(), lim, unpacked); {
		case err == nil:
			if err := b.wrapAndInventory(lim, wrap); err != nil {
				b.Close()
				return nil, err
			}
			return b, nil
		case !errors.Is(err, errNotInPlace):
			b.Close()
			return nil, err
		}
		if !isArchive(path, fi.Size()) {
			if err := b.openOneFile(path, lim, wrap); err != nil {
				b.Close()
				return nil, err
			}
			return b, nil
		}
		if err := checkRoom(path, fi.Size(), lim); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(lim.TempDir, "jsforensics-bundle-")
		if err != nil {
			return nil, err
		}
		b.tmp, b.Root = tmp, tmp
		if err := b.unpackFile(path, fi.Size(), lim, unpacked); err != nil {
			b.Close()
			return nil, err
		}
	}
	b.root, err = os.OpenRoot(b.Root)
	if err != nil {
		b.Close()
		return nil, err
	}
	if b.tmp == "" {
		b.FS, b.closeFS, err = dirfs.New(b.root)
		if err != nil {
			b.Close()
			return nil, err
		}
	} else {
		// The unpack folder is ours (made 0700, nothing else writes to it)
		// and holds no link (links are refused): plain paths are safe
		// there, and a path opens in one openat, not one per element as
		// through the Root (25 system calls a file read, measured on a
		// .tar.gz of 8,800 files).
		b.FS = os.DirFS(b.tmp)
	}
	if err := b.wrapAndInventory(lim, wrap); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// wrapAndInventory puts the mounts of the archives inside the bundle, then
// wrap (if any), around FS, and inventories it.
func (b *Bundle) wrapAndInventory(lim Limits, wrap func(fs.FS) fs.FS) error {
	b.nest = &nestFS{base: b.FS}
	b.FS = b.nest
	if wrap != nil {
		b.FS = wrap(b.FS)
	}
	return b.inventory(lim)
}

// unpackFile unpacks the archive at path (an outer bundle) into b.tmp.
func (b *Bundle) unpackFile(path string, size int64, lim Limits, unpacked func(read, size int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dst, err := os.OpenRoot(b.tmp)
	if err != nil {
		return err
	}
	defer dst.Close()
	x := &extractor{dst: dst, lim: lim, watch: newReadWatch(size, unpacked)}
	defer x.closeFolders()
	kind, err := x.extract(filepath.Base(path), f, size, ".")
	if err != nil {
		return err
	}
	b.Archive = kind
	b.spentBytes, b.spentEntries = x.total, x.entries
	x.watch.end()
	b.Problems = append(b.Problems, x.problems...)
	b.Notes = append(b.Notes, x.notes...)
	b.Undelivered = append(b.Undelivered, x.undelivered...)
	sort.Strings(b.Undelivered)
	return nil
}

// Delivered says whether the file at p (a path in FS) came out of the
// archive intact: false for a file in Undelivered, true for every other
// path (and for every file of a directory bundle).
func (b *Bundle) Delivered(p string) bool {
	i := sort.SearchStrings(b.Undelivered, p)
	if i < len(b.Undelivered) && b.Undelivered[i] == p {
		return false
	}
	b.late.mu.Lock()
	defer b.late.mu.Unlock()
	_, damaged := b.late.problems[p]
	return !damaged
}

// Close releases the bundle and removes any temporary folder. It is safe to
// call more than once.
func (b *Bundle) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	errs = append(errs, b.held.close())
	if b.closeFS != nil {
		errs = append(errs, b.closeFS())
	}
	if b.root != nil {
		errs = append(errs, b.root.Close())
	}
	if b.zipFile != nil {
		errs = append(errs, b.zipFile.Close())
	}
	if b.inPlace != nil {
		errs = append(errs, b.inPlace.Close())
	}
	errs = append(errs, b.nested.close())
	if b.tmp != "" {
		errs = append(errs, os.RemoveAll(b.tmp))
	}
	return errors.Join(errs...)
}

// isArchive says whether the file at path starts as a zip, tar or .tar.gz.
func isArchive(path string, size int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return true // unpacking says why it cannot be read
	}
	defer f.Close()
	return sniffArchive(f, size) != ""
}
