// Package gzseek reads a gzip file (RFC 1952, one member or several) from
// its start or from a checkpoint taken on an earlier read: the state of the
// inflater at the start of a deflate block (RFC 1951 3.2.3), which is the
// input position, the bits already taken from it and the last 32 KiB of
// output. A file of the archive can then be read again later without
// inflating everything before it, as zlib's examples/zran.c does.
//
// The inflater is klauspost/compress's (inflate.go), with a hook before
// each block header.
package gzseek

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Checkpoint is where a read can start again: at output offset Out of the
// decompressed stream (all members end to end), input offset In of the
// gzip file, with NB bits of B already taken from the bytes before In, and
// Window the output of the same member just before Out (at most 32 KiB).
type Checkpoint struct {
	In     int64
	Out    int64
	B      uint32
	NB     uint
	Window []byte
}

// ErrChecksum is wrapped by the error of a member whose CRC-32 or size
// differs from its trailer (read from the member's start only).
var ErrChecksum = errors.New("gzip: checksum or size in the trailer differs from the data")

// ErrHeader is wrapped by the error of bytes that are not a gzip header.
var ErrHeader = errors.New("gzip: invalid header")

// maxHeaderField bounds a header's file name or comment.
const maxHeaderField = 1 << 20

// Reader inflates a gzip file.
type Reader struct {
	src   posReader
	br    *bufio.Reader
	f     decompressor
	out   int64 // decompressed bytes handed out
	err   error
	check bool // the member was read from its start: its trailer is checked
	crc   uint32
	isize uint32 // member bytes, modulo 2^32

	// Boundary, when set, is called before each deflate block with the
	// output offset there; Checkpoint may be called from it.
	Boundary func(out int64)
}

// posReader reads r from pos on, counting.
type posReader struct {
	r    io.ReaderAt
	pos  int64
	size int64
}

func (p *posReader) Read(b []byte) (int, error) {
	if p.pos >= p.size {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.size-p.pos)]
	n, err := p.r.ReadAt(b, p.pos)
	p.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

const bufSize = 64 << 10

// NewReader starts reading the gzip file r of size bytes at its first
// member.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	z := &Reader{src: posReader{r: r, size: size}}
	z.br = bufio.NewReaderSize(&z.src, bufSize)
	z.init(nil)
	if err := z.header(); err != nil {
		return nil, err
	}
	return z, nil
}

// Resume reads the gzip file r of size bytes from cp on: its first byte
// is the one at cp.Out of the decompressed stream. The CRC-32 of the
// member it starts in is not checked (what came before is not read).
func Resume(r io.ReaderAt, size int64, cp Checkpoint) *Reader {
	z := &Reader{src: posReader{r: r, pos: cp.In, size: size}, out: cp.Out}
	z.br = bufio.NewReaderSize(&z.src, bufSize)
	z.init(cp.Window)
	z.f.b, z.f.nb = cp.B, cp.NB
	return z
}

func (z *Reader) init(window []byte) {
	fixedHuffmanDecoderInit()
	if z.f.bits == nil {
		z.f.bits = new([maxNumLit + maxNumDist]int)
		z.f.codebits = new([numCodes]int)
	}
	z.f = decompressor{r: z.br, bits: z.f.bits, codebits: z.f.codebits, h1: z.f.h1, h2: z.f.h2, dict: z.f.dict, step: nextBlock}
	z.f.dict.init(maxMatchOffset, window)
	z.f.boundary = z.boundary
}

func (z *Reader) boundary(*decompressor) {
	if z.Boundary != nil {
		z.Boundary(z.out + int64(z.f.dict.availRead()))
	}
}

// Checkpoint gives the state at the block about to be read; call it from
// Boundary only.
func (z *Reader) Checkpoint() Checkpoint {
	d := &z.f.dict
	var w []byte
	if d.full {
		w = make([]byte, 0, len(d.hist))
		w = append(append(w, d.hist[d.wrPos:]...), d.hist[:d.wrPos]...)
	} else {
		w = append([]byte(nil), d.hist[:d.wrPos]...)
	}
	return Checkpoint{In: z.src.pos - int64(z.br.Buffered()), Out: z.out + int64(d.availRead()), B: z.f.b, NB: z.f.nb, Window: w}
}

