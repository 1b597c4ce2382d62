package main

// Issue 12 item 3: a corrupt meta snapshot. One bit of the payload of
// _meta_/snapshots/snap.* is flipped on two of three stopped servers; the
// bundle is that state (logs and captures from before the stop), and expect
// records what the real server of the same version does when started on a
// copy of it. For v2.12.1 the restarted copy is a second bundle
// (metasnap-v2.12.1-restarted): the state after the orphan cleanup.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func metaSnapScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.12.1", "v2.15.2", "v2.14.10", "v2.11.17"} {
		out = append(out, Scenario{Name: "metasnap-" + v,
			Doc:     "3 x " + v + ": one bit flipped in the _meta_ snapshot payload of 2 servers; expect = what each server does when started on a copy",
			Timeout: 12 * time.Minute, // up to metaSnapAttempts restarts
			Run:     func(ctx context.Context, env *Env) error { return metaSnap(ctx, env, v) }})
	}
	return out
}

// SnapFlip is one damaged snapshot file.
type SnapFlip struct {
	Server string `json:"server"`
	File   string `json:"file"` // relative to the server's JetStream root
	Size   int    `json:"size"`
	// DataOffset is where the upper-layer (meta) payload starts; Offset is
	// the flipped byte, Bit the bit (0 = least significant).
	DataOffset int  `json:"data_offset"`
	Offset     int  `json:"offset"`
	Bit        uint `json:"bit"`
	Before     byte `json:"before"`
	After      byte `json:"after"`
}

// SnapRestart is what one server did when started on the damaged copy.
type SnapRestart struct {
	Server  string `json:"server"`
	Damaged bool   `json:"damaged"`
	// Started: the process was up (monitoring answered) at the end of the wait.
	Started bool   `json:"started"`
	Exit    string `json:"exit,omitempty"`
	Health  string `json:"health,omitempty"`
	// JetStream: /jsz answered with JetStream enabled.
	MetaLeader string   `json:"meta_leader"`
	Streams    []string `json:"streams"`   // "<acc> > <stream>" in /jsz at the end
	Consumers  []string `json:"consumers"` // "<acc> > <stream> > <consumer>"
	// The files of $SYS/_js_/_meta_ ("path size") before and after the run.
	MetaFilesBefore []string `json:"meta_files_before"`
	MetaFilesAfter  []string `json:"meta_files_after"`
	FoldersBefore   []string `json:"folders_before"`
	FoldersAfter    []string `json:"folders_after"`
	// Log lines of the run about snapshots, JetStream start, orphans, removals.
	Log []string `json:"log"`
	// OrphanCheck: "ran", "skipped: <the reason it logged>" or "not
	// reached" (no "checking for orphans" line in the wait).
	OrphanCheck string `json:"orphan_check,omitempty"`
	// LeaderSnapshot: before its orphan check the server installed a meta
	// snapshot the leader sent (DBG "RAFT [<id> - _meta_] Installing
	// snapshot"): its meta state is then the leader's, not what its own
	// WAL held after its corrupt snapshot.
	LeaderSnapshot bool `json:"leader_snapshot,omitempty"`
}

var metaSnapshotOrCheckRE = regexp.MustCompile(`- _meta_\] Installing snapshot|checking for orphans`)

// installedBeforeCheck: a meta snapshot was installed before the first
// orphan check line.
func installedBeforeCheck(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "checking for orphans") {
			return false
		}
		if strings.Contains(l, "Installing snapshot") {
			return true
		}
	}
	return false
}

// MetaSnapRemedy is what the remedy run showed.
type MetaSnapRemedy struct {
	Steps      []string            `json:"steps"`
	MetaLeader string              `json:"meta_leader"`
	Streams    map[string][]string `json:"streams"` // server -> "<acc> > <stream> <messages>" in /jsz
	// Recovered: every created stream is held by as many servers as its
	// replicas, with the messages it had, and no orphan line was logged.
	Recovered bool     `json:"recovered"`
	Log       []string `json:"log"`
}

