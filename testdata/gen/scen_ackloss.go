package main

// Acknowledged writes lost together on every replica (nats-server#7564: a
// coordinated power loss with the default 2-minute sync_interval): an R3
// stream takes publishes whose PubAck reply bodies are recorded verbatim, one
// per line, as a client's ack log; the cluster is stopped, the stores are
// copied and the same tail (the last ackLossCut records of the stream's last
// block) is cut off every replica's copy, as a lost page cache would; the
// real servers are restarted on the damaged copies and what they say is
// captured. The bundle is that restarted state, the ack log and the /jsz
// each server answered before the loss.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func ackLossScenarios() []Scenario {
	return []Scenario{
		{Name: "acked-lost-v2.15.2",
			Doc:     "3 x v2.15.2, R3 stream LEDGER with a client ack log (raw PubAck bodies); stop, cut the same last records off every replica's last block, restart on the damaged copies",
			Run:     ackLoss,
			Timeout: 8 * time.Minute},
		{Name: "acked-lost-v2.11.17",
			Doc:     "as acked-lost-v2.15.2 on v2.11.17, which keeps the last sequence the stale index.db remembers (last_seq 240, 30 deleted) and never rewrites it",
			Run:     func(ctx context.Context, env *Env) error { return ackLossOn(ctx, env, "v2.11.17") },
			Timeout: 8 * time.Minute},
		{Name: "acked-lost-jepsen-v2.15.2",
			Doc:     "as acked-lost-v2.15.2, the client a Jepsen-style run (5 processes, :invoke then :ok/:fail/:info, a :fetch, nemesis ops) written as EDN histories with and without :seq",
			Run:     func(ctx context.Context, env *Env) error { return ackLossRun(ctx, env, "v2.15.2", &jepsenRun{}) },
			Timeout: 8 * time.Minute},
	}
}

const (
	ackLossStream    = "LEDGER"
	ackLossPublished = 240
	// ackLossCut is the number of records cut off the end of every
	// replica's last block: the writes the page cache held.
	ackLossCut = 30
	// ackLossLog is the ack log's path inside the bundle.
	ackLossLog = "client/ledger-acks.jsonl"
)

// AckLossExpect is want.json's expect for acked-lost-v2.15.2.
type AckLossExpect struct {
	Account string `json:"account"`
	Stream  string `json:"stream"`
	AckLog  string `json:"ack_log"`
	// Published messages; Acked: replies carrying a sequence (duplicates
	// included), AckedSeqs the distinct sequences acknowledged.
	Published  int    `json:"published"`
	Acked      int    `json:"acked"`
	Duplicates int    `json:"duplicates"`
	AckedFirst uint64 `json:"acked_first"`
	AckedLast  uint64 `json:"acked_last"`
	// Before is each server's /jsz state of the stream before the loss
	// (the captures are in the bundle under BeforeCaptures).
	Before         map[string]AckLossState `json:"before"`
	BeforeCaptures map[string]string       `json:"before_captures"`
	Cuts           []AckLossCut            `json:"cuts"`
	// After is each server's /jsz state of the stream after the restart on
	// the damaged copies; StreamLeaderAfter what they said of its leader.
	After             map[string]AckLossState `json:"after"`
	StreamLeaderAfter map[string]string       `json:"stream_leader_after"`
	// Served: the sequences up to AckedLast the restarted stream returned
	// a message for (GetMsg through its leader); absent when no stream
	// leader was named.
	Served []SeqRange `json:"served,omitempty"`
	// AckedLost: acknowledged sequences the restarted stream did not
	// serve, or, with no leader to ask, those beyond every server's
	// last_seq (from the ack log and the captures).
	AckedLost []SeqRange `json:"acked_lost"`
	// LogLines: the restarted servers' lines about the stream's state.
	LogPattern string              `json:"log_pattern"`
	LogLines   map[string][]string `json:"log_lines"`
}

// AckLossState is one server's view of the stream in /jsz.
type AckLossState struct {
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Messages uint64 `json:"messages"`
	Leader   string `json:"leader"`
}

// AckLossCut is what was cut off one replica's block.
type AckLossCut struct {
	Server     string `json:"server"`
	File       string `json:"file"` // in the bundle
	SizeBefore int64  `json:"size_before"`
	SizeAfter  int64  `json:"size_after"`
	FirstCut   uint64 `json:"first_cut_seq"`
	LastCut    uint64 `json:"last_cut_seq"`
	// IndexKept: the stream's index.db after the restarted run is the one
	// from before the cut (the server did not write its own), so the
	// bundle's store still shows the block ending before what index.db
	// records (v2.11.17: "Stream state encountered internal inconsistency
	// on write" at the stop).
	IndexKept bool `json:"index_kept"`
}

