package load

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
	"github.com/jsforensics/jsforensics/storeparse"
)

// group returns the model's group named name, creating it.
func (l *loader) group(name string) *model.Group {
	if g := l.findGroup(name); g != nil {
		return g
	}
	g := &model.Group{Name: name, Kind: natsfmt.KindOfGroup(name)}
	l.m.Groups = append(l.m.Groups, g)
	if l.groupIndex == nil {
		l.groupIndex = map[string]*model.Group{}
	}
	l.groupIndex[name] = g
	return g
}

// raft takes every raft group folder of every store as read (the small
// files and snapshot in raftReads, the WAL in wals, by folder) into group
// views and histories, and replays each server's meta state.
func (l *loader) raft(wals map[string]*walRead) {
	for _, st := range l.b.Stores {
		for _, g := range st.Groups {
			if srv := l.storeServer(st); srv != nil && st.SysAccount != "" {
				l.guard(fmt.Sprintf("reading raft group %s of %s", g, srv.Name), func() {
					l.raftGroup(srv, st, g, wals[path.Join(st.Dir, st.SysAccount, "_js_", g)])
				})
			}
		}
	}
	l.assignments()
}

// readWALs reads the WAL of every raft group folder of every clustered
// store, each once, by folder; raft holds the folders' small files and
// snapshots as read (readStores), want the sequences whose store time a
// /raftz answer gave, by group (raftzWant), values the payloads looked for
// (historyValues).
func readWALs(fsys fs.FS, stores []bundle.Store, raft map[string][]*raftRead, want map[string]map[uint64]bool, values map[string]bool, mt *progress.Meter) map[string]*walRead {
	var folders []string
	for _, st := range stores {
		for _, g := range st.Groups {
			folders = append(folders, path.Join(st.Dir, st.SysAccount, "_js_", g))
		}
	}
	plan := mt.Begin(progress.StageRaft, fsys, folders)
	var todo []*raftRead
	var at []int // beside todo: the group folder's place in folders
	base := 0
	for _, st := range stores {
		for j, rd := range raft[st.Dir] {
			if rd.crash == nil && base+j < len(folders) {
				todo = append(todo, rd)
				at = append(at, base+j)
			}
		}
		base += len(st.Groups)
	}
	// Group folders whose small files crashed are not read again: counted
	// done here.
	counted := make([]bool, len(folders))
	for _, i := range at {
		counted[i] = true
	}
	for i, c := range counted {
		if !c {
			plan.Done(i)
		}
	}
	reads := make([]*walRead, len(todo))
	ForEach(len(todo), func(i int) {
		rd := todo[i]
		if crash := Crashed(func() { reads[i] = readWAL(fsys, rd.rec.Dir, rd, want[rd.rec.Group], values) }); crash != nil {
			reads[i] = &walRead{crash: crash}
		}
		plan.Done(at[i])
	})
	out := map[string]*walRead{}
	for i, rd := range todo {
		out[rd.rec.Dir] = reads[i]
	}
	return out
}

// storeServer finds the server a store was attributed to.
func (l *loader) storeServer(st bundle.Store) *model.Server {
	for _, s := range l.m.Servers {
		if s.StoreDir == st.Dir {
			return s
		}
	}
	return nil
}

// walState is what one WAL pass collects.
type walState struct {
	metaSnap    []*raftlog.StreamAssignment
	metaSnapIdx uint64
	snapTerm    uint64 // the newest snapshot's term
	ops         []*raftlog.Op
	maxCommit   uint64
	lastIndex   uint64
	lastTerm    uint64 // the term of the entry at lastIndex
	maxTerm     uint64 // the highest term of the snapshot and entries read
	// summary: the WAL as /raftz reports it (WALSummary), nil unread.
	summary *model.WALSummary
	// snapCorrupt: the meta snapshot fails its checksum (never applied);
	// afterSnap counts the WAL's append entries past its index.
	snapCorrupt bool
	afterSnap   int
	// fileSnap: the newest snapshot file's term and index (from its
	// header, even when it fails its checksum) and, when intact and
	// decoded, what it alone assigns (before any WAL entry).
	fileSnapTerm, fileSnapIdx uint64
	fileSnapAssign            []*raftlog.StreamAssignment
	fileSnapOK                bool
	// snapPeers: the peer state of the newest snapshot, when its checksum
	// holds (snapFile).
	snapPeers *raftlog.PeerState
	snapFile  string
	// peersAfterSnap: the WAL changes the peer set after the snapshot (a
	// peer state, add or remove entry past its index), so the start set is
	// not the snapshot's alone.
	peersAfterSnap bool
	// A stream group's WAL, read in the same pass: the sequences of the
	// messages it stores and of those it removes (deletes, purges), as
	// ranges; replay when a purge needs subjects (walSeqs), from walMsgs:
	// the same pass's removals and messages in WAL order.
	msgSeqs, removed seqset.Set
	replay           bool
	walMsgs          *WALReplay
	// pendSeqs: the sequences of messages in entries past the group's
	// newest snapshot (walPending).
	pendSeqs seqset.Set
	// peerAdded: per peer id of an add-peer or remove-peer entry in the
	// WAL, whether the last such entry adds it (trackedPeers).
	peerAdded map[string]bool
}

