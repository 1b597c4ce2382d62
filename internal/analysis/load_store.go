package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// peerID is the raft node id nats-server derives from a server name.
func peerID(name string) string { return raftlog.PeerID(name) }

// readSmall reads a small file of the bundle, refusing one over limit.
func readSmall(fsys fs.FS, name string, limit int64) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, binfmt.Errorf(name, 0, binfmt.ErrTooLarge, "%d bytes, more than the %d read whole", fi.Size(), limit)
	}
	return fs.ReadFile(fsys, name)
}

// storePeerIDs returns every peer id listed in a store's raft groups'
// peers.idx files (the store's server is among them), and the ids common to
// every stream and consumer group the store holds: a server has a group
// folder only where it is a member, so that intersection is, with a few
// groups, the server itself.
func (l *loader) storePeerIDs(st bundle.Store) (all, self map[string]bool) {
	all = map[string]bool{}
	if st.SysAccount == "" {
		return all, nil
	}
	for _, g := range st.Groups {
		p := path.Join(st.Dir, st.SysAccount, "_js_", g, "peers.idx")
		b, err := readSmall(l.b.FS, p, raftlog.MaxPeersIdxSize)
		if err != nil {
			continue
		}
		ps, err := raftlog.DecodePeerState(p, b)
		if err != nil {
			continue
		}
		set := map[string]bool{}
		for _, id := range ps.Peers {
			all[id] = true
			set[id] = true
		}
		if g == "_meta_" {
			continue
		}
		if self == nil {
			self = set
			continue
		}
		for id := range self {
			if !set[id] {
				delete(self, id)
			}
		}
	}
	return all, self
}

// nameStore establishes which server a store belongs to, by content. A name
// is confirmed when its peer id is one the store's raft state allows: in
// every group the store is a member of when it holds such groups, else in
// its meta peer set. Candidates: the banners of the logs the bundle pairs
// with the store, the store's path, then any server name the bundle's logs
// and captures give (accepted only where the store's groups single it out).
func (l *loader) nameStore(st bundle.Store) (name, source string) {
	all, self := l.storePeerIDs(st)
	type cand struct {
		name, source string
		paired       bool // tied to this store by the bundle's layout
	}
	var cands []cand
	for _, lp := range st.Logs {
		for _, lg := range l.b.Logs {
			if lg.Path == lp && lg.Name != "" {
				cands = append(cands, cand{lg.Name, "log", true})
			}
		}
	}
	for _, c := range st.NameCandidates {
		cands = append(cands, cand{c, "folder", true})
	}
	for _, lg := range l.b.Logs {
		if lg.Name != "" {
			cands = append(cands, cand{lg.Name, "log", false})
		}
	}
	for _, c := range l.b.Captures {
		for _, n := range c.Servers {
			cands = append(cands, cand{n, "capture", false})
		}
	}
	taken := func(n string) bool { s := l.m.server(n); return s != nil && s.StoreDir != "" }
	if len(self) > 0 {
		for _, c := range cands {
			if self[peerID(c.name)] && !taken(c.name) && (c.paired || len(self) == 1) {
				return c.name, c.source
			}
		}
	}
	for _, c := range cands {
		if c.paired && all[peerID(c.name)] && !taken(c.name) {
			return c.name, c.source
		}
	}
	if len(all) == 0 && len(cands) > 0 && cands[0].paired {
		// A store without raft state (standalone server) cannot confirm a
		// name; take the most likely one and say so.
		l.note("store %s: server name %q taken from its %s; no raft peer set to confirm it", st.Dir, cands[0].name, cands[0].source)
		return cands[0].name, cands[0].source
	}
	n := 1
	for l.m.server(fmt.Sprintf("unnamed-%d", n)) != nil {
		n++
	}
	name = fmt.Sprintf("unnamed-%d", n)
	hint := ""
	if len(self) == 1 {
		for id := range self {
			hint = fmt.Sprintf("; its raft groups single out peer id %s", id)
		}
	}
	l.note("store %s: server name not established (no candidate among %q hashes to a peer id in its raft state%s); called %s here", st.Dir, st.NameCandidates, hint, name)
	return name, "unknown"
}

// stores scans every store root: names its server, and recomputes every
// stream from its blocks.
func (l *loader) stores() {
	for _, st := range l.b.Stores {
		name, source := l.nameStore(st)
		srv := l.addServer(name, source)
		srv.Sources["store"] = true
		if srv.StoreDir != "" {
			l.note("server %s has two stores (%s and %s); both are read", name, srv.StoreDir, st.Dir)
		}
		srv.StoreDir = st.Dir
		for _, acc := range st.Accounts {
			for _, sname := range acc.Streams {
				l.guard(fmt.Sprintf("reading stream %s/%s/streams/%s", st.Dir, acc.Name, sname), func() { l.stream(srv, st, acc.Name, sname) })
			}
		}
	}
}

