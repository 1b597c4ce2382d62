// Package storeparse reads the nats-server JetStream filestore offline:
// message blocks (msgs/N.blk), the stream state cache (msgs/index.db),
// meta.inf/meta.sum of streams and consumers, and consumer state (o.dat).
// It also walks a whole stream folder (ScanStream) and recomputes the stream
// figures from the blocks alone. The formats are documented in FORMAT.md.
//
// Decoders take bytes or an io.ReaderAt plus size (an fs.FS for a folder),
// never OS paths. Every problem is a *CorruptError naming the file,
// byte offset and, when known, the sequence.
package storeparse

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Record framing: natsfmt reads the record header and computes the checksum
// (the diagram is in ../internal/natsfmt/record.go); these are its sizes
// under the names this package uses.
const (
	msgHdrSize   = natsfmt.RecordHeaderLen
	checksumSize = natsfmt.ChecksumLen
	emptyRecord  = natsfmt.EmptyRecordLen
	// RLBadThresh is the largest record length nats-server accepts on read
	// (rlBadThresh). A length above it is corruption, never a record, so it
	// also bounds the reader's buffer.
	RLBadThresh = natsfmt.RLBadThresh
)

// Compressed block header: "cmp" + algorithm 1 (S2) + uvarint original size.
var cmpMagic = []byte{'c', 'm', 'p', 1}

// maxDecompressed bounds the size a compressed block may claim once
// decompressed: a sealed block is at most FileStoreMaxBlkSize (8 MiB) plus one
// record that did not fit (at most RLBadThresh). Anything larger is corrupt.
const maxDecompressed = 8<<20 + RLBadThresh

// maxRatio bounds the decompressed size by the compressed size too: S2 never
// reaches this ratio on real message data (all zero input reaches about 50:1).
const maxRatio = 256

// readChunk is how many bytes the reader asks the io.ReaderAt for at a time.
const readChunk = 256 << 10

// Record is one record of a message block. Subject, Header and Data point
// into the reader's buffer and are valid until the next call to Next.
type Record struct {
	Offset     int64  // of the record in the (decompressed) block
	Len        int    // rl without the hbit: the whole record incl. 22-byte header and checksum
	Seq        uint64 // stream sequence (raft index in a WAL), ebit/tbit masked off
	TS         int64  // Unix ns; 0 in erased records
	Subject    []byte
	Header     []byte
	Data       []byte
	HasHeaders bool
	Erased     bool    // ebit: secure-deleted, payload is random filler
	Tombstone  bool    // tbit: records the deletion of Seq (which may live in an earlier block)
	ChecksumOK bool    // false when the stored checksum does not match (or no key was given)
	Sum        [8]byte // the stored checksum (the block's lchk when this is its last record)
}

// BlockReader iterates over the records of one message block. It streams a
// plain block through a reusable buffer (memory bounded by the largest record,
// at most RLBadThresh); a compressed block is decompressed whole first
// (bounded by maxDecompressed and maxRatio × file size).
type BlockReader struct {
	file       string
	src        io.ReaderAt
	size       int64 // bytes of the (decompressed) block
	fileSize   int64
	compressed bool
	key        string
	hh         hash.Hash64

	buf    []byte // buf[0] is at block offset bufOff
	bufOff int64
	// inMem: the whole (decompressed or given) block is in buf, bufOff 0;
	// fill slices it and never copies.
	inMem bool
	off   int64 // next record offset
	err   error // sticky framing error (or io.EOF)

	lastGood int64  // end offset of the last record whose framing was sane
	lastSeq  uint64 // seq of the last sane non-tombstone record
	torn     bool
	shrank   bool // src ended before size (see fill)

	resynced  bool
	resyncOff int64
	resyncSeq uint64
}

// NewBlockReader returns a reader over the block r of size bytes. file names
// the block in errors. key is the checksum key "<stream or raft group>-<block
// index>" (e.g. "ORDERS-1", "_meta_-2"); with an empty key checksums are not
// verified and every Record has ChecksumOK false.
//
// A block that starts with "cmp\x01" is decompressed (S2); when that fails the
// block is parsed as plain, as nats-server does, since a plain record of
// length 0x01706d63 also starts with those bytes.
func NewBlockReader(file string, r io.ReaderAt, size int64, key string) (*BlockReader, error) {
	return newBlockReader(file, r, nil, size, key)
}

// newBlockReader is NewBlockReader over r, or over data when data is not nil
// (a block already in memory, e.g. read whole: records then point into data
// and nothing is copied).
func newBlockReader(file string, r io.ReaderAt, data []byte, size int64, key string) (*BlockReader, error) {
	return newBlockReaderBuf(file, r, data, size, key, nil)
}