// SeqRange is an inclusive range of sequences.
type SeqRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

var ackLossLogPattern = regexp.MustCompile(`(?i)LEDGER|outdated|rebuild|catchup|no leader`)

func ackLoss(ctx context.Context, env *Env) error { return ackLossOn(ctx, env, "v2.15.2") }

// ackLossOn is ackLoss on nats-server version (a family, see main.go).
func ackLossOn(ctx context.Context, env *Env, version string) error {
	return ackLossRun(ctx, env, version, nil)
}

// ackLossRun is ackLossOn with, when j is set, the client a Jepsen-style
// run (scen_jepsen.go) whose histories replace the ack log.
func ackLossRun(ctx context.Context, env *Env, version string, j *jepsenRun) error {
	names := []string{"ack-0", "ack-1", "ack-2"}
	c, err := NewCluster(ctx, env.Scratch, version, "ledger", names)
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
	x := AckLossExpect{Account: "$G", Stream: ackLossStream, AckLog: ackLossLog, LogPattern: ackLossLogPattern.String(),
		Before: map[string]AckLossState{}, BeforeCaptures: map[string]string{}, After: map[string]AckLossState{},
		StreamLeaderAfter: map[string]string{}, LogLines: map[string][]string{}}
	var acks []byte
	if j != nil {
		err = j.workload(ctx, c, &x)
	} else {
		acks, err = ackLossWorkload(ctx, c, &x)
	}
	if err != nil {
		return err
	}
	before, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if j != nil {
		j.nemesis(":info", ":stop", ":all")
	}
	if err := c.Stop(); err != nil {
		return err
	}
	layout := LayoutFlat()
	extra := map[string][]byte{ackLossLog: acks}
	if j != nil {
		j.stopped(ctx, names)
		delete(extra, ackLossLog)
	}
	for _, s := range c.Servers {
		st, err := ackLossStateOf(before[s.Name])
		if err != nil {
			return err
		}
		x.Before[s.Name] = st
		p := "before-loss/" + s.Name + "-jsz.json"
		x.BeforeCaptures[s.Name] = p
		extra[p] = before[s.Name].Files["jsz"]
	}

	// The damaged copies, restarted: same names, new ports; each log file
	// starts as the first run's log, so the server appends its restart to it.
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "restart"), c.Version, c.Name, names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		src := c.Servers[i]
		if err := copyTree(src.JSRoot(), s.JSRoot()); err != nil {
			return err
		}
		if err := copyFile(src.LogFile, s.LogFile); err != nil {
			return err
		}
		cut, err := cutLastRecords(filepath.Join(s.JSRoot(), "$G", "streams", ackLossStream, "msgs"), ackLossCut)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		cut.Server = s.Name
		cut.File = layout.Store(s.Name) + "/$G/streams/" + ackLossStream + "/msgs/" + cut.File
		x.Cuts = append(x.Cuts, cut)
	}
	if j != nil {
		j.cut(names)
	}
	logSizes := map[string]int64{}
	for _, s := range r.Servers {
		fi, err := os.Stat(s.LogFile)
		if err != nil {
			return err
		}
		logSizes[s.Name] = fi.Size()
	}
	indexBefore := map[string][]byte{}
	for _, s := range r.Servers {
		indexBefore[s.Name], _ = os.ReadFile(filepath.Join(s.JSRoot(), "$G", "streams", ackLossStream, "msgs", "index.db"))
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := r.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return err
	}
	if j != nil {
		j.nemesis(":info", ":start", ":all")
	}
	// Every server restores the stream within seconds; its leader may
	// never come (a raft snapshot claiming more than the blocks hold), so
	// wait for the state, not for quiet.
	err = waitFor(ctx, 30*time.Second, "every server reporting "+ackLossStream, func() (bool, error) {
		for _, s := range r.Servers {
			var j jszInfo
			if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
				return false, nil
			}
			if _, ok := findStream(j, ackLossStream); !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	time.Sleep(15 * time.Second) // let elections and catch-up attempts be logged
	after, err := CaptureAll(ctx, r)
	if err != nil {
		return err
	}
	if j != nil {
		j.fetch(ctx, r)
	}
	// What the stream serves, asked for every sequence up to the last
	// acknowledged one, when a stream leader is named: /jsz last_seq alone
	// can claim what no replica holds (v2.11.17, 2026-12-02: last_seq 240
	// with 210 messages on every server after the cut).
	for _, s := range r.Servers {
		if st, err := ackLossStateOf(after[s.Name]); err != nil || st.Leader == "" {
			continue
		}
		nc, js, err := connect(r.Servers...)
		if err != nil {
			return err
		}
		x.Served, err = served(ctx, js, ackLossStream, x.AckedLast)
		nc.Close()
		if err != nil {
			return err
		}
		if x.Served == nil {
			x.Served = []SeqRange{}
		}
		break
	}
	if err := r.Stop(); err != nil {
		return err
	}
	for i, s := range r.Servers {
		b, err := os.ReadFile(filepath.Join(s.JSRoot(), "$G", "streams", ackLossStream, "msgs", "index.db"))
		x.Cuts[i].IndexKept = err == nil && len(b) > 0 && bytes.Equal(b, indexBefore[s.Name])
	}
	maxLast := uint64(0)
	for _, s := range r.Servers {
		st, err := ackLossStateOf(after[s.Name])
		if err != nil {
			return err
		}
		x.After[s.Name] = st
		x.StreamLeaderAfter[s.Name] = st.Leader
		maxLast = max(maxLast, st.LastSeq)
		logb, err := os.ReadFile(s.LogFile)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(logb[logSizes[s.Name]:]), "\n") {
			if ackLossLogPattern.MatchString(l) {
				x.LogLines[s.Name] = append(x.LogLines[s.Name], l)
			}
		}
	}
	switch {
	case x.Served != nil:
		x.AckedLost = notIn(x.AckedFirst, x.AckedLast, x.Served)
	case maxLast < x.AckedLast:
		x.AckedLost = []SeqRange{{First: maxLast + 1, Last: x.AckedLast}}
	}
	if len(x.AckedLost) == 0 {
		return fmt.Errorf("the restarted servers report last_seq %d, every acknowledged write (up to %d) is still there: %+v", maxLast, x.AckedLast, x.After)
	}
	name := "acked-lost-" + version
	var expect any = x
	if j != nil {
		name = "acked-lost-jepsen-" + version
		for p, b := range j.histories() {
			extra[p] = b
		}
		je, err := j.expect(maxLast)
		if err != nil {
			return err
		}
		x.AckLog = jepsenHistory
		// One acked-lost finding per history (acked_lost stands for one).
		expect = struct {
			AckLossExpect
			Jepsen   *JepsenExpect       `json:"jepsen"`
			Findings []map[string]string `json:"findings"`
		}{x, je, []map[string]string{{"code": "acked-lost", "account": x.Account, "stream": x.Stream}}}
	}
	b := &Bundle{Name: name, Version: version[1:], Layout: layout, Servers: r.Servers, Captures: after, Extra: extra, Expect: expect}
	return b.Write(env.Scratch, env.Out)
}