// MetaSnapRestartedExpect is want.json's expect for the restarted copy: the
// state after the run, what it lost and the lines that removed it.
type MetaSnapRestartedExpect struct {
	RestartedFrom string `json:"restarted_from"`
	// StreamsLost: created streams no server holds at the end of the run.
	StreamsLost []string `json:"streams_lost"`
	// ConsumersLost: created consumers no server's /jsz lists at the end.
	ConsumersLost []string `json:"consumers_lost"`
	CleanupLines  []string `json:"cleanup_lines"`
}

// MetaSnapExpect is want.json's expect for metasnap-<version>.
type MetaSnapExpect struct {
	Streams   map[string]string `json:"streams"` // "<acc> > <name>" -> replicas and placement
	Consumers []string          `json:"consumers"`
	Flips     []SnapFlip        `json:"flips"`
	// StopCycles: graceful stops until every server held a meta snapshot
	// with a payload.
	StopCycles int `json:"stop_cycles"`
	// MetaLeaderAtStop is the meta leader before the graceful stop.
	MetaLeaderAtStop string        `json:"meta_leader_at_stop"`
	Waited           int           `json:"waited_seconds"`
	Restart          []SnapRestart `json:"restart"`
	// OrphansDeleted: the streams each server logged as orphans or whose
	// folder the run removed; OrphanConsumersDeleted the consumer lines.
	OrphansDeleted         []OrphanDeleted  `json:"orphans_deleted"`
	OrphanConsumersDeleted []OrphanConsumer `json:"orphan_consumers_deleted"`
	// LostInRestart: created streams no server holds at the end of the run.
	LostInRestart []string `json:"lost_in_restart"`
	// Remedy: the damaged servers' corrupt snapshot and meta WAL (msgs/)
	// moved out of the store, then every server started on fresh copies.
	Remedy MetaSnapRemedy `json:"remedy"`
	// Attempts: the restarts run (the last is the one Restart and
	// OrphansDeleted describe); SkippedRuns those in which a started server
	// skipped its orphan check; OrphanCheckSkipped the servers that skipped
	// it in the last run too (their orphan-risk is neither confirmed nor
	// refuted).
	Attempts           int          `json:"attempts"`
	SkippedRuns        []SkippedRun `json:"skipped_runs,omitempty"`
	OrphanCheckSkipped []string     `json:"orphan_check_skipped,omitempty"`
	// DamagedKept: damaged servers that ran their orphan check in the last
	// run and deleted nothing. On 2.11.17 a damaged server whose meta WAL
	// held entries after its snapshot deleted its streams in some runs and
	// nothing in others (2026-12-02), so what one run kept neither
	// confirms nor refutes a predicted deletion.
	DamagedKept []string `json:"damaged_kept,omitempty"`
	// Restarted names the bundle of the restarted copy (v2.12.1 only).
	Restarted string `json:"restarted_bundle,omitempty"`
}

var metaSnapInterestRE = regexp.MustCompile(`(?i)snapshot corrupt|checksums did not match|Can't start JetStream|orphan|JetStream removing|Deleting stream|Deleting consumer|Restored \d+ messages|catchup|Starting JetStream|JetStream cluster no metadata leader|meta leader|Self is new JetStream cluster metadata leader`)

