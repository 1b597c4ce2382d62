package natsfmt

import (
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/klauspost/compress/s2"
)

// S2 appears in two forms: the block format (raft meta snapshots, op 14
// stream messages) and the framed stream format (op 9 assignments, and
// compressed message blocks after their "cmp\x01" header). A block's header claims its decoded
// length, and S2's repeat codes let a few bytes expand to megabytes, so the
// claim cannot be bounded by a ratio to the bytes present. Instead
// s2BlockLen walks the tags once without writing anything and sums the
// lengths they produce; only when that sum equals the claim (and is within
// the caller's limit) is the output allocated and decoded.

// MaxDecompressed bounds any one S2 block or stream decoded here.
const MaxDecompressed = 512 << 20

// s2BlockLen returns the number of bytes the tags of an S2 block body
// (after the length uvarint) produce, or the body offset where they are
// malformed (ok false). It stops as soon as the total exceeds limit.
func s2BlockLen(src []byte, limit int) (total int, badAt int, ok bool) {
	var d, s, offset int
	for s < len(src) {
		at := s
		var length int
		switch src[s] & 0x03 {
		case 0: // literal
			x := uint32(src[s] >> 2)
			switch {
			case x < 60:
				s++
			case x == 60:
				s += 2
				if s > len(src) {
					return d, at, false
				}
				x = uint32(src[s-1])
			case x == 61:
				s += 3
				if s > len(src) {
					return d, at, false
				}
				x = uint32(src[s-2]) | uint32(src[s-1])<<8
			case x == 62:
				s += 4
				if s > len(src) {
					return d, at, false
				}
				x = uint32(src[s-3]) | uint32(src[s-2])<<8 | uint32(src[s-1])<<16
			default:
				s += 5
				if s > len(src) {
					return d, at, false
				}
				x = binary.LittleEndian.Uint32(src[s-4:])
			}
			if uint64(x)+1 > uint64(len(src)-s) {
				return d, at, false
			}
			length = int(x) + 1
			s += length
			d += length
			if d > limit {
				return d, at, false
			}
			continue
		case 1: // copy1, or S2 repeat when the offset is 0
			s += 2
			if s > len(src) {
				return d, at, false
			}
			length = int(src[s-2]) >> 2 & 0x7
			toffset := int(uint32(src[s-2])&0xe0<<3 | uint32(src[s-1]))
			if toffset == 0 {
				switch length {
				case 5:
					s++
					if s > len(src) {
						return d, at, false
					}
					length = int(src[s-1]) + 4
				case 6:
					s += 2
					if s > len(src) {
						return d, at, false
					}
					length = int(uint32(src[s-2])|uint32(src[s-1])<<8) + 1<<8
				case 7:
					s += 3
					if s > len(src) {
						return d, at, false
					}
					length = int(uint32(src[s-3])|uint32(src[s-2])<<8|uint32(src[s-1])<<16) + 1<<16
				}
			} else {
				offset = toffset
			}
			length += 4
		case 2: // copy2
			s += 3
			if s > len(src) {
				return d, at, false
			}
			length = 1 + int(src[s-3])>>2
			offset = int(uint32(src[s-2]) | uint32(src[s-1])<<8)
		case 3: // copy4
			s += 5
			if s > len(src) {
				return d, at, false
			}
			length = 1 + int(src[s-5])>>2
			offset = int(binary.LittleEndian.Uint32(src[s-4:]))
		}
		if offset <= 0 || d < offset {
			return d, at, false
		}
		d += length
		if d > limit {
			return d, at, false
		}
	}
	return d, 0, true
}

// DecodeS2Block decodes an S2 block whose first byte is at file offset off,
// refusing more than limit decoded bytes (limit <= 0: MaxDecompressed).
func DecodeS2Block(file string, off int64, src []byte, limit int) ([]byte, error) {
	if limit <= 0 || limit > MaxDecompressed {
		limit = MaxDecompressed
	}
	return decodeS2Block(file, off, src, limit)
}