// ackLossWorkload creates the R3 stream and publishes through plain
// requests, so the ack log holds each reply body exactly as the server sent
// it; one message is sent twice with the same Nats-Msg-Id to get a
// duplicate's reply too.
func ackLossWorkload(ctx context.Context, c *Cluster, x *AckLossExpect) ([]byte, error) {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	err = retry(ctx, "create "+ackLossStream, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: ackLossStream, Subjects: []string{"ledger.>"},
			Replicas: 3, Storage: jetstream.FileStorage})
		return err
	})
	if err != nil {
		return nil, err
	}
	var log bytes.Buffer
	seqs := map[uint64]bool{}
	send := func(m *nats.Msg) error {
		x.Published++
		var reply *nats.Msg
		err := retry(ctx, "publish "+m.Subject, func(ctx context.Context) error {
			var err error
			reply, err = nc.RequestMsgWithContext(ctx, m)
			return err
		})
		if err != nil {
			return err
		}
		var ack struct {
			Seq       uint64 `json:"seq"`
			Duplicate bool   `json:"duplicate"`
		}
		if err := json.Unmarshal(reply.Data, &ack); err != nil || ack.Seq == 0 {
			return fmt.Errorf("reply %q to %s: not an ack (%v)", reply.Data, m.Subject, err)
		}
		log.Write(reply.Data)
		log.WriteByte('\n')
		x.Acked++
		if ack.Duplicate {
			x.Duplicates++
		}
		seqs[ack.Seq] = true
		return nil
	}
	for i := 1; i <= ackLossPublished; i++ {
		m := nats.NewMsg(fmt.Sprintf("ledger.acct%d", i%7))
		m.Data = []byte(fmt.Sprintf(`{"entry":%d,"amount":%d}`, i, i*37%1000))
		if i%10 == 0 {
			m.Header.Set("Nats-Msg-Id", "entry-"+strconv.Itoa(i))
		}
		if err := send(m); err != nil {
			return nil, err
		}
		if i == ackLossPublished/2 { // the same entry again: the server answers a duplicate
			if err := send(m); err != nil {
				return nil, err
			}
		}
	}
	var all []uint64
	for s := range seqs {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	x.AckedFirst, x.AckedLast = all[0], all[len(all)-1]
	if x.Duplicates == 0 {
		return nil, fmt.Errorf("the repeated Nats-Msg-Id got no duplicate reply")
	}
	return log.Bytes(), nil
}

