package storeparse

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/seqset"
)

// ScanOptions tunes ScanStream.
type ScanOptions struct {
	// Name is the stream (or raft group) name used for checksum keys. Empty:
	// the name in meta.inf, else the folder name.
	Name string
	// Visit, when set, sees every record of every block in order (block by
	// block, record by record), including tombstones, erased records and
	// records whose checksum failed (ChecksumOK false). The Record's slices
	// are valid only during the call. A non-nil error stops the scan and is
	// returned by ScanStream.
	Visit func(blk BlockInfo, r *Record) error
	// NoLimits skips applying max_msgs / max_bytes from meta.inf, which
	// nats-server enforces on recovery.
	NoLimits bool
	// IgnoreIndex stops ScanStream from applying the deletes index.db
	// records when index.db is current (see StreamScan.IndexRemoved).
	IgnoreIndex bool
	// SkipConsumers leaves obs/ alone.
	SkipConsumers bool
	// Workers is how many blocks are read at once: 0 means GOMAXPROCS (at
	// most 8), 1 one at a time. The result is the same whatever the number.
	// With Visit set blocks are always read one at a time, in order.
	Workers int
	// DigestWindow, when not 0, has every block sum the digests of the
	// messages it counts per window of that many sequences
	// (StreamScan.Windows, digest.go), for comparing replicas.
	DigestWindow uint64
	// Messages, when set, is called once per block, in block order, with
	// the sequences (ascending) and MessageDigest of the message records
	// the block counts whose checksum holds, as read: before the removals
	// made after the read (tombstones in later blocks, index.db, limits),
	// which StreamScan.Live applies. The slices are the callee's. The scan
	// waits for each call: a callee that waits holds the scan back (several
	// copies of a stream are compared so, read in lockstep).
	Messages func(seqs, digests []uint64)
	// MessageBuffers, when set with Messages, gives a block the slices its
	// records are appended to (of length 0), e.g. ones a Messages callee is
	// done with, so that a long stream does not allocate them anew per
	// block; nil ones, or ones of less capacity than the last block's
	// records, are not used. It is called from the scan's workers at once.
	MessageBuffers func() (seqs, digests []uint64)
	// Head, when set, is this folder's head as ReadHead read it (with
	// Name): the scan goes on from it, reading meta.inf and meta.sum no
	// more. A head serves one scan.
	Head *Head
	// Share, when above 1, is how many scans run at once with this one
	// (copies read in lockstep): its record-length cache and the memory
	// budget of its parallel block reads are that share of one scan's.
	Share int
	// SkipFirstTS leaves State.FirstTS 0 when removals made after the blocks
	// were read (tombstones, index.db, limits) moved the first sequence:
	// that message's time would take a second read of its block.
	SkipFirstTS bool
	// Payloads, when set, is a set of message payloads (data without
	// headers) to look for: the live messages holding one are listed in
	// StreamScan.Payloads (payloads.go).
	Payloads map[string]bool
}

// BlockInfo names the block a visited record belongs to.
type BlockInfo struct {
	File  string // path as given to the fs.FS
	Index uint32 // N of N.blk
}

// State is a stream state in /jsz terms.
type State struct {
	Msgs       uint64 `json:"messages"`
	Bytes      uint64 `json:"bytes"`
	FirstSeq   uint64 `json:"first_seq"`
	FirstTS    int64  `json:"first_ts"`
	LastSeq    uint64 `json:"last_seq"`
	LastTS     int64  `json:"last_ts"`
	NumDeleted uint64 `json:"num_deleted"`
}

// SeqRange is an inclusive range of sequences (the project's one range type).
type SeqRange = natsfmt.SeqRange

// BlockScan is what one block holds, recomputed from its records as
// nats-server's rebuildStateFromBufLocked does.
type BlockScan struct {
	File         string
	Index        uint32
	Size         int64 // on disk
	Compressed   bool
	Encrypted    bool // a sibling N.key exists; the block was not read
	Records      int  // records read (incl. tombstones, erased, bad checksums)
	Msgs, Bytes  uint64
	FirstSeq     uint64
	FirstTS      int64
	LastSeq      uint64
	LastTS       int64
	Tombstones   int
	Erased       int
	BadChecksums int
	Torn         bool    // reading stopped at a torn tail
	Stopped      int64   // offset where framing was lost and reading stopped, -1 if never
	GoodEnd      int64   // offset after the last record with sane framing
	LastChecksum [8]byte // checksum of the last sane record
	// Bad lists the records whose checksum fails while their framing
	// holds: reading goes on past them, they are not counted.
	Bad []BadRecord
	// RebuildLost is what nats-server drops from this block when it
	// rebuilds it (index.db missing or stale): rebuildStateFromBufLocked
	// truncates the block at its first bad record (all of v2.10.22,
	// v2.12.1, v2.15.2; 2.15.2 leaves a compressed or encrypted file
	// uncut but still stops counting there). RebuildLostMsgs of those
	// sequences are intact messages read here.
	RebuildLost     []SeqRange
	RebuildLostMsgs uint64
	deleted         seqset.Set
	bad             seqset.Set // sequences of Bad records that continue the block
	badBytes        uint64     // their record lengths
	countEnd        int64      // records at or beyond this offset are not counted
	stopErr         error      // the framing error at Stopped
	firstBad        int64      // offset of the first Bad record, -1 if none
	firstBadFrom    uint64     // the sequence after the last one read before it

	// rls caches the length of every counted record (index seq-rlBase, 0 =
	// none) so removals need no second read; dropped when over budget.
	rls    []uint32
	rlBase uint64

	found []PayloadHit // see ScanOptions.Payloads

	// srcSeq and srcHdr: the last counted record of the block carrying a
	// Nats-Stream-Source header (a sourced stream's message), its value.
	srcSeq uint64
	srcHdr string

	mseqs, mdigs []uint64 // see ScanOptions.Messages, until merged

	windows []WindowDigest // see ScanOptions.DigestWindow
	dwin    uint64         // its window size
	dgs     []uint64       // MessageDigest beside rls (0: not summed)
}

// BadRecord is a record whose framing holds but whose checksum fails. Seq
// is what its header says, which the failed checksum does not vouch for.
type BadRecord struct {
	Offset int64
	Seq    uint64
	Len    int
}