// newBlockReaderBuf is newBlockReader reading r through buf (its capacity;
// a larger one is made when a record needs it). The head that tells a
// compressed block is the reader's first chunk, so a plain block read
// through r costs no pread of its own for it.
func newBlockReaderBuf(file string, r io.ReaderAt, data []byte, size int64, key string, buf []byte) (*BlockReader, error) {
	if size < 0 {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrFormat, "negative size %d", size)
	}
	if data != nil {
		r, size = bytes.NewReader(data), int64(len(data))
	}
	b := &BlockReader{file: file, src: r, size: size, fileSize: size, key: key}
	if data != nil {
		b.buf, b.inMem = data, true
	}
	if key != "" {
		b.hh = binfmt.NewHH64(key)
	}
	if data == nil {
		b.buf = buf[:0]
	}
	if size >= int64(len(cmpMagic))+1+checksumSize {
		var head []byte
		if data == nil {
			p, err := b.fill(0, 16)
			if err != nil { // left for the first record to meet
				p = b.buf
				b.buf, b.bufOff, b.shrank = b.buf[:0], 0, false
			}
			head = p[:min(len(p), 16)]
		} else {
			head = data[:min(len(data), 16)]
		}
		if n := len(head); n >= len(cmpMagic) && bytes.Equal(head[:len(cmpMagic)], cmpMagic) {
			if data, err := decompressBlock(file, r, size, head[:n]); err == nil {
				b.src = bytes.NewReader(data)
				b.size = int64(len(data))
				b.compressed = true
				b.buf, b.bufOff, b.inMem, b.shrank = data, 0, true, false
			}
		}
	}
	return b, nil
}

// decompressBlock decodes "cmp\x01" uvarint(orig) S2-stream raw-last-8.
func decompressBlock(file string, r io.ReaderAt, size int64, head []byte) ([]byte, error) {
	orig, n := binary.Uvarint(head[len(cmpMagic):])
	if n <= 0 {
		return nil, binfmt.Errorf(file, int64(len(cmpMagic)), binfmt.ErrFormat, "bad original size varint")
	}
	hdr := int64(len(cmpMagic) + n)
	if orig < checksumSize || orig > maxDecompressed || orig > uint64(size)*maxRatio {
		return nil, binfmt.Errorf(file, int64(len(cmpMagic)), binfmt.ErrTooLarge, "compressed block claims %d bytes from %d", orig, size)
	}
	body := size - hdr - checksumSize
	if body <= 0 {
		return nil, binfmt.Errorf(file, hdr, binfmt.ErrTruncated, "compressed block has no body")
	}
	// The decoded length is bounded by maxDecompressed and the ratio limit,
	// not by orig: nats-server's Decompress ignores orig, and v2.12.1 was seen
	// writing an orig that is not the exact length.
	limit := min(uint64(maxDecompressed), uint64(size)*maxRatio)
	out, err := natsfmt.DecodeS2Stream(file, hdr, io.NewSectionReader(r, hdr, body), body, int(limit))
	if err != nil {
		return nil, binfmt.Stamp(err, natsfmt.StructCompressedBlock)
	}
	var tail [checksumSize]byte
	if _, err := r.ReadAt(tail[:], size-checksumSize); err != nil {
		return nil, binfmt.Errorf(file, size-checksumSize, binfmt.ErrTruncated, "raw last checksum: %v", err)
	}
	return append(out, tail[:]...), nil
}

// Compressed reports whether the block was S2-compressed on disk; offsets
// in records and errors are then offsets in the decompressed block.
func (b *BlockReader) Compressed() bool { return b.compressed }

// Size is the length of the (decompressed) block.
func (b *BlockReader) Size() int64 { return b.size }

// Torn reports whether reading stopped at a torn tail: a short record or
// header at the end, or a tail of zero bytes after the last sane record.
func (b *BlockReader) Torn() bool { return b.torn }

// GoodEnd is the offset just past the last record whose framing was sane.
func (b *BlockReader) GoodEnd() int64 { return b.lastGood }