// stream scans one stream folder of one server.
func (l *loader) stream(srv *Server, st bundle.Store, account, folder string) {
	dir := path.Join(st.Dir, account, "streams", folder)
	if strings.HasPrefix(folder, ".") {
		l.note("%s: stream folder %s is a stream being deleted (renamed before removal); the server removes it at start", srv.Name, dir)
		return
	}
	scan, err := storeparse.ScanStream(l.b.FS, dir, storeparse.ScanOptions{DigestWindow: digestWindow, SkipFirstTS: true})
	if err != nil {
		l.m.Corruptions = append(l.m.Corruptions, corruptionFrom(srv.Name, account, folder, dir, err))
		return
	}
	name := folder
	replicas := 0
	if scan.Meta != nil {
		if scan.Meta.Name != "" {
			name = scan.Meta.Name
		}
		replicas = scan.Meta.NumReplicas
	}
	c := &StreamCopy{
		Server: srv.Name, Path: dir,
		FirstSeq: scan.State.FirstSeq, LastSeq: scan.State.LastSeq,
		Messages: scan.State.Msgs, Bytes: scan.State.Bytes, Deleted: scan.State.NumDeleted,
		Replicas: replicas, Encrypted: scan.Encrypted,
	}
	for _, cs := range scan.Consumers {
		rc := report.Consumer{Name: cs.Name}
		if cs.State != nil {
			rc.AckFloorStream = cs.State.AckFloor.Stream
			rc.DeliveredStream = cs.State.Delivered.Stream
			rc.Pending = len(cs.State.Pending)
			rc.Redelivered = len(cs.State.Redelivered)
		}
		c.Consumers = append(c.Consumers, rc)
	}
	keepForComparison(c, scan)
	s := l.streamEntry(account, name)
	s.Copies = append(s.Copies, c)
	s.Replicas = max(s.Replicas, replicas)

	if scan.PartialPurge {
		l.note("%s: %s holds __msgs__ or __new_msgs__: a purge whose old blocks the server removes out of band (left by a crash if it still holds blocks)", srv.Name, dir)
	}
	for _, p := range scan.Problems {
		cr := corruptionFrom(srv.Name, account, name, dir, p)
		cr.Replicas = replicas
		if cr.Kind == "truncated" || cr.Kind == "torn-tail" {
			cr.Lost = lostRanges(scan.Lost)
		}
		l.m.Corruptions = append(l.m.Corruptions, cr)
	}
	// index.db may rightly hold fewer messages than the blocks: removals by
	// limits (max_msgs, max_bytes, max_msgs_per_subject, KV history) write
	// no tombstone. When the state the server recovers (blocks, tombstones,
	// the deletes of a current index.db, limits) equals index.db, the two
	// agree; otherwise the differences found are reported.
	if len(scan.Mismatches) > 0 && !indexAgrees(scan) {
		var parts []string
		for _, mm := range scan.Mismatches {
			parts = append(parts, fmt.Sprintf("%s %s: index.db %s, blocks %s", mm.Scope, mm.Field, mm.Index, mm.Blocks))
		}
		im := IndexMismatch{
			Server: srv.Name, Account: account, Stream: name, File: path.Join(dir, "msgs", "index.db"),
			Detail: fmt.Sprintf("index.db disagrees with the message blocks: %s", strings.Join(parts, "; ")),
		}
		if scan.Index != nil && scan.Index.LastSeq < scan.State.LastSeq {
			// The blocks go on past index.db: a crash, or a store copied
			// while running. The server sees its last block's checksum
			// differ and rebuilds ("Stream state outdated").
			im.Outdated = true
			im.Detail = fmt.Sprintf("index.db is older than the blocks (written at seq %d, blocks go on to %d): the server rebuilds it at start; expected after a crash or for a store copied while running. %s",
				scan.Index.LastSeq, scan.State.LastSeq, strings.Join(parts, "; "))
		}
		l.m.IndexMismatches = append(l.m.IndexMismatches, im)
	}
}

func (l *loader) streamEntry(account, name string) *Stream {
	for _, s := range l.m.Streams {
		if s.Account == account && s.Name == name {
			return s
		}
	}
	s := &Stream{Account: account, Name: name}
	l.m.Streams = append(l.m.Streams, s)
	return s
}

func lostRanges(in []storeparse.SeqRange) []report.Range {
	var out []report.Range
	for _, r := range in {
		out = append(out, report.Range{First: r.First, Last: r.Last})
	}
	return out
}

// corruptionFrom turns a parser error into a corruption fact.
func corruptionFrom(server, account, stream, dir string, err error) Corruption {
	c := Corruption{Server: server, Account: account, Stream: stream, File: dir, Message: err.Error()}
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		if ce.File != "" {
			c.File = ce.File
		}
		c.Offset, c.HasOffset, c.Seq = ce.Offset, true, ce.Seq
	}
	switch {
	case errors.Is(err, binfmt.ErrEncrypted):
		c.Kind = "encrypted"
	case errors.Is(err, binfmt.ErrChecksum):
		c.Kind = "checksum"
		if strings.HasSuffix(c.File, "meta.sum") || strings.HasSuffix(c.File, "meta.inf") {
			c.Kind = "meta-checksum"
		} else if strings.HasSuffix(c.File, "index.db") {
			c.Kind = "index"
		}
	case errors.Is(err, binfmt.ErrTruncated):
		c.Kind = "truncated"
	case errors.Is(err, binfmt.ErrTooLarge), errors.Is(err, binfmt.ErrFormat):
		c.Kind = "format"
		if strings.HasSuffix(c.File, "index.db") {
			c.Kind = "index"
		}
	default:
		c.Kind = "unreadable"
	}
	return c
}

// indexAgrees says whether index.db's stream figures equal the recovered state.
func indexAgrees(scan *storeparse.StreamScan) bool {
	x, st := scan.Index, scan.State
	if x == nil {
		return true
	}
	return x.Msgs == st.Msgs && x.Bytes == st.Bytes && x.LastSeq == st.LastSeq && (st.Msgs == 0 || x.FirstSeq == st.FirstSeq)
}
