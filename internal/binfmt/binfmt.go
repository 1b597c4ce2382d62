// Package binfmt holds what every decoder in jsforensics shares: one corruption
// error type carrying the file and byte offset, a few sentinel errors, a cursor
// over a byte slice that keeps its first error, and bounded reads from an
// io.ReaderAt. It is a leaf: it imports nothing of the project.
package binfmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
)

// Sentinel errors wrapped by CorruptError. Test with errors.Is.
var (
	// ErrChecksum: the bytes are all there but their checksum does not match.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrTruncated: the data ends before a length or count says it should.
	ErrTruncated = errors.New("truncated")
	// ErrFormat: a magic byte, version, length or count is impossible.
	ErrFormat = errors.New("bad format")
	// ErrTooLarge: a length field claims more than any real file holds.
	ErrTooLarge = errors.New("length out of bounds")
	// ErrEncrypted: the data is encrypted and no key was given.
	ErrEncrypted = errors.New("encrypted")
)

// Structure names the on-disk structure whose decoding failed ("block
// record", "index.db", …; the names of nats-server's structures are
// constants in internal/natsfmt).
type Structure string

// CorruptError reports a problem at a byte offset of a file. File is whatever
// name the caller gave the decoder (a path relative to the bundle, usually).
// Structure is stamped by the framing reader of the file (Stamp), as
// prometheus tsdb/wlog's reader stamps its CorruptionErr: payload decoders
// add only the cause, so a verdict never has to be guessed from a file name.
type CorruptError struct {
	File      string
	Offset    int64
	Seq       uint64 // the message sequence or raft index concerned, 0 if unknown
	Structure Structure
	Err       error
}

func (e *CorruptError) Error() string {
	s := e.File
	if s == "" {
		s = "<input>"
	}
	s += fmt.Sprintf(" at offset %d", e.Offset)
	if e.Seq != 0 {
		s += fmt.Sprintf(" (seq %d)", e.Seq)
	}
	return s + ": " + e.Err.Error()
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Stamp names the structure that failed in err, when err is a
// *CorruptError that names none yet (the innermost framing reader wins),
// and returns err. Other errors, and nil, come back as they are.
func Stamp(err error, s Structure) error {
	var ce *CorruptError
	if errors.As(err, &ce) && ce.Structure == "" {
		ce.Structure = s
	}
	return err
}

// StructureOf is the structure named in err's *CorruptError, or "".
func StructureOf(err error) Structure {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce.Structure
	}
	return ""
}

