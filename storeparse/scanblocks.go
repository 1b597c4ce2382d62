package storeparse

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sync"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Parallel block scanning.
//
// ScanStream reads the blocks of a stream with up to ScanOptions.Workers
// goroutines (the caller's included) and merges the per-block results in
// block order, so every figure, problem and tombstone is what a
// one-block-at-a-time scan gives. Memory stays bounded whatever the store
// size:
//
//   - at most 4 × workers blocks are between "started" and "merged"; a
//     finished block waiting for its turn holds only its BlockScan
//     (record-length cache, delete ranges), problems and tombstones;
//   - the block bytes being read (a decompressed block, the read buffer of
//     a plain one) are charged to a shared budget of scanMemBudget bytes
//     before they are touched, and released when the block is done; a
//     block larger than the whole budget waits until it can run alone;
//   - a worker keeps a read buffer of at most maxKeptBuf between blocks.
//
// Plain blocks are read with ReadAt, readChunk bytes at a time, into the
// worker's buffer, never mapped: on the 2-core VM this was measured on,
// touching 2.3 GB of page cache through mmap cost 1.8-2.2 CPU-s in page
// faults (MADV_SEQUENTIAL, MADV_WILLNEED and MAP_POPULATE alike), copying
// it with pread 0.46 CPU-s. A block that shrinks while it is read (ReadAt
// ends before the size Stat gave) is read again at its new size.

const (
	maxScanWorkers = 8
	scanMemBudget  = 64 << 20
	maxKeptBuf     = 4 << 20
)

// blockResult is what scanning one block yields.
type blockResult struct {
	bs       *BlockScan
	tombs    []uint64
	problems []error
	err      error // from Visit
	panicked any   // a panic in a worker, raised again by ScanStream
}

func (r *blockResult) problem(err error) {
	if err != nil {
		// Every problem of a block's scan is about its records.
		r.problems = append(r.problems, binfmt.Stamp(err, natsfmt.StructBlockRecord))
	}
}

// blockScanner scans blocks one at a time; each worker has its own.
type blockScanner struct {
	dir, name string
	visit     func(BlockInfo, *Record) error
	window    uint64                          // ScanOptions.DigestWindow
	msgs      bool                            // ScanOptions.Messages is set
	msgBufs   func() (seqs, digests []uint64) // ScanOptions.MessageBuffers
	payloads  map[string]bool                 // ScanOptions.Payloads
	budget    *memBudget                      // nil: no other scanner runs
	buf       []byte                          // ReadAt buffer kept from block to block
	afterOpen func(*blockSource)              // test hook: runs once a block is open
	rereads   int                             // blocks read again because they shrank
	lastMsgs  int                             // records handed over for the last block (ScanOptions.Messages): the next one's capacity
}

