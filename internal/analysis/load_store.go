package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// peerID is the raft node id nats-server derives from a server name.
func peerID(name string) string { return natsfmt.PeerID(name) }

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

// stores scans every store root: names its server, and recomputes every
// stream from its blocks.
func (l *loader) stores() {
	var folders []string
	for _, st := range l.b.Stores {
		for _, acc := range st.Accounts {
			for _, sname := range acc.Streams {
				folders = append(folders, path.Join(st.Dir, acc.Name, "streams", sname))
			}
		}
	}
	plan, done := l.meter.begin(StageStores, l.b.FS, folders), 0
	// A stream folder only one clustered store holds has no replica to
	// compare with: its scan sums no message digests (compareStream sums
	// them after all should another copy turn up under its name).
	clustered := map[AssetKey]int{}
	for _, st := range l.b.Stores {
		if st.SysAccount == "" {
			continue
		}
		for _, acc := range st.Accounts {
			for _, sname := range acc.Streams {
				clustered[AssetKey{acc.Name, sname}]++
			}
		}
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
				l.guard(fmt.Sprintf("reading stream %s/%s/streams/%s", st.Dir, acc.Name, sname), func() { l.stream(srv, st, acc.Name, sname, clustered[AssetKey{acc.Name, sname}] > 1) })
				plan.done(done)
				done++
			}
		}
	}
}