// fill makes sure buf holds block bytes [off, off+n) and returns them, or
// fewer when the block ends first.
func (b *BlockReader) fill(off int64, n int) ([]byte, error) {
	if b.inMem {
		if off < 0 || off >= b.size {
			return nil, nil
		}
		return b.buf[off:min(off+int64(n), b.size)], nil
	}
	end := b.bufOff + int64(len(b.buf))
	if off >= b.bufOff && off+int64(n) <= end {
		return b.buf[off-b.bufOff : off-b.bufOff+int64(n)], nil
	}
	want := max(int64(n), readChunk)
	want = min(want, b.size-off)
	if want < 0 {
		want = 0
	}
	if int64(cap(b.buf)) < want {
		b.buf = make([]byte, want)
	}
	b.buf = b.buf[:want]
	m, err := b.src.ReadAt(b.buf, off)
	b.buf = b.buf[:m]
	b.bufOff = off
	if int64(m) < want {
		// ReadAt ended before the size the block was opened with: the
		// file shrank (or the source lied about its size).
		b.shrank = true
	}
	if err != nil && err != io.EOF {
		return nil, &binfmt.CorruptError{File: b.file, Offset: off, Err: err}
	}
	return b.buf[:min(m, n)], nil
}

// Next returns the next record. At the end it returns io.EOF.
//
// A record whose framing is sane but whose checksum does not match comes back
// with ChecksumOK false together with a *CorruptError wrapping
// ErrChecksum (Seq set); calling Next again continues with the next
// record. A framing error (impossible length, record overrunning the block)
// is final and sticky: it wraps ErrTruncated for a torn tail (Torn
// reports true) and ErrFormat for corruption followed by more data.
func (b *BlockReader) Next() (Record, error) {
	var r Record
	err := b.next(&r)
	return r, err
}

// next is Next writing the record into *r (the whole of it), which spares
// copying a Record per call in the scan loop.
func (b *BlockReader) next(r *Record) error {
	if b.err != nil {
		*r = Record{}
		return b.err
	}
	off := b.off
	left := b.size - off
	if left <= 0 {
		b.err = io.EOF
		*r = Record{}
		return io.EOF
	}
	hdr, err := b.fill(off, msgHdrSize)
	if err != nil {
		b.err = err
		*r = Record{}
		return err
	}
	if len(hdr) < msgHdrSize {
		*r = Record{}
		return b.framing(off, fmt.Sprintf("%d bytes left, less than a record header", len(hdr)), true)
	}
	h := natsfmt.ParseRecordHeader(hdr)
	rl, slen := h.Len, h.SubjectLen
	switch why := h.FrameError(); {
	case why != "":
		*r = Record{}
		return b.framing(off, why, false)
	case rl > left:
		*r = Record{}
		return b.framing(off, fmt.Sprintf("record of %d bytes overruns the block (%d left)", rl, left), true)
	}
	rec, err := b.fill(off, int(rl))
	if err != nil {
		b.err = err
		*r = Record{}
		return err
	}
	if int64(len(rec)) < rl { // the source returned less than its size
		*r = Record{}
		return b.framing(off, fmt.Sprintf("record of %d bytes, only %d readable", rl, len(rec)), true)
	}
	seq := h.Seq
	rest := rec[msgHdrSize+slen : rl-checksumSize]
	*r = Record{
		Offset:     off,
		Len:        int(rl),
		Seq:        seq,
		TS:         h.TS,
		Subject:    h.Subject(rec),
		HasHeaders: h.HasHeaders,
		Erased:     h.Erased,
		Tombstone:  h.Tombstone,
	}
	b.advance(off, rl, seq, h.Tombstone)
	copy(r.Sum[:], h.StoredChecksum(rec))
	if h.HasHeaders {
		hlen := int64(binary.LittleEndian.Uint32(rest))
		rest = rest[4:]
		if hlen > int64(len(rest)) {
			// The framing holds (rl is sane) so later records are still
			// reachable; only this record's header length is bad.
			r.Data = rest
			return &binfmt.CorruptError{File: b.file, Offset: off + msgHdrSize + int64(slen), Seq: seq, Structure: natsfmt.StructBlockRecord,
				Err: fmt.Errorf("%w: header length %d exceeds the %d bytes of the record body", binfmt.ErrFormat, hlen, len(rest))}
		}
		r.Header = rest[:hlen:hlen]
		r.Data = rest[hlen:]
	} else {
		r.Data = rest
	}
	if b.hh == nil {
		return nil
	}
	sum, ok := natsfmt.RecordChecksum(b.hh, h, rec)
	if ok {
		r.ChecksumOK = true
		return nil
	}
	var got [8]byte
	binary.LittleEndian.PutUint64(got[:], sum)
	return &binfmt.CorruptError{File: b.file, Offset: off, Seq: seq, Structure: natsfmt.StructBlockRecord,
		Err: fmt.Errorf("%w: record checksum %x, computed %x (key %q)", binfmt.ErrChecksum, r.Sum, got, b.key)}
}

func (b *BlockReader) advance(off, rl int64, seq uint64, tombstone bool) {
	b.off = off + rl
	b.lastGood = b.off
	if !tombstone {
		b.lastSeq = seq
	}
}

