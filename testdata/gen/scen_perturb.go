package main

// Block-level damage on real stores, and what the real server does with it
// (issue 21). A server of the version under test writes the stores; small
// functions damage copies of them (a torn tail, a cut at a record boundary,
// a cut inside the trailing run of tombstones, a middle block removed); the
// real server is started on a further copy of the damaged state and what it
// serves afterwards (/jsz, STREAM.MSG.GET of every sequence) and logs is the
// oracle. Committed under testdata/perturbed/<name>/ (bundle/ = the damaged
// state as an operator would hand it over, oracle.json = before, damage,
// after), not under testdata/bundles: the stores on purpose disagree with
// any capture, which every want.json-driven test would hold them to.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// perturbVersions are the versions the committed perturbed fixtures cover.
var perturbVersions = []string{"v2.10.27", "v2.12.15", "v2.15.3"}

func perturbScenarios() []Scenario {
	var out []Scenario
	for _, v := range perturbVersions {
		out = append(out,
			Scenario{Name: "perturbed-blocks-" + v, Doc: "standalone store, four streams with block damage, restarted on a copy (testdata/perturbed)", Timeout: 5 * time.Minute,
				Run: func(ctx context.Context, env *Env) error { return perturbBlocks(ctx, env, v) }},
			Scenario{Name: "perturbed-replica-" + v, Doc: "R3 stream, one replica's last block torn through its tombstones, cluster restarted on a copy (testdata/perturbed)", Timeout: 6 * time.Minute,
				Run: func(ctx context.Context, env *Env) error { return perturbReplica(ctx, env, v) }},
			Scenario{Name: "perturbed-crash-" + v, Doc: "R3 stream under load, all three servers SIGKILLed at once, restarted on a copy (testdata/perturbed)", Timeout: 8 * time.Minute,
				Run: func(ctx context.Context, env *Env) error { return perturbCrash(ctx, env, v) }},
			tombScenario(v), // scen_tombstones.go (issue 31)
		)
	}
	return out
}

// perturbedOut is where perturbed fixtures go: testdata/perturbed beside
// the default bundles root, or the -out directory.
func perturbedOut(env *Env) string {
	if filepath.Base(env.Out) == "bundles" {
		return filepath.Join(filepath.Dir(env.Out), "perturbed")
	}
	return env.Out
}

// Oracle is oracle.json: the damage made and what the real server did.
type Oracle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Mode: "standalone" (one server, no cluster) or "cluster".
	Mode    string         `json:"mode"`
	Damage  []Damage       `json:"damage"`
	Streams []OracleStream `json:"streams"`
	// NotQuiet: why the restarted cluster did not settle within a minute.
	NotQuiet string `json:"not_quiet,omitempty"`
	// Log: the lines the restarted servers wrote about the streams and
	// their stores (per server).
	Log map[string][]string `json:"log"`
}

// Damage is one change made to a copy of a real store.
type Damage struct {
	Server string `json:"server"`
	Stream string `json:"stream"`
	Class  string `json:"class"` // torn-mid-record, cut-record-boundary, cut-in-tombstones, block-removed
	File   string `json:"file"`  // path inside bundle/
	// SizeBefore/SizeAfter: bytes of File before and after (after 0 and
	// Removed for a removed file).
	SizeBefore int64 `json:"size_before"`
	SizeAfter  int64 `json:"size_after"`
	Removed    bool  `json:"removed,omitempty"`
	// CutSeq: the sequence of the record the cut starts in (0 for a removal).
	CutSeq uint64 `json:"cut_seq,omitempty"`
	// TombstonesKept/TombstonesCut: tombstone records of the block before
	// and after the cut.
	TombstonesKept int `json:"tombstones_kept"`
	TombstonesCut  int `json:"tombstones_cut"`
}

// OracleStream is one stream on one server, before the damage (as the
// server that wrote it served it) and after (as the server started on a
// copy of the damaged state served it).
type OracleStream struct {
	Server  string      `json:"server"`
	Account string      `json:"account"`
	Stream  string      `json:"stream"`
	Before  ServedState `json:"before"`
	After   ServedState `json:"after"`
}