// Mismatch is a difference between index.db and the blocks.
type Mismatch struct {
	Scope  string `json:"scope"` // "stream" or "block N"
	Field  string `json:"field"`
	Index  string `json:"index_db"`
	Blocks string `json:"blocks"`
}

// BlockLoss is what a block lost as told by a verifying index.db: the
// messages index.db records that the block no longer holds (Lost), or the
// deleted messages a rebuild serves again (Resurrected).
type BlockLoss struct {
	File        string
	Offset      int64 // where the block now ends (0 for a missing file)
	Missing     bool  // the block file is gone
	Lost        []SeqRange
	Resurrected []SeqRange
}

// ConsumerScan is one consumer folder under obs/.
type ConsumerScan struct {
	Name      string
	Meta      *ConsumerMeta
	MetaSumOK bool
	State     *ConsumerState
}

// StreamScan is the result of ScanStream.
type StreamScan struct {
	Dir       string
	Name      string
	Meta      *StreamMeta
	MetaSumOK bool
	// MetaInf and MetaSum are meta.inf's and meta.sum's bytes as read, once
	// (nil when missing or unreadable; MetaInf nil when sealed): what a
	// reader holds against other copies when the two disagree.
	MetaInf, MetaSum []byte
	dirEnts          []fs.DirEntry // Dir's listing, once inDir asked it
	Encrypted        bool          // meta.key or any N.key exists
	// PartialPurge: __msgs__ or __new_msgs__ is present. A purge moves msgs
	// aside and removes it in the background, so a copy taken during or just
	// after a purge (seen in real v2.15.2 WAL folders) or after a crash in
	// the middle of one has it. Not a problem by itself; not scanned.
	PartialPurge bool
	Blocks       []BlockScan
	// State is the stream state: the blocks with their tombstones applied,
	// then, when index.db is current (its last block and last checksum match
	// the blocks, the check nats-server makes), the deletes only index.db
	// knows (limit removals write no tombstone), then max_msgs/max_bytes.
	State State
	// BlocksOnly is the state from the blocks and their tombstones alone:
	// what nats-server rebuilds when index.db is missing or stale, less
	// RebuildLost when a record fails its checksum.
	BlocksOnly   State
	IndexRemoved uint64       // messages the blocks hold that a current index.db marks deleted
	Index        *StreamIndex // nil when index.db is missing or unreadable
	Mismatches   []Mismatch
	Lost         []SeqRange // sequences a block whose framing was lost no longer holds
	// Unreadable are the sequences of records on disk whose checksum fails
	// (framing intact): not counted in State, each is its own damage.
	Unreadable seqset.Set
	// BadDeleted are the sequences of records whose checksum fails but
	// whose deletion a tombstone or index.db records: the damage costs no
	// message (a rebuild still cuts the block there: RebuildLost).
	BadDeleted seqset.Set
	// RebuildLost is what the server would drop on rebuilding the damaged
	// blocks (see BlockScan.RebuildLost): evidence, not part of State.
	RebuildLost     []SeqRange
	RebuildLostMsgs uint64
	LostUnknown     bool // some block lost records whose sequences cannot be known
	// Resurrected are the sequences a verifying index.db records as
	// deleted that the blocks, with the tombstones still in them, hold as
	// messages, when index.db is not current: the tombstones that deleted
	// them were in a lost tail, and the rebuild the server makes at its
	// next start serves them again. Not worked out for streams with
	// max_age or max_msgs_per_subject (the server applies those again after
	// a rebuild; the scan does not).
	Resurrected seqset.Set
	// Losses are the damages found by holding the blocks to a verifying
	// index.db, one per Problem they raised, in the same order: a block
	// cut at a record boundary, a missing middle block, tombstones gone.
	Losses       []BlockLoss
	LimitRemoved uint64 // messages removed by applying max_msgs/max_bytes
	// Payloads are the live messages whose payload ScanOptions.Payloads
	// holds, in sequence order (payloads.go).
	Payloads       []PayloadHit
	PayloadsCapped bool
	Consumers      []ConsumerScan
	Problems       []error // *binfmt.CorruptError, in file order

	skipFirstTS bool // ScanOptions.SkipFirstTS
	share       int  // ScanOptions.Share
	dgLo        int  // Blocks before dgLo have no digest cache
	dgTotal     int  // digests cached in Blocks[dgLo:]
	rlLo        int  // Blocks before rlLo have no record-length cache
	rlTotal     int  // record lengths cached in Blocks[rlLo:]
}

// ScanStream reads the stream (or raft WAL) folder dir of fsys: meta.inf,
// meta.sum, every msgs/N.blk (several at once, see ScanOptions.Workers, with
// memory bounded whatever the number and size of blocks), msgs/index.db and
// obs/.
// The figures in State come from the blocks alone; index.db is only
// compared against them. Problems in the data are collected in Problems;
// the error return is for a folder that cannot be read at all or a Visit
// error.
func ScanStream(fsys fs.FS, dir string, opts ScanOptions) (*StreamScan, error) {
	var s *StreamScan
	if h := opts.Head; h != nil && h.s.Dir == dir && h.name == opts.Name {
		s, h.s = h.s, nil // taken once
	}
	if s == nil {
		h, err := ReadHead(fsys, dir, opts.Name)
		if err != nil {
			return nil, err
		}
		s = h.s
	}
	s.skipFirstTS, s.share = opts.SkipFirstTS, opts.Share
	for _, p := range []string{"__msgs__", "__new_msgs__"} {
		if inDir(fsys, dir, p, &s.dirEnts) {
			s.PartialPurge = true
		}
	}

	idxs, keys := s.listBlocks(fsys)
	s.readIndex(fsys)

	tombs, err := s.scanBlocks(fsys, idxs, keys, opts)
	if err != nil {
		return s, err
	}
	s.assemble()
	s.applyTombstones(fsys, tombs)
	// A tombstone of the first message (a TTL or schedule that fired, a
	// delete) moves the first sequence: before comparing with index.db.
	s.fixFirst(fsys)
	s.BlocksOnly = s.State
	s.BlocksOnly.NumDeleted = interior(s.State)
	s.compareIndex()
	if !opts.IgnoreIndex && s.indexCurrent() {
		s.applyIndexDeletes(fsys)
	}
	s.resolveBadDeleted(tombs)
	if !opts.NoLimits && s.Meta != nil {
		s.applyLimits(fsys)
	}
	s.noteMissingBlocks()
	if !opts.NoLimits {
		s.noteResurrected()
	}
	s.finish(fsys)
	s.collectPayloads(len(opts.Payloads))
	// The caches served the removals above; nothing reads them after.
	for i := range s.Blocks {
		s.Blocks[i].rls, s.Blocks[i].dgs = nil, nil
	}
	if !opts.SkipConsumers {
		s.readConsumers(fsys)
	}
	s.dirEnts = nil
	return s, nil
}