// decodeS2Block is DecodeS2Block with limit taken as it is (a stream passes
// what is left of its own limit, which may be 0).
func decodeS2Block(file string, off int64, src []byte, limit int) ([]byte, error) {
	claim, n := binary.Uvarint(src)
	if n <= 0 {
		return nil, binfmt.Errorf(file, off, binfmt.ErrFormat, "S2 block length header is not a uvarint")
	}
	if claim > uint64(limit) {
		return nil, binfmt.Errorf(file, off, binfmt.ErrTooLarge, "S2 block claims %d decoded bytes, limit %d", claim, limit)
	}
	got, badAt, ok := s2BlockLen(src[n:], int(claim))
	if !ok {
		return nil, binfmt.Errorf(file, off+int64(n+badAt), binfmt.ErrFormat, "S2 block is corrupt here (claims %d bytes, tags so far give %d)", claim, got)
	}
	if got != int(claim) {
		return nil, binfmt.Errorf(file, off, binfmt.ErrFormat, "S2 block claims %d decoded bytes, its tags give %d", claim, got)
	}
	out, err := s2.Decode(make([]byte, claim), src)
	if err != nil {
		return nil, binfmt.Errorf(file, off, binfmt.ErrFormat, "S2 block: %v", err)
	}
	return out, nil
}

// S2/Snappy framing chunk types.
const (
	chunkCompressed   = 0x00
	chunkUncompressed = 0x01
	chunkPadding      = 0xfe
	chunkStreamID     = 0xff
	chunkHeaderLen    = 4
	chunkCRCLen       = 4
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the framing format's checksum of decoded data.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, crc32c)
	return (c>>15 | c<<17) + 0xa282ead8
}

// DecodeS2Stream decodes a whole S2 (or Snappy) framed stream: the size
// bytes of r, whose byte 0 is at file offset base, checking every chunk's
// length against the bytes present and its CRC, and refusing more than limit
// decoded bytes (limit <= 0: MaxDecompressed). It reads one chunk at a time
// (a chunk is at most 16 MiB, and never more than the bytes left), and every
// error carries the file offset of the chunk that failed.
func DecodeS2Stream(file string, base int64, r io.ReaderAt, size int64, limit int) ([]byte, error) {
	if limit <= 0 || limit > MaxDecompressed {
		limit = MaxDecompressed
	}
	var out, buf []byte
	var hdr [chunkHeaderLen]byte
	for p := int64(0); p < size; {
		at := base + p
		if size-p < chunkHeaderLen {
			return out, binfmt.Errorf(file, at, binfmt.ErrTruncated, "S2 chunk header needs %d bytes, %d left", chunkHeaderLen, size-p)
		}
		if m, err := r.ReadAt(hdr[:], p); m < chunkHeaderLen {
			return out, binfmt.Errorf(file, at, binfmt.ErrTruncated, "S2 chunk header, %d bytes readable: %v", m, err)
		}
		typ := hdr[0]
		clen := int64(hdr[1]) | int64(hdr[2])<<8 | int64(hdr[3])<<16
		p += chunkHeaderLen
		if clen > size-p {
			return out, binfmt.Errorf(file, at, binfmt.ErrTruncated, "S2 chunk of %d bytes, %d left", clen, size-p)
		}
		if int64(cap(buf)) < clen {
			buf = make([]byte, clen)
		}
		body := buf[:clen]
		if m, err := r.ReadAt(body, p); int64(m) < clen {
			return out, binfmt.Errorf(file, at, binfmt.ErrTruncated, "S2 chunk of %d bytes, %d readable: %v", clen, m, err)
		}
		p += clen
		switch {
		case typ == chunkStreamID:
			if s := string(body); s != "S2sTwO" && s != "sNaPpY" {
				return out, binfmt.Errorf(file, at, binfmt.ErrFormat, "S2 stream identifier %q", s)
			}
		case typ == chunkCompressed || typ == chunkUncompressed:
			if clen < chunkCRCLen {
				return out, binfmt.Errorf(file, at, binfmt.ErrFormat, "S2 data chunk of %d bytes has no CRC", clen)
			}
			want := binary.LittleEndian.Uint32(body)
			data := body[chunkCRCLen:]
			if typ == chunkCompressed {
				var err error
				data, err = decodeS2Block(file, at+chunkHeaderLen+chunkCRCLen, data, limit-len(out))
				if err != nil {
					return out, err
				}
			} else if len(data) > limit-len(out) {
				return out, binfmt.Errorf(file, at, binfmt.ErrTooLarge, "S2 stream exceeds %d decoded bytes", limit)
			}
			if got := maskedCRC(data); got != want {
				return out, binfmt.Errorf(file, at+chunkHeaderLen, binfmt.ErrChecksum, "S2 chunk CRC %08x, want %08x", want, got)
			}
			out = append(out, data...)
		case typ == chunkPadding || typ >= 0x80:
			// padding and skippable chunks (e.g. the S2 index) carry no data
		default:
			return out, binfmt.Errorf(file, at, binfmt.ErrFormat, "S2 reserved unskippable chunk type %#x", typ)
		}
	}
	return out, nil
}
