package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
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

// copyBufSize is the buffer entries are copied through.
const copyBufSize = 256 << 10

// extractor unpacks archives into dst. The archives inside a bundle are
// unpacked by one of their own, that starts from what the bundle's archive
// took (Bundle.spentBytes, spentEntries): one budget of bytes and entries
// for the bundle.
type extractor struct {
	dst      *os.Root
	lim      Limits
	total    int64 // bytes written so far
	entries  int   // entries seen so far (refused ones included)
	nested   bool  // unpacking an archive inside the bundle: its reads are no progress of the bundle's
	problems []Problem
	notes    []string // statements about how the archive was read, not damage
	// undelivered are the files whose entries were torn or unreadable.
	undelivered []string
	buf         []byte                // copy buffer, shared by all entries
	folders     map[string]openFolder // folders kept open, by path
	top         openFolder            // dst itself, opened as the others
	made        map[string]bool       // folders made (or found made), by path
	watch       *readWatch            // told how far the outer archive is read; nil when no one asked
}

// readWatch passes on how many bytes of an archive were read, at most about
// once a MiB.
type readWatch struct {
	size, told int64
	f          func(read, size int64)
}

func newReadWatch(size int64, f func(read, size int64)) *readWatch {
	if f == nil {
		return nil
	}
	return &readWatch{size: size, told: -1, f: f}
}

// read says read bytes are done; a smaller figure than before is ignored.
func (w *readWatch) read(read int64) {
	if w == nil || read < w.told+1<<20 || read >= w.size {
		return
	}
	w.told = read
	w.f(read, w.size)
}

// end says the whole archive is done.
func (w *readWatch) end() {
	if w != nil && w.told < w.size {
		w.told = w.size
		w.f(w.size, w.size)
	}
}

// note records how the archive was read where nothing went unread.
func (x *extractor) note(format string, args ...any) {
	x.notes = append(x.notes, fmt.Sprintf(format, args...))
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
		return kind, x.extractTar(name, x.watched(io.NewSectionReader(r, 0, size)), prefix, nil)
	case kindTarGz:
		in := &countReader{r: io.NewSectionReader(r, 0, size)}
		gz, err := gzip.NewReader(in)
		if err != nil {
			return kind, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer gz.Close()
		var watch *readWatch
		if !x.nested {
			watch = x.watch
		}
		ra := newReadAhead(gz, func() int64 { return in.n }, watch)
		defer ra.Stop()
		return kind, x.extractTar(name, ra, prefix, func() (int64, int64) { return ra.compressed(), size })
	}
	return "", fmt.Errorf("%s: %w: %s", name, ErrNotBundle, archiveHeaderText(r, size))
}

// archiveHeaderText says what the archive header structure holds instead of
// a known magic, for the error naming a file that is no archive: zip
// starts "PK\x03\x04" (or an end record, for an empty zip), gzip 1f 8b,
// tar has "ustar" at offset 257.
func archiveHeaderText(r io.ReaderAt, size int64) string {
	if size == 0 {
		return "archive header: the file is empty (0 bytes), at offset 0"
	}
	head := make([]byte, min(size, 8))
	n, _ := r.ReadAt(head, 0)
	return fmt.Sprintf("archive header at offset 0 holds % x, no zip, gzip or tar magic (file of %d bytes)", head[:n], size)
}

func (x *extractor) extractZip(name string, r io.ReaderAt, size int64, prefix string) error {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		before := len(x.problems)
		x.problem(archiveNote(prefix), "archive damage: %s: central directory unreadable (%s): %v; entries read by scanning local headers",
			name, zipEndRecord(r, size), err)
		found, lerr := x.extractZipLocal(name, r, size, prefix, nil)
		if lerr == nil && found == 0 {
			// Nothing of a zip is left: not an archive to analyse.
			x.problems = x.problems[:before]
			return fmt.Errorf("%s: %w (%s), and no readable local header", name, err, zipEndRecord(r, size))
		}
		return lerr
	}
	// Entries the directory lists but that cannot be read where it says
	// are looked for again by their local headers.
	retry := map[string]string{}
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
		if err := x.checkDeclared(name, f.Name, f.UncompressedSize64); err != nil {
			return err
		}
		csize := int64(min(f.CompressedSize64, uint64(size)))
		if err := x.ratioCheck(name, f.Name, int64(min(f.UncompressedSize64, 1<<62)), csize); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			retry[f.Name] = fmt.Sprintf("local header not where the central directory says: %v", err)
			continue
		}
		// The reader takes at most the compressed size the directory gives.
		n, err := x.writeFile(name, f.Name, p, x.ratioLimited(name, f.Name, rc, func() int64 { return csize }), f.Modified)
		rc.Close()
		if !x.nested {
			x.watch.read(off + csize)
		}
		if err != nil {
			if errors.Is(err, ErrLimit) {
				return err
			}
			// The bytes read do not match what the directory says (bad
			// checksum, wrong size): what was written cannot be trusted.
			x.dst.Remove(p)
			x.torn(p, "archive damage: entry %q of %s, data at offset %d: unreadable after %d bytes: %v; not delivered", f.Name, name, off, n, err)
		}
	}
	if len(retry) == 0 {
		return nil
	}
	_, err = x.extractZipLocal(name, r, size, prefix, retry)
	return err
}