// Head is what ScanStream reads of a stream folder first: meta.inf and
// meta.sum, with the name the scan goes on with (Name). A reader that must
// know a copy's stream before its blocks are read (which copies to read
// together) reads the head and hands it to ScanStream (ScanOptions.Head),
// which reads neither file again.
type Head struct {
	s    *StreamScan
	name string // ScanOptions.Name it was read with
}

// Name is the stream's name as the scan takes it: ScanOptions.Name, else
// meta.inf's, else the folder's (also when meta.inf fails its checksum and
// names another stream than its folder).
func (h *Head) Name() string { return h.s.Name }

// ReadHead reads the head of the stream folder dir (name: ScanOptions.Name).
func ReadHead(fsys fs.FS, dir, name string) (*Head, error) {
	s := &StreamScan{Dir: dir}
	if _, err := fs.Stat(fsys, dir); err != nil {
		return nil, err
	}
	infData := s.readMeta(fsys)
	s.Name = name
	if s.Name == "" && s.Meta != nil && s.Meta.Name != "" {
		s.Name = s.Meta.Name
	}
	if s.Name == "" {
		s.Name = path.Base(dir)
	}
	if s.Meta == nil {
		// meta.inf cannot be compared with; a meta.sum that holds no
		// checksum at all is damage of its own (both need restoring).
		sum := path.Join(dir, "meta.sum")
		if b, err := binfmt.ReadFileFS(fsys, sum, 1<<10); err == nil {
			s.MetaSum = b
			s.problem(CheckMetaSumFormat(sum, b))
		} else if !errors.Is(err, fs.ErrNotExist) {
			s.problem(binfmt.Stamp(asCorrupt(sum, err), natsfmt.StructMetaSum))
		}
	}
	if s.Meta != nil {
		s.MetaSum = s.checkMetaSum(fsys, infData, path.Join(dir, "meta.sum"), s.Name, &s.MetaSumOK)
		if base := path.Base(dir); name == "" && !s.MetaSumOK && s.Name != base && base != "." {
			// meta.inf fails its checksum and names another stream than
			// its folder (which nats-server names for the stream): the
			// name may be what changed, and it keys every block checksum.
			s.Name = base
		}
	}
	return &Head{s: s, name: name}, nil
}

func (s *StreamScan) problem(err error) {
	if err != nil {
		s.Problems = append(s.Problems, err)
	}
}

// Small files (meta.inf, meta.sum, index.db, o.dat) never come near this.
const smallFileLimit = 64 << 20

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

// inDir is exists(dir/name) from dir's listing: the bundle's FS keeps the
// listings of its inventory walk, so asking a stream folder for meta.key,
// __msgs__ and __new_msgs__ costs no stat each (three failed newfstatat a
// stream, 6,400 of the 16,800 files of a 1,500-stream bundle, before). A
// folder that cannot be listed, or an entry that is a link (Stat follows
// it), is asked by name as before. ents caches dir's listing for the next
// call (nil: not listed yet).
func inDir(fsys fs.FS, dir, name string, ents *[]fs.DirEntry) bool {
	if *ents == nil {
		l, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return exists(fsys, path.Join(dir, name))
		}
		if l == nil {
			l = []fs.DirEntry{}
		}
		*ents = l
	}
	for _, e := range *ents {
		if e.Name() == name {
			if e.Type()&fs.ModeSymlink != 0 {
				return exists(fsys, path.Join(dir, name))
			}
			return true
		}
	}
	return false
}

func (s *StreamScan) readMeta(fsys fs.FS) []byte {
	inf := path.Join(s.Dir, "meta.inf")
	if inDir(fsys, s.Dir, "meta.key", &s.dirEnts) {
		s.Encrypted = true
	}
	data, err := binfmt.ReadFileFS(fsys, inf, smallFileLimit)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.problem(binfmt.Stamp(asCorrupt(inf, err), natsfmt.StructMetaInf))
		} else {
			s.problem(binfmt.Stamp(&binfmt.CorruptError{File: inf, Err: fmt.Errorf("%w: meta.inf %w", binfmt.ErrTruncated, err)}, natsfmt.StructMetaInf))
		}
		return nil
	}
	if s.Encrypted {
		s.problem(binfmt.Stamp(binfmt.Errorf(inf, 0, binfmt.ErrEncrypted, "meta.key present; meta.inf is sealed"), natsfmt.StructMetaInf))
		return nil
	}
	m, err := ParseStreamMeta(inf, data)
	s.problem(err)
	s.Meta, s.MetaInf = m, data
	return data
}

// checkMetaSum checks meta.inf's bytes infb (read once by the caller: a
// second read of a large one doubled its memory) against meta.sum, and
// returns meta.sum's bytes (nil when unreadable).
func (s *StreamScan) checkMetaSum(fsys fs.FS, infb []byte, sum, key string, ok *bool) []byte {
	sumb, err := binfmt.ReadFileFS(fsys, sum, 1<<10)
	if err != nil {
		s.problem(binfmt.Stamp(&binfmt.CorruptError{File: sum, Err: fmt.Errorf("%w: meta.sum missing or unreadable: %w", binfmt.ErrTruncated, err)}, natsfmt.StructMetaSum))
		return nil
	}
	err = CheckMetaSum(sum, sumb, infb, key)
	s.problem(err)
	*ok = err == nil
	return sumb
}

func asCorrupt(file string, err error) error {
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		return err
	}
	return &binfmt.CorruptError{File: file, Err: err}
}