// scanBlocks scans the blocks idxs of s, merges them into s (Blocks,
// Problems, Lost) in order and returns the tombstones in block order.
func (s *StreamScan) scanBlocks(fsys fs.FS, idxs []uint32, keys map[uint32]bool, opts ScanOptions) ([]uint64, error) {
	var tombs []uint64
	merge := func(i int, res *blockResult) {
		s.Problems = append(s.Problems, res.problems...)
		tombs = append(tombs, res.tombs...)
		var nextFirst uint64
		if res.bs.Stopped >= 0 && i+1 < len(idxs) {
			nextFirst = s.peekFirstSeq(fsys, idxs[i+1])
		}
		s.noteLost(res.bs, nextFirst, i == len(idxs)-1)
		s.noteBad(res.bs)
		s.noteEmpty(res.bs)
		s.noteShort(res.bs)
		if opts.Messages != nil {
			opts.Messages(res.bs.mseqs, res.bs.mdigs)
			res.bs.mseqs, res.bs.mdigs = nil, nil
		}
		s.Blocks = append(s.Blocks, *res.bs)
		s.trimRLCache()
		s.trimDigestCache()
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, maxScanWorkers, len(idxs))
	if opts.Visit != nil || workers <= 1 {
		sc := &blockScanner{dir: s.Dir, name: s.Name, visit: opts.Visit, window: opts.DigestWindow, msgs: opts.Messages != nil, msgBufs: opts.MessageBuffers, payloads: opts.Payloads}
		for i, n := range idxs {
			res := sc.scan(fsys, n, keys[n])
			if res.err != nil {
				s.Problems = append(s.Problems, res.problems...)
				return tombs, res.err
			}
			merge(i, &res)
		}
		return tombs, nil
	}

	// The caller and workers-1 goroutines take blocks in order; whoever
	// finishes the oldest block not yet merged merges it and every finished
	// one after it. A block is started only while fewer than window blocks
	// are started and not merged, so they are consecutive and block i has
	// ring slot i%window to itself.
	window := 4 * workers
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		ring     = make([]blockResult, window)
		done     = make([]bool, window)
		next     int // next block to start
		merged   int // blocks merged
		panicked any
		budget   = newMemBudget(scanMemBudget / int64(max(1, opts.Share)))
	)
	work := func() {
		sc := &blockScanner{dir: s.Dir, name: s.Name, window: opts.DigestWindow, msgs: opts.Messages != nil, msgBufs: opts.MessageBuffers, budget: budget, payloads: opts.Payloads}
		mu.Lock()
		defer mu.Unlock()
		for {
			for next < len(idxs) && next-merged >= window {
				cond.Wait()
			}
			if next >= len(idxs) {
				return
			}
			i := next
			next++
			mu.Unlock()
			res := sc.scanCatch(fsys, idxs[i], keys[idxs[i]])
			mu.Lock()
			ring[i%window], done[i%window] = res, true
			for k := merged % window; done[k]; k = merged % window {
				res := ring[k]
				ring[k], done[k] = blockResult{}, false
				if res.panicked != nil && panicked == nil {
					panicked = res.panicked
				}
				if panicked == nil {
					func() {
						defer func() {
							if p := recover(); p != nil {
								panicked = p
							}
						}()
						merge(merged, &res)
					}()
				}
				merged++
			}
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	return tombs, nil
}

// scanCatch is scan with a panic handed back in the result.
func (sc *blockScanner) scanCatch(fsys fs.FS, n uint32, hasKey bool) (res blockResult) {
	defer func() {
		if p := recover(); p != nil {
			res = blockResult{panicked: p}
		}
	}()
	return sc.scan(fsys, n, hasKey)
}

// blockSource is an opened block: in memory (data, read whole) or an
// io.ReaderAt.
type blockSource struct {
	ra    io.ReaderAt
	data  []byte
	size  int64
	close func()
}

// openSource opens block name; an fs.File without ReadAt is read whole,
// bounded.
func openSource(fsys fs.FS, name string) (blockSource, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return blockSource{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return blockSource{}, err
	}
	size := fi.Size()
	if size >= adviseMin {
		adviseSequential(f)
	}
	if ra, ok := f.(io.ReaderAt); ok {
		return blockSource{ra: ra, size: size, close: func() { f.Close() }}, nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDecompressed+1))
	if err != nil {
		return blockSource{}, err
	}
	if int64(len(data)) > maxDecompressed {
		return blockSource{}, binfmt.Errorf(name, 0, binfmt.ErrTooLarge, "block larger than %d bytes and not seekable", maxDecompressed)
	}
	if data == nil {
		data = []byte{}
	}
	return blockSource{data: data, size: int64(len(data)), close: func() {}}, nil
}

// adviseMin is the smallest block worth a read-ahead advice: below it the
// kernel's default read-ahead (128 KiB) already covers most of the block,
// and the call is one more system call a block (1,900 of them on a
// 1,500-stream bundle, nearly all for blocks of a few KiB).
const adviseMin = 1 << 20

// weight is what reading src costs in memory, for the budget.
func (src *blockSource) weight() int64 {
	w := min(src.size, maxDecompressed)
	if src.data == nil {
		w = max(w, readChunk)
	}
	var head [4]byte
	if src.size > int64(len(cmpMagic)) {
		if src.data != nil {
			copy(head[:], src.data)
		} else {
			_, _ = src.ra.ReadAt(head[:], 0)
		}
		if string(head[:len(cmpMagic)]) == string(cmpMagic) {
			w += min(maxDecompressed, src.size*maxRatio)
		}
	}
	return w
}

// scan reads block n and returns its state and the tombstones in it.
func (sc *blockScanner) scan(fsys fs.FS, n uint32, hasKey bool) blockResult {
	res, shrank := sc.scanOnce(fsys, n, hasKey)
	if shrank {
		// The file ended before the size it had when opened: read what
		// is there now.
		sc.rereads++
		res, _ = sc.scanOnce(fsys, n, hasKey)
	}
	return res
}