// checkDeclared refuses an entry whose declared size is past the limits
// before a byte of it is read.
func (x *extractor) checkDeclared(archive, entry string, declared uint64) error {
	if declared > uint64(x.lim.MaxEntryBytes) {
		return fmt.Errorf("%w: %s: entry %q claims %d bytes, more than the %d-byte entry limit",
			ErrLimit, archive, entry, declared, x.lim.MaxEntryBytes)
	}
	if declared > uint64(x.lim.MaxTotalBytes-x.total) {
		return fmt.Errorf("%w: %s: entry %q claims %d bytes, past the %d-byte total limit",
			ErrLimit, archive, entry, declared, x.lim.MaxTotalBytes)
	}
	return nil
}

// extractZipLocal unpacks a zip by walking its local headers, when the
// central directory cannot be trusted. With retry nil every entry found is
// unpacked; otherwise only the entries named in it (which the directory
// listed but could not deliver, each with why), and those still not found
// intact are archive damage: reported, and marked not delivered.
// It returns how many entries it found.
func (x *extractor) extractZipLocal(name string, r io.ReaderAt, size int64, prefix string, retry map[string]string) (int, error) {
	zs := newZipScanner(r, size)
	found := 0
	done := map[string]bool{}
	for {
		e, body, err := zs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			x.problem(archiveNote(prefix), "archive damage: %s: entry %q at offset %d: %v", name, e.name, e.header, err)
			if body == nil {
				continue
			}
		}
		found++
		if retry != nil {
			if _, ok := retry[e.name]; !ok || done[e.name] {
				continue
			}
		} else if err := x.count(name, e.name); err != nil {
			return found, err
		}
		p, ok := x.target(name, prefix, strings.ReplaceAll(e.name, `\`, "/"), e.name)
		if !ok {
			continue
		}
		switch {
		case strings.HasSuffix(e.name, "/"):
			x.mkdir(p)
			continue
		case e.flags&0x1 != 0:
			x.problem(p, "encrypted entry in %s at offset %d not unpacked", name, e.data)
			continue
		}
		if err := x.checkDeclared(name, e.name, e.usize); err != nil {
			return found, err
		}
		done[e.name] = true
		n, err := x.writeFile(name, e.name, p, x.ratioLimited(name, e.name, body, body.consumed), e.modified)
		if err != nil {
			if errors.Is(err, ErrLimit) {
				return found, err
			}
			x.dst.Remove(p)
			x.torn(p, "archive damage: entry %q of %s, local header at offset %d: unreadable after %d bytes: %v; not delivered", e.name, name, e.header, n, err)
			continue
		}
		if why, ok := retry[e.name]; ok {
			x.problem(p, "archive damage: entry %q of %s: %s; read intact from its local header at offset %d", e.name, name, why, e.header)
		}
	}
	for _, g := range zs.gaps {
		x.problem(archiveNote(prefix), "archive damage: %s: %s", name, g)
	}
	for _, entry := range slices.Sorted(maps.Keys(retry)) {
		if done[entry] {
			continue
		}
		if p, ok := x.target(name, prefix, strings.ReplaceAll(entry, `\`, "/"), entry); ok {
			x.torn(p, "archive damage: entry %q of %s: %s; no intact local header found for it; not delivered", entry, name, retry[entry])
		}
	}
	return found, nil
}

// torn records archive damage to the entry unpacked to p: the file is not
// delivered intact (it is missing, or holds only a prefix).
func (x *extractor) torn(p, format string, args ...any) {
	x.problem(p, format, args...)
	x.undelivered = append(x.undelivered, p)
}

// archiveNote is the path a problem of the whole archive unpacked under
// prefix is filed under.
func archiveNote(prefix string) string {
	return strings.TrimPrefix(path.Join(prefix, "."), "./")
}

// countReader counts the bytes read through it, to give tar offsets (and
// progress, when watch is set).
type countReader struct {
	r     io.Reader
	n     int64
	watch *readWatch
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.watch.read(c.n)
	return n, err
}

// watched counts the reads of the outer archive r for x.watch; a nested
// archive's reads are not the outer archive's progress.
func (x *extractor) watched(r io.Reader) *countReader {
	if x.nested {
		return &countReader{r: r}
	}
	return &countReader{r: r, watch: x.watch}
}

// compressed, when not nil, gives the compressed bytes read so far and the
// archive's compressed size, for the ratio check of a .tar.gz.
func (x *extractor) extractTar(name string, r io.Reader, prefix string, compressed func() (read, size int64)) error {
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
			x.problem(archiveNote(prefix),
				"archive damage: %s: tar stream unreadable at offset %d after %d entries: %v; entries after it not read", name, off, i, err)
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
			var body io.Reader = tr
			if compressed != nil {
				// The entry cannot take more compressed bytes than the
				// archive has left.
				read, size := compressed()
				if err := x.ratioCheck(name, hdr.Name, hdr.Size, size-read); err != nil {
					return err
				}
				body = x.ratioLimited(name, hdr.Name, tr, func() int64 { r, _ := compressed(); return r - read + 1 })
			}
			n, err := x.writeFile(name, hdr.Name, p, body, hdr.ModTime)
			if err != nil {
				if errors.Is(err, ErrLimit) {
					return err
				}
				// The bytes written are the entry's true prefix: keep them
				// (for a dump), but they are not the file.
				x.torn(p, "archive damage: entry %q of %s, data at offset %d of the tar stream: %d of %d bytes: %v; not delivered intact", hdr.Name, name, off, n, hdr.Size, err)
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
	if _, err := x.folder(p); err != nil {
		x.problem(p, "cannot create folder: %v", err)
	}
}

// openFolder is a folder being unpacked into.
type openFolder interface {
	mkdir(name string) error
	open(name string) (openFolder, error)
	create(name string) (newFile, error)
	close()
}

// newFile is a file being written; finish sets its time (zero: left) and
// closes it.
type newFile interface {
	Write(p []byte) (int, error)
	finish(mtime time.Time) error
}

// maxOpenFolders bounds the folders kept open by folder.
const maxOpenFolders = 128

// folder gives the folder dir of dst, created if need be, opened from its
// parent's open folder: each file then costs one system call to create,
// and each folder one to make and one to open, instead of one per path
// element. A few are kept open (closed by closeFolders).
func (x *extractor) folder(dir string) (openFolder, error) {
	if dir == "." {
		if x.top == nil {
			top, err := openTop(x.dst)
			if err != nil {
				return nil, err
			}
			x.top = top
		}
		return x.top, nil
	}
	if r, ok := x.folders[dir]; ok {
		return r, nil
	}
	parent, err := x.folder(path.Dir(dir))
	if err != nil {
		return nil, err
	}
	base := path.Base(dir)
	// A folder made once is not made again when it is reopened.
	if !x.made[dir] {
		if err := parent.mkdir(base); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if x.made == nil {
			x.made = map[string]bool{}
		}
		x.made[dir] = true
	}
	r, err := parent.open(base)
	if err != nil {
		return nil, err
	}
	if len(x.folders) >= maxOpenFolders {
		x.closeFoldersBut(dir)
	}
	if x.folders == nil {
		x.folders = map[string]openFolder{}
	}
	x.folders[dir] = r
	return r, nil
}

// closeFoldersBut closes the open folders that are not dir's ancestors:
// an archive lists a folder's files together, so the folders on the way to
// the next ones stay open (closing them all made every file after the
// 128th folder reopen its whole path, one mkdirat and openat a level).
func (x *extractor) closeFoldersBut(dir string) {
	for p, r := range x.folders {
		if !strings.HasPrefix(dir, p+"/") {
			r.close()
			delete(x.folders, p)
		}
	}
}

func (x *extractor) closeFolders() {
	for _, r := range x.folders {
		r.close()
	}
	clear(x.folders)
	if x.top != nil {
		x.top.close()
		x.top = nil
	}
}

// writeFile copies one entry to p, charging its bytes against the limits. It
// returns the bytes written.
func (x *extractor) writeFile(archive, entry, p string, r io.Reader, mtime time.Time) (int64, error) {
	parent, err := x.folder(path.Dir(p))
	if err != nil {
		x.problem(p, "cannot create parent folder: %v", err)
		return 0, nil
	}
	f, err := parent.create(path.Base(p))
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			x.problem(p, "duplicate entry in %s: first kept", archive)
		} else {
			x.problem(p, "cannot create file: %v", err)
		}
		return 0, nil
	}
	budget := min(x.lim.MaxEntryBytes, x.lim.MaxTotalBytes-x.total)
	if x.buf == nil {
		x.buf = make([]byte, copyBufSize)
	}
	// One buffer for every entry (io.Copy would allocate one per file: an
	// archive of a hundred thousand small files).
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, io.LimitReader(r, budget+1), x.buf)
	x.total += n
	// File times are evidence, not essential: set when known, best effort.
	if cerr := f.finish(mtime); err == nil {
		err = cerr
	}
	if n > budget {
		x.dst.Remove(p)
		if budget == x.lim.MaxEntryBytes {
			return n, fmt.Errorf("%w: %s: entry %q expands past the %d-byte entry limit", ErrLimit, archive, entry, x.lim.MaxEntryBytes)
		}
		return n, fmt.Errorf("%w: %s: entry %q expands past the %d-byte total limit", ErrLimit, archive, entry, x.lim.MaxTotalBytes)
	}
	return n, err
}

// archiveSuffixes are the suffixes an archive inside a bundle loses to name
// the folder it is mounted at (nest.go).
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