// cutLastRecords truncates the highest-numbered N.blk in dir after the
// record that precedes its last n records, walking the record lengths
// (formats.md 2.1: u32 length with the header flag in the top bit, then u64
// sequence): what a server that lost its page cache finds.
func cutLastRecords(dir string, n int) (AckLossCut, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return AckLossCut{}, err
	}
	last, lastName := -1, ""
	for _, e := range ents {
		if num, ok := strings.CutSuffix(e.Name(), ".blk"); ok {
			if v, err := strconv.Atoi(num); err == nil && v > last {
				last, lastName = v, e.Name()
			}
		}
	}
	if last < 0 {
		return AckLossCut{}, fmt.Errorf("no block in %s", dir)
	}
	p := filepath.Join(dir, lastName)
	data, err := os.ReadFile(p)
	if err != nil {
		return AckLossCut{}, err
	}
	type rec struct {
		off int
		seq uint64
	}
	var recs []rec
	for off := 0; off+12 <= len(data); {
		rl := int(binary.LittleEndian.Uint32(data[off:]) &^ (1 << 31))
		if rl < 22 || off+rl > len(data) {
			return AckLossCut{}, fmt.Errorf("%s: record length %d at offset %d", p, rl, off)
		}
		recs = append(recs, rec{off, binary.LittleEndian.Uint64(data[off+4:]) &^ (3 << 62)})
		off += rl
	}
	if len(recs) <= n {
		return AckLossCut{}, fmt.Errorf("%s holds %d records, not more than the %d to cut", p, len(recs), n)
	}
	cutAt := recs[len(recs)-n]
	if err := os.Truncate(p, int64(cutAt.off)); err != nil {
		return AckLossCut{}, err
	}
	return AckLossCut{File: lastName, SizeBefore: int64(len(data)), SizeAfter: int64(cutAt.off),
		FirstCut: cutAt.seq, LastCut: recs[len(recs)-1].seq}, nil
}

func ackLossStateOf(c *Capture) (AckLossState, error) {
	if c == nil {
		return AckLossState{}, fmt.Errorf("no capture")
	}
	var j jszInfo
	if err := jsonUnmarshal(c.Files["jsz"], &j); err != nil {
		return AckLossState{}, err
	}
	sd, ok := findStream(j, ackLossStream)
	if !ok {
		return AckLossState{}, fmt.Errorf("%s: /jsz lists no %s", c.Server, ackLossStream)
	}
	st := AckLossState{FirstSeq: sd.State.FirstSeq, LastSeq: sd.State.LastSeq, Messages: sd.State.Msgs}
	if sd.Cluster != nil {
		st.Leader = sd.Cluster.Leader
	}
	return st, nil
}

func findStream(j jszInfo, name string) (streamDetail, bool) {
	for _, a := range j.Accounts {
		for _, sd := range a.Streams {
			if sd.Name == name {
				return sd, true
			}
		}
	}
	return streamDetail{}, false
}

// notIn: the sequences first..last that no range of have holds.
func notIn(first, last uint64, have []SeqRange) []SeqRange {
	var out []SeqRange
	for seq := first; seq <= last; seq++ {
		held := false
		for _, r := range have {
			held = held || r.First <= seq && seq <= r.Last
		}
		if held {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Last+1 == seq {
			out[n-1].Last = seq
		} else {
			out = append(out, SeqRange{First: seq, Last: seq})
		}
	}
	return out
}
