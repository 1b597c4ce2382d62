package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Archive kinds, as in Bundle.Archive.
const (
	kindZip   = "zip"
	kindTar   = "tar"
	kindTarGz = "tar.gz"
)

// extractor unpacks archives into dst, sharing one budget of bytes and
// entries across the outer archive and the archives nested in it.
type extractor struct {
	dst      *os.Root
	lim      Limits
	total    int64 // bytes written so far
	entries  int   // entries seen so far (refused ones included)
	nested   bool  // unpacking a nested archive: do not look for more
	files    []string
	problems []Problem
}

func (x *extractor) problem(p, format string, args ...any) {
	x.problems = append(x.problems, Problem{Path: p, Reason: fmt.Sprintf(format, args...)})
}

// sniffArchive says what r holds: kindZip, kindTar, kindTarGz or "".
func sniffArchive(r io.ReaderAt, size int64) string {
	var head [512]byte
	n, _ := r.ReadAt(head[:], 0)
	b := head[:n]
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return kindZip
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(io.NewSectionReader(r, 0, size))
		if err != nil {
			return ""
		}
		defer gz.Close()
		var th [512]byte
		if _, err := io.ReadFull(gz, th[:]); err != nil || !isTarHeader(th[:]) {
			return ""
		}
		return kindTarGz
	case isTarHeader(b):
		return kindTar
	}
	return ""
}

// isTarHeader reports whether b starts with a tar header block whose checksum
// (ustar, GNU and V7 alike: the unsigned byte sum with the checksum field read
// as spaces, stored as octal at offset 148) is right.
func isTarHeader(b []byte) bool {
	if len(b) < 512 {
		return false
	}
	field := strings.Trim(string(b[148:156]), " \x00")
	want, err := strconv.ParseUint(field, 8, 32)
	if err != nil || field == "" {
		return false
	}
	var sum uint64
	for i, c := range b[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += uint64(c)
	}
	return sum == want
}