// listBlocks returns the block indexes in order and which have an N.key.
func (s *StreamScan) listBlocks(fsys fs.FS) ([]uint32, map[uint32]bool) {
	mdir := path.Join(s.Dir, "msgs")
	ents, err := fs.ReadDir(fsys, mdir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.problem(asCorrupt(mdir, err))
		}
		return nil, nil
	}
	var idxs []uint32
	keys := map[uint32]bool{}
	for _, e := range ents {
		name := e.Name()
		for suf, isKey := range map[string]bool{".blk": false, ".key": true} {
			num, ok := strings.CutSuffix(name, suf)
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(num, 10, 32)
			if err != nil {
				continue
			}
			if isKey {
				keys[uint32(n)] = true
				s.Encrypted = true
			} else {
				idxs = append(idxs, uint32(n))
			}
		}
	}
	sort.Slice(idxs, func(i, j int) bool { return idxs[i] < idxs[j] })
	return idxs, keys
}

func (s *StreamScan) readIndex(fsys fs.FS) {
	p := path.Join(s.Dir, "msgs", "index.db")
	data, err := binfmt.ReadFileFS(fsys, p, smallFileLimit)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.problem(binfmt.Stamp(asCorrupt(p, err), natsfmt.StructIndexDB))
		}
		return
	}
	if s.Encrypted && inDir(fsys, s.Dir, "meta.key", &s.dirEnts) {
		s.problem(binfmt.Stamp(binfmt.Errorf(p, 0, binfmt.ErrEncrypted, "meta.key present; index.db is sealed"), natsfmt.StructIndexDB))
		return
	}
	x, err := ParseIndex(p, data, s.Name)
	s.problem(err)
	if err == nil {
		s.Index = x
	}
}

func blockPath(dir string, n uint32) string {
	return path.Join(dir, "msgs", strconv.FormatUint(uint64(n), 10)+".blk")
}

// openBlock opens a block as an io.ReaderAt. An fs.File without ReadAt is
// read into memory, bounded.
func openBlock(fsys fs.FS, name string) (io.ReaderAt, int64, func(), error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	if ra, ok := f.(io.ReaderAt); ok {
		return ra, fi.Size(), func() { f.Close() }, nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDecompressed+1))
	if err != nil {
		return nil, 0, nil, err
	}
	if int64(len(data)) > maxDecompressed {
		return nil, 0, nil, binfmt.Errorf(name, 0, binfmt.ErrTooLarge, "block larger than %d bytes and not seekable", maxDecompressed)
	}
	return strings.NewReader(string(data)), int64(len(data)), func() {}, nil
}

// peekFirstSeq returns the sequence of the first sane non-tombstone record
// of block n, 0 if none. A plain block is probed header by header; a
// compressed one goes through a BlockReader.
func (s *StreamScan) peekFirstSeq(fsys fs.FS, n uint32) uint64 {
	name := blockPath(s.Dir, n)
	ra, size, closeFn, err := openBlock(fsys, name)
	if err != nil {
		return 0
	}
	defer closeFn()
	var hdr [msgHdrSize]byte
	if _, err := ra.ReadAt(hdr[:len(cmpMagic)], 0); err == nil && string(hdr[:len(cmpMagic)]) == string(cmpMagic) {
		br, err := NewBlockReader(name, ra, size, "")
		if err != nil {
			return 0
		}
		for i := 0; i < 1<<16; i++ {
			r, err := br.Next()
			if err != nil && r.Len == 0 {
				return 0
			}
			if !r.Tombstone && r.Seq != 0 {
				return r.Seq
			}
		}
		return 0
	}
	for off, i := int64(0), 0; off+emptyRecord <= size && i < 1<<16; i++ {
		if _, err := ra.ReadAt(hdr[:], off); err != nil {
			return 0
		}
		h := natsfmt.ParseRecordHeader(hdr[:])
		if !h.Framed() {
			return 0
		}
		if !h.Tombstone && h.Seq != 0 {
			return h.Seq
		}
		off += h.Len
	}
	return 0
}

// noteLost works out which sequences a block whose framing was lost no
// longer holds: from the last sequence read up to what index.db says the
// block ended at, or the next block's first sequence. The framing error and
// its loss are one problem.
func (s *StreamScan) noteLost(bs *BlockScan, nextFirst uint64, isLast bool) {
	if bs.Stopped < 0 {
		return
	}
	from := bs.LastSeq + 1
	if bs.LastSeq == 0 && bs.FirstSeq > 0 {
		from = bs.FirstSeq
	}
	var to uint64
	var ib IndexBlock
	var fromIndex bool
	if s.Index != nil {
		if b, ok := s.Index.Block(bs.Index); ok && b.LastSeq >= from {
			ib, to, fromIndex = b, b.LastSeq, s.Index.ChecksumOK
		}
	}
	if to == 0 && nextFirst > from {
		to = nextFirst - 1
	}
	e := &binfmt.CorruptError{File: bs.File, Offset: bs.Stopped, Err: fmt.Errorf("%w: block stops at offset %d", binfmt.ErrTruncated, bs.Stopped)}
	var ce *binfmt.CorruptError
	if errors.As(bs.stopErr, &ce) {
		c := *ce // keeps what the reader said of the structure that failed
		e = &c
	}
	e.Seq = from
	switch {
	case to >= from && to != 0:
		lost := seqset.Set{{First: from, Last: to}}
		if fromIndex {
			// A verifying index.db also says which of them were deleted.
			lost = indexLive(ib, from, to)
		}
		if len(lost) == 0 {
			e.Err = fmt.Errorf("%w; sequences %s were all deleted (index.db): no message lost", e.Err, SeqRange{First: from, Last: to})
			break
		}
		s.Lost = append(s.Lost, lost...)
		e.Err = fmt.Errorf("%w; sequences %s lost", e.Err, lost)
	case isLast && bs.Torn:
		// A torn tail of the last block with nothing known after it: the
		// lost record was never acknowledged as far as the files tell.
		s.LostUnknown = true
		e.Err = fmt.Errorf("%w; last block, after seq %d: no record of what followed", e.Err, bs.LastSeq)
	default:
		s.LostUnknown = true
		e.Err = fmt.Errorf("%w; after seq %d, lost sequences unknown", e.Err, bs.LastSeq)
	}
	s.problem(binfmt.Stamp(e, natsfmt.StructBlockRecord))
}