func metaSnap(ctx context.Context, env *Env, version string) error {
	name := "metasnap-" + version
	names := []string{"ms-0", "ms-1", "ms-2"}
	c, err := NewCluster(ctx, env.Scratch, version, "snap", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		// Debug logging shows the silent removals ("JetStream removing stream").
		s.Debug, s.Extra = true, fmt.Sprintf("server_tags: [\"node:%s\"]", s.Name)
		// A sync interval other than the default, so that the bundled
		// config files (conf/<name>.conf) say something /varz also says.
		s.JetStreamExtra = "sync_interval: \"30s\""
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := ensureMetaPeers(ctx, c); err != nil {
		return err
	}
	x := MetaSnapExpect{Streams: map[string]string{}, Consumers: []string{}}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	mk := func(cfg jetstream.StreamConfig, msgs int) (jetstream.Stream, error) {
		return createFilled(ctx, js, cfg, msgs, 60)
	}
	orders, err := mk(jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"ORDERS.>"}, Replicas: 3}, 20)
	if err != nil {
		return err
	}
	x.Streams["$G > ORDERS"] = "R3"
	if err := consume(ctx, orders, jetstream.ConsumerConfig{Durable: "PROC", AckPolicy: jetstream.AckExplicitPolicy}, 5, 3); err != nil {
		return err
	}
	x.Consumers = append(x.Consumers, "$G > ORDERS > PROC")
	// One R1 stream on every server, each with a durable consumer: what an
	// orphan cleanup would delete for good.
	for _, s := range c.Servers {
		sn := "LOCAL_" + s.Name[len(s.Name)-1:]
		st, err := mk(jetstream.StreamConfig{Name: sn, Subjects: []string{sn + ".>"}, Replicas: 1,
			Placement: &jetstream.Placement{Tags: []string{"node:" + s.Name}}}, 10)
		if err != nil {
			return err
		}
		x.Streams["$G > "+sn] = "R1 on " + s.Name
		if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "WORK", AckPolicy: jetstream.AckExplicitPolicy}, 3, 2); err != nil {
			return err
		}
		x.Consumers = append(x.Consumers, "$G > "+sn+" > WORK")
	}
	nc.Close()
	// The graceful stop snapshots _meta_, but not always (seen on v2.12.1:
	// a snapshot of index 4 without payload was left): start and stop
	// again until every server holds a snapshot with a payload.
	var caps map[string]*Capture
	withWAL, emptyWAL := "", ""
	for try := 1; ; try++ {
		if try > 1 {
			if err := c.Start(ctx); err != nil {
				return err
			}
		}
		if caps, err = quietCapture(ctx, c); err != nil {
			return err
		}
		x.MetaLeaderAtStop = c.MetaLeader(ctx)
		if err := c.Stop(); err != nil {
			return err
		}
		ok := true
		withWAL, emptyWAL = "", ""
		for _, s := range c.Servers {
			if _, err := metaSnapshotPayload(s.JSRoot()); err != nil {
				logf("stop %d: %s: %v", try, s.Name, err)
				ok = false
			}
			n := metaWALBytes(s.JSRoot())
			logf("stop %d: %s: meta WAL %d bytes", try, s.Name, n)
			switch {
			case n > tombstoneOnly && withWAL == "":
				withWAL = s.Name
			case n <= tombstoneOnly && (emptyWAL == "" || s.Name == x.MetaLeaderAtStop):
				emptyWAL = s.Name
			}
		}
		// On v2.12.1 what a damaged server does depends on whether its
		// meta WAL holds entries after the snapshot (the LeaderTransfer
		// the leader writes at the stop reaches followers before or after
		// their own snapshot): stop again until one server's WAL holds
		// more than a compaction tombstone and another's nothing else, so
		// both paths are seen.
		if ok && (withWAL != "" && emptyWAL != "" || version != "v2.12.1") {
			x.StopCycles = try
			break
		}
		if try == 6 {
			return fmt.Errorf("no meta snapshot with a payload and a follower meta WAL after %d stops", try)
		}
	}

	// Damage copies of two stores: one whose meta WAL holds more than a
	// tombstone and one whose WAL holds nothing else (the meta leader at
	// the stop where it is such); on v2.15.2, the meta leader and the next
	// by name. What each holds after its snapshot is what the restart
	// shows; the analyzer reads it from disk.
	damaged := map[string]bool{}
	pick := []string{x.MetaLeaderAtStop}
	if version == "v2.12.1" {
		pick = []string{withWAL, emptyWAL}
	}
	for _, n := range pick {
		if n != "" && len(damaged) < 2 {
			damaged[n] = true
		}
	}
	for _, n := range names {
		if len(damaged) == 2 {
			break
		}
		damaged[n] = true
	}
	roots := map[string]string{}
	for _, s := range c.Servers {
		root := filepath.Join(env.Scratch, "damaged", s.Name)
		if err := copyTree(s.JSRoot(), root); err != nil {
			return err
		}
		roots[s.Name] = root
		if !damaged[s.Name] {
			continue
		}
		f, err := flipMetaSnapshot(root)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		f.Server = s.Name
		x.Flips = append(x.Flips, f)
		logf("%s: flipped bit %d of byte %d in %s", s.Name, f.Bit, f.Offset, f.File)
	}

	// Start real servers of the same version on copies of the damaged
	// stores. Each server runs its one orphan check 30 s after its meta
	// recovery and skips it when no meta leader is known then or it is not
	// current with it (v2.11.17 jetstream_cluster.go checkForOrphans, run
	// once per start): a run where a started server skipped it says
	// nothing of what the check deletes, so the restart is tried again on
	// fresh copies (at most metaSnapAttempts runs); the skipped runs are
	// kept in expect.
	var r *Cluster
	var after map[string]*Capture
	var rx MetaSnapRestartedExpect
	for attempt := 1; ; attempt++ {
		dir := "restart"
		if attempt > 1 {
			dir = fmt.Sprintf("restart-%d", attempt)
		}
		x.Restart = nil
		if r, after, rx, err = metaSnapRestart(ctx, env, dir, version, c, names, roots, damaged, &x); err != nil {
			return err
		}
		x.Attempts = attempt
		deleted := map[string]bool{}
		for _, o := range x.OrphansDeleted {
			deleted[o.Server] = true
		}
		x.DamagedKept = nil
		for _, sr := range x.Restart {
			if sr.Damaged && sr.OrphanCheck == "ran" && !deleted[sr.Server] {
				x.DamagedKept = append(x.DamagedKept, sr.Server)
			}
		}
		skipped := orphanCheckSkipped(x.Restart)
		if len(skipped) == 0 {
			break
		}
		run := SkippedRun{Attempt: attempt, MetaLeader: metaLeaderOf(x.Restart), Skipped: skipped, OrphansDeleted: x.OrphansDeleted}
		x.SkippedRuns = append(x.SkippedRuns, run)
		logf("restart %d of %d: orphan check skipped on %v (meta leader %q)", attempt, metaSnapAttempts, skipped, run.MetaLeader)
		if attempt == metaSnapAttempts {
			// No run saw the check: the prediction for those servers is
			// neither confirmed nor refuted.
			for s := range skipped {
				x.OrphanCheckSkipped = append(x.OrphanCheckSkipped, s)
			}
			sort.Strings(x.OrphanCheckSkipped)
			break
		}
	}
	if x.Remedy, err = metaSnapRemedy(ctx, env, c, roots, damaged, caps); err != nil {
		return err
	}
	if after != nil {
		x.Restarted = name + "-restarted"
		rb := &Bundle{Name: x.Restarted, Version: version[1:], Layout: LayoutPerServer(), Servers: r.Servers, Captures: after, Expect: rx}
		if err := rb.Write(env.Scratch, env.Out); err != nil {
			return err
		}
	}
	confs := map[string][]byte{}
	for _, s := range c.Servers {
		if confs["conf/"+s.Name+".conf"], err = os.ReadFile(s.ConfFile); err != nil {
			return err
		}
	}
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, StoreRoots: roots, Extra: confs, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// flipMetaSnapshot flips one bit in the middle of the meta payload of the
// newest snapshot under root's _meta_/snapshots (raft.go encodeSnapshot:
// term u64, index u64, peerstate length u32, peerstate, data, HH64).
func flipMetaSnapshot(root string) (SnapFlip, error) {
	f, err := metaSnapshotPayload(root)
	if err != nil {
		return f, err
	}
	p := filepath.Join(root, filepath.FromSlash(f.File))
	b, err := os.ReadFile(p)
	if err != nil {
		return f, err
	}
	f.Offset, f.Bit = f.DataOffset+(len(b)-8-f.DataOffset)/2, 2
	f.Before = b[f.Offset]
	b[f.Offset] ^= 1 << f.Bit
	f.After = b[f.Offset]
	return f, os.WriteFile(p, b, 0o644)
}