// Errorf builds a CorruptError whose Err wraps sentinel with a formatted detail.
func Errorf(file string, off int64, sentinel error, format string, args ...any) *CorruptError {
	return &CorruptError{File: file, Offset: off, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// Decbuf is a little-endian/varint cursor over a byte slice. The first error
// sticks: later reads return zero values, so a decoder can read a whole
// structure and check Err once, as prometheus tsdb/encoding does.
type Decbuf struct {
	b    []byte
	off  int
	base int64 // offset of b[0] in the file, for error messages
	file string
	err  error
}

// NewDecbuf returns a cursor over b; base is b[0]'s offset within file.
func NewDecbuf(file string, base int64, b []byte) *Decbuf {
	return &Decbuf{b: b, base: base, file: file}
}

// Err returns the first error met, a *CorruptError.
func (d *Decbuf) Err() error {
	if d.err == nil {
		return nil
	}
	return d.err
}

// Offset is the file offset of the next byte to read.
func (d *Decbuf) Offset() int64 { return d.base + int64(d.off) }

// Len is the number of bytes left.
func (d *Decbuf) Len() int { return len(d.b) - d.off }

// Rest returns the bytes left without consuming them.
func (d *Decbuf) Rest() []byte { return d.b[d.off:] }

// Fail records err at the current offset unless an error is already set.
func (d *Decbuf) Fail(sentinel error, format string, args ...any) {
	if d.err == nil {
		d.err = Errorf(d.file, d.Offset(), sentinel, format, args...)
	}
}

func (d *Decbuf) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.Len() < n {
		d.Fail(ErrTruncated, "%s needs %d bytes, %d left", what, n, d.Len())
		return false
	}
	return true
}

// Byte reads one byte.
func (d *Decbuf) Byte() byte {
	if !d.need(1, "byte") {
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

// U16 reads a little-endian uint16.
func (d *Decbuf) U16() uint16 {
	if !d.need(2, "u16") {
		return 0
	}
	v := binary.LittleEndian.Uint16(d.b[d.off:])
	d.off += 2
	return v
}

// U32 reads a little-endian uint32.
func (d *Decbuf) U32() uint32 {
	if !d.need(4, "u32") {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

// U64 reads a little-endian uint64.
func (d *Decbuf) U64() uint64 {
	if !d.need(8, "u64") {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

// Uvarint reads an unsigned LEB128 varint.
func (d *Decbuf) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		if n == 0 {
			d.Fail(ErrTruncated, "uvarint runs past the end")
		} else {
			d.Fail(ErrFormat, "uvarint overflows 64 bits")
		}
		return 0
	}
	d.off += n
	return v
}

// Varint reads a zig-zag signed varint.
func (d *Decbuf) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		if n == 0 {
			d.Fail(ErrTruncated, "varint runs past the end")
		} else {
			d.Fail(ErrFormat, "varint overflows 64 bits")
		}
		return 0
	}
	d.off += n
	return v
}

// Bytes returns the next n bytes (a sub-slice, not a copy). n is checked
// against what is left, so a corrupt length can never allocate.
func (d *Decbuf) Bytes(n int) []byte {
	if !d.need(n, "field") {
		return nil
	}
	v := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return v
}

// Skip advances n bytes.
func (d *Decbuf) Skip(n int) { d.Bytes(n) }

// Count reads a uvarint count of items each at least minSize bytes long and
// fails if the bytes left could not hold that many: a count is bounded by the
// bytes that could hold it, never trusted.
func (d *Decbuf) Count(minSize int, what string) int {
	n := d.Uvarint()
	if d.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(d.Len()/minSize) {
		d.Fail(ErrFormat, "%s count %d cannot fit in %d bytes", what, n, d.Len())
		return 0
	}
	return int(n)
}

// MaxFileRead is the most ReadFull will return in one slice. Small files
// (index.db, meta.inf, peers.idx, snapshots) are read whole; anything larger
// is streamed by its decoder.
const MaxFileRead = 256 << 20

// ReadFull reads size bytes at offset 0 of r, refusing sizes over limit.
// size is the file's own size (every caller passes what stat says, never a
// length field), so it is allocated once: memory is the file's size, not a
// multiple of it as growing by appends gave (64 MiB files took 2-3x), and a
// size that lies costs at most limit. A file shorter than size is
// ErrTruncated at the offset it ends.
func ReadFull(file string, r io.ReaderAt, size, limit int64) ([]byte, error) {
	if size < 0 {
		return nil, Errorf(file, 0, ErrFormat, "negative size %d", size)
	}
	if limit <= 0 || limit > MaxFileRead {
		limit = MaxFileRead
	}
	if size > limit {
		return nil, Errorf(file, 0, ErrTooLarge, "%d bytes is more than the %d this reader accepts", size, limit)
	}
	const chunk = 1 << 20
	buf := make([]byte, 0, size)
	for off := int64(0); off < size; {
		n := min(int64(chunk), size-off)
		buf = buf[:off+n]
		m, err := r.ReadAt(buf[off:off+n], off)
		off += int64(m)
		if err != nil && !(err == io.EOF && off == size) {
			if err == io.EOF {
				return buf[:off], Errorf(file, off, ErrTruncated, "file ends at %d of %d bytes", off, size)
			}
			return buf[:off], &CorruptError{File: file, Offset: off, Err: err}
		}
	}
	return buf, nil
}

// smallBufs hold the first read of ReadFileFS: meta.inf, meta.sum, o.dat,
// peers.idx, tav.idx and the index.db of a small stream fit in one.
var smallBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFileFS reads the file name of fsys whole, refusing one over limit
// (ErrTooLarge). One open: the size comes from the open file (a decrypting
// FS opens a file to answer fs.Stat), and where the file is an
// io.ReaderAt, one pread into a kept buffer comes first: a short read is
// the whole file (io.ReaderAt gives io.EOF with fewer bytes than asked),
// so a small file costs no stat and no second read. A larger file is read
// by ReadFull at the size the open file gives, at most limit.
func ReadFileFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ra, isReaderAt := f.(io.ReaderAt)
	if isReaderAt {
		bp := smallBufs.Get().(*[]byte)
		n, err := ra.ReadAt(*bp, 0)
		if n < len(*bp) && err == io.EOF && int64(n) <= limit {
			data := append([]byte{}, (*bp)[:n]...)
			smallBufs.Put(bp)
			return data, nil
		}
		smallBufs.Put(bp)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	if isReaderAt {
		return ReadFull(name, ra, fi.Size(), limit)
	}
	if fi.Size() > limit {
		return nil, Errorf(name, 0, ErrTooLarge, "%d bytes is more than the %d this reader accepts", fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
