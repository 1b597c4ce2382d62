package bundle

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// checkRoom says, before unpacking starts, whether the temporary folder has
// room for what the archive at path unpacks to: exactly for a zip (its
// directory lists every size), a lower bound for a tar (its own size) and a
// .tar.gz (its own size, or the gzip trailer's size when larger: that field
// holds the size modulo 4 GiB). Nested archives are checked the same way
// when they are found (roomFor); a full disk while unpacking is then an
// error naming the folder.
func checkRoom(path string, size int64, lim Limits) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return roomFor(path, f, size, lim)
}

// roomFor is checkRoom for the archive r of size bytes, called name.
func roomFor(name string, r io.ReaderAt, size int64, lim Limits) error {
	dir := lim.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	free, ok := freeBytes(dir)
	if !ok {
		return nil
	}
	need, how := unpackedSize(r, size)
	if need <= free {
		return nil
	}
	return fmt.Errorf("%w: %s unpacks to %s bytes (%s), %s has %d free; choose a folder with more room with --tmpdir or TMPDIR",
		ErrNoRoom, name, fmt.Sprint(need), how, dir, free)
}

// unpackedSize estimates what the archive r unpacks to, and says how.
func unpackedSize(f io.ReaderAt, size int64) (int64, string) {
	switch sniffArchive(f, size) {
	case kindZip:
		zr, err := zip.NewReader(f, size)
		if err != nil {
			return size, "its own size: the zip directory is unreadable"
		}
		var n uint64
		for _, e := range zr.File {
			n += e.UncompressedSize64
		}
		return int64(min(n, 1<<62)), "the sum of the sizes the zip directory lists"
	case kindTarGz:
		var tail [4]byte
		if _, err := f.ReadAt(tail[:], size-4); err == nil {
			if isize := int64(binary.LittleEndian.Uint32(tail[:])); isize > size {
				return isize, "at least: the gzip trailer's size, which wraps at 4 GiB"
			}
		}
		return size, "at least: the archive's own size"
	}
	return size, "at least: the archive's own size"
}

// ratioCheck refuses an entry that declares, or reaches, more than
// lim.MaxRatio times the compressed bytes that can hold it, past
// lim.RatioFloor.
func (x *extractor) ratioCheck(archive, entry string, expanded, compressed int64) error {
	if expanded <= x.lim.RatioFloor || compressed <= 0 || expanded/compressed <= x.lim.MaxRatio {
		return nil
	}
	return fmt.Errorf("%w: %s: entry %q expands to %d bytes from at most %d compressed (more than %d:1 past %d bytes): a decompression bomb, refused before its bytes are written",
		ErrLimit, archive, entry, expanded, compressed, x.lim.MaxRatio, x.lim.RatioFloor)
}

// ratioReader stops an entry whose declared size lied: once past the floor
// it compares what came out with the compressed bytes that can have held it,
// and fails before handing on the bytes that break the ratio.
type ratioReader struct {
	r          io.Reader
	n          int64
	compressed func() int64 // compressed bytes the entry can have taken so far
	check      func(expanded, compressed int64) error
}

func (r *ratioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if cerr := r.check(r.n+int64(n), r.compressed()); cerr != nil {
		return 0, cerr
	}
	r.n += int64(n)
	return n, err
}

// ratioLimited wraps the reader of one entry in a ratioReader.
func (x *extractor) ratioLimited(archive, entry string, r io.Reader, compressed func() int64) io.Reader {
	return &ratioReader{r: r, compressed: compressed, check: func(e, c int64) error { return x.ratioCheck(archive, entry, e, c) }}
}
