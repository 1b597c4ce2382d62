package natsfmt

import (
	"errors"
	"io/fs"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// The structures a CorruptError names (binfmt.CorruptError.Structure). The
// framing reader of each file stamps its own with binfmt.Stamp.
const (
	StructBlockRecord     binfmt.Structure = "block record"     // a record of msgs/N.blk (stream or raft WAL)
	StructCompressedBlock binfmt.Structure = "compressed block" // the "cmp\x01" header and S2 stream of a block
	StructIndexDB         binfmt.Structure = "index.db"
	StructMetaInf         binfmt.Structure = "meta.inf"
	StructMetaSum         binfmt.Structure = "meta.sum"
	StructConsumerState   binfmt.Structure = "o.dat"
	StructPeersIdx        binfmt.Structure = "peers.idx"
	StructTermVote        binfmt.Structure = "tav.idx"
	StructCommitIdx       binfmt.Structure = "commit.idx"
	StructSnapshotHeader  binfmt.Structure = "snapshot header"
	StructSnapshotTrailer binfmt.Structure = "snapshot trailer" // the checksum after the data
	StructSnapshotData    binfmt.Structure = "snapshot data"    // meta, stream or consumer state in a snapshot
	StructAppendEntry     binfmt.Structure = "append entry"     // a raft WAL record's payload
	StructEntryOp         binfmt.Structure = "entry op"         // an EntryNormal payload (meta/stream/consumer op)
	StructStoreFile       binfmt.Structure = "store file"       // a file that could not be read at all
)

// CorruptionKind refines the store-corrupt finding (report Finding.Kind).
type CorruptionKind string

// Corruption kinds.
const (
	CorruptChecksum     CorruptionKind = "checksum"      // a record or file fails its checksum
	CorruptTruncated    CorruptionKind = "truncated"     // the data ends early
	CorruptTornTail     CorruptionKind = "torn-tail"     // a block's last record cut short (the analysis tells it from the block scan)
	CorruptUnparsable   CorruptionKind = "unparsable"    // impossible length, magic, version
	CorruptMissing      CorruptionKind = "missing"       // a file the store needs is not there
	CorruptEncrypted    CorruptionKind = "encrypted"     // sealed at rest, no key
	CorruptMetaChecksum CorruptionKind = "meta-checksum" // meta.inf does not match meta.sum
	CorruptIndex        CorruptionKind = "index"         // index.db is damaged (a cache the server rebuilds)
	CorruptUnreadable   CorruptionKind = "unreadable"    // an I/O error, no decoding verdict
)

// KindOf classifies a parser error by its sentinel and the structure its
// framing reader stamped: meta.inf/meta.sum failing their checksum is
// meta-checksum, a damaged index.db (checksum or format) is index.
func KindOf(err error) CorruptionKind {
	s := binfmt.StructureOf(err)
	switch {
	case errors.Is(err, binfmt.ErrEncrypted):
		return CorruptEncrypted
	case errors.Is(err, binfmt.ErrChecksum):
		switch s {
		case StructMetaSum, StructMetaInf:
			return CorruptMetaChecksum
		case StructIndexDB:
			return CorruptIndex
		}
		return CorruptChecksum
	case errors.Is(err, fs.ErrNotExist):
		return CorruptMissing
	case s == StructIndexDB:
		// Cut, emptied or garbled alike: a cache the server rebuilds.
		return CorruptIndex
	case errors.Is(err, binfmt.ErrTruncated):
		return CorruptTruncated
	case errors.Is(err, binfmt.ErrTooLarge), errors.Is(err, binfmt.ErrFormat):
		if s == StructIndexDB {
			return CorruptIndex
		}
		return CorruptUnparsable
	}
	return CorruptUnreadable
}
