package storeparse

import (
	"bytes"
	"fmt"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// index.db constants (filestore.go _writeFullState / recoverFullState).
const (
	indexMagic  = 0x0B
	indexMinLen = 32 // nats-server rejects anything shorter
	// IndexMaxVersion is the newest index.db version known (v2.15.2 writes 4).
	IndexMaxVersion = 4
)

// StreamIndex is a decoded msgs/index.db: nats-server's cached stream state.
type StreamIndex struct {
	Version      byte
	Msgs, Bytes  uint64
	FirstSeq     uint64
	FirstTS      int64 // Unix ns, 0 = zero time
	LastSeq      uint64
	LastTS       int64
	Subjects     []IndexSubject
	Blocks       []IndexBlock
	LastBlock    uint32  // index of the block that was last when written
	LastChecksum [8]byte // lchk of that block's last record
	Checksum     [8]byte // stored trailing HH64
	ChecksumOK   bool
	Trailing     int // bytes between the last field and the checksum (0 when sane)
}

// IndexSubject is one per-subject entry of index.db.
type IndexSubject struct {
	Subject               string
	Total                 uint64
	FirstBlock, LastBlock uint32
}

// IndexBlock is one block entry of index.db.
type IndexBlock struct {
	Index      uint32
	Bytes      uint64
	FirstSeq   uint64
	FirstTS    int64 // absolute Unix ns (delta added back)
	LastSeq    uint64
	LastTS     int64
	NumDeleted uint64
	TTLs       uint64 // version >= 2
	Schedules  uint64 // version >= 3
	Deleted    *natsfmt.SeqSet
}

// Msgs is the block's message count as nats-server recomputes it.
func (b IndexBlock) Msgs() uint64 {
	n := b.LastSeq - b.FirstSeq + 1
	if b.LastSeq+1 < b.FirstSeq {
		return 0
	}
	if n > b.NumDeleted {
		return n - b.NumDeleted
	}
	return 0
}

// ParseIndex decodes an index.db. key is the stream (or raft group) name,
// the checksum key. A checksum mismatch does not stop decoding: the result
// comes back with ChecksumOK false together with an ErrChecksum error. An
// encrypted index.db (the caller knows: meta.key exists) fails the magic
// check; pass it through only after decryption.
func ParseIndex(file string, data []byte, key string) (*StreamIndex, error) {
	x, err := parseIndex(file, data, key)
	return x, binfmt.Stamp(err, natsfmt.StructIndexDB)
}

func parseIndex(file string, data []byte, key string) (*StreamIndex, error) {
	if len(data) < indexMinLen {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrTruncated, "index.db of %d bytes, nats-server requires %d", len(data), indexMinLen)
	}
	body := data[:len(data)-8]
	x := &StreamIndex{}
	copy(x.Checksum[:], data[len(data)-8:])
	var sumErr error
	if key != "" {
		got := binfmt.HH64(key, body)
		x.ChecksumOK = bytes.Equal(got[:], x.Checksum[:])
		if !x.ChecksumOK {
			sumErr = binfmt.Errorf(file, int64(len(body)), binfmt.ErrChecksum, "index.db checksum %x, computed %x (key %q)", x.Checksum, got, key)
		}
	}
	d := binfmt.NewDecbuf(file, 0, body)
	if m := d.Byte(); m != indexMagic {
		return nil, firstErr(binfmt.Errorf(file, 0, binfmt.ErrFormat, "index.db magic 0x%02x, want 0x0b (encrypted?)", m), sumErr)
	}
	x.Version = d.Byte()
	if x.Version < 1 || x.Version > IndexMaxVersion {
		return nil, firstErr(binfmt.Errorf(file, 1, binfmt.ErrFormat, "index.db version %d unknown", x.Version), sumErr)
	}
	x.Msgs = d.Uvarint()
	x.Bytes = d.Uvarint()
	x.FirstSeq = d.Uvarint()
	x.FirstTS = d.Varint()
	x.LastSeq = d.Uvarint()
	x.LastTS = d.Varint()
	// Each subject takes at least 3 bytes (len, total, fblk).
	nsubj := d.Count(3, "subject")
	for i := 0; i < nsubj && d.Err() == nil; i++ {
		n := d.Count(1, "subject length")
		s := IndexSubject{Subject: string(d.Bytes(n))}
		s.Total = d.Uvarint()
		s.FirstBlock = uint32(d.Uvarint())
		if s.Total > 1 || x.Version >= 4 {
			s.LastBlock = uint32(d.Uvarint())
		} else {
			s.LastBlock = s.FirstBlock
		}
		x.Subjects = append(x.Subjects, s)
	}
	// Each block takes at least 7 bytes.
	nblk := d.Count(7, "block")
	base := x.FirstTS
	for i := 0; i < nblk && d.Err() == nil; i++ {
		var b IndexBlock
		b.Index = uint32(d.Uvarint())
		b.Bytes = d.Uvarint()
		b.FirstSeq = d.Uvarint()
		b.FirstTS = d.Varint() + base
		b.LastSeq = d.Uvarint()
		b.LastTS = d.Varint() + base
		b.NumDeleted = d.Uvarint()
		if x.Version >= 2 {
			b.TTLs = d.Uvarint()
		}
		if x.Version >= 3 {
			b.Schedules = d.Uvarint()
		}
		if b.NumDeleted > 0 && d.Err() == nil {
			off := d.Offset()
			ss, n, err := natsfmt.DecodeSeqSet(file, off, d.Rest())
			if err != nil {
				return x, firstErr(err, sumErr)
			}
			b.Deleted = ss
			d.Skip(n)
		}
		x.Blocks = append(x.Blocks, b)
	}
	x.LastBlock = uint32(d.Uvarint())
	copy(x.LastChecksum[:], d.Bytes(8))
	if err := d.Err(); err != nil {
		return x, firstErr(err, sumErr)
	}
	x.Trailing = d.Len()
	if x.Trailing != 0 && sumErr == nil {
		return x, binfmt.Errorf(file, d.Offset(), binfmt.ErrFormat, "%d unexplained bytes before the checksum", x.Trailing)
	}
	return x, sumErr
}

// firstErr prefers a checksum error: when the checksum is wrong, every later
// decoding error is a consequence of it.
func firstErr(err, sumErr error) error {
	if sumErr != nil {
		return sumErr
	}
	return err
}

// Block returns the entry for block index idx.
func (x *StreamIndex) Block(idx uint32) (IndexBlock, bool) {
	for _, b := range x.Blocks {
		if b.Index == idx {
			return b, true
		}
	}
	return IndexBlock{}, false
}

func (b IndexBlock) String() string {
	return fmt.Sprintf("blk %d bytes %d seqs %d..%d deleted %d", b.Index, b.Bytes, b.FirstSeq, b.LastSeq, b.NumDeleted)
}