// scanOnce is scan. shrank reports that the file ended before the size Stat
// gave while it was read; res is then incomplete.
func (sc *blockScanner) scanOnce(fsys fs.FS, n uint32, hasKey bool) (res blockResult, shrank bool) {
	name := blockPath(sc.dir, n)
	res = blockResult{bs: &BlockScan{File: name, Index: n, Stopped: -1, countEnd: -1, firstBad: -1}}
	src, err := openSource(fsys, name)
	if err != nil {
		res.problem(asCorrupt(name, err))
		return res, false
	}
	defer src.close()
	if sc.afterOpen != nil {
		sc.afterOpen(&src)
	}
	res.bs.Size = src.size
	if hasKey {
		res.bs.Encrypted = true
		res.problem(binfmt.Errorf(name, 0, binfmt.ErrEncrypted, "msgs/%d.key present; block is encrypted and no key was given", n))
		return res, false
	}
	if sc.budget != nil {
		w := src.weight()
		sc.budget.acquire(w)
		defer sc.budget.release(w)
	}
	return res, sc.records(name, n, &src, &res)
}

// messageBuffers gives the slices a block's message records go to: the
// ones MessageBuffers gives when they hold as many as the last block's,
// else new ones.
func (sc *blockScanner) messageBuffers() (seqs, digests []uint64) {
	want := sc.lastMsgs + 64
	if sc.msgBufs != nil {
		seqs, digests = sc.msgBufs()
		if cap(seqs) >= want && cap(digests) >= want {
			return seqs[:0], digests[:0]
		}
	}
	return make([]uint64, 0, want), make([]uint64, 0, want)
}