// metaSnapshotPayload finds the newest snapshot under root's
// _meta_/snapshots and where its payload starts; a snapshot without a
// payload is an error.
func metaSnapshotPayload(root string) (SnapFlip, error) {
	dir := filepath.Join(metaDir(root), "snapshots")
	es, err := os.ReadDir(dir)
	var ns []string
	for _, e := range es {
		if e.Type().IsRegular() {
			ns = append(ns, e.Name())
		}
	}
	if len(ns) == 0 {
		return SnapFlip{}, fmt.Errorf("no meta snapshot in %s (%v)", dir, err)
	}
	sort.Strings(ns)
	p := filepath.Join(dir, ns[len(ns)-1])
	b, err := os.ReadFile(p)
	if err != nil {
		return SnapFlip{}, err
	}
	if len(b) < 28 {
		return SnapFlip{}, fmt.Errorf("%s: %d bytes, too short", p, len(b))
	}
	data := 20 + int(binary.LittleEndian.Uint32(b[16:]))
	end := len(b) - 8
	if data >= end {
		return SnapFlip{}, fmt.Errorf("%s: no payload (data at %d, checksum at %d)", p, data, end)
	}
	return SnapFlip{File: filepath.ToSlash(filepath.Join("$SYS/_js_/_meta_/snapshots", ns[len(ns)-1])), Size: len(b), DataOffset: data}, nil
}

