package bundle

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"
)

// When a zip's central directory cannot be trusted (damaged, or pointing
// at local headers that are not there), the entries are found the way the
// archive was written: local file headers one after another from offset 0
// (APPNOTE.TXT 4.3.7).
//
//	0      4        6     8      10     12     14     18      22      26      28       30
//	+------+--------+-----+------+------+------+------+-------+-------+-------+--------+------+-------+-------+
//	|PK\3\4|version |flags|method| time | date | crc  | csize | usize | nlen  | xlen   | name | extra | data… |
//	+------+--------+-----+------+------+------+------+-------+-------+-------+--------+------+-------+-------+
//
// Flag bit 3 says crc and sizes are zero here and follow the data in a data
// descriptor ([PK\7\8] crc csize usize, sizes 8 bytes for zip64): a deflate
// stream then ends itself, a stored entry ends where a descriptor with its
// size is found.
const (
	zipLocalSig      = "PK\x03\x04"
	zipCentralSig    = "PK\x01\x02"
	zipEndSig        = "PK\x05\x06"
	zipDescriptorSig = "PK\x07\x08"
	zipLocalLen      = 30
	zipEndLen        = 22
	// zipMaxComment bounds the search for the end record from the end of
	// the file: the record is followed by a comment of at most 65535 bytes.
	zipMaxComment = 65535
)

// localEntry is one entry found by its local header.
type localEntry struct {
	name     string
	header   int64 // offset of the local header
	data     int64 // offset of the entry's data
	flags    uint16
	method   uint16
	crc      uint32
	csize    uint64 // from the local header; 0 with a data descriptor
	usize    uint64
	modified time.Time
}

// zipEndRecord describes where the end of central directory record is and
// what it claims, for the note about a damaged directory.
func zipEndRecord(r io.ReaderAt, size int64) string {
	n := min(size, zipEndLen+zipMaxComment)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return fmt.Sprintf("end record unreadable: %v", err)
	}
	i := bytes.LastIndex(tail, []byte(zipEndSig))
	if i < 0 || len(tail)-i < zipEndLen {
		return fmt.Sprintf("no end of central directory record from offset %d to the end at %d (the last %d bytes, where the record and its comment must be)", size-n, size, n)
	}
	rec := tail[i:]
	at := size - n + int64(i)
	dirSize := binary.LittleEndian.Uint32(rec[12:])
	dirOff := binary.LittleEndian.Uint32(rec[16:])
	return fmt.Sprintf("end record at offset %d claims %d entries in a directory of %d bytes at offset %d",
		at, binary.LittleEndian.Uint16(rec[10:]), dirSize, dirOff)
}

// zipScanner walks local headers. next returns the next entry and a reader
// of its content (decompressed, CRC-checked at its end); the caller reads as
// much as it wants, and next finds where the entry ended.
type zipScanner struct {
	r    io.ReaderAt
	size int64
	pos  int64
	cur  *entryBody
	// gaps says where no header was found where one should be (damage).
	gaps []string
}

func newZipScanner(r io.ReaderAt, size int64) *zipScanner {
	return &zipScanner{r: r, size: size}
}