// noteEmpty reports a block file of 0 bytes that index.db lists: what it
// held (messages, or tombstones whose deletions a rebuild would undo) is
// gone from this copy, and index.db is the only record of it.
func (s *StreamScan) noteEmpty(bs *BlockScan) {
	if bs.Size != 0 || bs.Encrypted || s.Index == nil {
		return
	}
	ib, ok := s.Index.Block(bs.Index)
	if !ok || ib.Msgs() == 0 && bs.Index == s.Index.LastBlock && s.Index.LastChecksum == [8]byte{} {
		// Not listed, or the last block opened and never written to (no
		// last record checksum): an empty file is what the server left.
		return
	}
	e := &binfmt.CorruptError{File: bs.File, Offset: 0, Seq: ib.FirstSeq}
	if n := ib.Msgs(); n > 0 {
		r := SeqRange{First: ib.FirstSeq, Last: ib.LastSeq}
		s.Lost = append(s.Lost, r)
		e.Err = fmt.Errorf("%w: block is empty (0 bytes); index.db says it held sequences %s (%d messages)", binfmt.ErrTruncated, r, n)
	} else {
		e.Err = fmt.Errorf("%w: block is empty (0 bytes); index.db lists it with no messages (first %d, last %d): any tombstones it held are gone, and a rebuild would bring back the messages they deleted", binfmt.ErrTruncated, ib.FirstSeq, ib.LastSeq)
	}
	s.problem(binfmt.Stamp(e, natsfmt.StructBlockRecord))
}

// noteShort reports a block whose records end cleanly (no torn record)
// before the last sequence a verifying index.db gives it, costing messages
// index.db records as live: the block lost its tail at a record boundary.
// The server finds its last checksum changed ("Stream state outdated"),
// rebuilds from the blocks, and those messages are gone (all of v2.10.27,
// v2.12.15, v2.15.3 on copies of real stores: testdata/perturbed).
func (s *StreamScan) noteShort(bs *BlockScan) {
	x := s.Index
	if bs.Stopped >= 0 || bs.Size == 0 || bs.Encrypted || x == nil || !x.ChecksumOK {
		return
	}
	ib, ok := x.Block(bs.Index)
	if !ok || ib.LastSeq <= bs.LastSeq || bs.Records == 0 {
		return
	}
	lost := indexLive(ib, max(bs.LastSeq+1, ib.FirstSeq), ib.LastSeq)
	if len(lost) == 0 {
		return // only deleted messages are missing: nothing lost
	}
	s.Lost = append(s.Lost, lost...)
	s.Losses = append(s.Losses, BlockLoss{File: bs.File, Offset: bs.Size, Lost: lost})
	s.problem(binfmt.Stamp(&binfmt.CorruptError{File: bs.File, Offset: bs.Size, Seq: lost[0].First,
		Err: fmt.Errorf("%w: block ends at offset %d, on a record boundary after seq %d, where index.db (its checksum verifies) has it go on to seq %d: its tail is gone; sequences %s lost",
			binfmt.ErrTruncated, bs.Size, bs.LastSeq, ib.LastSeq, lost)}, natsfmt.StructBlockRecord))
}

// noteMissingBlocks reports a block a verifying index.db lists with
// messages whose file is gone while blocks before and after it are there:
// the server logs "could not locate msg block N", rebuilds from the blocks
// it finds, and its messages are lost (v2.10.27 keeps index.db's counts but
// fails every read of them, "message block data missing"). A missing first
// block is left to the index comparison: limits and purges remove blocks
// from the front.
func (s *StreamScan) noteMissingBlocks() {
	x := s.Index
	if x == nil || !x.ChecksumOK || len(s.Blocks) < 2 {
		return
	}
	have := map[uint32]bool{}
	for i := range s.Blocks {
		have[s.Blocks[i].Index] = true
	}
	first, last := s.Blocks[0].Index, s.Blocks[len(s.Blocks)-1].Index
	for _, ib := range x.Blocks {
		if have[ib.Index] || ib.Index < first || ib.Index > last || ib.Msgs() == 0 {
			continue
		}
		lost := indexLive(ib, ib.FirstSeq, ib.LastSeq)
		if len(lost) == 0 {
			continue
		}
		s.Lost = append(s.Lost, lost...)
		s.Losses = append(s.Losses, BlockLoss{File: blockPath(s.Dir, ib.Index), Missing: true, Lost: lost})
		s.problem(binfmt.Stamp(&binfmt.CorruptError{File: blockPath(s.Dir, ib.Index), Offset: 0, Seq: lost[0].First,
			Err: fmt.Errorf("%w: block %d.blk is missing between blocks that are there; index.db (its checksum verifies) says it held %d messages, sequences %s: lost",
				fs.ErrNotExist, ib.Index, ib.Msgs(), lost)}, natsfmt.StructBlockRecord))
	}
	slices.SortFunc(s.Lost, func(a, b SeqRange) int { return cmpUint(a.First, b.First) })
}

// noteResurrected fills Resurrected (see there) and reports it once, on
// the last block, where the tombstones of a stream's deletes are written.
func (s *StreamScan) noteResurrected() {
	x := s.Index
	if x == nil || !x.ChecksumOK || len(s.Blocks) == 0 || s.indexCurrent() {
		return
	}
	if s.Meta != nil && (s.Meta.MaxAge > 0 || s.Meta.MaxMsgsPerSubject > 0) {
		return
	}
	var back seqset.Set
	for i := range s.Blocks {
		b := &s.Blocks[i]
		ib, ok := x.Block(b.Index)
		if !ok || b.Msgs == 0 || b.Encrypted {
			continue
		}
		if ib.FirstSeq > b.FirstSeq {
			head := seqset.Set{{First: b.FirstSeq, Last: min(ib.FirstSeq-1, b.LastSeq)}}
			back = back.Union(head.Subtract(b.deleted).Subtract(b.bad))
		}
		ib.Deleted.Each(func(q uint64) bool {
			if b.live(q) {
				back.Add(q)
			}
			return true
		})
	}
	if len(back) == 0 {
		return
	}
	s.Resurrected = back
	lb := s.Blocks[len(s.Blocks)-1]
	s.Losses = append(s.Losses, BlockLoss{File: lb.File, Offset: lb.Size, Resurrected: back})
	s.problem(binfmt.Stamp(&binfmt.CorruptError{File: lb.File, Offset: lb.Size, Seq: back[0].First,
		Err: fmt.Errorf("%w: the tombstones of %d deleted message(s) are gone (the block ends at offset %d; index.db, whose checksum verifies, records sequences %s as deleted, the blocks hold them as messages): the server rebuilds from the blocks at its next start and serves them again",
			binfmt.ErrTruncated, back.Count(), lb.Size, back)}, natsfmt.StructBlockRecord))
}