// records reads the records of an opened block into res, building the block
// state as rebuildStateFromBufLocked (v2.15.2) does. shrank: the file ended
// before src.size (see BlockReader.Shrank).
func (sc *blockScanner) records(name string, n uint32, src *blockSource, res *blockResult) (shrank bool) {
	bs := res.bs
	buf := sc.buf // one read buffer for every block
	sc.buf = nil
	br, err := newBlockReaderBuf(name, src.ra, src.data, src.size, fmt.Sprintf("%s-%d", sc.name, n), buf)
	if err != nil {
		sc.buf = buf
		res.problem(err)
		return false
	}
	bs.Compressed = br.Compressed()
	if br.inMem {
		sc.buf = buf
	} else {
		defer func() {
			if cap(br.buf) <= maxKeptBuf {
				sc.buf = br.buf[:0]
			}
		}()
	}

	var (
		maxTomb       uint64
		maxTombTS     int64
		last          uint64
		firstNeedsSet = true
		regressed     bool // a sequence not above the last was reported
		info          = BlockInfo{File: name, Index: n}
	)
	updateLast := func(seq uint64, ts int64) {
		if seq <= last {
			return
		}
		if last > 0 && seq != last+1 && bs.Msgs != 0 {
			bs.deleted.AddRange(last+1, seq-1) // compaction gap
		}
		last = seq
		bs.LastSeq, bs.LastTS = seq, ts
	}
	var r Record // one per block: visit takes its address, so it lives on the heap
	for {
		err := br.next(&r)
		if err == io.EOF {
			break
		}
		bad := false
		if err != nil {
			if r.Len == 0 {
				// Framing is lost: nothing after this offset can be read
				// as records. The error is reported once, with the
				// sequences it costs (noteLost).
				bs.Stopped, bs.countEnd, bs.stopErr = br.GoodEnd(), br.GoodEnd(), err
				bs.Torn = br.Torn()
				break
			}
			res.problem(err)
			// A bad checksum with sane framing costs this record only: the
			// records after it are read and counted (a header length too
			// large for its record is counted, as the server does).
			bad = errors.Is(err, binfmt.ErrChecksum)
		}
		bs.Records++
		if !r.ChecksumOK {
			bs.BadChecksums++
		}
		if sc.visit != nil {
			if verr := sc.visit(info, &r); verr != nil {
				res.err = verr
				return false
			}
		}
		if bad {
			copy(bs.LastChecksum[:], r.Sum[:])
			if bs.firstBad < 0 {
				bs.firstBad, bs.firstBadFrom = r.Offset, last+1
			}
			bs.Bad = append(bs.Bad, BadRecord{Offset: r.Offset, Seq: r.Seq, Len: r.Len})
			// The sequence in the header is not covered by a good checksum:
			// trust it only where it continues the block.
			if !r.Tombstone && r.Seq > last && r.Seq-last <= maxResyncSeqJump {
				updateLast(r.Seq, r.TS)
				bs.bad.Add(r.Seq)
				bs.badBytes += uint64(r.Len)
			}
			continue
		}
		copy(bs.LastChecksum[:], r.Sum[:])
		seq := r.Seq
		switch {
		case r.Tombstone:
			bs.Tombstones++
			res.tombs = append(res.tombs, seq)
			if maxTomb == 0 || seq > maxTomb {
				maxTomb, maxTombTS = seq, r.TS
			}
			continue
		case seq == 0 || r.Erased || seq < bs.FirstSeq:
			if r.Erased {
				bs.Erased++
			}
			if seq >= bs.FirstSeq {
				updateLast(seq, r.TS)
				if bs.Msgs == 0 {
					bs.FirstSeq, bs.FirstTS = seq+1, 0
				} else if seq != 0 {
					bs.deleted.Add(seq)
				}
			}
			continue
		}
		if firstNeedsSet && seq >= bs.FirstSeq {
			bs.FirstSeq, bs.FirstTS, firstNeedsSet = seq, r.TS, false
		}
		if seq <= last {
			// Sequences only grow within a block: one that does not is a
			// record written twice or pasted from elsewhere (a block
			// holding its records twice). Not counted again; said once.
			if !regressed {
				regressed = true
				res.problem(&binfmt.CorruptError{File: name, Offset: r.Offset, Seq: seq, Structure: natsfmt.StructBlockRecord,
					Err: fmt.Errorf("%w: sequence %d after %d: records out of order or repeated (not counted again)", binfmt.ErrFormat, seq, last)})
			}
			continue
		}
		if !bs.deleted.Contains(seq) {
			bs.Msgs++
			bs.Bytes += uint64(r.Len)
			bs.cacheRL(seq, r.Len, br.size-r.Offset)
			bs.addDigest(sc.window, &r)
			if sc.msgs && r.ChecksumOK {
				if bs.mseqs == nil {
					bs.mseqs, bs.mdigs = sc.messageBuffers()
				}
				bs.mseqs = append(bs.mseqs, seq)
				bs.mdigs = append(bs.mdigs, MessageDigest(&r))
			}
			if sc.payloads != nil {
				bs.findPayload(sc.payloads, seq, r.Data)
			}
			if r.HasHeaders && seq > bs.srcSeq {
				if v, ok := sourceHeader(r.Header); ok {
					bs.srcSeq, bs.srcHdr = seq, v
				}
			}
			if bs.firstBad >= 0 {
				bs.RebuildLostMsgs++
			}
		}
		updateLast(seq, r.TS)
	}
	if sc.msgs {
		sc.lastMsgs = len(bs.mseqs)
	}
	bs.GoodEnd = br.GoodEnd()
	if bs.firstBad >= 0 && last >= bs.firstBadFrom {
		bs.RebuildLost = []SeqRange{{First: bs.firstBadFrom, Last: last}}
	}
	if bs.Msgs == 0 {
		if bs.FirstSeq > 0 {
			bs.LastSeq = bs.FirstSeq - 1
		} else if maxTomb > 0 {
			bs.FirstSeq, bs.FirstTS = maxTomb+1, 0
			if bs.LastSeq == 0 {
				bs.LastSeq, bs.LastTS = maxTomb, maxTombTS
			}
		}
	}
	return br.shrank
}

// memBudget is a counting semaphore over bytes. A request larger than the
// whole budget is cut to it, so it runs when nothing else holds any.
type memBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	total int64
	used  int64
}

func newMemBudget(total int64) *memBudget {
	m := &memBudget{total: total}
	m.cond = sync.NewCond(&m.mu)
	return m
}

func (m *memBudget) acquire(n int64) {
	n = min(n, m.total)
	m.mu.Lock()
	for m.used+n > m.total {
		m.cond.Wait()
	}
	m.used += n
	m.mu.Unlock()
}

func (m *memBudget) release(n int64) {
	n = min(n, m.total)
	m.mu.Lock()
	m.used -= n
	m.mu.Unlock()
	m.cond.Broadcast()
}