// stream scans one stream folder of one server; digests: for the replica
// comparison (other copies may exist).
func (l *loader) stream(srv *Server, st bundle.Store, account, folder string, digests bool) {
	dir := path.Join(st.Dir, account, "streams", folder)
	if strings.HasPrefix(folder, ".") {
		l.note("%s: stream folder %s is a stream being deleted (renamed before removal); the server removes it at start", srv.Name, dir)
		return
	}
	if ents, err := fs.ReadDir(l.b.FS, dir); err == nil && len(ents) == 0 {
		// nats-server warns "Missing stream metafile" and skips the folder
		// (jetstream.go: v2.10.22 l.1224-1227, v2.12.1 l.1286-1289, v2.15.2
		// l.1442-1446); there is nothing to scan, nor a stream to model.
		l.m.Corruptions = append(l.m.Corruptions, Corruption{Server: srv.ID, Account: account, Stream: folder,
			File: path.Join(dir, "meta.inf"), Kind: natsfmt.CorruptMissing, Structure: natsfmt.StructMetaInf, EmptyFolder: true,
			Message: fmt.Sprintf("%s is an empty stream folder (no meta.inf, no message blocks)", dir)})
		return
	}
	opts := storeparse.ScanOptions{SkipFirstTS: true}
	if digests {
		opts.DigestWindow = digestWindow
	}
	opts.Payloads = l.histValues
	scan, err := storeparse.ScanStream(l.b.FS, dir, opts)
	if err != nil {
		l.m.Corruptions = append(l.m.Corruptions, corruptionFrom(srv.ID, account, folder, dir, err))
		return
	}
	// meta.inf's name, or the folder's when meta.inf is unreadable or its
	// changed bytes name another stream (ScanStream's choice).
	name := scan.Name
	replicas := 0
	if scan.Meta != nil {
		replicas = scan.Meta.NumReplicas
	}
	c := &StreamCopy{
		Server: srv.ID, Path: dir,
		FirstSeq: scan.State.FirstSeq, LastSeq: scan.State.LastSeq,
		Messages: scan.State.Msgs, Bytes: scan.State.Bytes, Deleted: scan.State.NumDeleted,
		Replicas: replicas, Encrypted: scan.Encrypted, NoMeta: metaMissing(scan),
		Clustered: st.SysAccount != "",
	}
	c.Unreadable = append(c.Unreadable, scan.Unreadable...)
	c.Resurrected = scan.Resurrected
	c.Blocks = blockSpans(scan.Blocks)
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
	keepForComparison(c, scan, digests)
	l.keepPayloads(c, scan)
	s := l.streamEntry(account, name)
	s.Copies = append(s.Copies, c)
	s.Replicas = max(s.Replicas, replicas)

	if scan.Meta != nil && len(scan.Meta.FieldErrors) > 0 {
		// dump meta warns of them too: the server cannot unmarshal such a
		// meta.inf and skips the stream.
		l.m.Corruptions = append(l.m.Corruptions, Corruption{Server: srv.ID, Account: account, Stream: name, Replicas: replicas,
			File: path.Join(dir, "meta.inf"), Kind: natsfmt.CorruptUnparsable, Structure: natsfmt.StructMetaInf,
			Message: fmt.Sprintf("%s: fields of the wrong type (%s): the server cannot unmarshal it and skips the stream", path.Join(dir, "meta.inf"), strings.Join(scan.Meta.FieldErrors, "; "))})
	}
	if scan.PartialPurge {
		l.note("%s: %s holds __msgs__ or __new_msgs__: a purge whose old blocks the server removes out of band (left by a crash if it still holds blocks)", srv.Name, dir)
	}
	blockDamage := false
	for _, p := range scan.Problems {
		cr := corruptionFrom(srv.ID, account, name, dir, p)
		cr.Replicas = replicas
		if blockCost(scan, &cr) {
			blockDamage = true
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
			Server: srv.ID, Account: account, Stream: name, File: path.Join(dir, "msgs", "index.db"),
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
		im.Damaged = blockDamage
		l.m.IndexMismatches = append(l.m.IndexMismatches, im)
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
// sequences lost or unreadable, and, as evidence, what the server does with
// it on its next start. It reports whether c is such a damage.
func blockCost(scan *storeparse.StreamScan, c *Corruption) bool {
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
		c.Rebuilds = !scan.IndexCurrent()
		for _, r := range scan.BadDeleted {
			if bad.Seq >= r.First && bad.Seq <= r.Last {
				c.Lost, c.OfDeleted = nil, true
			}
		}
		switch {
		case c.OfDeleted:
			c.Evidence = append(c.Evidence, fmt.Sprintf("seq %d was deleted before the damage (a tombstone or index.db records it): no message is lost on this copy while the server does not rebuild the block", bad.Seq))
		case scan.IndexCurrent():
			c.Evidence = append(c.Evidence, fmt.Sprintf("next start, index.db current (its last block and checksum match the blocks): the server trusts it and serves every message but seq %d, whose read fails its checksum (%q)", bad.Seq, "no message found"))
		default:
			c.Evidence = append(c.Evidence, "next start: index.db is missing or stale, so the server rebuilds this block from its records")
		}
		if len(bs.RebuildLost) > 0 && bs.Bad[0].Offset == bad.Offset {
			r := bs.RebuildLost[0]
			c.Evidence = append(c.Evidence, fmt.Sprintf("on a rebuild (index.db removed or stale) the server truncates %s at offset %d, its first bad record (rebuildStateFromBufLocked in v2.10.22, v2.12.1 and v2.15.2; v2.15.2 leaves a compressed or encrypted file uncut but stops counting there): sequences %d-%d go, the bad record and %d intact messages after it",
				c.File, bad.Offset, r.First, r.Last, bs.RebuildLostMsgs))
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
func (l *loader) streamEntry(account, name string) *Stream {
	if s := l.streamIndex[AssetKey{account, name}]; s != nil {
		return s
	}
	s := &Stream{Account: account, Name: name}
	l.m.Streams = append(l.m.Streams, s)
	if l.streamIndex == nil {
		l.streamIndex = map[AssetKey]*Stream{}
	}
	l.streamIndex[AssetKey{account, name}] = s
	return s
}

// corruptionFrom turns a parser error into a corruption fact.
func corruptionFrom(server ServerID, account, stream, dir string, err error) Corruption {
	c := Corruption{Server: server, Account: account, Stream: stream, File: dir, Message: err.Error()}
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		if ce.File != "" {
			c.File = ce.File
		}
		c.Offset, c.HasOffset, c.Seq = ce.Offset, true, ce.Seq
	}
	// The kind and structure come from the error, stamped by the parser's
	// reader of the file, not from the file's name.
	c.Kind, c.Structure = natsfmt.KindOf(err), binfmt.StructureOf(err)
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

// metaRef is a stream config to hold a meta.inf against.
type metaRef struct {
	source string
	fields map[string]json.RawMessage
}

// blameMetaFiles tells, for each stream copy whose meta.inf and meta.sum
// disagree, which file changed: meta.inf is held against the stream config
// in that server's meta state (snapshot and WAL) and in the other replicas'
// meta.inf files that verify. A field that differs names meta.inf (and the
// flipped bit when it is one); none differing names meta.sum.
func (l *loader) blameMetaFiles() {
	for i := range l.m.Corruptions {
		c := &l.m.Corruptions[i]
		if c.Kind != natsfmt.CorruptMetaChecksum || c.Structure != natsfmt.StructMetaSum {
			continue
		}
		if strings.Contains(c.File, "/obs/") {
			// No other copy of a consumer's config to hold it against:
			// either file may be the one that changed.
			c.Message += fmt.Sprintf("; either %s or %s changed (no reference config for a consumer tells which)", path.Join(path.Dir(c.File), "meta.inf"), c.File)
			continue
		}
		dir := path.Dir(c.File)
		inf, err := readSmall(l.b.FS, path.Join(dir, "meta.inf"), 1<<20)
		if err != nil {
			continue
		}
		sum, err := readSmall(l.b.FS, c.File, 1<<10)
		if err != nil {
			continue
		}
		var infFields map[string]json.RawMessage
		if json.Unmarshal(inf, &infFields) != nil {
			continue
		}
		// The folder is named for the stream (meta.inf's own name may be
		// the field that changed).
		stream := path.Base(dir)
		refs := l.metaRefs(c, dir, stream)
		if len(refs) == 0 {
			continue
		}
		l.blame(c, stream, inf, sum, infFields, refs)
	}
}

// metaRefs gathers the configs to compare the copy in dir with.
func (l *loader) metaRefs(c *Corruption, dir, stream string) []metaRef {
	var refs []metaRef
	add := func(source string, raw []byte) {
		var f map[string]json.RawMessage
		if json.Unmarshal(raw, &f) == nil && len(f) > 0 {
			refs = append(refs, metaRef{source, f})
		}
	}
	if srv := l.m.serverOf(c.Server); srv != nil && srv.Meta != nil {
		if a := srv.Meta.Streams[AssetKey{c.Account, stream}]; a != nil && len(a.Config) > 0 {
			add(fmt.Sprintf("the stream config in %s's meta state (%s)", srv.Name, srv.Meta.Source), a.Config)
		}
	}
	for _, st := range l.m.Streams {
		if st.Account != c.Account || st.Name != stream {
			continue
		}
		for _, cp := range st.Copies {
			if cp.Path == dir {
				continue
			}
			inf, err := readSmall(l.b.FS, path.Join(cp.Path, "meta.inf"), 1<<20)
			if err != nil {
				continue
			}
			sum, err := readSmall(l.b.FS, path.Join(cp.Path, "meta.sum"), 1<<10)
			if err != nil || storeparse.CheckMetaSum("meta.sum", sum, inf, stream) != nil {
				continue
			}
			add(fmt.Sprintf("%s's meta.inf (%s/meta.inf, its meta.sum verifies)", l.m.Name(cp.Server), cp.Path), inf)
		}
	}
	return refs
}

// blame names the changed file in c from the comparison with refs.
func (l *loader) blame(c *Corruption, stream string, inf, sum []byte, infFields map[string]json.RawMessage, refs []metaRef) {
	if !utf8.Valid(inf) {
		// The server writes JSON text: bytes that are not UTF-8 are meta.inf's damage.
		at := 0
		for at < len(inf) {
			r, n := utf8.DecodeRune(inf[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
		c.Message = fmt.Sprintf("%s changed, not meta.sum: byte %d (0x%02x) is not UTF-8 text, which the server never writes, so meta.sum no longer matches", c.File, at, inf[at])
		return
	}
	differ := map[string][]string{} // field -> sources it differs from
	for _, r := range refs {
		for k, rv := range r.fields {
			iv, ok := infFields[k]
			if !ok {
				// A key one bit off (a flip in a field name) is meta.inf
				// changed too: the field reads as missing.
				if k2, off, bit, found := renamedKey(infFields, r.fields, k); found {
					at := bytes.Index(inf, []byte(strconv.Quote(k2)+":")) + 1 + off
					c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
					c.Message = fmt.Sprintf("%s changed, not meta.sum: it names field %q where %s names %q; byte %d of meta.inf differs by one bit (bit %d), so meta.sum no longer matches",
						c.File, k2, r.source, k, at, bit)
					return
				}
				continue
			}
			if k == "Created" || k == "metadata" {
				continue
			}
			if !jsonEqual(iv, rv) {
				differ[k] = append(differ[k], r.source)
				if off, bit, ok := oneBit(iv, rv); ok {
					at := valueOffset(inf, k) + off
					c.File, c.Offset, c.HasOffset = path.Join(path.Dir(c.File), "meta.inf"), int64(at), true
					c.Message = fmt.Sprintf("%s changed, not meta.sum: field %q is %s where %s holds %s; byte %d of meta.inf differs by one bit (bit %d, %q for %q), so meta.sum no longer matches",
						c.File, k, iv, r.source, rv, at, bit, inf[at], rv[off])
					return
				}
			}
		}
	}
	if len(differ) > 0 {
		var parts []string
		for _, k := range sortedKeys(differ) {
			parts = append(parts, fmt.Sprintf("%q (against %s)", k, strings.Join(differ[k], "; ")))
		}
		c.File = path.Join(path.Dir(c.File), "meta.inf")
		c.Message = fmt.Sprintf("%s changed, not meta.sum: it differs in %s", c.File, strings.Join(parts, ", "))
		return
	}
	// meta.inf says what the config says: meta.sum is what changed.
	want := fmt.Sprintf("%x", binfmt.HH64(stream, inf))
	got := strings.TrimSpace(string(sum))
	c.Message = fmt.Sprintf("%s changed, not meta.inf: meta.inf agrees with %s, and hashes to %s where meta.sum holds %s", c.File, refs[0].source, want, got)
	if off, bit, ok := oneBit([]byte(got), []byte(want)); ok {
		c.Offset, c.HasOffset = int64(off), true
		c.Message += fmt.Sprintf(" (byte %d differs by one bit, bit %d)", off, bit)
	}
}

// renamedKey finds a key of inf, absent from ref, one bit away from ref's
// key k (absent from inf).
func renamedKey(inf, ref map[string]json.RawMessage, k string) (k2 string, off, bit int, ok bool) {
	for cand := range inf {
		if _, inRef := ref[cand]; inRef {
			continue
		}
		if off, bit, ok := oneBit([]byte(cand), []byte(k)); ok {
			return cand, off, bit, true
		}
	}
	return "", 0, 0, false
}

// jsonEqual compares two JSON values by meaning.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// oneBit reports where a and b, of equal length, differ by exactly one bit.
func oneBit(a, b []byte) (off, bit int, ok bool) {
	if len(a) != len(b) {
		return 0, 0, false
	}
	off = -1
	for i := range a {
		if d := a[i] ^ b[i]; d != 0 {
			if off >= 0 || d&(d-1) != 0 {
				return 0, 0, false
			}
			off, bit = i, bits.TrailingZeros8(d)
		}
	}
	return off, bit, off >= 0
}

// valueOffset is where the value of top-level field k starts in a JSON
// object as nats-server writes it ("k": value, no other spacing).
func valueOffset(doc []byte, k string) int {
	key := []byte(strconv.Quote(k) + ":")
	i := bytes.Index(doc, key)
	if i < 0 {
		return 0
	}
	i += len(key)
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n') {
		i++
	}
	return i
}
