package main

// Phase 2c: a _meta_ restored from an older backup. Streams and consumers
// created after the backup exist on disk but not in the restored meta
// state; the bundle is that state, and expect records what the real server
// deletes when started on a copy of it.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func orphanScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.10.22", "v2.15.2"} {
		out = append(out, Scenario{Name: "orphan-" + v,
			Doc:     "3 x " + v + ": _meta_ backed up after streams A, streams/consumers B created, old _meta_ put back; expect = what the server deletes",
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return orphan(ctx, env, v) }})
	}
	return out
}

// OrphanDeleted is one stream that disappeared when the server ran on the bundle's state.
type OrphanDeleted struct {
	Server  string `json:"server"`
	Account string `json:"account"`
	Stream  string `json:"stream"`
	// Logged: the server logged `Detected orphaned stream '<acc> > <name>', will cleanup`.
	Logged bool `json:"logged"`
	// FolderRemoved: <acc>/streams/<name> existed before the start and not after.
	FolderRemoved bool `json:"folder_removed"`
}

// OrphanConsumer is one consumer the server logged as an orphan.
type OrphanConsumer struct {
	Server   string `json:"server"`
	Account  string `json:"account"`
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	Durable  bool   `json:"durable"`
}

// OrphanExpect is want.json's expect for orphan-<version>.
type OrphanExpect struct {
	// Streams created before the _meta_ backup (A) and after it (B), "<acc> > <name>" with replicas.
	StreamsA map[string]int `json:"streams_a"`
	StreamsB map[string]int `json:"streams_b"`
	// Consumers created after the backup, "<acc> > <stream> > <consumer>".
	ConsumersB []string `json:"consumers_b"`

	OrphansDeleted          []OrphanDeleted  `json:"orphans_deleted"`
	OrphanConsumersDeleted  []OrphanConsumer `json:"orphan_consumers_deleted"`
	WaitedAfterLeaderSecond int              `json:"waited_after_leader_seconds"`
	// Stream folders per server ("<acc>/<name>") in the bundle and after the replay run.
	FoldersBefore map[string][]string `json:"folders_before"`
	FoldersAfter  map[string][]string `json:"folders_after"`
	// Streams per server as /jsz reported them at the end of the replay run.
	StreamsAfter map[string][]string `json:"streams_after"`
	// Relevant replay-run log lines per server (orphan WRN, DBG removals, meta recovery).
	ReplayLog map[string][]string `json:"replay_log"`
}

var (
	orphanStreamRE   = regexp.MustCompile(`Detected orphaned stream '([^']*) > ([^']*)', will cleanup`)
	orphanConsumerRE = regexp.MustCompile(`Detected orphaned (durable )?consumer '([^']*) > ([^']*) > ([^']*)', will cleanup`)
	replayInterestRE = regexp.MustCompile(`orphaned|checking for orphans|JetStream removing stream|JetStream cluster recovering state|skipping check for orphans|Deleting stream|Deleting consumer`)
)