// logLinesSince returns the lines of a log after offset that match re.
func logLinesSince(file string, offset int64, re *regexp.Regexp) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if offset > int64(len(b)) {
		offset = 0
	}
	out := []string{}
	sc := bufio.NewScanner(bytes.NewReader(b[offset:]))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if re.MatchString(sc.Text()) {
			out = append(out, sc.Text())
		}
	}
	return out, sc.Err()
}

func sortedKeysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// metaSnapRemedy starts every server on fresh copies of the damaged stores
// after moving, on the damaged ones, the corrupt snapshot and the meta WAL
// (msgs/) out of the store, so they start with an empty meta log as a
// damaged server with an empty WAL did; the meta leader's snapshot is then
// installed on them. It records whether every stream came back whole.
func metaSnapRemedy(ctx context.Context, env *Env, c *Cluster, roots map[string]string, damaged map[string]bool, caps map[string]*Capture) (MetaSnapRemedy, error) {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	out := MetaSnapRemedy{Streams: map[string][]string{}, Log: []string{}}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "remedy"), c.Version, c.Name, names)
	if err != nil {
		return out, err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		s.Extra, s.JetStreamExtra = c.Servers[i].Extra, c.Servers[i].JetStreamExtra
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return out, err
		}
		if !damaged[s.Name] {
			continue
		}
		aside := filepath.Join(env.Scratch, "remedy-aside", s.Name)
		for _, sub := range []string{"snapshots", "msgs"} {
			if err := os.MkdirAll(aside, 0o755); err != nil {
				return out, err
			}
			if err := os.Rename(filepath.Join(metaDir(s.JSRoot()), sub), filepath.Join(aside, sub)); err != nil {
				return out, err
			}
		}
		out.Steps = append(out.Steps, s.Name+": moved $SYS/_js_/_meta_/snapshots and $SYS/_js_/_meta_/msgs out of the store")
	}
	// The intact servers first and one damaged server, the other damaged
	// ones once a meta leader is elected: started together, the damaged
	// servers, whose meta logs are now empty, vote for each other and can
	// elect one of them (metasnap@v2.11.17, 2026-12-02: ms-0 elected, ms-2
	// and its streams stalled; the remedy's wait timed out).
	var intact, hurt []*Server
	for _, s := range r.Servers {
		if damaged[s.Name] {
			hurt = append(hurt, s)
		} else {
			intact = append(intact, s)
		}
	}
	first := append(append([]*Server{}, intact...), hurt[:min(1, len(hurt))]...)
	var firstNames []string
	for _, s := range first {
		if err := s.Start(ctx); err != nil {
			return out, err
		}
		firstNames = append(firstNames, s.Name)
	}
	out.Steps = append(out.Steps, "started "+strings.Join(firstNames, " and "))
	if len(first) < len(r.Servers) {
		if err := waitFor(ctx, 60*time.Second, "a meta leader among "+strings.Join(firstNames, ", "), func() (bool, error) {
			return r.MetaLeader(ctx) != "", nil
		}); err != nil {
			return out, err
		}
		var rest []string
		for _, s := range hurt[1:] {
			if err := s.Start(ctx); err != nil {
				return out, err
			}
			rest = append(rest, s.Name)
		}
		out.Steps = append(out.Steps, "once "+r.MetaLeader(ctx)+" was meta leader, started "+strings.Join(rest, " and "))
	}
	if err := r.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return out, err
	}
	out.MetaLeader = r.MetaLeader(ctx)
	// Past the orphan check (30 s after meta recovery), then quiet.
	if err := pause(ctx, 40*time.Second); err != nil {
		return out, err
	}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return out, err
	}
	want := map[string]uint64{}
	wantHolders := map[string]int{}
	for _, s := range c.Servers {
		var j jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &j); err != nil {
			return out, err
		}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				k := a.Name + " > " + sd.Name
				want[k] = sd.State.Msgs
				wantHolders[k]++
			}
		}
	}
	got := map[string]int{}
	out.Recovered = true
	for _, s := range r.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			return out, err
		}
		out.Streams[s.Name] = []string{}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				k := a.Name + " > " + sd.Name
				out.Streams[s.Name] = append(out.Streams[s.Name], fmt.Sprintf("%s %d", k, sd.State.Msgs))
				if sd.State.Msgs == want[k] {
					got[k]++
				}
			}
		}
		sort.Strings(out.Streams[s.Name])
	}
	for k, n := range wantHolders {
		if got[k] != n {
			out.Recovered = false
		}
	}
	if err := r.Stop(); err != nil {
		return out, err
	}
	for _, s := range r.Servers {
		lines, err := logLinesSince(s.LogFile, 0, metaSnapInterestRE)
		if err != nil {
			return out, err
		}
		for _, l := range lines {
			if orphanStreamRE.MatchString(l) || orphanConsumerRE.MatchString(l) {
				out.Recovered = false
			}
			out.Log = append(out.Log, s.Name+": "+l)
		}
	}
	logf("remedy: leader %s recovered %v streams %v", out.MetaLeader, out.Recovered, out.Streams)
	return out, nil
}

