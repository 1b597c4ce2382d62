package bundle

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
)

// A zip is read in place, without unpacking, when every entry can be served
// as it is: a regular file or a folder under a valid name (no "..", no
// absolute or backslashed name, no duplicate), stored or deflated, not
// encrypted, its local header where the directory says, and its declared
// sizes within the limits (an archive among the entries is read like any
// archive inside a bundle: nest.go). Otherwise the zip is unpacked. Damage found only when an entry is
// read (a CRC-32 mismatch at its end) is recorded as it is met: see
// ReadDamage and NotDelivered.

// zipInPlace opens the zip at path and says whether it can be read in place.
func zipInPlace(path string, size int64, lim Limits) (*zip.Reader, *os.File, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	if sniffArchive(f, size) != kindZip {
		f.Close()
		return nil, nil, false
	}
	zr, err := zip.NewReader(f, size)
	if err != nil || len(zr.File) > lim.MaxEntries {
		f.Close()
		return nil, nil, false
	}
	seen := make(map[string]bool, len(zr.File))
	var total uint64
	for _, e := range zr.File {
		name := strings.TrimSuffix(e.Name, "/")
		mode := e.Mode()
		_, offErr := e.DataOffset()
		ok := name != "" && fs.ValidPath(name) && !strings.ContainsAny(e.Name, "\\\x00") && !seen[name] &&
			(mode.IsRegular() || mode.IsDir()) && e.Flags&0x1 == 0 && (e.Method == zip.Store || e.Method == zip.Deflate) &&
			offErr == nil &&
			e.UncompressedSize64 <= uint64(lim.MaxEntryBytes)
		total += e.UncompressedSize64
		if !ok || total > uint64(lim.MaxTotalBytes) {
			f.Close()
			return nil, nil, false
		}
		if int64(e.UncompressedSize64) > lim.RatioFloor && int64(e.UncompressedSize64)/max(int64(e.CompressedSize64), 1) > lim.MaxRatio {
			f.Close()
			return nil, nil, false // unpacking refuses it with the reason
		}
		seen[name] = true
	}
	return zr, f, true
}

// zipFS serves a zip's files, recording a read that fails as archive damage.
type zipFS struct {
	zr   *zip.Reader
	b    *Bundle
	name string // the archive, for messages
}

func (z *zipFS) Open(name string) (fs.File, error) {
	f, err := z.zr.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return f, nil // zip's folders list their entries (fs.ReadDirFile)
	}
	return &zipFile{f: f, path: name, z: z}, nil
}

// dataOffset says where in the archive the entry's data starts, for the
// message of a read that failed (rare: a linear search is fine).
func (z *zipFS) dataOffset(name string) string {
	for _, f := range z.zr.File {
		if f.Name == name {
			if off, err := f.DataOffset(); err == nil {
				return fmt.Sprintf(", data at offset %d", off)
			}
		}
	}
	return ""
}

// zipFile is one entry being read. It offers Read, Stat and Close only, so
// readers treat it as a stream.
type zipFile struct {
	f    fs.File
	path string
	z    *zipFS
	n    int64
}

func (f *zipFile) Stat() (fs.FileInfo, error) { return f.f.Stat() }
func (f *zipFile) Close() error               { return f.f.Close() }

func (f *zipFile) Read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	f.n += int64(n)
	if err != nil && err != io.EOF {
		f.z.b.readDamage(f.path, fmt.Sprintf("archive damage: entry %q of %s%s: unreadable after %d bytes: %v; not delivered", f.path, f.z.name, f.z.dataOffset(f.path), f.n, err))
	}
	return n, err
}

// lateDamage is archive damage met while the bundle is read (zip in place).
type lateDamage struct {
	mu       sync.Mutex
	problems map[string]string // path -> reason
}

func (b *Bundle) readDamage(p, reason string) {
	b.late.mu.Lock()
	defer b.late.mu.Unlock()
	if b.late.problems == nil {
		b.late.problems = map[string]string{}
	}
	if _, ok := b.late.problems[p]; !ok {
		b.late.problems[p] = reason
	}
}

// ReadDamage lists the archive damage met while the bundle's files were read
// after Open (a zip read in place: an entry whose bytes fail their CRC-32),
// sorted by path. Open's own findings are in Problems.
func (b *Bundle) ReadDamage() []Problem {
	b.late.mu.Lock()
	defer b.late.mu.Unlock()
	out := make([]Problem, 0, len(b.late.problems))
	for p, r := range b.late.problems {
		out = append(out, Problem{Path: p, Reason: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// NotDelivered lists, sorted, the files the archive did not deliver intact:
// Undelivered and the files of ReadDamage.
func (b *Bundle) NotDelivered() []string {
	out := append([]string(nil), b.Undelivered...)
	for _, p := range b.ReadDamage() {
		out = append(out, p.Path)
	}
	sort.Strings(out)
	return out
}
