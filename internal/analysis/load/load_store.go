package load

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/compare"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// listed says whether dir holds an entry name, from dir's listing (the
// bundle's FS keeps the listings of its inventory walk, so the answer costs
// no stat or failed open). A folder that cannot be listed, or an entry that
// is a link, is asked by name (fs.Stat, which follows links).
func listed(fsys fs.FS, dir, name string) bool {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		_, err := fs.Stat(fsys, path.Join(dir, name))
		return err == nil
	}
	for _, e := range ents {
		if e.Name() == name {
			if e.Type()&fs.ModeSymlink != 0 {
				_, err := fs.Stat(fsys, path.Join(dir, name))
				return err == nil
			}
			return true
		}
	}
	return false
}

// storePeerIDs returns every peer id listed in a store's raft groups'
// peers.idx files (the store's server is among them), and the ids common to
// every stream and consumer group the store holds: a server has a group
// folder only where it is a member, so that intersection is, with a few
// groups, the server itself. The files are those the raft step reads
// (raftReads), read once.
func (l *loader) storePeerIDs(st bundle.Store) (all, self map[string]bool) {
	all = map[string]bool{}
	for _, r := range l.raftReads(st) {
		if r.rec.Peers == nil {
			continue
		}
		set := map[string]bool{}
		for _, id := range r.rec.Peers.State.Peers {
			all[id] = true
			set[id] = true
		}
		if r.rec.Kind == natsfmt.GroupMeta {
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
	// First the logs and captures in the folder that holds this store and no
	// other (store-1/{data/jetstream, nats.log, monitoring/}), whatever the
	// folder is called.
	if own := l.serverFolder(st.Dir); own != "" {
		for _, lg := range l.b.Logs {
			if lg.Name != "" && strings.HasPrefix(lg.Path, own+"/") {
				cands = append(cands, cand{lg.Name, "log", true})
			}
		}
		for _, c := range l.b.Captures {
			if strings.HasPrefix(c.Path, own+"/") {
				for _, n := range c.Servers {
					cands = append(cands, cand{n, "capture", true})
				}
			}
		}
	}
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
	taken := func(n string) bool { s := l.m.Server(n); return s != nil && s.StoreDir != "" }
	if len(self) > 0 {
		for _, c := range cands {
			if self[model.PeerID(c.name)] && !taken(c.name) && (c.paired || len(self) == 1) {
				return c.name, c.source
			}
		}
	}
	for _, c := range cands {
		if c.paired && all[model.PeerID(c.name)] && !taken(c.name) {
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
	for l.m.Server(fmt.Sprintf("unnamed-%d", n)) != nil {
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

// serverFolder is the largest folder above a store's root that holds no
// other store ("" when its parent is the bundle root or holds another):
// the one folder of that server, whatever it is called.
func (l *loader) serverFolder(dir string) string {
	own := ""
	for d := path.Dir(dir); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		for _, o := range l.b.Stores {
			if o.Dir != dir && strings.HasPrefix(o.Dir, d+"/") {
				return own
			}
		}
		own = d
	}
	return own
}

// stores names each store's server (from its raft records, raft) and adds
// the stream copies as read (copies, by folder) to the model.
func (l *loader) stores(copies map[string]copyRead, raft map[string][]*raftRead) {
	l.raftRecs = raft
	l.raftByGroup = make(map[string]map[string]*raftRead, len(raft))
	for dir, reads := range raft {
		byName := make(map[string]*raftRead, len(reads))
		for _, r := range reads {
			if _, ok := byName[r.rec.Group]; !ok {
				byName[r.rec.Group] = r
			}
		}
		l.raftByGroup[dir] = byName
	}
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
				what := fmt.Sprintf("reading stream %s/%s/streams/%s", st.Dir, acc.Name, sname)
				l.guard(what, func() { l.addStreamCopy(srv, st, acc.Name, sname, copies, what) })
			}
		}
	}
}

// addStreamCopy adds the copy of one stream folder of one server, as
// read, to the model.
func (l *loader) addStreamCopy(srv *model.Server, st bundle.Store, account, folder string, copies map[string]copyRead, what string) {
	dir := path.Join(st.Dir, account, "streams", folder)
	if strings.HasPrefix(folder, ".") {
		l.note("%s: stream folder %s is a stream being deleted (renamed before removal); the server removes it at start", srv.Name, dir)
		return
	}
	rd, ok := copies[dir]
	switch {
	case !ok:
		return
	case rd.crash != nil:
		l.note("%s", crashNote(what, rd.crash))
		return
	}
	l.addCopy(srv, st, account, folder, rd)
}

// copyRead is what one read of a stream folder gives: the scan (meta.inf
// and meta.sum as read with the sum's verdict, index.db's state, the
// blocks' figures, the consumers' state, the parser errors), or that the
// folder is empty or cannot be read at all. Made once, never changed: the
// model's copy is assembled from it, and the checks judge from that.
type copyRead struct {
	dir   string
	empty bool // the folder holds nothing at all
	scan  *storeparse.StreamScan
	err   error // the folder cannot be read
	// lock is the comparison of the copies read together with this one
	// (nil: read alone), member its bit there.
	lock   *compare.Lockstep
	member int
	crash  any // the reader panicked
}

// readOpts are how a copy read with others is read (readTogether).
type readOpts struct {
	messages func(seqs, digests []uint64)    // ScanOptions.Messages
	buffers  func() (seqs, digests []uint64) // ScanOptions.MessageBuffers
	workers  int
	share    int              // ScanOptions.Share: the copies read at once
	head     *storeparse.Head // read ahead (planCopyReads): the folder is not empty
}

// readCopy reads the stream folder dir, each file once.
// payloads are the values a Jepsen history published, looked for in the
// same scan (nil: none); ro: for a copy read together with others (nil:
// alone).
func readCopy(fsys fs.FS, dir string, payloads map[string]bool, ro *readOpts) copyRead {
	if ro == nil || ro.head == nil {
		if ents, err := fs.ReadDir(fsys, dir); err == nil && len(ents) == 0 {
			return copyRead{dir: dir, empty: true}
		}
	}
	opts := storeparse.ScanOptions{SkipFirstTS: true}
	if ro != nil {
		opts.Messages, opts.MessageBuffers, opts.Workers, opts.Share, opts.Head = ro.messages, ro.buffers, ro.workers, ro.share, ro.head
	}
	opts.Payloads = payloads
	scan, err := storeparse.ScanStream(fsys, dir, opts)
	return copyRead{dir: dir, scan: scan, err: err}
}

// addCopy adds what rd read of one stream folder to the model (no I/O).
func (l *loader) addCopy(srv *model.Server, st bundle.Store, account, folder string, rd copyRead) {
	dir := rd.dir
	if rd.empty {
		// nats-server warns "Missing stream metafile" and skips the folder
		// (jetstream.go: v2.10.22 l.1224-1227, v2.12.1 l.1286-1289, v2.15.2
		// l.1442-1446); there is nothing to scan, nor a stream to model.
		l.m.Corruptions = append(l.m.Corruptions, model.Corruption{Server: srv.ID, Account: account, Stream: folder,
			File: path.Join(dir, "meta.inf"), Kind: natsfmt.CorruptMissing, Structure: natsfmt.StructMetaInf, EmptyFolder: true,
			Message: fmt.Sprintf("%s is an empty stream folder (no meta.inf, no message blocks)", dir)})
		return
	}
	if rd.err != nil {
		l.m.Corruptions = append(l.m.Corruptions, model.CorruptionFrom(srv.ID, account, folder, dir, rd.err))
		return
	}
	scan := rd.scan
	// meta.inf's name, or the folder's when meta.inf is unreadable or its
	// changed bytes name another stream (ScanStream's choice).
	name := scan.Name
	replicas := 0
	if scan.Meta != nil {
		replicas = scan.Meta.NumReplicas
	}
	c := &model.StreamCopy{
		Server: srv.ID, Path: dir,
		FirstSeq: scan.State.FirstSeq, LastSeq: scan.State.LastSeq,
		Messages: scan.State.Msgs, Bytes: scan.State.Bytes, Deleted: scan.State.NumDeleted,
		Replicas: replicas, Encrypted: scan.Encrypted, NoMeta: metaMissing(scan),
		Clustered: st.SysAccount != "",
		MetaInf:   scan.MetaInf, MetaSum: scan.MetaSum, MetaSumOK: scan.MetaSumOK,
		Read: l.copiesRead,
	}
	l.copiesRead++
	if x := scan.Index; x != nil {
		c.Index = &model.IndexRecord{File: path.Join(dir, "msgs", "index.db"), FirstSeq: x.FirstSeq, LastSeq: x.LastSeq,
			Msgs: x.Msgs, Bytes: x.Bytes, Mismatches: scan.Mismatches, Stale: x.ChecksumOK && !scan.IndexCurrent()}
	}
	c.Unreadable = append(c.Unreadable, scan.Unreadable...)
	c.Resurrected = scan.Resurrected
	c.Blocks = blockSpans(scan.Blocks)
	var live *storeparse.Live
	for _, cs := range scan.Consumers {
		rc := report.Consumer{Name: cs.Name}
		if cs.State != nil {
			rc.AckFloorStream = cs.State.AckFloor.Stream
			rc.DeliveredStream = cs.State.Delivered.Stream
			rc.Pending = len(cs.State.Pending)
			rc.Redelivered = len(cs.State.Redelivered)
		}
		c.Consumers = append(c.Consumers, rc)
		if live == nil && cs.State != nil && len(cs.State.Pending) > 0 && !c.Encrypted {
			live = scan.Live()
		}
		c.ConsumerStates = append(c.ConsumerStates, consumerOnDisk(cs, path.Join(dir, "obs", cs.Name, "o.dat"), c, live))
	}
	l.keepForComparison(c, rd)
	l.keepPayloads(c, scan)
	c.SourceSeq, c.SourceHeader, _ = scan.SourceHeader()
	s := l.streamEntry(account, name)
	s.Copies = append(s.Copies, c)
	s.Replicas = max(s.Replicas, replicas)
	if m := scan.Meta; m != nil {
		from := "meta.inf " + path.Join(dir, "meta.inf")
		if !m.Created.IsZero() {
			s.Created = append(s.Created, model.CreatedAt{Server: srv.ID, Time: m.Created, From: from})
		}
		if m.Mirror != nil && m.Mirror.Name != "" {
			s.Link("mirror", m.Mirror.Name, metaAPI(m.Mirror), from)
		}
		for _, src := range m.Sources {
			if src.Name != "" {
				s.Link("source", src.Name, metaAPI(&src), from)
			}
		}
	}

	if scan.Meta != nil && len(scan.Meta.FieldErrors) > 0 {
		// dump meta warns of them too (what the server does with such a
		// meta.inf is store-corrupt's to say).
		l.m.Corruptions = append(l.m.Corruptions, model.Corruption{Server: srv.ID, Account: account, Stream: name, Replicas: replicas,
			File: path.Join(dir, "meta.inf"), Kind: natsfmt.CorruptUnparsable, Structure: natsfmt.StructMetaInf, FieldErrors: true,
			Message: fmt.Sprintf("%s: fields of the wrong type (%s)", path.Join(dir, "meta.inf"), strings.Join(scan.Meta.FieldErrors, "; "))})
	}
	if scan.PartialPurge {
		l.note("%s: %s holds __msgs__ or __new_msgs__: a purge whose old blocks the server removes out of band (left by a crash if it still holds blocks)", srv.Name, dir)
	}
	for _, p := range scan.Problems {
		cr := model.CorruptionFrom(srv.ID, account, name, dir, p)
		cr.Replicas = replicas
		if blockCost(scan, &cr) {
			c.BlockDamage = true
		}
		l.m.Corruptions = append(l.m.Corruptions, cr)
	}
}

// metaMissing says whether the folder's meta.inf is not there at all.
func metaMissing(scan *storeparse.StreamScan) bool {
	for _, p := range scan.Problems {
		if errors.Is(p, fs.ErrNotExist) && binfmt.StructureOf(p) == natsfmt.StructMetaInf {
			return true
		}
	}
	return false
}

// blockCost fills in what a damaged message block costs the copy: the
// sequences lost or unreadable, and the facts from which store-corrupt says
// what the server does with it on its next start (blockEvidence). It
// reports whether c is such a damage.
func blockCost(scan *storeparse.StreamScan, c *model.Corruption) bool {
	var bs *storeparse.BlockScan
	for i := range scan.Blocks {
		if scan.Blocks[i].File == c.File {
			bs = &scan.Blocks[i]
		}
	}
	for _, l := range scan.Losses {
		// Found by holding the blocks to a verifying index.db.
		first := append(l.Lost, l.Resurrected...)[0].First
		if l.File != c.File || l.Offset != c.Offset || first != c.Seq || (bs == nil) != l.Missing {
			continue
		}
		c.IndexDB = path.Join(scan.Dir, "msgs", "index.db")
		c.Lost, c.Resurrected = l.Lost, l.Resurrected
		return true
	}
	if bs == nil || bs.Encrypted {
		return false
	}
	if scan.Index != nil {
		c.IndexDB = path.Join(scan.Dir, "msgs", "index.db")
	}
	switch c.Kind {
	case natsfmt.CorruptChecksum:
		var bad *storeparse.BadRecord
		for i := range bs.Bad {
			if bs.Bad[i].Offset == c.Offset {
				bad = &bs.Bad[i]
			}
		}
		if bad == nil {
			return true
		}
		c.Lost = []report.Range{{First: bad.Seq, Last: bad.Seq}}
		c.BadRecord, c.BadSeq, c.IndexCurrent = true, bad.Seq, scan.IndexCurrent()
		c.Rebuilds = !c.IndexCurrent
		for _, r := range scan.BadDeleted {
			if bad.Seq >= r.First && bad.Seq <= r.Last {
				c.Lost, c.OfDeleted = nil, true
			}
		}
		if len(bs.RebuildLost) > 0 && bs.Bad[0].Offset == bad.Offset {
			r := bs.RebuildLost[0]
			c.RebuildCut = &model.RebuildCut{Offset: bad.Offset, Lost: report.Range(r), Msgs: bs.RebuildLostMsgs}
		}
	case natsfmt.CorruptTruncated, natsfmt.CorruptUnparsable:
		if bs.Torn {
			c.Kind = natsfmt.CorruptTornTail
		}
		c.Lost = append(c.Lost, lostFrom(scan, c.Seq)...)
	}
	return true
}

// lostFrom returns the ranges of scan.Lost that one framing problem at
// seq (the record where reading stopped) costs: the first range from seq
// on and, when a verifying index.db split the loss around deleted
// sequences, the ranges after it in the same block.
func lostFrom(scan *storeparse.StreamScan, seq uint64) []report.Range {
	var out []report.Range
	blk := blockOfSeq(scan, seq)
	for _, r := range scan.Lost {
		switch {
		case r.First < seq:
			continue
		case len(out) == 0 && (r.First == seq || blk >= 0 && blockOfSeq(scan, r.First) == blk):
			out = append(out, r)
		case len(out) > 0 && blk >= 0 && blockOfSeq(scan, r.First) == blk:
			out = append(out, r)
		default:
			return out
		}
	}
	return out
}

// blockOfSeq is the index of the block whose range (as index.db or the
// blocks give it) holds seq, -1 if none.
func blockOfSeq(scan *storeparse.StreamScan, seq uint64) int {
	if scan.Index != nil {
		for i, ib := range scan.Index.Blocks {
			if seq >= ib.FirstSeq && seq <= ib.LastSeq {
				return i
			}
		}
	}
	return -1
}

// streamEntry returns the model's stream account/name, creating it. The
// index keeps it O(1) a call: it is called for every copy of thousands of
// streams.
func (l *loader) streamEntry(account, name string) *model.Stream {
	if s := l.streamIndex[model.AssetKey{Account: account, Stream: name}]; s != nil {
		return s
	}
	s := &model.Stream{Account: account, Name: name}
	l.m.Streams = append(l.m.Streams, s)
	if l.streamIndex == nil {
		l.streamIndex = map[model.AssetKey]*model.Stream{}
	}
	l.streamIndex[model.AssetKey{Account: account, Stream: name}] = s
	return s
}

// priorLastSeqs sets each stream copy's figures to those its server reports
// after a start on a stale index.db that remembers a last sequence past the
// blocks' end, where its version keeps it (keepsPriorLastSeq): the
// sequences between count as deleted, none of them is held.
func (l *loader) priorLastSeqs() {
	for _, s := range l.m.Streams {
		for _, c := range s.Copies {
			x := c.Index
			if x == nil || !x.Stale || x.LastSeq <= c.LastSeq {
				continue
			}
			srv := l.m.ServerOf(c.Server)
			if srv == nil {
				continue
			}
			if yes, _ := releases.KeepsPriorLastSeq(srv.Version); !yes {
				continue
			}
			c.Deleted += x.LastSeq - c.LastSeq
			c.LastSeq = x.LastSeq
			if c.Messages == 0 {
				c.FirstSeq, c.Deleted = c.LastSeq+1, 0
			}
		}
	}
}

// metaAPI is a meta.inf mirror's or source's external API prefix.
func metaAPI(s *storeparse.StreamSourceMeta) string {
	if s.External == nil {
		return ""
	}
	return s.External.APIPrefix
}

// consumerOnDisk is what consumer-stuck reads of one obs/<consumer> folder:
// meta.inf's ack limits and o.dat's pending map, each pending sequence held
// against the copy's messages (live: nil when none is pending or the
// blocks are sealed).
func consumerOnDisk(cs storeparse.ConsumerScan, odat string, c *model.StreamCopy, live *storeparse.Live) model.ConsumerOnDisk {
	d := model.ConsumerOnDisk{Name: cs.Name, File: odat}
	if m := cs.Meta; m != nil {
		d.MaxAckPending, d.AckWait = m.MaxAckPending, m.AckWait
		d.Filtered = m.FilterSubject != "" || len(m.FilterSubjects) > 0
	}
	st := cs.State
	if st == nil {
		return d
	}
	d.State = true
	d.Delivered, d.AckFloor, d.Pending = st.Delivered.Stream, st.AckFloor.Stream, len(st.Pending)
	if live == nil || len(st.Pending) == 0 {
		return d
	}
	// Past the copy's last sequence is consumer-ahead's, not a deleted
	// message.
	var seqs []uint64
	for _, p := range st.Pending {
		if p.StreamSeq > 0 && p.StreamSeq <= c.LastSeq {
			seqs = append(seqs, p.StreamSeq)
		}
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	gone := func(q uint64) {
		d.PendingGoneCount++
		if len(d.PendingGone) < model.MaxPendingGone {
			d.PendingGone = append(d.PendingGone, q)
		}
	}
	// One walk over the live ranges and the sorted pending sequences.
	i := 0
	for r := range live.Ranges() {
		for i < len(seqs) && seqs[i] < r.First {
			gone(seqs[i])
			i++
		}
		for i < len(seqs) && seqs[i] <= r.Last {
			i++
		}
		if i == len(seqs) {
			break
		}
	}
	for ; i < len(seqs); i++ {
		gone(seqs[i])
	}
	slices.Sort(d.PendingGone)
	return d
}