// extract unpacks the archive r (size bytes, called name in messages) under
// the folder prefix of dst. It returns the archive kind. A refused or
// unreadable entry is recorded as a Problem; going past a limit, or an input
// that is no archive at all, is an error.
func (x *extractor) extract(name string, r io.ReaderAt, size int64, prefix string) (string, error) {
	kind := sniffArchive(r, size)
	switch kind {
	case kindZip:
		return kind, x.extractZip(name, r, size, prefix)
	case kindTar:
		return kind, x.extractTar(name, io.NewSectionReader(r, 0, size), prefix)
	case kindTarGz:
		gz, err := gzip.NewReader(io.NewSectionReader(r, 0, size))
		if err != nil {
			return kind, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer gz.Close()
		return kind, x.extractTar(name, gz, prefix)
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotBundle)
}

func (x *extractor) extractZip(name string, r io.ReaderAt, size int64, prefix string) error {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, f := range zr.File {
		if err := x.count(name, f.Name); err != nil {
			return err
		}
		// Windows tools (PowerShell 5 Compress-Archive) write "\" separators,
		// against the zip specification; read them as "/".
		p, ok := x.target(name, prefix, strings.ReplaceAll(f.Name, `\`, "/"), f.Name)
		if !ok {
			continue
		}
		off, _ := f.DataOffset()
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			x.problem(p, "symlink entry in %s not created", name)
			continue
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			x.mkdir(p)
			continue
		case mode&fs.ModeType != 0:
			x.problem(p, "special file entry (%v) in %s not created", mode.Type(), name)
			continue
		case f.Flags&0x1 != 0:
			x.problem(p, "encrypted entry in %s at offset %d not unpacked", name, off)
			continue
		}
		if f.UncompressedSize64 > uint64(x.lim.MaxEntryBytes) {
			return fmt.Errorf("%w: %s: entry %q claims %d bytes, more than the %d-byte entry limit",
				ErrLimit, name, f.Name, f.UncompressedSize64, x.lim.MaxEntryBytes)
		}
		if f.UncompressedSize64 > uint64(x.lim.MaxTotalBytes-x.total) {
			return fmt.Errorf("%w: %s: entry %q claims %d bytes, past the %d-byte total limit",
				ErrLimit, name, f.Name, f.UncompressedSize64, x.lim.MaxTotalBytes)
		}
		rc, err := f.Open()
		if err != nil {
			x.problem(p, "entry in %s at offset %d unreadable: %v", name, off, err)
			continue
		}
		n, err := x.writeFile(name, f.Name, p, rc, f.Modified)
		rc.Close()
		if err != nil {
			if errors.Is(err, ErrLimit) {
				return err
			}
			// The bytes read do not match what the directory says (bad
			// checksum, wrong size): what was written cannot be trusted.
			x.dst.Remove(p)
			x.dropFile(p)
			x.problem(p, "entry in %s at offset %d unreadable after %d bytes: %v", name, off, n, err)
		}
	}
	return nil
}

// countReader counts the bytes read through it, to give tar offsets.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (x *extractor) extractTar(name string, r io.Reader, prefix string) error {
	cr := &countReader{r: r}
	tr := tar.NewReader(cr)
	for i := 0; ; i++ {
		off := cr.n
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if i == 0 {
				return fmt.Errorf("%s: tar: %w", name, err)
			}
			// A truncated or damaged archive: keep what came before.
			x.problem(strings.TrimPrefix(path.Join(prefix, "."), "./"),
				"%s: tar stream unreadable at offset %d after %d entries: %v", name, off, i, err)
			return nil
		}
		off = cr.n // the entry's data starts here in the (decompressed) tar stream
		if err := x.count(name, hdr.Name); err != nil {
			return err
		}
		p, ok := x.target(name, prefix, hdr.Name, hdr.Name)
		if !ok {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			x.mkdir(p)
		case tar.TypeReg, tar.TypeGNUSparse: // the reader turns the old TypeRegA into these
			if hdr.Size > x.lim.MaxEntryBytes {
				return fmt.Errorf("%w: %s: entry %q is %d bytes, more than the %d-byte entry limit",
					ErrLimit, name, hdr.Name, hdr.Size, x.lim.MaxEntryBytes)
			}
			n, err := x.writeFile(name, hdr.Name, p, tr, hdr.ModTime)
			if err != nil {
				if errors.Is(err, ErrLimit) {
					return err
				}
				// The bytes written are the entry's true prefix: keep them.
				x.problem(p, "entry in %s with data at offset %d incomplete: %d of %d bytes: %v", name, off, n, hdr.Size, err)
				return nil
			}
		case tar.TypeSymlink:
			x.problem(p, "symlink to %q in %s not created", hdr.Linkname, name)
		case tar.TypeLink:
			x.problem(p, "hard link to %q in %s not created", hdr.Linkname, name)
		default:
			x.problem(p, "entry of tar type %q in %s not created", hdr.Typeflag, name)
		}
	}
}

// count charges one entry against MaxEntries.
func (x *extractor) count(archive, entry string) error {
	x.entries++
	if x.entries > x.lim.MaxEntries {
		return fmt.Errorf("%w: %s: more than %d entries (at entry %q)", ErrLimit, archive, x.lim.MaxEntries, entry)
	}
	return nil
}

// target turns an entry name into a path under prefix, or records why not.
// Names that are absolute or hold a ".." element are refused outright, even
// when they would resolve inside the tree: no honest bundle writes them.
// raw is the name as the archive writes it, shown in the notes.
func (x *extractor) target(archive, prefix, name, raw string) (string, bool) {
	shown := raw
	if name == "" {
		x.problem(prefix, "entry with an empty name in %s refused", archive)
		return "", false
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || (len(name) > 1 && name[1] == ':') {
		x.problem(sanitize(prefix, shown), "absolute path in %s refused", archive)
		return "", false
	}
	for _, el := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			x.problem(sanitize(prefix, shown), "path escaping the bundle (..) in %s refused", archive)
			return "", false
		}
	}
	n := path.Clean(name)
	if n == "." {
		return "", false // the archive's own root folder
	}
	p := path.Join(prefix, n)
	if !fs.ValidPath(p) || strings.ContainsRune(p, 0) {
		x.problem(sanitize(prefix, shown), "invalid path in %s refused", archive)
		return "", false
	}
	return p, true
}

// sanitize gives a printable stand-in path for a refused name: the name
// quoted whole after the folder it was found in. It is not joined with
// path.Join, whose cleaning would resolve the ".." inside the quotes
// ("ok/../../../x" would print as `../../x"`).
func sanitize(prefix, name string) string {
	if prefix == "." || prefix == "" {
		return strconv.Quote(name)
	}
	return prefix + "/" + strconv.Quote(name)
}

func (x *extractor) mkdir(p string) {
	if err := x.dst.MkdirAll(p, 0o755); err != nil {
		x.problem(p, "cannot create folder: %v", err)
	}
}

// writeFile copies one entry to p, charging its bytes against the limits. It
// returns the bytes written.
func (x *extractor) writeFile(archive, entry, p string, r io.Reader, mtime time.Time) (int64, error) {
	if dir := path.Dir(p); dir != "." {
		if err := x.dst.MkdirAll(dir, 0o755); err != nil {
			x.problem(p, "cannot create parent folder: %v", err)
			return 0, nil
		}
	}
	f, err := x.dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			x.problem(p, "duplicate entry in %s: first kept", archive)
		} else {
			x.problem(p, "cannot create file: %v", err)
		}
		return 0, nil
	}
	budget := min(x.lim.MaxEntryBytes, x.lim.MaxTotalBytes-x.total)
	n, err := io.Copy(f, io.LimitReader(r, budget+1))
	x.total += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if n > budget {
		x.dst.Remove(p)
		if budget == x.lim.MaxEntryBytes {
			return n, fmt.Errorf("%w: %s: entry %q expands past the %d-byte entry limit", ErrLimit, archive, entry, x.lim.MaxEntryBytes)
		}
		return n, fmt.Errorf("%w: %s: entry %q expands past the %d-byte total limit", ErrLimit, archive, entry, x.lim.MaxTotalBytes)
	}
	if !mtime.IsZero() {
		_ = x.dst.Chtimes(p, mtime, mtime) // best effort: file times are evidence, not essential
	}
	if !x.nested {
		x.files = append(x.files, p)
	}
	return n, err
}

func (x *extractor) dropFile(p string) {
	for i, f := range x.files {
		if f == p {
			x.files = append(x.files[:i], x.files[i+1:]...)
			return
		}
	}
}

// archiveSuffixes are the names under which a nested archive is unpacked.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".tar", ".zip"}

func archiveSuffix(name string) string {
	lower := strings.ToLower(name)
	for _, s := range archiveSuffixes {
		if strings.HasSuffix(lower, s) && len(name) > len(s) {
			return s
		}
	}
	return ""
}

// unpackNested unpacks, one level deep, the archives found among the files
// the outer archive held (a per-server tar.gz inside a zip), each into a
// folder named after it without its suffix (or "<name>.unpacked" when that
// name is taken). Limits are shared with the outer archive.
func (x *extractor) unpackNested() error {
	files := append([]string(nil), x.files...)
	sort.Strings(files)
	x.nested = true
	for _, p := range files {
		suf := archiveSuffix(p)
		if suf == "" {
			continue
		}
		if err := x.unpackOne(p, suf); err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) unpackOne(p, suf string) error {
	f, err := x.dst.Open(p)
	if err != nil {
		x.problem(p, "nested archive unreadable: %v", err)
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		x.problem(p, "nested archive unreadable: %v", err)
		return nil
	}
	if sniffArchive(f, fi.Size()) == "" {
		x.problem(p, "named like an archive but is none: not unpacked")
		return nil
	}
	dir := p[:len(p)-len(suf)]
	if _, err := x.dst.Lstat(dir); err == nil {
		dir = p + ".unpacked"
		if _, err := x.dst.Lstat(dir); err == nil {
			x.problem(p, "nested archive not unpacked: %s and %s already exist", p[:len(p)-len(suf)], dir)
			return nil
		}
	}
	if _, err := x.extract(p, f, fi.Size(), dir); err != nil {
		if errors.Is(err, ErrLimit) {
			return err
		}
		x.problem(p, "nested archive not unpacked: %v", err)
	}
	return nil
}
