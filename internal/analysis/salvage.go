package analysis

// Salvage: every message of a stream the bundle still holds, for
// republishing (jsforensics extract), from the stream's blocks on every
// server (records past a bad one included) and from its raft group's WAL
// (stream messages replicated but maybe no longer in any block). The same
// WAL reading gives the acked-lost and store-corrupt remedies the sequences
// an extract would find there (Stream.WALSeqs).

import (
	"container/heap"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Salvage sources.
const (
	FromBlocks  = "blocks"
	FromRaftWAL = "raft-wal"
)

// SalvagedMsg is one message read back from the bundle.
type SalvagedMsg struct {
	Seq     uint64
	Subject string
	Header  []byte // the NATS header block as stored (NATS/1.0 …), nil if none
	Data    []byte
	TS      int64 // Unix ns
	Server  string
	File    string // relative to the bundle
	Offset  int64  // of the record in File (blocks: in the decompressed block)
	From    string // FromBlocks or FromRaftWAL
	// Term and Index of the raft entry (raft-wal only).
	Term, Index uint64
	// Uncommitted: a raft-wal message whose entry is past the highest
	// index the group's servers agreed on (a quorum of their WALs, a
	// snapshot or a commit index): written, but the cluster may never
	// have served it.
	Uncommitted bool
}

// SalvageOptions selects the stream (and optionally one server) to salvage.
type SalvageOptions struct {
	Account, Stream string
	Server          string // "" = every server
	// Group is the stream's raft group, when neither the stores' meta
	// state nor the captures name it (its folders were deleted).
	Group string
}

// Salvage is what SalvageStream read, beside the messages it gave.
type Salvage struct {
	// Written counts the messages given to emit.
	Written int
	// Conflicts counts sequences whose copies hold different content (each
	// kept).
	Conflicts int
	// Unreadable counts records on disk failing their checksum (not kept).
	Unreadable int
	// Sealed counts copies encrypted at rest that could not be read (no
	// key, or not the right one).
	Sealed int
	// OutOfOrder counts messages a source held after a higher sequence it
	// had already given (a WAL with entries out of order): given where
	// found, after higher sequences.
	OutOfOrder int
	// LeftOut: the sequences some copy or WAL held that a record of the
	// bundle says were removed (deleted, purged, past a limit), not
	// written, by the first record that says so; in the order found.
	LeftOut []SalvageLeftOut
	// Uncommitted counts the messages written flagged uncommitted.
	Uncommitted int
	Notes       []string
}

// LeftOutCount is how many sequences LeftOut holds.
func (s *Salvage) LeftOutCount() uint64 {
	var n uint64
	for _, l := range s.LeftOut {
		n += l.Seqs.Count()
	}
	return n
}

// A salvageSource reads one copy's blocks or one server's WAL of the
// stream's group, calling send with each message in the order it holds
// them (ascending sequences, but for damage).
type salvageSource func(send func(SalvagedMsg) error) error

// SalvageStream opens nothing itself: it reads b, using the model m (Load(b))
// to know where the stream's copies and raft group are, and calls emit with
// every message by sequence; the same sequence twice only when copies
// differ, a copy before the WALs, and copies and servers in the model's
// order. It gives what the servers would serve: never a sequence that any
// copy's tombstones or index.db, the stream's raft snapshot or its group's
// WAL on any server records removed (with Server set too: a copy that lost
// its tombstones holds deleted messages as live ones), counted in
// Salvage.LeftOut; a WAL message past what the group agreed on is flagged
// Uncommitted. Each copy is read twice (what it records, then its
// messages) and streamed: memory does not grow with the stream (a merge
// over one message per source) but for the removed sequences.
func SalvageStream(b *bundle.Bundle, m *model.Model, opts SalvageOptions, emit func(*SalvagedMsg) error) (*Salvage, error) {
	st := m.Stream(opts.Account, opts.Stream)
	group := opts.Group
	if group == "" && st != nil {
		group = st.Group
	}
	if group == "" {
		group = m.AssignedGroup(opts.Account, opts.Stream)
	}
	if st == nil && group == "" {
		return nil, fmt.Errorf("no stream %s > %s in the bundle (no copy, capture or assignment; name its raft group with --group if only a WAL holds it)", opts.Account, opts.Stream)
	}
	out := &Salvage{}
	// What every copy and the group record as removed, whichever copy is
	// read (--server too).
	var removals []removal
	truths := map[*model.StreamCopy]*copyTruth{}
	if st != nil {
		for _, c := range st.Copies {
			if c.Encrypted {
				continue
			}
			ct, err := readCopyTruth(b.FS, c.Path, st.Name, m.Name(c.Server))
			if err != nil {
				out.Notes = append(out.Notes, fmt.Sprintf("%s: %s could not be read: %v", m.Name(c.Server), c.Path, err))
				continue
			}
			truths[c] = ct
			if m.Name(c.Server) == opts.Server {
				// The copy read names its own records first.
				removals = append(slices.Clone(ct.removals), removals...)
			} else {
				removals = append(removals, ct.removals...)
			}
		}
	}
	gt := readGroupTruth(b, m, st, group)
	removals = append(removals, gt.removals...)
	out.Notes = append(out.Notes, gt.notes...)
	var sources []salvageSource
	var unreadable []*int // per copy, set when its source ends
	if st != nil {
		for _, c := range st.Copies {
			if opts.Server != "" && m.Name(c.Server) != opts.Server {
				continue
			}
			if c.Encrypted {
				out.Sealed++
				out.Notes = append(out.Notes, fmt.Sprintf("%s: %s is encrypted at rest, not read", m.Name(c.Server), c.Path))
				continue
			}
			ct := truths[c]
			if ct == nil {
				continue
			}
			bad := new(int)
			unreadable = append(unreadable, bad)
			server := m.Name(c.Server)
			sources = append(sources, func(send func(SalvagedMsg) error) error {
				n, err := blockMessages(b.FS, c.Path, st.Name, ct.live, func(file string, r *storeparse.Record) error {
					return send(SalvagedMsg{Seq: r.Seq, Subject: string(r.Subject), Header: clone(r.Header), Data: clone(r.Data),
						TS: r.TS, Server: server, File: file, Offset: r.Offset, From: FromBlocks})
				})
				*bad = n
				return err
			})
		}
	}
	// A WAL message serves only where no copy read above covers its
	// sequence: inside a copy's range the blocks are the truth (a sequence
	// they lack there was deleted, by a limit, a KV rollup or a request).
	var covering []*model.StreamCopy
	if st != nil {
		for _, c := range st.Copies {
			if (opts.Server == "" || m.Name(c.Server) == opts.Server) && !c.Encrypted {
				covering = append(covering, c)
			}
		}
	}
	missing := make([][]report.Range, len(covering))
	for i, c := range covering {
		missing[i] = model.CopyMissing(m, st, c)
	}
	covered := func(seq uint64) bool {
		for i, c := range covering {
			if seq <= c.LastSeq && !seqset.Set(missing[i]).Contains(seq) {
				return true
			}
		}
		return false
	}
	var walNotes []*[]string // per WAL, set when its source ends
	if group != "" {
		for _, srv := range m.Servers {
			if opts.Server != "" && srv.Name != opts.Server {
				continue
			}
			dir := groupDir(b, srv, group)
			if dir == "" {
				continue
			}
			notes := new([]string)
			walNotes = append(walNotes, notes)
			sources = append(sources, func(send func(SalvagedMsg) error) error {
				walMsgs := func(f func(file string, off int64, term, index uint64, sm *raftlog.StreamMsg) error) error {
					if rp := gt.wals[dir]; rp != nil {
						return load.WALMessagesKept(b.FS, dir, group, rp, notes, f)
					}
					return load.WALMessages(b.FS, dir, group, notes, f)
				}
				return walMsgs(func(file string, off int64, term, index uint64, sm *raftlog.StreamMsg) error {
					if covered(sm.Seq()) {
						return nil
					}
					return send(SalvagedMsg{Seq: sm.Seq(), Subject: sm.Subject, Header: clone(sm.Header), Data: clone(sm.Data),
						TS: sm.TS, Server: srv.Name, File: file, Offset: off, From: FromRaftWAL, Term: term, Index: index,
						Uncommitted: index > gt.agreed})
				})
			})
		}
	}
	dedup := newRecentDigests(recentSeqs)
	last, started := uint64(0), false
	leftOut := map[string]int{} // why -> index in out.LeftOut
	err := mergeSources(sources, func(msg *SalvagedMsg) error {
		for i := range removals {
			if r := &removals[i]; r.takes(msg.Seq, msg.Subject) {
				j, ok := leftOut[r.Why]
				if !ok {
					j = len(out.LeftOut)
					leftOut[r.Why] = j
					out.LeftOut = append(out.LeftOut, SalvageLeftOut{Why: r.Why})
				}
				out.LeftOut[j].Seqs.Add(msg.Seq)
				return nil
			}
		}
		fresh, conflict := dedup.add(msg.Seq, digestMsg(msg.Subject, msg.Header, msg.Data))
		if !fresh {
			return nil
		}
		if conflict {
			out.Conflicts++
		}
		if started && msg.Seq < last {
			out.OutOfOrder++
		} else {
			last, started = msg.Seq, true
		}
		out.Written++
		if msg.Uncommitted {
			out.Uncommitted++
		}
		return emit(msg)
	})
	for _, n := range unreadable {
		out.Unreadable += *n
	}
	for _, ns := range walNotes {
		out.Notes = append(out.Notes, *ns...)
	}
	if out.OutOfOrder > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d message(s) found after higher sequences (a raft WAL holding entries out of order) are written where found, not in sequence order", out.OutOfOrder))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errSalvageStopped tells a source the merge needs nothing more.
var errSalvageStopped = errors.New("salvage stopped")

// mergeSources runs every source at once and calls emit with their
// messages, lowest sequence first, ties in source order (a source's own
// order kept): a k-way merge holding one message per source, plus a
// channel slot. The first error, of a source or of emit, stops the rest.
func mergeSources(sources []salvageSource, emit func(*SalvagedMsg) error) error {
	type feed struct {
		ch  chan SalvagedMsg
		err error
	}
	done := make(chan struct{})
	feeds := make([]*feed, len(sources))
	var wg sync.WaitGroup
	for i, src := range sources {
		fd := &feed{ch: make(chan SalvagedMsg, 1)}
		feeds[i] = fd
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(fd.ch)
			fd.err = src(func(m SalvagedMsg) error {
				select {
				case fd.ch <- m:
					return nil
				case <-done:
					return errSalvageStopped
				}
			})
		}()
	}
	stop := func(err error) error {
		close(done)
		for _, fd := range feeds { // unblock senders, let every source return
			for range fd.ch {
			}
		}
		wg.Wait()
		return err
	}
	h := &salvageHeap{}
	// next takes source i's next message into the heap; a source that has
	// ended reports its error (written before its channel closed).
	next := func(i int) error {
		m, ok := <-feeds[i].ch
		if !ok {
			return feeds[i].err
		}
		heap.Push(h, salvageHead{m, i})
		return nil
	}
	for i := range feeds {
		if err := next(i); err != nil {
			return stop(err)
		}
	}
	for h.Len() > 0 {
		top := heap.Pop(h).(salvageHead)
		if err := emit(&top.msg); err != nil {
			return stop(err)
		}
		if err := next(top.src); err != nil {
			return stop(err)
		}
	}
	wg.Wait()
	return nil
}

type salvageHead struct {
	msg SalvagedMsg
	src int
}

type salvageHeap []salvageHead

func (h salvageHeap) Len() int { return len(h) }
func (h salvageHeap) Less(i, j int) bool {
	if h[i].msg.Seq != h[j].msg.Seq {
		return h[i].msg.Seq < h[j].msg.Seq
	}
	return h[i].src < h[j].src
}
func (h salvageHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *salvageHeap) Push(x any)   { *h = append(*h, x.(salvageHead)) }
func (h *salvageHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// recentSeqs bounds the sequences whose content digests are remembered to
// drop a copy's duplicate: merged sources give a sequence's copies one
// after another, so only messages found out of order need more than one.
const recentSeqs = 1 << 16

// recentDigests remembers the content digests of the last n sequences seen.
type recentDigests struct {
	n     int
	byseq map[uint64][]uint64
	order []uint64 // ring of the sequences in byseq, oldest at next
	next  int
}

func newRecentDigests(n int) *recentDigests {
	return &recentDigests{n: n, byseq: map[uint64][]uint64{}}
}

// add records digest d for seq: fresh says it was not seen for seq,
// conflict that seq was seen with other content.
func (r *recentDigests) add(seq, d uint64) (fresh, conflict bool) {
	ds, ok := r.byseq[seq]
	if slices.Contains(ds, d) {
		return false, false
	}
	if !ok {
		if len(r.order) < r.n {
			r.order = append(r.order, seq)
		} else {
			delete(r.byseq, r.order[r.next])
			r.order[r.next] = seq
			r.next = (r.next + 1) % r.n
		}
	}
	r.byseq[seq] = append(ds, d)
	return true, len(ds) > 0
}

// blockMessages calls f with every message of the stream folder dir whose
// sequence is in live (its state: tombstones, index.db deletes and limits
// applied, readCopyTruth), records failing their checksum left out but the
// ones after them read, and returns how many records failed their checksum.
func blockMessages(fsys fs.FS, dir, name string, live seqset.Set, f func(file string, r *storeparse.Record) error) (int, error) {
	bad := 0
	_, err := storeparse.ScanStream(fsys, dir, storeparse.ScanOptions{Name: name, SkipConsumers: true,
		Visit: func(blk storeparse.BlockInfo, r *storeparse.Record) error {
			switch {
			case r.Tombstone || r.Erased:
				return nil
			case !r.ChecksumOK:
				bad++
				return nil
			case !live.Contains(r.Seq):
				return nil
			}
			return f(blk.File, r)
		}})
	return bad, err
}

// groupDir is the folder of raft group g in srv's store, "" if absent.
func groupDir(b *bundle.Bundle, srv *model.Server, g string) string {
	for _, st := range b.Stores {
		if st.Dir == srv.StoreDir && st.SysAccount != "" {
			d := path.Join(st.Dir, st.SysAccount, "_js_", g)
			if _, err := fs.Stat(b.FS, d); err == nil {
				return d
			}
		}
	}
	return ""
}

func digestMsg(subject string, header, data []byte) uint64 {
	h := fnv.New64a()
	h.Write([]byte(subject))
	h.Write([]byte{0})
	h.Write(header)
	h.Write([]byte{0})
	h.Write(data)
	return h.Sum64()
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Extract opens the bundle at path read-only, loads it and salvages one
// stream (SalvageStream); keys open stores encrypted at rest, as for
// analyze (Options.Keys).
func Extract(path string, lim bundle.Limits, keys []string, opts SalvageOptions, emit func(*SalvagedMsg) error) (*Salvage, error) {
	b, err := bundle.Open(path, lim)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	m := LoadWith(b, Options{Keys: keys})
	if opts.Server != "" && m.Server(opts.Server) == nil {
		var names []string
		for _, s := range m.Servers {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("no server %q in the bundle (servers: %s)", opts.Server, strings.Join(names, ", "))
	}
	if len(keys) > 0 {
		// The messages are read through the same decrypting view Load used.
		defer load.Unseal(b, keys)()
	}
	return SalvageStream(b, m, opts, emit)
}