// framing ends the iteration at off. short says the record simply runs past
// the end of the block; it is a torn tail, as is a tail of zero bytes.
// Otherwise bad framing followed by more bytes is corruption.
func (b *BlockReader) framing(off int64, what string, short bool) error {
	sentinel := binfmt.ErrFormat
	if roff, rseq, ok := b.resync(off); ok {
		// More sane, checksummed records follow: not a torn write.
		b.resyncOff, b.resyncSeq, b.resynced = roff, rseq, true
		short = false
		what += fmt.Sprintf("; next intact record at offset %d (seq %d), %d bytes unreadable", roff, rseq, roff-off)
	}
	switch {
	case b.resynced:
	case short:
		b.torn = true
		sentinel = binfmt.ErrTruncated
		what = "torn tail: " + what
	case b.zeroTail(off):
		b.torn = true
		sentinel = binfmt.ErrTruncated
		what = fmt.Sprintf("torn tail: %d zero bytes after the last record", b.size-off)
	case off == 0 && !b.compressed:
		what += "; the first record is unparseable (possibly encrypted)"
	default:
		what += fmt.Sprintf(", %d bytes follow", b.size-off)
	}
	if b.lastSeq != 0 {
		what += fmt.Sprintf(" (last good seq %d)", b.lastSeq)
	}
	e := &binfmt.CorruptError{File: b.file, Offset: off, Structure: natsfmt.StructBlockRecord, Err: fmt.Errorf("%w: %s", sentinel, what)}
	b.err = e
	return e
}

// zeroTail reports whether every byte from off to the end is zero.
func (b *BlockReader) zeroTail(off int64) bool {
	for off < b.size {
		n := int(min(b.size-off, readChunk))
		p, err := b.fill(off, n)
		if err != nil || len(p) == 0 {
			return false
		}
		for _, c := range p {
			if c != 0 {
				return false
			}
		}
		off += int64(len(p))
	}
	return true
}

// PossiblyEncrypted reports whether reading failed on the very first record
// of a block that is not compressed: the bytes do not look like a filestore
// record, which is what an encrypted block (XOR stream cipher) looks like.
// The reliable sign is a sibling msgs/N.key, which only the caller can see.
func (b *BlockReader) PossiblyEncrypted() bool {
	var ce *binfmt.CorruptError
	return b.lastGood == 0 && !b.compressed && !b.torn && errors.As(b.err, &ce) && errors.Is(ce, binfmt.ErrFormat)
}

// maxResyncSeqJump bounds how far past the last good sequence a candidate
// record found by resync may be, so random bytes are not taken for a record.
const maxResyncSeqJump = 1 << 24

// maxResyncHash bounds the bytes resync checksums (and copies) while
// looking for an intact record: a few times the largest block.
const maxResyncHash = 64 << 20

// resync looks for the first intact record after a framing error at off: a
// header with sane framing, a sequence just above the last good one, and a
// matching checksum. It needs the checksum key; without one it finds nothing.
// It only runs once per block, on error, over the bytes left in the block.
func (b *BlockReader) resync(off int64) (int64, uint64, bool) {
	if b.hh == nil {
		return 0, 0, false
	}
	// Bound the work: every candidate costs a checksum over its length, and
	// repetitive garbage can make many candidates pass the cheap checks.
	budget := int64(maxResyncHash)
	for p := off + 1; p+emptyRecord <= b.size && budget > 0; p++ {
		hdr, err := b.fill(p, msgHdrSize)
		if err != nil || len(hdr) < msgHdrSize {
			return 0, 0, false
		}
		h := natsfmt.ParseRecordHeader(hdr)
		rl, seq := h.Len, h.Seq
		if !h.Framed() || p+rl > b.size || seq <= b.lastSeq || seq > b.lastSeq+maxResyncSeqJump {
			continue
		}
		budget -= rl
		rec, err := b.fill(p, int(rl))
		if err != nil || int64(len(rec)) < rl {
			continue
		}
		if _, ok := natsfmt.RecordChecksum(b.hh, h, rec); ok {
			return p, seq, true
		}
	}
	return 0, 0, false
}

// Resync reports where the first intact record after a framing error sits
// (offset, sequence), when one was found. Records from there on are still
// on disk, though nats-server truncates the block at the error.
func (b *BlockReader) Resync() (off int64, seq uint64, ok bool) {
	return b.resyncOff, b.resyncSeq, b.resynced
}

// LastSeq is the sequence of the last sane record read that was not a
// tombstone (0 if none).
func (b *BlockReader) LastSeq() uint64 { return b.lastSeq }