func orphan(ctx context.Context, env *Env, version string) error {
	name := "orphan-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "c1", []string{"nats-0", "nats-1", "nats-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := ensureMetaPeers(ctx, c); err != nil {
		return err
	}
	x := OrphanExpect{StreamsA: map[string]int{}, StreamsB: map[string]int{}, ConsumersB: []string{}}
	mk := func(js jetstream.JetStream, sname string, replicas, msgs int) (jetstream.Stream, error) {
		return createFilled(ctx, js, jetstream.StreamConfig{Name: sname, Subjects: []string{sname + ".>"}, Replicas: replicas}, msgs, 80)
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	streamsA := map[string]jetstream.Stream{}
	for _, a := range []struct {
		n string
		r int
	}{{"A_R1_X", 1}, {"A_R1_Y", 1}, {"A_R3", 3}} {
		st, err := mk(js, a.n, a.r, 20)
		if err != nil {
			return err
		}
		streamsA[a.n] = st
		x.StreamsA["$G > "+a.n] = a.r
	}
	if err := consume(ctx, streamsA["A_R3"], jetstream.ConsumerConfig{Durable: "A_OLD", AckPolicy: jetstream.AckExplicitPolicy}, 4, 2); err != nil {
		return err
	}
	nc.Close()
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	// Back up every server's _meta_ while stopped.
	if err := c.Stop(); err != nil {
		return err
	}
	backup := filepath.Join(env.Scratch, "meta-backup")
	for _, s := range c.Servers {
		if err := copyTree(metaDir(s.JSRoot()), filepath.Join(backup, s.Name)); err != nil {
			return err
		}
	}
	logf("backed up _meta_ of %d servers", len(c.Servers))
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, js, err = connect(c.Servers...)
	if err != nil {
		return err
	}
	for _, b := range []struct {
		n string
		r int
	}{{"B_R1_X", 1}, {"B_R1_Y", 1}, {"B_R3", 3}} {
		st, err := mk(js, b.n, b.r, 15)
		if err != nil {
			return err
		}
		x.StreamsB["$G > "+b.n] = b.r
		if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "B_CONS", AckPolicy: jetstream.AckExplicitPolicy}, 3, 1); err != nil {
			return err
		}
		x.ConsumersB = append(x.ConsumersB, "$G > "+b.n+" > B_CONS")
	}
	for _, an := range []string{"A_R1_X", "A_R3"} {
		var st jetstream.Stream
		if err := retry(ctx, "stream "+an, func(ctx context.Context) error {
			var err error
			st, err = js.Stream(ctx, an)
			return err
		}); err != nil {
			return err
		}
		if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "A_NEW", AckPolicy: jetstream.AckExplicitPolicy}, 2, 1); err != nil {
			return err
		}
		x.ConsumersB = append(x.ConsumersB, "$G > "+an+" > A_NEW")
	}
	nc.Close()
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	// Put the old _meta_ back (a volume restored from backup).
	for _, s := range c.Servers {
		if err := os.RemoveAll(metaDir(s.JSRoot())); err != nil {
			return err
		}
		if err := copyTree(filepath.Join(backup, s.Name), metaDir(s.JSRoot())); err != nil {
			return err
		}
	}
	x.FoldersBefore = map[string][]string{}
	for _, s := range c.Servers {
		if x.FoldersBefore[s.Name], err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
	}

	// Replay on a scratch copy, with debug logging to see silent removals.
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "replay"), version, "c1", []string{"nats-0", "nats-1", "nats-2"})
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		s.Debug = true
		if err := copyTree(c.Servers[i].JSRoot(), s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	leaderAt := time.Now()
	// checkForOrphans is armed 30 s after meta recovery completes; wait 45 s.
	if err := pause(ctx, 45*time.Second); err != nil {
		return err
	}
	x.WaitedAfterLeaderSecond = int(time.Since(leaderAt).Seconds())
	x.StreamsAfter = map[string][]string{}
	for _, s := range r.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			return err
		}
		x.StreamsAfter[s.Name] = []string{}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				x.StreamsAfter[s.Name] = append(x.StreamsAfter[s.Name], a.Name+" > "+sd.Name)
			}
		}
		sort.Strings(x.StreamsAfter[s.Name])
	}
	if err := r.Stop(); err != nil {
		return err
	}
	x.FoldersAfter = map[string][]string{}
	x.ReplayLog = map[string][]string{}
	x.OrphansDeleted = []OrphanDeleted{}
	x.OrphanConsumersDeleted = []OrphanConsumer{}
	for _, s := range r.Servers {
		if x.FoldersAfter[s.Name], err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
		lines, err := logLinesSince(s.LogFile, 0, replayInterestRE)
		if err != nil {
			return err
		}
		x.ReplayLog[s.Name] = append(x.ReplayLog[s.Name], lines...)
		ds, cs, _ := orphanCleanup(s.Name, lines, x.FoldersBefore[s.Name], x.FoldersAfter[s.Name])
		x.OrphansDeleted = append(x.OrphansDeleted, ds...)
		x.OrphanConsumersDeleted = append(x.OrphanConsumersDeleted, cs...)
	}
	for _, d := range x.OrphansDeleted {
		logf("%s: deleted %s > %s (logged %v, folder removed %v)", d.Server, d.Account, d.Stream, d.Logged, d.FolderRemoved)
	}
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// orphanCleanup reads what one server deleted in a run from its log lines
// and its stream folders before and after: the streams it logged as
// orphans or whose folder went, the consumers it logged, and those lines.
func orphanCleanup(server string, lines, before, after []string) ([]OrphanDeleted, []OrphanConsumer, []string) {
	deleted := map[[2]string]*OrphanDeleted{}
	get := func(acc, st string) *OrphanDeleted {
		k := [2]string{acc, st}
		if deleted[k] == nil {
			deleted[k] = &OrphanDeleted{Server: server, Account: acc, Stream: st}
		}
		return deleted[k]
	}
	var consumers []OrphanConsumer
	var matched []string
	for _, line := range lines {
		if m := orphanStreamRE.FindStringSubmatch(line); m != nil {
			get(m[1], m[2]).Logged = true
			matched = append(matched, line)
		}
		if m := orphanConsumerRE.FindStringSubmatch(line); m != nil {
			consumers = append(consumers, OrphanConsumer{Server: server, Account: m[2], Stream: m[3], Consumer: m[4], Durable: m[1] != ""})
			matched = append(matched, line)
		}
	}
	kept := map[string]bool{}
	for _, f := range after {
		kept[f] = true
	}
	for _, f := range before {
		if !kept[f] {
			acc, st := filepath.Split(f)
			get(filepath.Clean(acc), st).FolderRemoved = true
		}
	}
	var ds []OrphanDeleted
	for _, d := range deleted {
		ds = append(ds, *d)
	}
	sort.Slice(ds, func(i, k int) bool { return ds[i].Stream < ds[k].Stream })
	return ds, consumers, matched
}

func metaDir(jsRoot string) string { return filepath.Join(jsRoot, "$SYS", "_js_", "_meta_") }

// streamFolders lists "<acc>/<stream>" for every <root>/<acc>/streams/<stream> directory.
func streamFolders(root string) ([]string, error) {
	accs, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, a := range accs {
		if !a.IsDir() {
			continue
		}
		sts, err := os.ReadDir(filepath.Join(root, a.Name(), "streams"))
		if err != nil {
			continue
		}
		for _, st := range sts {
			if st.IsDir() {
				out = append(out, a.Name()+"/"+st.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