// ServedState is a stream's /jsz state and the sequences STREAM.MSG.GET
// returned (Served: asked of every sequence first..last of before and
// after; in a cluster the stream leader answers, so Served is the
// stream's, not the replica's, and is kept on the first server only).
type ServedState struct {
	FirstSeq   uint64     `json:"first_seq"`
	LastSeq    uint64     `json:"last_seq"`
	Msgs       uint64     `json:"messages"`
	NumDeleted int        `json:"num_deleted"`
	Lost       []uint64   `json:"lost,omitempty"` // /jsz state.lost.msgs
	Served     []SeqRange `json:"served,omitempty"`
	// ServedErr: why Served is missing (no stream leader, ...).
	ServedErr string `json:"served_error,omitempty"`
}

type jszLost struct {
	Accounts []struct {
		Name    string `json:"name"`
		Streams []struct {
			Name  string `json:"name"`
			State struct {
				Lost *struct {
					Msgs []uint64 `json:"msgs"`
				} `json:"lost"`
			} `json:"state"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// stateOf reads a stream's /jsz state (and lost messages) from server s.
func stateOf(ctx context.Context, s *Server, stream string) (ServedState, bool, error) {
	var j jszInfo
	if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
		return ServedState{}, false, err
	}
	d, ok := findStream(j, stream)
	if !ok {
		return ServedState{}, false, nil
	}
	st := ServedState{FirstSeq: d.State.FirstSeq, LastSeq: d.State.LastSeq, Msgs: d.State.Msgs, NumDeleted: d.State.NumDeleted}
	var l jszLost
	if err := s.GetJSON(ctx, jszCapturePath, &l); err == nil {
		for _, a := range l.Accounts {
			for _, x := range a.Streams {
				if x.Name == stream && x.State.Lost != nil {
					st.Lost = x.State.Lost.Msgs
				}
			}
		}
	}
	return st, true, nil
}

// served asks the stream for every sequence 1..last and returns those it
// returns a message for.
func served(ctx context.Context, js jetstream.JetStream, stream string, last uint64) ([]SeqRange, error) {
	var st jetstream.Stream
	err := retry(ctx, "stream "+stream, func(ctx context.Context) error {
		var err error
		st, err = js.Stream(ctx, stream)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []SeqRange
	for seq := uint64(1); seq <= last; seq++ {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := st.GetMsg(cctx, seq)
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("get %s seq %d: %w", stream, seq, err)
		}
		if n := len(out); n > 0 && out[n-1].Last+1 == seq {
			out[n-1].Last = seq
		} else {
			out = append(out, SeqRange{First: seq, Last: seq})
		}
	}
	return out, nil
}

// servedAll reads the whole stream with an ordered consumer and returns
// the sequences it delivered.
func servedAll(ctx context.Context, js jetstream.JetStream, stream string) ([]SeqRange, error) {
	var out []SeqRange
	err := retry(ctx, "read "+stream, func(ctx context.Context) error {
		out = nil
		c, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		for {
			info, err := c.Info(ctx)
			if err != nil {
				return err
			}
			if info.NumPending == 0 && info.NumAckPending == 0 {
				return nil
			}
			batch, err := c.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
			if err != nil {
				return err
			}
			for m := range batch.Messages() {
				md, err := m.Metadata()
				if err != nil {
					return err
				}
				seq := md.Sequence.Stream
				if n := len(out); n > 0 && out[n-1].Last+1 == seq {
					out[n-1].Last = seq
				} else {
					out = append(out, SeqRange{First: seq, Last: seq})
				}
			}
			if err := batch.Error(); err != nil {
				return err
			}
		}
	})
	return out, err
}

// ordersLike makes a stream shaped as the healthy ORDERS: 60 messages on
// four subjects (every third with headers, #30 of 10 KB), deletes of 2 and
// 5, a secure erase of 3, a purge of <prefix>.cancelled: 15 tombstones end
// its only block.
func ordersLike(ctx context.Context, js jetstream.JetStream, name, prefix string, replicas int) error {
	var st jetstream.Stream
	err := retry(ctx, "create "+name, func(ctx context.Context) error {
		var err error
		st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, Replicas: replicas, Storage: jetstream.FileStorage})
		return err
	})
	if err != nil {
		return err
	}
	subjects := []string{".new", ".paid", ".cancelled", ".shipped"}
	for i := 1; i <= 60; i++ {
		var hdr nats.Header
		if i%3 == 0 {
			hdr = nats.Header{}
			hdr.Set("Nats-Msg-Id", fmt.Sprintf("%s-%d", name, i))
		}
		data := []byte(fmt.Sprintf(`{"order":%d,"amount":%d.%02d}`, i, i*13, i%100))
		if i == 30 {
			data = payload("big-order", i, 10*1024)
		}
		if _, err := publish(ctx, js, prefix+subjects[i%len(subjects)], data, hdr); err != nil {
			return err
		}
	}
	for _, seq := range []uint64{2, 5} {
		if err := retry(ctx, "delete", func(ctx context.Context) error { return st.DeleteMsg(ctx, seq) }); err != nil {
			return err
		}
	}
	if err := retry(ctx, "secure delete", func(ctx context.Context) error { return st.SecureDeleteMsg(ctx, 3) }); err != nil {
		return err
	}
	return retry(ctx, "purge subject", func(ctx context.Context) error {
		return st.Purge(ctx, jetstream.WithPurgeSubject(prefix+".cancelled"))
	})
}

// chunks makes an R1 stream of several sealed blocks (max_bytes 120000:
// 32000-byte blocks) with a few deletes.
func chunks(ctx context.Context, js jetstream.JetStream) error {
	var st jetstream.Stream
	err := retry(ctx, "create CHUNKS", func(ctx context.Context) error {
		var err error
		st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "CHUNKS", Subjects: []string{"chunks.>"}, Storage: jetstream.FileStorage, MaxBytes: 120000})
		return err
	})
	if err != nil {
		return err
	}
	for i := 1; i <= 200; i++ {
		if _, err := publish(ctx, js, fmt.Sprintf("chunks.%d", i%4), payload("chunk", i, 400), nil); err != nil {
			return err
		}
	}
	for _, seq := range []uint64{7, 90, 150} {
		if err := retry(ctx, "delete", func(ctx context.Context) error { return st.DeleteMsg(ctx, seq) }); err != nil {
			return err
		}
	}
	return nil
}

// blockRecord is one record of a plain block: offset, length, sequence and
// flags (formats.md 2.1: u32 length, header bit on top; u64 sequence with
// the tombstone bit 62 and the erase bit 63).
type blockRecord struct {
	off, len  int
	seq       uint64
	tombstone bool
}

func blockRecords(p string) ([]blockRecord, int64, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, 0, err
	}
	var out []blockRecord
	for off := 0; off+12 <= len(data); {
		rl := int(binary.LittleEndian.Uint32(data[off:]) &^ (1 << 31))
		if rl < 22 || off+rl > len(data) {
			return nil, 0, fmt.Errorf("%s: record length %d at offset %d", p, rl, off)
		}
		raw := binary.LittleEndian.Uint64(data[off+4:])
		out = append(out, blockRecord{off: off, len: rl, seq: raw &^ (3 << 62), tombstone: raw&(1<<62) != 0})
		off += rl
	}
	return out, int64(len(data)), nil
}

// lastBlock is the highest-numbered N.blk of a stream's msgs folder.
func lastBlock(msgs string) (string, error) {
	blks, err := blockFiles(msgs)
	if err != nil {
		return "", err
	}
	return blks[len(blks)-1], nil
}

func blockFiles(msgs string) ([]string, error) {
	ents, err := os.ReadDir(msgs)
	if err != nil {
		return nil, err
	}
	type blk struct {
		n    int
		name string
	}
	var bs []blk
	for _, e := range ents {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%d.blk", &n); err == nil && strings.HasSuffix(e.Name(), ".blk") {
			bs = append(bs, blk{n, e.Name()})
		}
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("no block in %s", msgs)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].n < bs[j].n })
	var out []string
	for _, b := range bs {
		out = append(out, filepath.Join(msgs, b.name))
	}
	return out, nil
}

// cutBlock truncates block p at byte at, where rec is the record the cut
// falls in or starts at, and says what it cut.
func cutBlock(p string, recs []blockRecord, size int64, at int, class string) (Damage, error) {
	d := Damage{Class: class, SizeBefore: size, SizeAfter: int64(at)}
	for _, r := range recs {
		if r.off+r.len > at && d.CutSeq == 0 {
			d.CutSeq = r.seq
		}
		if r.tombstone {
			if r.off+r.len <= at {
				d.TombstonesKept++
			} else {
				d.TombstonesCut++
			}
		}
	}
	return d, os.Truncate(p, int64(at))
}

// damageStream applies class to the stream folder dir (inside a store
// copy) and returns what it did; File is relative to the store root.
func damageStream(root, account, stream, class string) (Damage, error) {
	msgs := filepath.Join(root, account, "streams", stream, "msgs")
	rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
	if class == "block-removed" {
		blks, err := blockFiles(msgs)
		if err != nil {
			return Damage{}, err
		}
		if len(blks) < 3 {
			return Damage{}, fmt.Errorf("%s: %d blocks, no middle one", msgs, len(blks))
		}
		p := blks[len(blks)/2]
		fi, err := os.Stat(p)
		if err != nil {
			return Damage{}, err
		}
		return Damage{Stream: stream, Class: class, File: rel(p), SizeBefore: fi.Size(), Removed: true}, os.Remove(p)
	}
	p, err := lastBlock(msgs)
	if err != nil {
		return Damage{}, err
	}
	recs, size, err := blockRecords(p)
	if err != nil {
		return Damage{}, err
	}
	var tombs []blockRecord
	for _, r := range recs {
		if r.tombstone {
			tombs = append(tombs, r)
		}
	}
	if len(tombs) < 3 {
		return Damage{}, fmt.Errorf("%s: %d tombstones, want a run of them at the end", p, len(tombs))
	}
	at := -1
	switch class {
	case "torn-mid-record": // inside the largest message record: every tombstone goes
		big := recs[0]
		for _, r := range recs {
			if !r.tombstone && r.len > big.len {
				big = r
			}
		}
		at = big.off + big.len/2
	case "cut-record-boundary": // at the start of the record of seq 41: 41..60 and every tombstone go
		for _, r := range recs {
			if !r.tombstone && r.seq == 41 {
				at = r.off
			}
		}
	case "cut-in-tombstones": // after the first two tombstones
		at = tombs[2].off
	}
	if at < 0 {
		return Damage{}, fmt.Errorf("%s: no place for %s", p, class)
	}
	d, err := cutBlock(p, recs, size, at, class)
	d.Stream, d.File = stream, rel(p)
	return d, err
}

var perturbLogPattern = regexp.MustCompile(`(?i)filestore|stream state|restored|lost|rebuild|ORDERS|CUT|CHUNKS|\[ERR\]|\[WRN\]`)

// newLogLines returns the lines of log p after offset from matching the pattern.
func newLogLines(p string, from int64) []string {
	b, err := os.ReadFile(p)
	if err != nil || int64(len(b)) < from {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b[from:]), "\n") {
		if l != "" && perturbLogPattern.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// perturbBlocks: one standalone server of version v writes four streams;
// a copy of its store gets one damage per stream; a server of the same
// version started on a copy of that is the oracle.
func perturbBlocks(ctx context.Context, env *Env, v string) error {
	name := "perturbed-blocks-" + v
	c, err := NewCluster(ctx, filepath.Join(env.Scratch, "write"), v, "solo", []string{"solo"})
	if err != nil {
		return err
	}
	defer c.Kill()
	s := c.Servers[0]
	s.NoCluster = true
	if err := s.Start(ctx); err != nil {
		return err
	}
	nc, js, err := connect(s)
	if err != nil {
		return err
	}
	streams := map[string]string{"CUTMID": "torn-mid-record", "CUTREC": "cut-record-boundary", "CUTTOMB": "cut-in-tombstones", "CHUNKS": "block-removed"}
	for _, st := range []string{"CUTMID", "CUTREC", "CUTTOMB"} {
		if err := ordersLike(ctx, js, st, strings.ToLower(st), 1); err != nil {
			nc.Close()
			return err
		}
	}
	if err := chunks(ctx, js); err != nil {
		nc.Close()
		return err
	}
	o := &Oracle{Name: name, Version: v, Mode: "standalone", Log: map[string][]string{}}
	for _, st := range sortedKeysOf(streams) {
		before, ok, err := stateOf(ctx, s, st)
		if err != nil || !ok {
			nc.Close()
			return fmt.Errorf("before: %s: %v", st, err)
		}
		if before.Served, err = served(ctx, js, st, before.LastSeq); err != nil {
			nc.Close()
			return err
		}
		o.Streams = append(o.Streams, OracleStream{Server: s.Name, Account: "$G", Stream: st, Before: before})
	}
	nc.Close()
	if err := s.Stop(); err != nil {
		return err
	}
	damaged := filepath.Join(env.Scratch, "damaged", s.Name)
	if err := copyTree(s.JSRoot(), damaged); err != nil {
		return err
	}
	for _, st := range sortedKeysOf(streams) {
		d, err := damageStream(damaged, "$G", st, streams[st])
		if err != nil {
			return err
		}
		d.Server, d.File = s.Name, "store-"+s.Name+"/"+d.File
		o.Damage = append(o.Damage, d)
	}

	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "restart"), v, "solo", []string{"solo"})
	if err != nil {
		return err
	}
	defer r.Kill()
	rs := r.Servers[0]
	rs.NoCluster = true
	if err := copyTree(damaged, rs.JSRoot()); err != nil {
		return err
	}
	if err := rs.Start(ctx); err != nil {
		return err
	}
	nc, js, err = connectWait(ctx, rs)
	if err != nil {
		return err
	}
	defer nc.Close()
	for i := range o.Streams {
		ost := &o.Streams[i]
		err := waitFor(ctx, 20*time.Second, "restored "+ost.Stream, func() (bool, error) {
			_, ok, err := stateOf(ctx, rs, ost.Stream)
			return ok, err
		})
		if err != nil {
			return err
		}
		after, _, _ := stateOf(ctx, rs, ost.Stream)
		if after.Served, err = served(ctx, js, ost.Stream, max(after.LastSeq, ost.Before.LastSeq)); err != nil {
			after.ServedErr = err.Error()
		}
		ost.After = after
	}
	nc.Close()
	if err := rs.Stop(); err != nil {
		return err
	}
	o.Log[rs.Name] = newLogLines(rs.LogFile, 0)
	return writePerturbed(env, o, map[string]string{s.Name: damaged}, map[string]string{s.Name: s.LogFile})
}

// perturbReplica: three servers of version v hold an R3 ORDERS-like stream;
// on a copy, one replica's last block is torn inside its 10 KB record (every
// tombstone and messages 30..60 go); the three servers started on a copy of
// that are the oracle.
func perturbReplica(ctx context.Context, env *Env, v string) error {
	name := "perturbed-replica-" + v
	names := []string{"p1", "p2", "p3"}
	c, err := NewCluster(ctx, filepath.Join(env.Scratch, "write"), v, "truth", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	if err := ordersLike(ctx, js, "ORDERS", "orders", 3); err != nil {
		nc.Close()
		return err
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		nc.Close()
		return err
	}
	o := &Oracle{Name: name, Version: v, Mode: "cluster", Log: map[string][]string{}}
	var servedBefore []SeqRange
	for i, s := range c.Servers {
		before, ok, err := stateOf(ctx, s, "ORDERS")
		if err != nil || !ok {
			nc.Close()
			return fmt.Errorf("before: %s: %v", s.Name, err)
		}
		if i == 0 {
			if servedBefore, err = served(ctx, js, "ORDERS", before.LastSeq); err != nil {
				nc.Close()
				return err
			}
			before.Served = servedBefore
		}
		o.Streams = append(o.Streams, OracleStream{Server: s.Name, Account: "$G", Stream: "ORDERS", Before: before})
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	roots, logs := map[string]string{}, map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(env.Scratch, "damaged", s.Name)
		logs[s.Name] = s.LogFile
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}
	victim := names[len(names)-1]
	d, err := damageStream(roots[victim], "$G", "ORDERS", "torn-mid-record")
	if err != nil {
		return err
	}
	d.Server, d.File = victim, "store-"+victim+"/"+d.File
	o.Damage = append(o.Damage, d)

	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "restart"), v, "truth", names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for _, s := range r.Servers {
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	// What the restart does is the oracle, whatever it is: a server that
	// never joins or a stream that never settles is recorded, not an error.
	if err := waitAnyMetaLeader(ctx, r, 30*time.Second); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 60*time.Second); err != nil {
		logf("%s: restarted cluster not quiet (%v); recording what it serves now", name, err)
		o.NotQuiet = err.Error()
	}
	nc, js, err = connectWait(ctx, r.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	for i, s := range r.Servers {
		after, ok, err := stateOf(ctx, s, "ORDERS")
		if err != nil || !ok {
			after.ServedErr = fmt.Sprintf("no /jsz state of ORDERS (%v)", err)
		}
		if i == 0 {
			if after.Served, err = served(ctx, js, "ORDERS", max(after.LastSeq, o.Streams[i].Before.LastSeq)); err != nil {
				after.ServedErr = err.Error()
			}
		}
		o.Streams[i].After = after
	}
	nc.Close()
	if err := r.Stop(); err != nil {
		return err
	}
	for _, s := range r.Servers {
		o.Log[s.Name] = newLogLines(s.LogFile, 0)
	}
	return writePerturbed(env, o, roots, logs)
}

// connectWait is connect retried for 30 s: a server opens its client port
// only after JetStream has recovered its streams.
func connectWait(ctx context.Context, ss ...*Server) (nc *nats.Conn, js jetstream.JetStream, err error) {
	err = waitFor(ctx, 30*time.Second, "client port", func() (bool, error) {
		nc, js, err = connect(ss...)
		return err == nil, nil
	})
	return nc, js, err
}

// writePerturbed commits <out>/<name>/bundle (flat layout: store-<server>/,
// <server>.log) and oracle.json.
func writePerturbed(env *Env, o *Oracle, roots, logs map[string]string) error {
	return writePerturbedAny(env, o.Name, o, roots, logs)
}

// writePerturbedAny is writePerturbed with any oracle (a scenario's own
// oracle type, holding Oracle or not).
func writePerturbedAny(env *Env, name string, o any, roots, logs map[string]string) error {
	out := filepath.Join(perturbedOut(env), name)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for srv, root := range roots {
		if err := copyTree(root, filepath.Join(out, "bundle", "store-"+srv)); err != nil {
			return err
		}
		if err := copyFile(logs[srv], filepath.Join(out, "bundle", srv+".log")); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "oracle.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	size, _ := dirSize(out)
	logf("perturbed %s written to %s (%d bytes)", name, out, size)
	if size > 2<<20 {
		return fmt.Errorf("%s is %d bytes, over the 2 MB budget", name, size)
	}
	return nil
}

// CrashOracle is oracle.json of perturbed-crash-<v>: every server killed
// (SIGKILL) at once while a publisher was writing, the state the kill
// left, and what the three servers started together on a copy serve.
type CrashOracle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Mode    string `json:"mode"` // "crash"
	Stream  string `json:"stream"`
	Attempt int    `json:"attempt"`
	// Acked: the sequences the publisher got an ack for (client/acks.jsonl).
	Acked []SeqRange `json:"acked"`
	// BlockLast: per server, the last message sequence its stream blocks
	// hold after the kill (the raft WAL may hold more).
	BlockLast map[string]uint64 `json:"block_last"`
	// After: per server, /jsz of the stream once the restarted copy settled;
	// Served: the sequences the stream leader returned for 1..max acked.
	After     map[string]ServedState `json:"after"`
	Served    []SeqRange             `json:"served"`
	ServedErr string                 `json:"served_error,omitempty"`
	NotQuiet  string                 `json:"not_quiet,omitempty"`
	Log       map[string][]string    `json:"log"`
}

// blocksLast is the highest message sequence in a stream's blocks.
func blocksLast(msgs string) uint64 {
	blks, err := blockFiles(msgs)
	if err != nil {
		return 0
	}
	var last uint64
	for _, b := range blks {
		recs, _, _ := blockRecords(b) // a torn tail ends the list early: what is before it counts
		for _, r := range recs {
			if !r.tombstone && r.seq > last {
				last = r.seq
			}
		}
	}
	return last
}

// perturbCrash: three servers of version v, an R3 stream under an async
// publisher, all three SIGKILLed at once mid-stream; tried again until some
// server's blocks end before the last acked sequence (what is left is in
// the stream group's raft WAL only). The three restarted together on a copy
// are the oracle.
func perturbCrash(ctx context.Context, env *Env, v string) error {
	name := "perturbed-crash-" + v
	names := []string{"k1", "k2", "k3"}
	// Tries until every server's blocks end before the last ack (the tail
	// is in the WAL only); after 5, the last try where some server's do.
	var keep func() error
	for attempt := 1; attempt <= 5; attempt++ {
		dir := filepath.Join(env.Scratch, fmt.Sprintf("try%d", attempt))
		c, err := NewCluster(ctx, dir, v, "crash", names)
		if err != nil {
			return err
		}
		o, acks, some, all, err := crashOnce(ctx, c, v)
		c.Kill()
		if err != nil && keep != nil {
			logf("%s: try %d: %v; keeping the earlier try", name, attempt, err)
			return keep()
		}
		if err != nil {
			return err
		}
		if !some {
			logf("%s: try %d: every server's blocks hold every acked message; again", name, attempt)
			continue
		}
		write := func() error { return writeCrash(ctx, env, name, attempt, dir, v, names, c, o, acks) }
		if !all && attempt < 5 {
			logf("%s: try %d: some server's blocks hold every acked message; again", name, attempt)
			keep = write
			continue
		}
		return write()
	}
	if keep != nil {
		return keep()
	}
	return fmt.Errorf("%s: no try left an acked message out of every block of some server", name)
}

// writeCrash restarts copies of the crashed stores (the oracle) and commits
// the crashed state with the publisher's acks and oracle.json.
func writeCrash(ctx context.Context, env *Env, name string, attempt int, dir, v string, names []string, c *Cluster, o *CrashOracle, acks []byte) error {
	o.Name, o.Attempt = name, attempt
	roots, logs := map[string]string{}, map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(dir, "crashed", s.Name)
		logs[s.Name] = s.LogFile
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}
	if err := crashRestart(ctx, filepath.Join(dir, "restart"), v, names, roots, o); err != nil {
		return err
	}
	out := filepath.Join(perturbedOut(env), name)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for srv, root := range roots {
		if err := copyTree(root, filepath.Join(out, "bundle", "store-"+srv)); err != nil {
			return err
		}
		if err := copyFile(logs[srv], filepath.Join(out, "bundle", srv+".log")); err != nil {
			return err
		}
	}
	if err := writeFileAll(filepath.Join(out, "bundle", "client", "acks.jsonl"), acks); err != nil {
		return err
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "oracle.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	size, _ := dirSize(out)
	logf("perturbed %s written to %s (%d bytes)", name, out, size)
	if size > 2<<20 {
		return fmt.Errorf("%s is %d bytes, over the 2 MB budget", name, size)
	}
	return nil
}

// crashOnce runs one try: publish, kill all, look at the blocks.
func crashOnce(ctx context.Context, c *Cluster, v string) (o *CrashOracle, acks []byte, some, all bool, err error) {
	if err := c.Start(ctx); err != nil {
		return nil, nil, false, false, err
	}
	if err := c.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return nil, nil, false, false, err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return nil, nil, false, false, err
	}
	defer nc.Close()
	const stream = "CRASH"
	err = retry(ctx, "create "+stream, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{"crash.>"}, Replicas: 3, Storage: jetstream.FileStorage})
		return err
	})
	if err != nil {
		return nil, nil, false, false, err
	}
	ajs, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(64))
	if err != nil {
		return nil, nil, false, false, err
	}
	var (
		acked = map[uint64]bool{}
		futs  []jetstream.PubAckFuture
	)
	collect := func() {
		keep := futs[:0]
		for _, f := range futs {
			select {
			case a := <-f.Ok():
				acked[a.Sequence] = true
				b, _ := json.Marshal(struct {
					Stream string `json:"stream"`
					Seq    uint64 `json:"seq"`
				}{a.Stream, a.Sequence})
				acks = append(append(acks, b...), '\n')
			case <-f.Err():
			default:
				keep = append(keep, f)
			}
		}
		futs = keep
	}
	// Small messages, at most 1500 (the fixture stays small); the kill
	// comes right after the last is sent, with up to 64 acks in flight.
	killAt := time.Now().Add(1500 * time.Millisecond)
	for i := 1; time.Now().Before(killAt) && i <= 1500; i++ {
		f, err := ajs.PublishAsync(fmt.Sprintf("crash.%d", i%5), []byte(fmt.Sprintf("entry %d", i)))
		if err != nil {
			break
		}
		futs = append(futs, f)
		if i%32 == 0 {
			collect()
		}
	}
	// Kill all three at once while acks are still coming in.
	done := make(chan struct{})
	for _, s := range c.Servers {
		go func() { _ = s.Kill(); done <- struct{}{} }()
	}
	for range c.Servers {
		<-done
	}
	collect()
	if len(acked) == 0 {
		return nil, nil, false, false, fmt.Errorf("no publish acknowledged before the kill")
	}
	var seqs []uint64
	for s := range acked {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	o = &CrashOracle{Version: v, Mode: "crash", Stream: stream, BlockLast: map[string]uint64{}, After: map[string]ServedState{}, Log: map[string][]string{}}
	for _, q := range seqs {
		if n := len(o.Acked); n > 0 && o.Acked[n-1].Last+1 == q {
			o.Acked[n-1].Last = q
		} else {
			o.Acked = append(o.Acked, SeqRange{First: q, Last: q})
		}
	}
	top := seqs[len(seqs)-1]
	all = true
	for _, s := range c.Servers {
		o.BlockLast[s.Name] = blocksLast(filepath.Join(s.JSRoot(), "$G", "streams", stream, "msgs"))
		some = some || o.BlockLast[s.Name] < top
		all = all && o.BlockLast[s.Name] < top
	}
	logf("crash try: acked up to %d, blocks end at %v", top, o.BlockLast)
	return o, acks, some, all, nil
}

// crashRestart starts the three on copies of the crashed stores and fills
// the oracle's after state.
func crashRestart(ctx context.Context, dir, v string, names []string, roots map[string]string, o *CrashOracle) error {
	r, err := NewCluster(ctx, dir, v, "crash", names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for _, s := range r.Servers {
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := waitAnyMetaLeader(ctx, r, 30*time.Second); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 60*time.Second); err != nil {
		o.NotQuiet = err.Error()
	}
	for _, s := range r.Servers {
		st, _, err := stateOf(ctx, s, o.Stream)
		if err != nil {
			st.ServedErr = err.Error()
		}
		o.After[s.Name] = st
	}
	nc, js, err := connectWait(ctx, r.Servers...)
	if err != nil {
		return err
	}
	if o.Served, err = servedAll(ctx, js, o.Stream); err != nil {
		o.ServedErr = err.Error()
	}
	nc.Close()
	if err := r.Stop(); err != nil {
		return err
	}
	for _, s := range r.Servers {
		o.Log[s.Name] = newLogLines(s.LogFile, 0)
	}
	return nil
}