// tombstoneOnly is the size of a meta WAL block that holds one compaction
// tombstone and nothing else (seen in every v2.12.1 and v2.15.2 store
// compacted to its snapshot: msgs/N.blk of 30 bytes).
const tombstoneOnly = 30

// metaWALBytes is the size of the _meta_ WAL's message blocks.
func metaWALBytes(root string) int64 {
	var n int64
	blks, _ := filepath.Glob(filepath.Join(metaDir(root), "msgs", "*.blk"))
	for _, b := range blks {
		if fi, err := os.Stat(b); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// metaSnapAttempts bounds the restarts of metaSnap (each about 75 s).
const metaSnapAttempts = 3

// SkippedRun is a restart in which some started server skipped its orphan
// check ("skipping check for orphans, <why>").
type SkippedRun struct {
	Attempt    int               `json:"attempt"`
	MetaLeader string            `json:"meta_leader"`
	Skipped    map[string]string `json:"skipped"` // server -> the reason it logged
	// OrphansDeleted: what the servers whose check ran deleted in that run.
	OrphansDeleted []OrphanDeleted `json:"orphans_deleted"`
}

var orphanSkipRE = regexp.MustCompile(`skipping check for orphans, (.*)$`)

// orphanCheckSkipped: the servers whose log says they skipped the orphan
// check, with the reason. One that logged neither the check nor the skip
// did not recover its meta layer in the wait (2.14+ on a corrupt snapshot
// do not start JetStream) and is not counted.
func orphanCheckSkipped(rs []SnapRestart) map[string]string {
	out := map[string]string{}
	for _, sr := range rs {
		if strings.HasPrefix(sr.OrphanCheck, "skipped") {
			out[sr.Server] = strings.TrimPrefix(sr.OrphanCheck, "skipped: ")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// orphanCheckOf reads what a server's log lines say of its orphan check.
func orphanCheckOf(lines []string) string {
	state := "not reached"
	for _, l := range lines {
		if m := orphanSkipRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return "skipped: " + m[1]
		}
		if strings.Contains(l, "checking for orphans") {
			state = "ran"
		}
	}
	return state
}

func metaLeaderOf(rs []SnapRestart) string {
	for _, sr := range rs {
		if sr.MetaLeader != "" {
			return sr.MetaLeader
		}
	}
	return ""
}

// metaSnapRestart starts real servers of version on copies of the damaged
// stores (roots) under dir, with debug logging and each log continuing the
// bundle's, and fills x's Restart, Waited, OrphansDeleted,
// OrphanConsumersDeleted and LostInRestart from what they did. The cluster
// it returns is stopped; after holds its captures on v2.12.1.
func metaSnapRestart(ctx context.Context, env *Env, dir, version string, c *Cluster, names []string, roots map[string]string,
	damaged map[string]bool, x *MetaSnapExpect) (*Cluster, map[string]*Capture, MetaSnapRestartedExpect, error) {
	name := "metasnap-" + version
	var rx MetaSnapRestartedExpect
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, dir), version, "snap", names)
	if err != nil {
		return nil, nil, rx, err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		s.Debug, s.Extra, s.JetStreamExtra = true, c.Servers[i].Extra, c.Servers[i].JetStreamExtra
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return nil, nil, rx, err
		}
		if err := copyFile(c.Servers[i].LogFile, s.LogFile); err != nil {
			return nil, nil, rx, err
		}
	}
	before := map[string]*SnapRestart{}
	for _, s := range r.Servers {
		sr := &SnapRestart{Server: s.Name, Damaged: damaged[s.Name]}
		if sr.MetaFilesBefore, err = listFiles(metaDir(s.JSRoot())); err != nil {
			return nil, nil, rx, err
		}
		if sr.FoldersBefore, err = streamFolders(s.JSRoot()); err != nil {
			return nil, nil, rx, err
		}
		before[s.Name] = sr
	}
	logSize := map[string]int64{}
	for _, s := range r.Servers {
		if fi, err := os.Stat(s.LogFile); err == nil {
			logSize[s.Name] = fi.Size()
		}
	}
	errs := make(chan error, len(r.Servers))
	for _, s := range r.Servers {
		go func() { errs <- s.Start(ctx) }()
	}
	for range r.Servers {
		if err := <-errs; err != nil {
			logf("restart: %v", err)
		}
	}
	// checkForOrphans runs 30 s after meta recovery; wait 45 s from the
	// first meta leader (or from the start when none appears).
	start := time.Now()
	_ = waitFor(ctx, 30*time.Second, "a meta leader", func() (bool, error) { return r.MetaLeader(ctx) != "", nil })
	if err := pause(ctx, 45*time.Second); err != nil {
		return nil, nil, rx, err
	}
	x.Waited = int(time.Since(start).Seconds())
	for _, s := range r.Servers {
		sr := before[s.Name]
		sr.Streams, sr.Consumers = []string{}, []string{}
		if !s.Running() {
			continue
		}
		sr.Started = true
		var h struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := s.GetJSON(ctx, "/healthz", &h); err == nil {
			sr.Health = h.Status
			if h.Error != "" {
				sr.Health += ": " + h.Error
			}
		}
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			continue
		}
		if j.Meta != nil {
			sr.MetaLeader = j.Meta.Leader
		}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				sr.Streams = append(sr.Streams, a.Name+" > "+sd.Name)
				for _, cd := range sd.Consumers {
					sr.Consumers = append(sr.Consumers, a.Name+" > "+sd.Name+" > "+cd.Name)
				}
			}
		}
		sort.Strings(sr.Streams)
		sort.Strings(sr.Consumers)
	}
	var after map[string]*Capture
	if version == "v2.12.1" {
		if after, err = CaptureAll(ctx, r); err != nil {
			return nil, nil, rx, err
		}
	}
	if err := r.Stop(); err != nil {
		return nil, nil, rx, err
	}
	held := map[string]bool{}
	rx = MetaSnapRestartedExpect{RestartedFrom: name, StreamsLost: []string{}, ConsumersLost: []string{}, CleanupLines: []string{}}
	x.OrphansDeleted, x.OrphanConsumersDeleted = []OrphanDeleted{}, []OrphanConsumer{}
	consumersHeld := map[string]bool{}
	for _, s := range r.Servers {
		sr := before[s.Name]
		if !sr.Started {
			sr.Exit = "exited during start (see log)"
		}
		if sr.MetaFilesAfter, err = listFiles(metaDir(s.JSRoot())); err != nil {
			return nil, nil, rx, err
		}
		if sr.FoldersAfter, err = streamFolders(s.JSRoot()); err != nil {
			return nil, nil, rx, err
		}
		for _, f := range sr.FoldersAfter {
			held[f] = true
		}
		for _, cn := range sr.Consumers {
			consumersHeld[cn] = true
		}
		lines, err := logLinesSince(s.LogFile, logSize[s.Name], metaSnapInterestRE)
		if err != nil {
			return nil, nil, rx, err
		}
		sr.Log = lines
		sr.OrphanCheck = orphanCheckOf(lines)
		all, err := logLinesSince(s.LogFile, logSize[s.Name], metaSnapshotOrCheckRE)
		if err != nil {
			return nil, nil, rx, err
		}
		sr.LeaderSnapshot = installedBeforeCheck(all)
		ds, cs, cleanup := orphanCleanup(s.Name, lines, sr.FoldersBefore, sr.FoldersAfter)
		x.OrphansDeleted = append(x.OrphansDeleted, ds...)
		x.OrphanConsumersDeleted = append(x.OrphanConsumersDeleted, cs...)
		for _, l := range cleanup {
			rx.CleanupLines = append(rx.CleanupLines, s.Name+": "+l)
		}
		x.Restart = append(x.Restart, *sr)
		logf("%s: damaged %v started %v streams %v meta files %v -> %v", s.Name, sr.Damaged, sr.Started, sr.Streams, sr.MetaFilesBefore, sr.MetaFilesAfter)
	}
	x.LostInRestart = []string{}
	for _, k := range sortedKeysOf(x.Streams) {
		if !held["$G/"+k[len("$G > "):]] {
			x.LostInRestart = append(x.LostInRestart, k)
		}
	}
	rx.StreamsLost = x.LostInRestart
	for _, cn := range x.Consumers {
		if !consumersHeld[cn] {
			rx.ConsumersLost = append(rx.ConsumersLost, cn)
		}
	}
	return r, after, rx, nil
}