// raftGroup takes one raft group folder of srv's store as read: its
// small files and snapshot (raftReads) and its WAL (wr, nil when not read).
func (l *loader) raftGroup(srv *model.Server, st bundle.Store, name string, wr *walRead) {
	rd := l.raftReadOf(st, name)
	switch {
	case rd == nil:
		return
	case rd.crash != nil:
		l.note("%s", crashNote(fmt.Sprintf("reading raft group %s of %s", name, srv.Name), rd.crash))
		return
	case wr != nil && wr.crash != nil:
		l.note("%s", crashNote(fmt.Sprintf("reading raft group %s of %s", name, srv.Name), wr.crash))
		return
	}
	rec := rd.rec
	rec.Server = srv.ID
	g := l.group(name)
	view := model.View{GroupView: model.GroupView{Server: srv.ID, Source: "peers.idx"}}
	peersDamage := -1
	if rd.peersErr != nil {
		peersDamage = len(l.m.Corruptions)
		l.raftCorrupt(srv, name, rd.peersErr)
	}
	if p := rec.Peers; p != nil {
		ps := p.State
		view.ClusterSize = int(ps.ClusterSize)
		view.Quorum = ps.Quorum()
		view.Peers = model.SortedCopy(ps.Peers)
		view.File, view.PeerOffsets = p.File, map[string]int64{}
		for i, id := range ps.Peers {
			view.PeerOffsets[id] = ps.PeerOffset(i)
		}
	}
	ws := walStart(rd)
	if wr != nil {
		ws = wr.ws
	}
	l.snapshot(srv, g, rd)
	l.wal(srv, g, wr)
	if peersDamage >= 0 && ws.snapPeers != nil && !ws.peersAfterSnap && l.m.Corruptions[peersDamage].Structure == natsfmt.StructPeersIdx {
		l.m.Corruptions[peersDamage].SnapshotPeers = ws.snapFile
	}
	if rec.Peers != nil {
		view.Tracked = trackedPeers(view.Peers, srv.PeerID, ws.peerAdded)
		view.Peers = model.SortedCopy(append(view.Peers, view.Tracked...))
	}
	if sp := ws.snapPeers; rec.Peers != nil && sp != nil && !ws.peersAfterSnap {
		peers := model.SortedCopy(sp.Peers)
		if int(sp.ClusterSize) != view.ClusterSize || !slices.Equal(peers, view.Peers) {
			view.StartPeers, view.StartSize, view.StartFile = peers, int(sp.ClusterSize), ws.snapFile
		}
	}
	if rd.tavErr != nil {
		l.raftCorrupt(srv, name, rd.tavErr)
	}
	if tv := rec.TermVote; tv != nil {
		view.Term, view.VotedFor, view.VoteFile = tv.TermVote.Term, tv.TermVote.Vote, tv.File
	}
	// The server starts at the higher of tav.idx's term and its entries'
	// (raft.go: replaying the WAL through processAppendEntry takes each
	// entry's term), and tav.idx may lag them (tavlag-v2.10.22: term 0
	// under a term-1 snapshot).
	if view.Term > 0 || rec.TermVote != nil {
		view.Term = max(view.Term, ws.maxTerm)
	}
	if rd.commitErr != nil {
		l.raftCorrupt(srv, name, rd.commitErr)
	}
	rec.MaxTerm, rec.PeersAfterSnap, rec.WAL = ws.maxTerm, ws.peersAfterSnap, ws.summary
	l.m.RaftRecords = append(l.m.RaftRecords, &rec)
	view.Applied = ws.metaSnapIdx
	view.Commit = ws.maxCommit
	if rec.Peers != nil || view.Term > 0 {
		g.Views = append(g.Views, view)
	}
	if g.Kind == natsfmt.GroupMeta {
		ms := &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{}}
		for _, a := range raftlog.Replay(ws.metaSnap, ws.ops) {
			as := &model.Assignment{Account: a.Account, Stream: a.Name, Group: a.Group, Peers: a.Peers, Replicas: a.Replicas, Consumers: map[string][]string{},
				ConsumerAssignments: map[string]model.ConsumerAssignment{}}
			if a.Source != nil {
				as.Config = a.Source.ConfigJSON
			}
			for _, c := range a.Consumers {
				as.Consumers[c.Name] = c.Peers
				if c.Source != nil && len(c.Source.ConfigJSON) > 0 {
					if as.ConsumerConfigs == nil {
						as.ConsumerConfigs = map[string]json.RawMessage{}
					}
					as.ConsumerConfigs[c.Name] = c.Source.ConfigJSON
				}
				as.ConsumerAssignments[c.Name] = model.ConsumerAssignment{Group: c.Group, Memory: c.Memory, Created: c.Created}
			}
			ms.Streams[model.AssetKey{Account: a.Account, Stream: a.Name}] = as
		}
		ms.SnapshotTerm, ms.SnapshotIndex = ws.fileSnapTerm, ws.fileSnapIdx
		if ws.fileSnapOK {
			ms.SnapshotAssigns = map[model.AssetKey]bool{}
			for _, a := range ws.fileSnapAssign {
				ms.SnapshotAssigns[model.AssetKey{Account: a.Account(), Stream: a.Config.Name}] = true
			}
		}
		if ws.snapCorrupt {
			ms.Source = "the meta WAL after a corrupt snapshot"
			ms.SnapshotCorrupt, ms.AfterSnapshot = true, ws.afterSnap
		}
		if ws.metaSnap != nil || len(ws.ops) > 0 || rec.Peers != nil || ws.snapCorrupt {
			srv.Meta = ms
		}
	}
}