// In is the input consumed so far (bytes of the gzip file).
func (z *Reader) In() int64 { return z.src.pos - int64(z.br.Buffered()) }

// Out is the decompressed bytes read so far, plus the checkpoint's offset
// for a Reader that resumed.
func (z *Reader) Out() int64 { return z.out }

// header reads a member header (RFC 1952 2.3.1).
func (z *Reader) header() error {
	at := z.In()
	var h [10]byte
	if _, err := io.ReadFull(z.br, h[:]); err != nil {
		return fmt.Errorf("%w at offset %d: %v", ErrHeader, at, noEOF(err))
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
		return fmt.Errorf("%w at offset %d: starts % x, not 1f 8b 08", ErrHeader, at, h[:3])
	}
	flg := h[3]
	if flg&4 != 0 { // FEXTRA
		var n [2]byte
		if _, err := io.ReadFull(z.br, n[:]); err != nil {
			return fmt.Errorf("%w at offset %d: extra field: %v", ErrHeader, at, noEOF(err))
		}
		if _, err := z.br.Discard(int(binary.LittleEndian.Uint16(n[:]))); err != nil {
			return fmt.Errorf("%w at offset %d: extra field: %v", ErrHeader, at, noEOF(err))
		}
	}
	for _, bit := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
		if flg&bit == 0 {
			continue
		}
		for n := 0; ; n++ {
			c, err := z.br.ReadByte()
			if err != nil {
				return fmt.Errorf("%w at offset %d: name or comment: %v", ErrHeader, at, noEOF(err))
			}
			if c == 0 {
				break
			}
			if n > maxHeaderField {
				return fmt.Errorf("%w at offset %d: name or comment longer than %d bytes", ErrHeader, at, maxHeaderField)
			}
		}
	}
	if flg&2 != 0 { // FHCRC
		if _, err := z.br.Discard(2); err != nil {
			return fmt.Errorf("%w at offset %d: header CRC: %v", ErrHeader, at, noEOF(err))
		}
	}
	z.check, z.crc, z.isize = true, 0, 0
	return nil
}

// Read reads decompressed bytes. At the end of the last member it returns
// io.EOF; damaged input gives an error naming the input offset.
func (z *Reader) Read(p []byte) (int, error) {
	for {
		if z.err != nil {
			return 0, z.err
		}
		n, err := z.f.Read(p)
		if n > 0 {
			if z.check {
				z.crc = crc32.Update(z.crc, crc32.IEEETable, p[:n])
				z.isize += uint32(n)
			}
			z.out += int64(n)
			if err == io.EOF {
				z.err = z.endMember()
			} else if err != nil {
				z.err = z.inflateErr(err)
			}
			return n, nil
		}
		if err == io.EOF {
			if z.err = z.endMember(); z.err != nil {
				return 0, z.err
			}
			continue
		}
		if err != nil {
			z.err = z.inflateErr(err)
			return 0, z.err
		}
	}
}

func (z *Reader) inflateErr(err error) error {
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("gzip: input ends at offset %d inside the deflate stream: %w", z.In(), err)
	}
	return fmt.Errorf("gzip: deflate data unreadable near input offset %d: %w", z.In(), err)
}

// endMember checks the trailer (RFC 1952 2.3.1: CRC-32, ISIZE) and starts
// the next member, if any; io.EOF at the end of the input.
func (z *Reader) endMember() error {
	at := z.In()
	var t [8]byte
	if _, err := io.ReadFull(z.br, t[:]); err != nil {
		return fmt.Errorf("gzip: member trailer at offset %d cut off: %w", at, noEOF(err))
	}
	if z.check && (binary.LittleEndian.Uint32(t[:4]) != z.crc || binary.LittleEndian.Uint32(t[4:]) != z.isize) {
		return fmt.Errorf("%w: trailer at offset %d says CRC-32 %08x of %d bytes, the data has %08x of %d",
			ErrChecksum, at, binary.LittleEndian.Uint32(t[:4]), binary.LittleEndian.Uint32(t[4:]), z.crc, z.isize)
	}
	if _, err := z.br.Peek(1); err == io.EOF {
		return io.EOF
	}
	if err := z.header(); err != nil {
		return err
	}
	z.init(nil)
	return nil
}
