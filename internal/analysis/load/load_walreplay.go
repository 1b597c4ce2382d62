package load

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

// walMessages calls f with every stream message (ops streamMsg and
// compressedStreamMsg, alone or inside a batch) of the raft WAL in dir, in
// WAL order, except those a later entry of the same WAL deletes (ops
// deleteMsg, deleteRange) or purges (purgeStream, with its subject filter and
// sequence; a purge keeping the last N is not replayed, said in notes). Two
// passes: the first notes the removals, the second streams the messages, so
// no message is held. off is the record's offset in file. The message's
// slices are valid only during f.
func WALMessages(fsys fs.FS, dir, group string, notes *[]string, f func(file string, off int64, term, index uint64, m *raftlog.StreamMsg) error) error {
	if _, err := fs.Stat(fsys, path.Join(dir, "msgs")); err != nil {
		return nil
	}
	rp, err := WALRemovals(fsys, dir, group)
	if err != nil {
		return err
	}
	return WALMessagesKept(fsys, dir, group, rp, notes, f)
}

// WALMessagesKept is WALMessages with the WAL's removals already read
// (WALRemovals of the same dir and group).
func WALMessagesKept(fsys fs.FS, dir, group string, rp *WALReplay, notes *[]string, f func(file string, off int64, term, index uint64, m *raftlog.StreamMsg) error) error {
	if rp.unapplied > 0 && notes != nil {
		*notes = append(*notes, fmt.Sprintf("%s: %d purge(s) with keep or an unreadable request not replayed: messages they removed may be written", dir, rp.unapplied))
	}
	second := &WALReplay{} // numbers the ops again
	_, err := WALRecords(fsys, dir, group, func(rec *raftlog.WALRecord) error {
		return second.ops(rec, func(n int, op *raftlog.Op) error {
			if op.Msg == nil || rp.removed(n, op.Msg.Seq(), op.Msg.Subject) {
				return nil
			}
			return f(rec.File, rec.Offset, rec.Entry.Term, rec.Entry.Index(), op.Msg)
		})
	})
	return err
}

// WALRemovals reads the removals (deletes, delete ranges, purges) the raft
// WAL of stream group group in dir holds, and nothing else of it.
func WALRemovals(fsys fs.FS, dir, group string) (*WALReplay, error) {
	rp := &WALReplay{}
	_, err := WALRecords(fsys, dir, group, func(rec *raftlog.WALRecord) error {
		rp.ops(rec, func(at int, op *raftlog.Op) error { rp.note(at, op); return nil })
		return nil
	})
	return rp, err
}

// Removals counts the removals the WAL holds (purges keeping the last N
// and unreadable requests apart).
func (rp *WALReplay) Removals() int { return len(rp.removals) }

// RemovedSeqs are the sequences the WAL's deletes and unfiltered purges
// remove, wherever in the WAL the messages are (a sequence is never used
// twice: a removal takes only messages stored before it); RemovesFiltered says whether one of
// its purges by subject takes seq on subject: together, every removal,
// without a pass over every removal for each message.
func (rp *WALReplay) RemovedSeqs() seqset.Set {
	var out seqset.Set
	for _, r := range rp.removals {
		if r.filter == "" {
			out.AddRange(max(r.first, 1), r.last)
		}
	}
	return out
}

// RemovesFiltered: see RemovedSeqs.
func (rp *WALReplay) RemovesFiltered(seq uint64, subject string) bool {
	for _, r := range rp.removals {
		if r.filter != "" && seq >= r.first && seq <= r.last && subjectMatches(r.filter, subject) {
			return true
		}
	}
	return false
}

// walReplay replays the removals of a stream group's raft WAL on the
// messages it stores. Ops are numbered in WAL order (every op that decodes,
// of records whose checksum holds, those of an append entry cut short
// included); a removal applies to the messages before it.
type WALReplay struct {
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
var MaxReplayMsgs = 1 << 20

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
func (rp *WALReplay) ops(rec *raftlog.WALRecord, f func(at int, op *raftlog.Op) error) error {
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
func (rp *WALReplay) note(at int, op *raftlog.Op) {
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
func (rp *WALReplay) removed(at int, seq uint64, subject string) bool {
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
func (rp *WALReplay) Record(rec *raftlog.WALRecord) {
	rp.ops(rec, func(at int, op *raftlog.Op) error {
		rp.note(at, op)
		if op.Msg == nil || rp.overflow {
			return nil
		}
		if len(rp.msgs) >= MaxReplayMsgs {
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
func (rp *WALReplay) keptValues() []walValue {
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
func (rp *WALReplay) Kept() seqset.Set {
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
		rs = ws.walMsgs.Kept()
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
	for _, g := range l.m.Groups {
		if by := l.walMessages[g.Name]; len(by) > 0 {
			g.WALSeqs = by
		}
	}
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

// replayAgain reads a stream group's WAL a second time, for a WAL too long
// for the first pass to hold its messages (maxReplayMsgs): the messages no
// removal takes, and those holding a looked-for value, streamed with none
// held.
func replayAgain(fsys fs.FS, dir, group string, ws *walState) {
	var kept seqset.Set
	var values []walValue
	rp := ws.walMsgs
	err := WALMessages(fsys, dir, group, nil, func(_ string, _ int64, _, _ uint64, sm *raftlog.StreamMsg) error {
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