// walStart is the state a group's WAL pass starts from: its newest
// snapshot's index, term and peer state and, for _meta_, assignments.
func walStart(rd *raftRead) *walState {
	ws := &walState{}
	snap, err := rd.snap, rd.snapErr
	if !rd.snapFound || snap == nil {
		return ws
	}
	meta := rd.rec.Kind == natsfmt.GroupMeta
	if meta {
		ws.snapCorrupt = !snap.ChecksumOK
	}
	ws.maxTerm = snap.Term
	if err == nil && snap.ChecksumOK && snap.PeerState != nil && len(snap.PeerState.Peers) > 0 {
		ws.snapPeers, ws.snapFile = snap.PeerState, rd.rec.Snapshot.File
	}
	ws.metaSnapIdx, ws.snapTerm = snap.Index, snap.Term
	ws.fileSnapIdx, ws.fileSnapTerm = snap.Index, snap.Term
	if meta && snap.ChecksumOK && rd.rec.Snapshot.MetaErr == nil {
		ws.metaSnap = rd.rec.Snapshot.MetaAssign
		ws.fileSnapAssign, ws.fileSnapOK = rd.rec.Snapshot.MetaAssign, true
	}
	return ws
}

// trackedPeers are the ids an add-peer entry of the WAL names, its last
// peer entry for them, that peers.idx does not list. A server tracks such a
// peer as soon as the entry arrives and again when it replays its WAL at
// start, and lists it in /raftz, but counts it in its cluster size (and
// writes it to peers.idx) only once the entry commits (v2.11.17 raft.go
// processAppendEntry "Track directly, but wait for commit to be official",
// applyCommit addPeer; rename-v2.11.17: js-2's /raftz listed js-1's new id
// at size 3, "known": false, its peers.idx did not). The server's own id
// (self) so added is left out: it is then no member in its own view
// (rename-v2.11.17's js-1: size 3, the three old ids).
func trackedPeers(listed []string, self string, added map[string]bool) []string {
	var out []string
	for id, add := range added {
		if add && id != self && !slices.Contains(listed, id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// snapshot takes in the newest snapshot of a group as read: its history
// event and what it could not decode (walStart takes its index, peer state
// and assignments).
func (l *loader) snapshot(srv *model.Server, g *model.Group, rd *raftRead) {
	if !rd.snapFound {
		return
	}
	snap, err := rd.snap, rd.snapErr
	if snap == nil {
		if err != nil {
			l.raftCorrupt(srv, g.Name, err)
		}
		return
	}
	sr := rd.rec.Snapshot
	snapCorrupt := g.Kind == natsfmt.GroupMeta && !snap.ChecksumOK
	if err != nil && !snapCorrupt {
		l.raftCorrupt(srv, g.Name, err)
	}
	ev := model.HistoryEvent{Term: snap.Term, Index: snap.Index, Event: "peer-state", Server: srv.ID, Source: "snapshot"}
	if snap.PeerState != nil {
		ev.Peers = model.SortedCopy(snap.PeerState.Peers)
	}
	g.History = append(g.History, ev)
	if g.Kind == natsfmt.GroupMeta && snap.ChecksumOK && sr.MetaErr != nil {
		l.raftCorrupt(srv, g.Name, sr.MetaErr)
	}
}

// DecodeWALRecord hands one record that the block framing (storeparse)
// read from a raft WAL block to raftlog's WAL record reader, which places
// the payload in the file and decodes the append entry and its ops: the
// glue between two parsers that import nothing of each other, used by the
// raft loader, salvage and dump wal alike. compressed: the block was
// S2-compressed (offsets count in the decompressed block).
func DecodeWALRecord(file string, r *storeparse.Record, compressed bool) *raftlog.WALRecord {
	f := raftlog.WALFrame{Offset: r.Offset, Len: r.Len, Seq: r.Seq, TS: r.TS, SubjectLen: len(r.Subject),
		HasHeaders: r.HasHeaders, HeaderLen: len(r.Header), Erased: r.Erased, Tombstone: r.Tombstone,
		ChecksumOK: r.ChecksumOK, Compressed: compressed}
	return raftlog.DecodeWALRecord(file, f, r.Data)
}

// walRecords scans the raft WAL in dir (a filestore named after group) and
// calls f with every record whose checksum holds, tombstones and erased
// records left out (the scan counts them). The record's slices are valid
// only during f. Each block is opened once: the first message's timestamp,
// which a scan finds by reading a block again after removals, is not asked
// for.
func WALRecords(fsys fs.FS, dir, group string, f func(*raftlog.WALRecord) error) (*storeparse.StreamScan, error) {
	return storeparse.ScanStream(fsys, dir, storeparse.ScanOptions{Name: group, NoLimits: true, SkipConsumers: true, SkipFirstTS: true,
		Visit: func(blk storeparse.BlockInfo, r *storeparse.Record) error {
			if r.Tombstone || r.Erased || !r.ChecksumOK {
				return nil
			}
			return f(DecodeWALRecord(blk.File, r, false))
		}})
}

// walRead is one group's WAL as its one pass read it: the pass's state
// (started from the snapshot, walStart), and in WAL order what the model
// takes of it.
type walRead struct {
	ws    *walState
	found bool // the group has a WAL (msgs/)
	// history, timeline: the WAL's leader and membership changes (the
	// server is the store's, set when assembling); damage: what it could
	// not decode or a server does not write; removals: the API deletes a
	// meta WAL holds.
	history  []model.HistoryEvent
	timeline []walTimelineEvent
	damage   []error
	removals []walRemovalOp
	// err: the scan failed (nothing past damage is taken); else meta is
	// the WAL filestore's meta.inf metadata and problems the scan's.
	err      error
	dir      string
	hasMeta  bool
	meta     map[string]string
	problems []error
	// A stream group's: the sequences of the messages the WAL still holds,
	// those past the snapshot, and the messages holding a looked-for
	// value (keepWALMessages).
	msgs, pending []report.Range
	values        []walValue
	crash         any // the reader panicked
}

// walTimelineEvent is a dated raft change of a WAL record; text is given
// the server name of a peer id as the model knows it.
type walTimelineEvent struct {
	at         *time.Time
	kind, file string
	text       func(idName func(string) string) string
}

// walRemovalOp is an API delete op of a meta WAL at raft index idx.
type walRemovalOp struct {
	op   *raftlog.Op
	idx  uint64
	file string
}

// readWAL walks the WAL of the group folder dir (a filestore named after
// the group), each record decoded as an append entry by the one WAL record
// reader: the one read of the WAL per analysis (a stream group's replay,
// walReplay, is kept from it). rd is the folder's small files and snapshot
// as read, want the sequences whose store time to keep, values the
// payloads looked for.
func readWAL(fsys fs.FS, dir string, rd *raftRead, want map[uint64]bool, values map[string]bool) *walRead {
	ws := walStart(rd)
	wr := &walRead{ws: ws, dir: dir}
	if !listed(fsys, dir, "msgs") {
		return wr
	}
	wr.found = true
	group, kind := rd.rec.Group, rd.rec.Kind
	var lastTerm uint64
	var lastLeader string
	if kind == natsfmt.GroupStream {
		ws.walMsgs = &WALReplay{values: values}
	}
	damage := func(file string, off int64, s binfmt.Structure, format string, args ...any) {
		wr.damage = append(wr.damage, binfmt.Stamp(binfmt.Errorf(file, off, binfmt.ErrFormat, format, args...), s))
	}
	stamps := map[uint64]int64{}
	scan, err := WALRecords(fsys, dir, group, func(rec *raftlog.WALRecord) error {
		file := rec.File
		if want[rec.Seq] {
			stamps[rec.Seq] = rec.TS
		}
		if ws.walMsgs != nil {
			ws.walMsgs.Record(rec)
		}
		ae := rec.Entry
		if rec.Err != nil {
			wr.damage = append(wr.damage, rec.Err)
			return nil
		}
		idx := ae.Index()
		if rec.IndexMismatch() {
			// dump wal says so too, at the record: its sequence is the raft index.
			damage(file, rec.Offset, natsfmt.StructAppendEntry, "record seq %d holds raft index %d (pindex+1)", rec.Seq, idx)
		}
		if idx >= ws.lastIndex {
			ws.lastIndex, ws.lastTerm = idx, ae.Term
		}
		ws.maxTerm = max(ws.maxTerm, ae.Term)
		ws.maxCommit = max(ws.maxCommit, ae.Commit)
		t := time.Unix(0, rec.TS).UTC()
		tp := &t
		if rec.TS == 0 {
			tp = nil
		}
		if ae.Term != lastTerm || ae.Leader != lastLeader {
			wr.history = append(wr.history, model.HistoryEvent{Time: tp, Term: ae.Term, Index: idx, Event: "leader", Peer: ae.Leader, Source: "wal"})
			leader, term := ae.Leader, ae.Term
			wr.timeline = append(wr.timeline, walTimelineEvent{at: tp, kind: "leader", file: file, text: func(idName func(string) string) string {
				return fmt.Sprintf("raft %s: entries from leader %s in term %d from index %d", group, idName(leader), term, idx)
			}})
			lastTerm, lastLeader = ae.Term, ae.Leader
		}
		compacted := idx <= ws.metaSnapIdx
		if !compacted {
			ws.afterSnap++
		}
		ops := rec.Ops
		for i := range ae.Entries {
			e := &ae.Entries[i]
			var wop *raftlog.WALOp
			if len(ops) > 0 && ops[0].Entry == i {
				wop, ops = &ops[0], ops[1:]
			}
			switch e.Type {
			case raftlog.EntryPeerState:
				ws.peersAfterSnap = ws.peersAfterSnap || !compacted
				ps, err := e.PeerState(file)
				if err == nil {
					wr.history = append(wr.history, model.HistoryEvent{Time: tp, Term: ae.Term, Index: idx, Event: "peer-state", Peers: model.SortedCopy(ps.Peers), Source: "wal"})
					text := fmt.Sprintf("raft %s: peer state at index %d: cluster size %d, peers %s", group, idx, ps.ClusterSize, strings.Join(model.SortedCopy(ps.Peers), " "))
					wr.timeline = append(wr.timeline, walTimelineEvent{at: tp, kind: "peer-state", file: file, text: func(func(string) string) string { return text }})
				}
			case raftlog.EntryAddPeer, raftlog.EntryRemovePeer:
				ws.peersAfterSnap = ws.peersAfterSnap || !compacted
				p, err := e.Peer(file)
				if err == nil {
					ev := "add-peer"
					if e.Type == raftlog.EntryRemovePeer {
						ev = "remove-peer"
					}
					if ws.peerAdded == nil {
						ws.peerAdded = map[string]bool{}
					}
					ws.peerAdded[p] = ev == "add-peer"
					wr.history = append(wr.history, model.HistoryEvent{Time: tp, Term: ae.Term, Index: idx, Event: ev, Peer: p, Source: "wal"})
					kind := map[string]natsfmt.EventKind{"add-peer": natsfmt.EventPeerAdd, "remove-peer": natsfmt.EventPeerRemove}[ev]
					term := ae.Term
					wr.timeline = append(wr.timeline, walTimelineEvent{at: tp, kind: string(kind), file: file, text: func(idName func(string) string) string {
						return fmt.Sprintf("raft %s: %s %s at index %d, term %d", group, ev, idName(p), idx, term)
					}})
				}
			case raftlog.EntrySnapshot, raftlog.EntryOldSnapshot:
				if kind == natsfmt.GroupMeta && !compacted {
					as, err := raftlog.DecodeMetaSnapshot(file, e.DataOffset, e.Data)
					if err == nil {
						ws.metaSnap, ws.ops, ws.metaSnapIdx = as, nil, idx
					}
				}
			case raftlog.EntryNormal:
				if wop == nil {
					continue
				}
				if kind == natsfmt.GroupStream {
					ws.streamOp(wop, !compacted)
					continue
				}
				if kind != natsfmt.GroupMeta || compacted {
					continue
				}
				if wop.Err != nil {
					wr.damage = append(wr.damage, wop.Err)
					continue
				}
				op := wop.Op
				if !op.Code.IsMeta() {
					damage(file, wop.Offset, natsfmt.StructEntryOp, "op %v does not belong in a meta group", op.Code)
					continue
				}
				ws.ops = append(ws.ops, op)
				wr.removals = append(wr.removals, walRemovalOp{op: op, idx: idx, file: file})
			}
		}
		return nil
	})
	if err != nil {
		wr.err = err
		return wr
	}
	ws.summary = &model.WALSummary{WALFigures: model.WALFigures{FirstSeq: scan.State.FirstSeq, LastSeq: scan.State.LastSeq, Msgs: scan.State.Msgs, PIndex: ws.lastIndex, PTerm: ws.lastTerm}, Stamps: stamps}
	if ws.lastIndex == 0 {
		ws.summary.PIndex, ws.summary.PTerm = ws.metaSnapIdx, ws.snapTerm
	}
	if scan.Meta != nil {
		wr.hasMeta, wr.meta = true, scan.Meta.Metadata
	}
	wr.problems = scan.Problems
	if kind == natsfmt.GroupStream {
		wr.msgs, wr.pending, wr.values = walMessagesKept(fsys, dir, group, ws)
		ws.walMsgs = nil // what the model takes of it is kept: let the messages go
	}
	return wr
}

// wal takes in a group's WAL as read (wr, nil when not read).
func (l *loader) wal(srv *model.Server, g *model.Group, wr *walRead) {
	if wr == nil || !wr.found {
		return
	}
	for _, h := range wr.history {
		h.Server = srv.ID
		g.History = append(g.History, h)
	}
	for _, e := range wr.timeline {
		l.walEvent(e.at, srv.Name, e.kind, g.Name, e.text(l.idName), e.file)
	}
	for _, err := range wr.damage {
		l.raftCorrupt(srv, g.Name, err)
	}
	for _, r := range wr.removals {
		l.metaRemoval(srv, r.op, r.idx, r.file)
	}
	if wr.err != nil {
		l.raftCorrupt(srv, g.Name, wr.err)
		return
	}
	if md := wr.meta; wr.hasMeta && g.Account == "" {
		g.Account = md["account"]
		if c := md["consumer"]; c != "" {
			g.Asset = md["stream"] + " > " + c
		} else {
			g.Asset = md["stream"]
		}
	}
	for _, p := range wr.problems {
		c := model.CorruptionFrom(srv.ID, "", "", wr.dir, p)
		c.Message = fmt.Sprintf("raft group %s WAL: %s", g.Name, c.Message)
		l.m.Corruptions = append(l.m.Corruptions, c)
	}
	if g.Kind == natsfmt.GroupStream {
		l.keepWALMessages(srv, g.Name, wr)
	}
}

// streamOp notes what one entry of a stream group's WAL does to the
// stream's messages (walSeqs): the sequence it stores, or those it removes.
// Undecodable ops are left alone, as extract's reading does.
func (ws *walState) streamOp(wop *raftlog.WALOp, afterSnap bool) {
	if wop.Err != nil {
		return
	}
	op := wop.Op
	switch {
	case op.Msg != nil:
		ws.msgSeqs.Add(op.Msg.Seq())
		if afterSnap {
			ws.pendSeqs.Add(op.Msg.Seq())
		}
	case op.Delete != nil:
		ws.removed.Add(op.Delete.Seq)
	case op.DeleteRange != nil && op.DeleteRange.Num > 0:
		ws.removed.AddRange(op.DeleteRange.First, op.DeleteRange.First+op.DeleteRange.Num-1)
	case op.Purge != nil:
		// A filtered purge or one keeping the last N needs the
		// messages' subjects and order: walMsgs replays those.
		var req struct {
			Seq    uint64 `json:"seq"`
			Filter string `json:"filter"`
			Keep   uint64 `json:"keep"`
		}
		if len(op.Purge.Request) > 0 && json.Unmarshal(op.Purge.Request, &req) != nil || req.Keep > 0 || req.Filter != "" {
			ws.replay = true
			return
		}
		last := op.Purge.LastSeq
		if req.Seq > 0 {
			last = req.Seq - 1
		}
		ws.removed.AddRange(0, last)
	}
}

// raftCorrupt records a raft file problem (the file is the one err names).
func (l *loader) raftCorrupt(srv *model.Server, group string, err error) {
	c := model.CorruptionFrom(srv.ID, "", "", "", err)
	c.Message = fmt.Sprintf("raft group %s: %s", group, c.Message)
	l.m.Corruptions = append(l.m.Corruptions, c)
}

// assignments fills each stream's raft group and assigned servers from the
// meta state of the server whose meta term is highest.
func (l *loader) assignments() {
	var best *model.Server
	var bestTerm uint64
	for _, g := range l.m.Groups {
		if g.Kind != natsfmt.GroupMeta {
			continue
		}
		for _, v := range g.Views {
			s := l.m.ServerOf(v.Server)
			if s != nil && s.Meta != nil && !s.Meta.SnapshotCorrupt && (best == nil || v.Term > bestTerm) {
				best, bestTerm = s, v.Term
			}
		}
	}
	if best == nil {
		return
	}
	for k, a := range best.Meta.Streams {
		st := l.streamEntry(k.Account, k.Stream)
		st.Group = a.Group
		if st.Replicas == 0 {
			st.Replicas = a.Replicas
		}
		st.AssignedTo = nil
		for _, p := range a.Peers {
			if n, ok := l.m.IDs[p]; ok {
				st.AssignedTo = append(st.AssignedTo, l.m.IDOf(n))
			} else if s := l.m.ServerByID(p); s != nil {
				st.AssignedTo = append(st.AssignedTo, s.ID)
			} else {
				st.AssignedTo = append(st.AssignedTo, model.ServerID(p))
			}
		}
		if g := l.findGroup(a.Group); g != nil && g.Asset == "" {
			g.Account, g.Asset = a.Account, a.Stream
		}
	}
}

// findGroup returns the model's group named name, or nil; by index, as it
// is called for every group folder and every stream assignment.
func (l *loader) findGroup(name string) *model.Group { return l.groupIndex[name] }

// walEvent puts a dated raft change from a WAL record on the timeline.
func (l *loader) walEvent(t *time.Time, server, kind, group, text, file string) {
	if t == nil {
		return
	}
	l.event(*t, server, "wal", kind, group, text, file, 0)
}

// idName renders a peer id with its server name when known.
func (l *loader) idName(id string) string {
	if n, ok := l.m.IDs[id]; ok {
		return id + " (" + n + ")"
	}
	return id
}
