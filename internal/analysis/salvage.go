package analysis

// Salvage: every message of a stream the bundle still holds, for
// republishing (jsforensics extract), from the stream's blocks on every
// server (records past a bad one included) and from its raft group's WAL
// (stream messages replicated but maybe no longer in any block). The same
// WAL reading gives the acked-lost and store-corrupt remedies the sequences
// an extract would find there (Stream.WALSeqs).

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

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
	Notes      []string
}

// A salvageSource reads one copy's blocks or one server's WAL of the
// stream's group, calling send with each message in the order it holds
// them (ascending sequences, but for damage).
type salvageSource func(send func(SalvagedMsg) error) error

// SalvageStream opens nothing itself: it reads b, using the model m (Load(b))
// to know where the stream's copies and raft group are, and calls emit with
// every message by sequence; the same sequence twice only when copies
// differ, a copy before the WALs, and copies and servers in the model's
// order. Each source is read once and streamed: memory does not grow with
// the stream (a merge over one message per source).
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
			bad := new(int)
			unreadable = append(unreadable, bad)
			server := m.Name(c.Server)
			sources = append(sources, func(send func(SalvagedMsg) error) error {
				n, err := blockMessages(b.FS, c.Path, st.Name, func(file string, r *storeparse.Record) error {
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
				return walMessages(b.FS, dir, group, notes, func(file string, off int64, term, index uint64, sm *raftlog.StreamMsg) error {
					if covered(sm.Seq()) {
						return nil
					}
					return send(SalvagedMsg{Seq: sm.Seq(), Subject: sm.Subject, Header: clone(sm.Header), Data: clone(sm.Data),
						TS: sm.TS, Server: srv.Name, File: file, Offset: off, From: FromRaftWAL, Term: term, Index: index})
				})
			})
		}
	}
	dedup := newRecentDigests(recentSeqs)
	last, started := uint64(0), false
	err := mergeSources(sources, func(msg *SalvagedMsg) error {
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

// blockMessages calls f with every live message of the stream folder dir
// (counted in its state: tombstones, index.db deletes and limits applied,
// records failing their checksum left out but the ones after them read) and
// returns how many records failed their checksum.
func blockMessages(fsys fs.FS, dir, name string, f func(file string, r *storeparse.Record) error) (int, error) {
	scan, err := storeparse.ScanStream(fsys, dir, storeparse.ScanOptions{Name: name, SkipConsumers: true})
	if err != nil {
		return 0, err
	}
	var live seqset.Set
	for r := range scan.Live().Ranges() {
		live = append(live, r) // ascending, apart: a Set as it is
	}
	bad := 0
	_, err = storeparse.ScanStream(fsys, dir, storeparse.ScanOptions{Name: name, SkipConsumers: true,
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

// walMessages calls f with every stream message (ops streamMsg and
// compressedStreamMsg, alone or inside a batch) of the raft WAL in dir, in
// WAL order, except those a later entry of the same WAL deletes (ops
// deleteMsg, deleteRange) or purges (purgeStream, with its subject filter and
// sequence; a purge keeping the last N is not replayed, said in notes). Two
// passes: the first notes the removals, the second streams the messages, so
// no message is held. off is the record's offset in file. The message's
// slices are valid only during f.
func walMessages(fsys fs.FS, dir, group string, notes *[]string, f func(file string, off int64, term, index uint64, m *raftlog.StreamMsg) error) error {
	if _, err := fs.Stat(fsys, path.Join(dir, "msgs")); err != nil {
		return nil
	}
	rp := &walReplay{}
	if _, err := walRecords(fsys, dir, group, func(rec *raftlog.WALRecord) error {
		rp.ops(rec, func(at int, op *raftlog.Op) error { rp.note(at, op); return nil })
		return nil
	}); err != nil {
		return err
	}
	if rp.unapplied > 0 && notes != nil {
		*notes = append(*notes, fmt.Sprintf("%s: %d purge(s) with keep or an unreadable request not replayed: messages they removed may be written", dir, rp.unapplied))
	}
	second := &walReplay{} // numbers the ops again
	_, err := walRecords(fsys, dir, group, func(rec *raftlog.WALRecord) error {
		return second.ops(rec, func(n int, op *raftlog.Op) error {
			if op.Msg == nil || rp.removed(n, op.Msg.Seq(), op.Msg.Subject) {
				return nil
			}
			return f(rec.File, rec.Offset, rec.Entry.Term, rec.Entry.Index(), op.Msg)
		})
	})
	return err
}

// walReplay replays the removals of a stream group's raft WAL on the
// messages it stores. Ops are numbered in WAL order (every op that decodes,
// of records whose checksum holds, those of an append entry cut short
// included); a removal applies to the messages before it.
type walReplay struct {
	at        int // ops numbered so far
	removals  []walRemoval
	unapplied int // purges with keep or an unreadable request
	// msgs: each stream message, kept by the raft loader's one pass
	// (record) for a replay without reading the WAL again; subjects
	// interned in names.
	msgs  []walMsg
	names []string
	index map[string]uint32
	// values: the payloads looked for (a Jepsen history's values, nil for
	// none); hits the messages, by index in msgs, that hold one.
	values map[string]bool
	hits   map[int]string
	// overflow: the WAL held more than maxReplayMsgs messages, and msgs,
	// names and hits were let go.
	overflow bool
	// again, againValues: what replayAgain read after an overflow.
	again       seqset.Set
	againValues []walValue
}

// maxReplayMsgs bounds the messages the raft loader's pass keeps of one
// stream group's WAL (about 16 bytes each, and a subject per distinct
// subject); past it, the WAL is read again where its messages are needed.
var maxReplayMsgs = 1 << 20

type walRemoval struct {
	at          int // op number
	first, last uint64
	filter      string // subject filter of a purge ("" = all)
}

type walMsg struct {
	at      int
	seq     uint64
	subject uint32 // in walReplay.names
}

// ops numbers the decodable ops of rec and calls f with each.
func (rp *walReplay) ops(rec *raftlog.WALRecord, f func(at int, op *raftlog.Op) error) error {
	for i := range rec.Ops {
		if rec.Ops[i].Err != nil {
			continue
		}
		rp.at++
		if err := f(rp.at, rec.Ops[i].Op); err != nil {
			return err
		}
	}
	return nil
}

// note records the removal op (number at) makes, if any.
func (rp *walReplay) note(at int, op *raftlog.Op) {
	switch {
	case op.Delete != nil:
		rp.removals = append(rp.removals, walRemoval{at: at, first: op.Delete.Seq, last: op.Delete.Seq})
	case op.DeleteRange != nil && op.DeleteRange.Num > 0:
		rp.removals = append(rp.removals, walRemoval{at: at, first: op.DeleteRange.First, last: op.DeleteRange.First + op.DeleteRange.Num - 1})
	case op.Purge != nil:
		// JSApiStreamPurgeRequest: seq purges up to but not including
		// it, filter the subjects; keep (the last N) is not replayed.
		var req struct {
			Seq    uint64 `json:"seq"`
			Filter string `json:"filter"`
			Keep   uint64 `json:"keep"`
		}
		if len(op.Purge.Request) > 0 && json.Unmarshal(op.Purge.Request, &req) != nil || req.Keep > 0 {
			rp.unapplied++
			return
		}
		last := op.Purge.LastSeq
		if req.Seq > 0 {
			last = req.Seq - 1
		}
		rp.removals = append(rp.removals, walRemoval{at: at, first: 0, last: last, filter: req.Filter})
	}
}

// removed says whether a removal after op number at takes the message seq
// on subject.
func (rp *walReplay) removed(at int, seq uint64, subject string) bool {
	// removals are in WAL order: only those after this entry apply.
	for i := sort.Search(len(rp.removals), func(i int) bool { return rp.removals[i].at > at }); i < len(rp.removals); i++ {
		r := rp.removals[i]
		if seq >= r.first && seq <= r.last && (r.filter == "" || subjectMatches(r.filter, subject)) {
			return true
		}
	}
	return false
}

// record is the raft loader's one pass over a stream group's WAL: the
// removals, and each message's sequence and subject.
func (rp *walReplay) record(rec *raftlog.WALRecord) {
	rp.ops(rec, func(at int, op *raftlog.Op) error {
		rp.note(at, op)
		if op.Msg == nil || rp.overflow {
			return nil
		}
		if len(rp.msgs) >= maxReplayMsgs {
			// Held no further: a WAL this long is read again where a
			// replay needs it (keepWALMessages), memory stays bounded.
			rp.overflow = true
			rp.msgs, rp.names, rp.index, rp.hits = nil, nil, nil, nil
			return nil
		}
		id, ok := rp.index[op.Msg.Subject]
		if !ok {
			if rp.index == nil {
				rp.index = map[string]uint32{}
			}
			id = uint32(len(rp.names))
			rp.names = append(rp.names, op.Msg.Subject)
			rp.index[op.Msg.Subject] = id
		}
		if rp.values[string(op.Msg.Data)] {
			if rp.hits == nil {
				rp.hits = map[int]string{}
			}
			rp.hits[len(rp.msgs)] = string(op.Msg.Data)
		}
		rp.msgs = append(rp.msgs, walMsg{at: at, seq: op.Msg.Seq(), subject: id})
		return nil
	})
}

// keptValues are the messages holding a looked-for payload (values) that
// no later removal takes, in WAL order.
func (rp *walReplay) keptValues() []walValue {
	if rp == nil {
		return nil
	}
	if rp.overflow {
		return rp.againValues
	}
	var out []walValue
	for i, m := range rp.msgs {
		if v, ok := rp.hits[i]; ok && !rp.removed(m.at, m.seq, rp.names[m.subject]) {
			out = append(out, walValue{seq: m.seq, value: v})
		}
	}
	return out
}

// walValue is one WAL message holding a looked-for payload.
type walValue struct {
	seq   uint64
	value string
}

// kept is the sequences of the messages recorded that no later removal
// takes, as walMessages streams them.
func (rp *walReplay) kept() seqset.Set {
	if rp.overflow {
		return rp.again
	}
	var seqs seqset.Set
	for _, m := range rp.msgs {
		if !rp.removed(m.at, m.seq, rp.names[m.subject]) {
			seqs.Add(m.seq)
		}
	}
	return seqs
}

// subjectMatches says whether subject matches filter, with the NATS
// wildcards: `*` one token, `>` one or more trailing tokens.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		switch {
		case f == ">":
			return len(st) > i
		case i >= len(st):
			return false
		case f != "*" && f != st[i]:
			return false
		}
	}
	return len(ft) == len(st)
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

// walMessagesKept is, for the WAL of stream group group in dir, the
// sequences of the stream messages it still holds: those it stores minus
// those it later deletes or purges, from the raft loader's one pass
// (walState.streamOp), those of them past the snapshot (pending), and the
// messages holding a looked-for value. A removal is taken to follow the
// messages it removes, as the server writes them; a purge that filters
// subjects or keeps the last N needs the messages themselves, which the
// same pass kept (walState.walMsgs): the WAL is read again only past
// maxReplayMsgs (replayAgain).
func walMessagesKept(fsys fs.FS, dir, group string, ws *walState) (msgs, pending []report.Range, values []walValue) {
	if ws.walMsgs != nil && ws.walMsgs.overflow && (ws.replay || ws.walMsgs.values != nil) {
		replayAgain(fsys, dir, group, ws)
	}
	values = ws.walMsgs.keptValues()
	var rs seqset.Set
	if ws.replay {
		rs = ws.walMsgs.kept()
	} else {
		rs = ws.msgSeqs.Subtract(ws.removed)
		pending = ws.pendSeqs.Subtract(ws.removed)
	}
	return rs, pending, values
}

// keepWALMessages keeps, for server srv's WAL of stream group group, what
// walMessagesKept found of its messages.
func (l *loader) keepWALMessages(srv *model.Server, group string, wr *walRead) {
	if vs := wr.values; len(vs) > 0 {
		if l.walValues == nil {
			l.walValues = map[string]map[model.ServerID][]walValue{}
		}
		if l.walValues[group] == nil {
			l.walValues[group] = map[model.ServerID][]walValue{}
		}
		l.walValues[group][srv.ID] = vs
	}
	if pend := wr.pending; len(pend) > 0 {
		if l.walPending == nil {
			l.walPending = map[string]map[model.ServerID][]report.Range{}
		}
		if l.walPending[group] == nil {
			l.walPending[group] = map[model.ServerID][]report.Range{}
		}
		l.walPending[group][srv.ID] = pend
	}
	rs := wr.msgs
	if len(rs) == 0 {
		return
	}
	if l.walMessages == nil {
		l.walMessages = map[string]map[model.ServerID][]report.Range{}
	}
	if l.walMessages[group] == nil {
		l.walMessages[group] = map[model.ServerID][]report.Range{}
	}
	l.walMessages[group][srv.ID] = rs
}

// walSeqs records, for every stream with a raft group, the sequences of the
// stream messages each server's WAL of that group still holds
// (keepWALMessages): what an extract finds there when the blocks lost them.
func (l *loader) walSeqs() {
	for _, st := range l.m.Streams {
		if by := l.walMessages[st.Group]; st.Group != "" && len(by) > 0 {
			st.WALSeqs = by
		}
		if by := l.walPending[st.Group]; st.Group != "" && len(by) > 0 {
			st.WALPending = by
			if rs := st.PendingBeyondBlocks(l.m); len(rs) > 0 {
				l.note("%s > %s: sequences %s, which the blocks of some copies lack, are in the raft WAL of group %s past its snapshot on %s: the servers apply them at their next start (pending, not lost)",
					st.Account, st.Name, model.RangesText(rs), st.Group, strings.Join(pendingHolders(l.m, st, rs), ", "))
			}
		}
	}
}

// pendingHolders names the servers whose WAL holds any of rs past the snapshot.
func pendingHolders(m *model.Model, st *model.Stream, rs []report.Range) []string {
	var out []string
	for _, srv := range model.ServersOf(m, st.WALPending) {
		if len(seqset.Set(st.WALPending[srv]).Intersect(rs)) > 0 {
			out = append(out, m.Name(srv))
		}
	}
	return out
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
		defer (&loader{b: b, m: &model.Model{}}).unseal(keys)()
	}
	return SalvageStream(b, m, opts, emit)
}

// replayAgain reads a stream group's WAL a second time, for a WAL too long
// for the first pass to hold its messages (maxReplayMsgs): the messages no
// removal takes, and those holding a looked-for value, streamed with none
// held.
func replayAgain(fsys fs.FS, dir, group string, ws *walState) {
	var kept seqset.Set
	var values []walValue
	rp := ws.walMsgs
	err := walMessages(fsys, dir, group, nil, func(_ string, _ int64, _, _ uint64, sm *raftlog.StreamMsg) error {
		kept.Add(sm.Seq())
		if rp.values[string(sm.Data)] {
			values = append(values, walValue{seq: sm.Seq(), value: string(sm.Data)})
		}
		return nil
	})
	if err != nil {
		return // the raft loader reports damage
	}
	rp.again, rp.againValues = kept, values
}
