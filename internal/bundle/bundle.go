// Package bundle opens a NATS JetStream support bundle — a directory, a .zip,
// a .tar.gz/.tgz or a plain .tar — and inventories it by content: JetStream
// store roots, nats-server logs and monitoring captures, wherever they sit and
// whatever they are called. It does not parse stores, logs or captures beyond
// what it takes to recognise them; other packages do that through Bundle.FS.
//
// Archives are unpacked into a temporary folder that Close removes. Entries
// that would escape it, links, and entries past the Limits are refused and
// reported; the bundle itself is never written to.
package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Limits bound what Open unpacks and walks. A zero field takes its default.
type Limits struct {
	// MaxTotalBytes caps the bytes unpacked from an archive, nested archives
	// included. Default 8 GiB.
	MaxTotalBytes int64
	// MaxEntries caps the archive entries unpacked (and the files and folders
	// walked in any bundle). Default 200,000.
	MaxEntries int
	// MaxEntryBytes caps one unpacked entry. Default 4 GiB.
	MaxEntryBytes int64
}

// Default limits.
const (
	DefaultMaxTotalBytes = 8 << 30
	DefaultMaxEntries    = 200_000
	DefaultMaxEntryBytes = 4 << 30
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
	return l
}

// ErrLimit is wrapped by the error Open returns when an archive goes past a
// Limits cap. Test with errors.Is.
var ErrLimit = errors.New("bundle limit exceeded")

// ErrNotBundle is wrapped by the error Open returns when the path is neither a
// directory nor an archive it can read.
var ErrNotBundle = errors.New("not a directory, zip, tar or tar.gz")

// Bundle is an opened support bundle and its inventory. Every path in it is a
// slash-separated path relative to the bundle root, usable with FS.
type Bundle struct {
	Path string `json:"path"` // as given to Open
	FS   fs.FS  `json:"-"`    // read-only view of the bundle's files; refuses paths escaping Root
	Root string `json:"-"`    // on-disk folder behind FS (the directory itself, or the temporary unpack folder)
	// Archive is the archive format Open unpacked ("zip", "tar", "tar.gz"),
	// empty for a directory bundle.
	Archive string `json:"archive,omitempty"`

	Stores   []Store   `json:"stores"`   // sorted by Dir
	Logs     []Log     `json:"logs"`     // sorted by Path
	Captures []Capture `json:"captures"` // sorted by Path
	Problems []Problem `json:"problems"` // sorted by Path, then Reason
	// AckLogs are the publishers' ack logs, found by content (acklog.Sniff); sorted.
	AckLogs []string `json:"ack_logs,omitempty"`

	root   *os.Root
	tmp    string // temporary folder to remove, "" for a directory bundle
	closed bool
}

// Problem is an entry that was refused or could not be read.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// Open opens the bundle at path and inventories it. On error nothing is left
// behind (any temporary folder is removed).
func Open(path string, lim Limits) (*Bundle, error) {
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
			return nil, fmt.Errorf("%s: %w", path, ErrNotBundle)
		}
		tmp, err := os.MkdirTemp("", "jsforensics-bundle-")
		if err != nil {
			return nil, err
		}
		b.tmp, b.Root = tmp, tmp
		if err := b.unpackFile(path, fi.Size(), lim); err != nil {
			b.Close()
			return nil, err
		}
	}
	b.root, err = os.OpenRoot(b.Root)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.FS = b.root.FS()
	if err := b.inventory(lim); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// unpackFile unpacks the archive at path (an outer bundle) into b.tmp.
func (b *Bundle) unpackFile(path string, size int64, lim Limits) error {
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
	x := &extractor{dst: dst, lim: lim}
	kind, err := x.extract(filepath.Base(path), f, size, ".")
	if err != nil {
		return err
	}
	b.Archive = kind
	if err := x.unpackNested(); err != nil {
		return err
	}
	b.Problems = append(b.Problems, x.problems...)
	return nil
}

// Close releases the bundle and removes any temporary folder. It is safe to
// call more than once.
func (b *Bundle) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	if b.root != nil {
		errs = append(errs, b.root.Close())
	}
	if b.tmp != "" {
		errs = append(errs, os.RemoveAll(b.tmp))
	}
	return errors.Join(errs...)
}