// indexLive lists the sequences first..last that index.db's block entry
// holds as messages (not in its delete map, not below its first).
func indexLive(ib IndexBlock, first, last uint64) seqset.Set {
	first = max(first, ib.FirstSeq)
	if first > last {
		return nil
	}
	return seqset.Set{{First: first, Last: last}}.Subtract(ib.Deleted.Ranges())
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// noteBad collects the unreadable sequences of a block and what the server
// would drop rebuilding it.
func (s *StreamScan) noteBad(bs *BlockScan) {
	for _, r := range bs.bad {
		s.Unreadable.AddRange(r.First, r.Last) // merges across blocks
	}
	s.RebuildLost = append(s.RebuildLost, bs.RebuildLost...)
	s.RebuildLostMsgs += bs.RebuildLostMsgs
}

// resolveBadDeleted moves the unreadable sequences whose deletion is on
// record (a tombstone, or index.db's delete map when index.db verifies; a
// deletion is never undone, so a stale index.db still proves one) from
// Unreadable to BadDeleted and counts them as deleted: a damaged record of a
// deleted message is no lost message.
func (s *StreamScan) resolveBadDeleted(tombs []uint64) {
	if len(s.Unreadable) == 0 {
		return
	}
	tombed := make(map[uint64]bool, len(tombs))
	for _, t := range tombs {
		tombed[t] = true
	}
	deleted := func(b *BlockScan, seq uint64) bool {
		if tombed[seq] {
			return true
		}
		if s.Index == nil || !s.Index.ChecksumOK {
			return false
		}
		ib, ok := s.Index.Block(b.Index)
		return ok && (seq < ib.FirstSeq || ib.Deleted.Contains(seq))
	}
	var unreadable seqset.Set
	for i := range s.Blocks {
		b := &s.Blocks[i]
		if len(b.bad) == 0 {
			continue
		}
		var keep seqset.Set
		for _, r := range b.bad {
			for q := r.First; q <= r.Last; q++ {
				if deleted(b, q) {
					b.deleted.Add(q)
					s.BadDeleted.Add(q)
				} else {
					keep.Add(q)
					unreadable.Add(q)
				}
			}
		}
		b.bad = keep
	}
	s.Unreadable = unreadable
}

// assemble combines the blocks as recoverMsgs does.
func (s *StreamScan) assemble() {
	st := &s.State
	for i := range s.Blocks {
		b := &s.Blocks[i]
		if b.Encrypted || b.FirstSeq == 0 {
			continue // nats-server removes a block with nothing in it
		}
		if st.Msgs == 0 {
			st.FirstSeq, st.LastSeq, st.FirstTS, st.LastTS = 0, 0, 0, 0
		}
		if st.FirstSeq == 0 || (b.FirstSeq < st.FirstSeq && b.FirstTS != 0) {
			st.FirstSeq, st.FirstTS = b.FirstSeq, b.FirstTS
		}
		if b.LastSeq >= st.LastSeq {
			st.LastSeq, st.LastTS = b.LastSeq, b.LastTS
		}
		st.Msgs += b.Msgs
		st.Bytes += b.Bytes
		if b.Msgs == 0 {
			b.FirstSeq, b.FirstTS = st.LastSeq+1, 0
			b.LastSeq, b.LastTS = st.LastSeq, st.LastTS
		}
	}
}

// live reports whether seq is a counted message of block b.
func (b *BlockScan) live(seq uint64) bool {
	return b.Msgs > 0 && seq >= b.FirstSeq && seq <= b.LastSeq && !b.deleted.Contains(seq) && !b.bad.Contains(seq)
}

func (s *StreamScan) blockOf(seq uint64) *BlockScan {
	i := sort.Search(len(s.Blocks), func(i int) bool { return s.Blocks[i].LastSeq >= seq })
	for ; i < len(s.Blocks); i++ {
		if b := &s.Blocks[i]; b.live(seq) {
			return b
		}
		if s.Blocks[i].FirstSeq > seq {
			break
		}
	}
	return nil
}

// remove drops the live sequences of block b for which del is true.
func (s *StreamScan) remove(fsys fs.FS, b *BlockScan, del func(seq uint64) bool) (removed uint64) {
	s.eachLive(fsys, b, func(seq uint64, rl int) bool {
		if del(seq) {
			removed++
			s.drop(b, seq, rl)
		}
		return true
	})
	b.fixFirst()
	return removed
}

func (s *StreamScan) drop(b *BlockScan, seq uint64, rl int) {
	b.forgetDigest(seq)
	b.Msgs--
	b.Bytes -= uint64(rl)
	s.State.Msgs--
	s.State.Bytes -= uint64(rl)
	b.deleted.Add(seq)
	if i := seq - b.rlBase; b.rls != nil && i < uint64(len(b.rls)) {
		b.rls[i] = 0
	}
}

// eachLive calls f with every live message of b (sequence, record length) in
// order until f returns false, from the cache or by re-reading the block.
func (s *StreamScan) eachLive(fsys fs.FS, b *BlockScan, f func(seq uint64, rl int) bool) {
	if b.Msgs == 0 {
		return
	}
	if b.rls != nil {
		for i, rl := range b.rls {
			if seq := b.rlBase + uint64(i); rl != 0 && b.live(seq) && !f(seq, int(rl)) {
				return
			}
		}
		return
	}
	ra, size, closeFn, err := openBlock(fsys, b.File)
	if err != nil {
		return
	}
	defer closeFn()
	br, err := NewBlockReader(b.File, ra, size, "")
	if err != nil {
		return
	}
	var last uint64
	for {
		r, err := br.Next()
		if err != nil && r.Len == 0 {
			return
		}
		if b.countEnd >= 0 && r.Offset >= b.countEnd {
			return
		}
		if r.Tombstone || r.Seq == 0 {
			continue
		}
		if r.Erased || r.Seq <= last {
			last = max(last, r.Seq)
			continue
		}
		last = r.Seq
		if b.live(r.Seq) && !f(r.Seq, r.Len) {
			return
		}
	}
}

// rlCacheMax bounds the record-length cache of a scan (4 bytes per message):
// 4M entries, 16 MiB. Older blocks lose their cache first.
const rlCacheMax = 4 << 20

// maxRLGap is the largest sequence gap the cache pads with zeros.
const maxRLGap = 4096

// left is the number of block bytes from this record on: the first call
// sizes the cache for records of this length up to the end of the block.
func (b *BlockScan) cacheRL(seq uint64, rl int, left int64) {
	if b.rls == nil {
		if b.Msgs != 1 { // the cache was dropped for this block
			return
		}
		n := min(left/int64(max(rl, emptyRecord))+64, rlCacheMax)
		b.rlBase, b.rls = seq, make([]uint32, 0, n)
	}
	i := seq - b.rlBase
	if i < uint64(len(b.rls)) || i-uint64(len(b.rls)) > maxRLGap || len(b.rls) >= rlCacheMax {
		b.rls = nil // out of order, a long gap or too big: re-read instead
		return
	}
	for uint64(len(b.rls)) < i {
		b.rls = append(b.rls, 0)
	}
	b.rls = append(b.rls, uint32(rl))
}

// trimRLCache keeps the caches of the newest blocks, at most rlCacheMax
// entries in all, after a block was appended: the longest run of blocks
// from the last whose caches fit keeps them.
func (s *StreamScan) trimRLCache() {
	s.rlTotal += len(s.Blocks[len(s.Blocks)-1].rls)
	for s.rlTotal > rlCacheMax/max(1, s.share) && s.rlLo < len(s.Blocks) {
		b := &s.Blocks[s.rlLo]
		s.rlTotal -= len(b.rls)
		b.rls, b.dgs = nil, nil
		s.rlLo++
	}
}

// fixFirst moves the block's first sequence past deleted ones.
func (b *BlockScan) fixFirst() {
	if b.Msgs == 0 {
		return
	}
	if r, ok := b.deleted.RangeOf(b.FirstSeq); ok && b.FirstSeq <= b.LastSeq {
		b.FirstSeq = r.Last + 1 // ranges are apart: r.Last+1 is not deleted
	}
}

// applyTombstones removes every tombstoned sequence still live, as
// newFileStoreWithCreatedAndMode does with fs.tombs.
func (s *StreamScan) applyTombstones(fsys fs.FS, tombs []uint64) {
	byBlock := map[*BlockScan][]uint64{}
	for _, t := range tombs {
		if b := s.blockOf(t); b != nil {
			byBlock[b] = append(byBlock[b], t)
		}
	}
	for i := range s.Blocks {
		b := &s.Blocks[i]
		ts := byBlock[b]
		if ts == nil {
			continue
		}
		if b.rls == nil {
			m := make(map[uint64]bool, len(ts))
			for _, t := range ts {
				m[t] = true
			}
			s.remove(fsys, b, func(seq uint64) bool { return m[seq] })
			continue
		}
		// From the cache: the live, cached sequences eachLive would visit,
		// in the same (ascending) order.
		if b.Msgs > 0 {
			slices.Sort(ts)
			for _, t := range ts {
				if j := t - b.rlBase; t >= b.rlBase && j < uint64(len(b.rls)) && b.rls[j] != 0 && b.live(t) {
					s.drop(b, t, int(b.rls[j]))
				}
			}
		}
		b.fixFirst()
	}
}

// applyLimits enforces max_msgs and max_bytes from the oldest message on,
// as nats-server does right after recovery (enforceMsgLimit,
// enforceBytesLimit). max_age and max_msgs_per_subject are not applied.
func (s *StreamScan) applyLimits(fsys fs.FS) {
	m := s.Meta
	over := func() bool {
		return (m.MaxMsgs > 0 && s.State.Msgs > uint64(m.MaxMsgs)) ||
			(m.MaxBytes > 0 && s.State.Bytes > uint64(m.MaxBytes))
	}
	for i := range s.Blocks {
		if !over() {
			return
		}
		b := &s.Blocks[i]
		if b.Msgs == 0 {
			continue
		}
		s.eachLive(fsys, b, func(seq uint64, rl int) bool {
			if !over() {
				return false
			}
			s.LimitRemoved++
			s.drop(b, seq, rl)
			return true
		})
		b.fixFirst()
	}
}

// finish recomputes first sequence and interior deletes after removals.
func (s *StreamScan) finish(fsys fs.FS) {
	st := &s.State
	if st.Msgs == 0 {
		st.FirstSeq, st.FirstTS = st.LastSeq+1, 0
		st.NumDeleted = 0
		return
	}
	s.fixFirst(fsys)
	if st.LastSeq >= st.FirstSeq && st.LastSeq-st.FirstSeq+1 > st.Msgs {
		st.NumDeleted = st.LastSeq - st.FirstSeq + 1 - st.Msgs
	}
	// An unreadable record is damage, not a deletion.
	for _, r := range s.Unreadable {
		if r.First >= st.FirstSeq && r.Last <= st.LastSeq {
			st.NumDeleted -= min(st.NumDeleted, r.Last-r.First+1)
		}
	}
}

// fixFirst sets the stream's first sequence (and its timestamp) to the
// first live message of the blocks, after removals moved it.
func (s *StreamScan) fixFirst(fsys fs.FS) {
	st := &s.State
	if st.Msgs == 0 {
		st.FirstSeq, st.FirstTS = st.LastSeq+1, 0
		return
	}
	for i := range s.Blocks {
		if b := &s.Blocks[i]; b.Msgs > 0 {
			if b.FirstSeq != st.FirstSeq {
				st.FirstSeq, st.FirstTS = b.FirstSeq, 0
				if !s.skipFirstTS {
					st.FirstTS = s.tsOf(fsys, b, b.FirstSeq)
				}
			}
			return
		}
	}
}

// tsOf re-reads block b for the timestamp of seq (0 if not found).
func (s *StreamScan) tsOf(fsys fs.FS, b *BlockScan, seq uint64) int64 {
	ra, size, closeFn, err := openBlock(fsys, b.File)
	if err != nil {
		return 0
	}
	defer closeFn()
	br, err := NewBlockReader(b.File, ra, size, "")
	if err != nil {
		return 0
	}
	for {
		r, err := br.Next()
		if err != nil && r.Len == 0 {
			return 0
		}
		if r.Seq == seq && !r.Tombstone && !r.Erased {
			return r.TS
		}
	}
}

// compareIndex lists where index.db disagrees with the blocks.
func (s *StreamScan) compareIndex() {
	x := s.Index
	if x == nil {
		return
	}
	add := func(scope, field string, idx, blk any) {
		s.Mismatches = append(s.Mismatches, Mismatch{Scope: scope, Field: field, Index: fmt.Sprint(idx), Blocks: fmt.Sprint(blk)})
	}
	// A record that fails its checksum is still on disk where index.db
	// places it: index.db counting it is right, not a mismatch.
	st := s.State
	for i := range s.Blocks {
		b := &s.Blocks[i]
		for _, r := range b.bad {
			st.Msgs += r.Last - r.First + 1
			if st.FirstSeq == 0 || r.First < st.FirstSeq {
				st.FirstSeq = r.First
			}
			st.LastSeq = max(st.LastSeq, r.Last)
		}
		st.Bytes += b.badBytes
	}
	if x.Msgs != st.Msgs {
		add("stream", "messages", x.Msgs, st.Msgs)
	}
	if x.Bytes != st.Bytes {
		add("stream", "bytes", x.Bytes, st.Bytes)
	}
	if st.Msgs > 0 && x.FirstSeq != st.FirstSeq {
		add("stream", "first_seq", x.FirstSeq, st.FirstSeq)
	}
	if x.LastSeq != st.LastSeq {
		add("stream", "last_seq", x.LastSeq, st.LastSeq)
	}
	have := map[uint32]*BlockScan{}
	for i := range s.Blocks {
		have[s.Blocks[i].Index] = &s.Blocks[i]
	}
	for _, ib := range x.Blocks {
		b := have[ib.Index]
		scope := fmt.Sprintf("block %d", ib.Index)
		if b == nil {
			add(scope, "present", true, false)
			continue
		}
		if b.Encrypted {
			continue
		}
		if ib.Msgs() > 0 && (ib.LastSeq != b.LastSeq) {
			add(scope, "last_seq", ib.LastSeq, b.LastSeq)
		}
		if held := b.Msgs + uint64(len(b.bad)); ib.Msgs() != held {
			add(scope, "messages", ib.Msgs(), held)
		}
	}
	if len(s.Blocks) > 0 {
		lb := s.Blocks[len(s.Blocks)-1]
		if lb.Index != x.LastBlock {
			add("stream", "last_block", x.LastBlock, lb.Index)
		} else if !lb.Encrypted && !lb.Compressed && lb.LastChecksum != x.LastChecksum {
			add("stream", "last_checksum", fmt.Sprintf("%x", x.LastChecksum), fmt.Sprintf("%x", lb.LastChecksum))
		}
	}
}

func (s *StreamScan) readConsumers(fsys fs.FS) {
	odir := path.Join(s.Dir, "obs")
	ents, err := fs.ReadDir(fsys, odir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c := ConsumerScan{Name: e.Name()}
		cdir := path.Join(odir, e.Name())
		inf := path.Join(cdir, "meta.inf")
		if exists(fsys, path.Join(cdir, "meta.key")) {
			s.problem(binfmt.Stamp(binfmt.Errorf(inf, 0, binfmt.ErrEncrypted, "consumer meta.key present; meta.inf and o.dat are sealed"), natsfmt.StructMetaInf))
			s.Consumers = append(s.Consumers, c)
			continue
		}
		if data, err := binfmt.ReadFileFS(fsys, inf, smallFileLimit); err != nil {
			s.problem(binfmt.Stamp(asCorrupt(inf, err), natsfmt.StructMetaInf))
		} else {
			m, err := ParseConsumerMeta(inf, data)
			s.problem(err)
			c.Meta = m
			s.checkMetaSum(fsys, data, path.Join(cdir, "meta.sum"), s.Name+"/"+e.Name(), &c.MetaSumOK)
		}
		od := path.Join(cdir, "o.dat")
		if data, err := binfmt.ReadFileFS(fsys, od, smallFileLimit); err == nil {
			st, err := ParseConsumerState(od, data)
			s.problem(err)
			c.State = st
		} else if !errors.Is(err, fs.ErrNotExist) {
			s.problem(binfmt.Stamp(asCorrupt(od, err), natsfmt.StructConsumerState))
		}
		s.Consumers = append(s.Consumers, c)
	}
}

// Deleted returns the block's deleted sequences inside its range.
func (b *BlockScan) Deleted() seqset.Set { return b.deleted.Clone() }

func interior(st State) uint64 {
	if st.Msgs > 0 && st.LastSeq >= st.FirstSeq && st.LastSeq-st.FirstSeq+1 > st.Msgs {
		return st.LastSeq - st.FirstSeq + 1 - st.Msgs
	}
	return 0
}

// IndexCurrent reports whether nats-server trusts index.db at its next start
// instead of rebuilding from the blocks (see indexCurrent).
func (s *StreamScan) IndexCurrent() bool { return s.indexCurrent() }

// indexCurrent applies nats-server's staleness check (recoverFullState):
// index.db's last block is the last block on disk and its last checksum is
// that block's last record checksum.
func (s *StreamScan) indexCurrent() bool {
	x := s.Index
	if x == nil || !x.ChecksumOK || len(s.Blocks) == 0 {
		return false
	}
	lb := s.Blocks[len(s.Blocks)-1]
	return lb.Index == x.LastBlock && lb.Stopped < 0 && lb.LastChecksum == x.LastChecksum
}

// applyIndexDeletes removes what a current index.db says is gone but the
// blocks still hold: sequences below a block's first and in its delete map.
func (s *StreamScan) applyIndexDeletes(fsys fs.FS) {
	for i := range s.Blocks {
		b := &s.Blocks[i]
		ib, ok := s.Index.Block(b.Index)
		if !ok || b.Msgs == 0 {
			continue
		}
		del := func(seq uint64) bool { return seq < ib.FirstSeq || ib.Deleted.Contains(seq) }
		need := false
		for q := b.FirstSeq; q <= b.LastSeq && !need; q++ {
			if !del(q) {
				// Only sequences below the index's first or in its dmap matter;
				// jump to the dmap entries.
				break
			}
			need = b.live(q)
		}
		if !need {
			ib.Deleted.Each(func(q uint64) bool {
				need = b.live(q)
				return !need
			})
		}
		if need {
			s.IndexRemoved += s.remove(fsys, b, del)
		}
	}
}