// next finds the next local header at or after the end of the previous
// entry. It returns io.EOF at the central directory or the end of input.
func (z *zipScanner) next() (localEntry, *entryBody, error) {
	if z.cur != nil {
		end, err := z.cur.finish()
		z.cur = nil
		if err != nil {
			return localEntry{}, nil, err
		}
		z.pos = end
	}
	var hdr [zipLocalLen]byte
	for {
		if z.pos+4 > z.size {
			return localEntry{}, nil, io.EOF
		}
		n, _ := z.r.ReadAt(hdr[:], z.pos)
		sig := string(hdr[:min(n, 4)])
		if sig == zipCentralSig || sig == zipEndSig {
			return localEntry{}, nil, io.EOF
		}
		if sig == zipLocalSig && n == zipLocalLen {
			break
		}
		// Not a header where one should be: look for the next one.
		at, ok := z.find(z.pos+1, zipLocalSig)
		z.gaps = append(z.gaps, fmt.Sprintf("no local header at offset %d (next found at %d)", z.pos, at))
		if !ok {
			return localEntry{}, nil, io.EOF
		}
		z.pos = at
	}
	e := localEntry{header: z.pos,
		flags:  binary.LittleEndian.Uint16(hdr[6:]),
		method: binary.LittleEndian.Uint16(hdr[8:]),
		crc:    binary.LittleEndian.Uint32(hdr[14:]),
		csize:  uint64(binary.LittleEndian.Uint32(hdr[18:])),
		usize:  uint64(binary.LittleEndian.Uint32(hdr[22:])),
	}
	e.modified = msDosTime(binary.LittleEndian.Uint16(hdr[12:]), binary.LittleEndian.Uint16(hdr[10:]))
	nlen, xlen := int64(binary.LittleEndian.Uint16(hdr[26:])), int64(binary.LittleEndian.Uint16(hdr[28:]))
	e.data = z.pos + zipLocalLen + nlen + xlen
	// On any failure below the scan goes on past this header's signature.
	z.pos += 4
	if e.data > z.size {
		return e, nil, fmt.Errorf("local header at offset %d: name and extra fields run past the end of the archive", e.header)
	}
	name := make([]byte, nlen+xlen)
	if _, err := z.r.ReadAt(name, e.header+zipLocalLen); err != nil {
		return e, nil, fmt.Errorf("local header at offset %d: %v", e.header, err)
	}
	e.name = string(name[:nlen])
	if e.csize == 0xFFFFFFFF || e.usize == 0xFFFFFFFF {
		readZip64Extra(name[nlen:], &e)
	}
	body := &entryBody{z: z, e: e}
	if err := body.open(); err != nil {
		// Cannot tell where the entry ends: look for the next header.
		z.pos = e.data
		return e, nil, err
	}
	z.cur = body
	return e, body, nil
}

// find gives the offset of the first sig at or after from.
func (z *zipScanner) find(from int64, sig string) (int64, bool) {
	const chunk = 1 << 20
	buf := make([]byte, chunk+len(sig))
	for off := from; off < z.size; off += chunk {
		n, _ := z.r.ReadAt(buf, off)
		if i := bytes.Index(buf[:n], []byte(sig)); i >= 0 {
			return off + int64(i), true
		}
	}
	return z.size, false
}

// readZip64Extra takes the 64-bit sizes from the zip64 extra field (id 1).
func readZip64Extra(extra []byte, e *localEntry) {
	for len(extra) >= 4 {
		id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return
		}
		if id == 1 {
			f := extra[:n]
			if e.usize == 0xFFFFFFFF && len(f) >= 8 {
				e.usize, f = binary.LittleEndian.Uint64(f), f[8:]
			}
			if e.csize == 0xFFFFFFFF && len(f) >= 8 {
				e.csize = binary.LittleEndian.Uint64(f)
			}
			return
		}
		extra = extra[n:]
	}
}

func msDosTime(date, tm uint16) time.Time {
	return time.Date(int(date>>9)+1980, time.Month(date>>5&0xf), int(date&0x1f),
		int(tm>>11), int(tm>>5&0x3f), int(tm&0x1f)*2, 0, time.UTC)
}

// errZipMethod is an entry compressed by a method other than store and
// deflate, the two every zip tool writes.
var errZipMethod = errors.New("compression method not supported")

// entryBody reads one entry's content found by its local header.
type entryBody struct {
	z   *zipScanner
	e   localEntry
	cnt *countingByteReader // compressed bytes consumed (deflate with descriptor)
	r   io.Reader           // decompressed content
	crc hash.Hash32
	n   uint64 // decompressed bytes read
	end int64  // offset just past the data (and descriptor), once known
	err error
}

func (b *entryBody) open() error {
	e := b.e
	descriptor := e.flags&0x8 != 0
	b.crc = crc32.NewIEEE()
	switch {
	case e.method == 0 && !descriptor:
		b.r = io.NewSectionReader(b.z.r, e.data, int64(e.csize))
		b.end = e.data + int64(e.csize)
	case e.method == 0:
		// Stored with a descriptor: the data ends at a descriptor whose
		// compressed size is the distance to it.
		for from := e.data; ; {
			at, ok := b.z.find(from, zipDescriptorSig)
			if !ok {
				return fmt.Errorf("stored entry at offset %d: no data descriptor after its data", e.data)
			}
			var d [16]byte
			if n, _ := b.z.r.ReadAt(d[:], at); n == 16 && int64(binary.LittleEndian.Uint32(d[8:])) == at-e.data {
				b.e.crc = binary.LittleEndian.Uint32(d[4:])
				b.r = io.NewSectionReader(b.z.r, e.data, at-e.data)
				b.end = at + 16
				break
			}
			from = at + 1
		}
	case e.method == 8 && !descriptor:
		b.r = flate.NewReader(io.NewSectionReader(b.z.r, e.data, int64(e.csize)))
		b.end = e.data + int64(e.csize)
	case e.method == 8:
		// The deflate stream ends itself; read it through a ByteReader so
		// that flate consumes exactly its bytes and the descriptor's place
		// is known.
		b.cnt = &countingByteReader{r: bufio.NewReader(io.NewSectionReader(b.z.r, e.data, b.z.size-e.data))}
		b.r = flate.NewReader(b.cnt)
	default:
		return fmt.Errorf("entry at offset %d: %w (method %d)", e.data, errZipMethod, e.method)
	}
	return nil
}

// consumed gives the compressed bytes the entry can have taken so far.
func (b *entryBody) consumed() int64 {
	if b.cnt != nil {
		return b.cnt.n
	}
	return max(int64(b.e.csize), 1)
}

func (b *entryBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.crc.Write(p[:n])
	b.n += uint64(n)
	if err == io.EOF {
		if cerr := b.check(); cerr != nil {
			err = cerr
		}
	} else if err != nil {
		err = fmt.Errorf("data at offset %d, after %d bytes: %w", b.e.data, b.n, err)
	}
	if err != nil {
		b.err = err
	}
	return n, err
}

// check runs at the end of the data: it reads the descriptor if any and
// compares the CRC-32.
func (b *entryBody) check() error {
	if b.cnt != nil {
		at := b.e.data + b.cnt.n
		var d [24]byte
		n, _ := b.z.r.ReadAt(d[:], at)
		rec := d[:n]
		if len(rec) >= 4 && string(rec[:4]) == zipDescriptorSig {
			rec, at = rec[4:], at+4
		}
		if len(rec) < 12 {
			return fmt.Errorf("data descriptor at offset %d cut off", at)
		}
		b.e.crc = binary.LittleEndian.Uint32(rec)
		b.end = at + 12
		// zip64 descriptors carry 8-byte sizes.
		if len(rec) >= 20 && binary.LittleEndian.Uint32(rec[4:]) != uint32(b.cnt.n) {
			b.end = at + 20
		}
	}
	if b.crc.Sum32() != b.e.crc {
		return fmt.Errorf("data at offset %d: CRC-32 %08x, the archive says %08x", b.e.data, b.crc.Sum32(), b.e.crc)
	}
	return io.EOF
}

// finish reads what the caller left of the entry and says where it ended.
func (b *entryBody) finish() (int64, error) {
	if b.err == nil {
		_, err := io.Copy(io.Discard, b)
		if err != nil && b.cnt != nil {
			// A deflate stream that does not end: the next entry's place
			// is unknown; look for it past what was read.
			return b.e.data + b.cnt.n, nil
		}
	}
	if b.end == 0 {
		return b.e.data, nil
	}
	return b.end, nil
}

// countingByteReader counts the bytes taken from a buffered reader.
type countingByteReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingByteReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingByteReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
