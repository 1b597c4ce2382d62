package main

// Asset lifecycle on a 3-server v2.12.1 cluster (plus a standalone server in
// the same bundle): what no other bundle has on disk.
//
//   - phase A: streams CATALOG (R3, max_msgs 100, consumers KEEP and DROPME),
//     SCRATCH (R3, consumer SCR), PURGED (R3, 30 messages then purged whole)
//     and ATOMIC (R3, allow_atomic) are made; the cluster is stopped
//     gracefully and started again, so PURGED's raft snapshot (installed at
//     the stop) holds the emptied stream.
//   - phase B, right after the restart: CATALOG's config is updated (max_msgs
//     1000, subject catalog-v2.> added: meta op 11), consumer DROPME is deleted
//     (op 3), stream SCRATCH is deleted (op 2), an atomic batch of 3 messages
//     goes into ATOMIC (stream ops 16, 16, 17).
//   - quiet captures of every server, then natscli `server request jetstream |
//     raft | variables | jetstream-health` as the system user (stdout saved).
//   - the stores are copied while the servers still run, then every server
//     is stopped gracefully. The bundle holds the copies: the meta layer
//     installs a snapshot (and compacts its WAL) every minute and at a clean
//     shutdown (jetstream_cluster.go monitorCluster), which would drop ops
//     11/3/2; the stream's WAL (ops 16/17) is compacted at shutdown too.
//
// The standalone server `solo` (no cluster block, global account) has its
// own stream SOLO.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func lifecycleScenarios() []Scenario {
	return []Scenario{
		{Name: "lifecycle-v2.12.1",
			Doc: "3 x v2.12.1 (lc-0..2) + standalone solo: stream update, consumer and stream delete, R3 purge in a snapshot, atomic batch; natscli server requests; stores copied before the stop",
			Run: lifecycle},
	}
}

// lifeMetaWindow bounds phase B: from the restart until the live copy of the
// stores, so the meta layer's one-minute compaction ticker has not fired.
const lifeMetaWindow = 50 * time.Second

// LifecycleExpect is want.json's expect for lifecycle-v2.12.1.
type LifecycleExpect struct {
	Account       string `json:"account"`
	SystemAccount string `json:"system_account"`
	// Ops lists what was done, in order; op is the nats-server entryOp
	// (jetstream_cluster.go) the action is expected to write, group the raft
	// group whose WAL gets it.
	Ops              []LifeOp        `json:"ops"`
	StreamsCreated   []LifeStream    `json:"streams_created"`
	StreamsDeleted   []string        `json:"streams_deleted"`
	ConsumersDeleted []string        `json:"consumers_deleted"` // STREAM/CONSUMER
	StreamUpdated    LifeUpdate      `json:"stream_updated"`
	Purged           LifePurge       `json:"purged"`
	AtomicBatch      LifeBatch       `json:"atomic_batch"`
	Restart          LifeRestart     `json:"restart"`
	StoreCopy        LifeStoreCopy   `json:"store_copy"`
	Natscli          []LifeNatsCmd   `json:"natscli"`
	NatscliVersion   string          `json:"natscli_version"`
	NatscliNote      string          `json:"natscli_note"`
	Standalone       LifeStandalone  `json:"standalone"`
	MetaLeader       string          `json:"meta_leader"`
	GroupsRemoved    []string        `json:"groups_removed"` // raft groups of deleted assets
	Folders          LifeFolderLists `json:"folders"`
}

// LifeOp is one action of the workload.
type LifeOp struct {
	Phase    string `json:"phase"`
	Action   string `json:"action"`
	Op       int    `json:"op"`
	OpName   string `json:"op_name"`
	Group    string `json:"group"`
	Stream   string `json:"stream,omitempty"`
	Consumer string `json:"consumer,omitempty"`
	At       string `json:"at"`
}

// LifeStream is a stream as created (from STREAM.INFO).
type LifeStream struct {
	Name      string   `json:"name"`
	Replicas  int      `json:"replicas"`
	Subjects  []string `json:"subjects"`
	Group     string   `json:"group"`
	Consumers []struct {
		Name  string `json:"name"`
		Group string `json:"group"`
	} `json:"consumers"`
}

type LifeUpdate struct {
	Stream         string   `json:"stream"`
	MaxMsgsBefore  int64    `json:"max_msgs_before"`
	MaxMsgsAfter   int64    `json:"max_msgs_after"`
	SubjectsBefore []string `json:"subjects_before"`
	SubjectsAfter  []string `json:"subjects_after"`
	// PublishedAfter: messages published to the new subject after the update.
	PublishedAfter []uint64 `json:"published_after_seqs"`
}

type LifePurge struct {
	Stream         string `json:"stream"`
	Group          string `json:"group"`
	MessagesBefore uint64 `json:"messages_before"`
	LastSeq        uint64 `json:"last_seq"`
	// Purged is the count the purge request answered.
	Purged uint64 `json:"purged"`
	// Snapshots lists, per server, the stream group's snapshot files in the bundled store.
	Snapshots map[string][]string `json:"snapshots"`
}

type LifeBatch struct {
	Supported bool     `json:"supported"`
	Stream    string   `json:"stream"`
	Group     string   `json:"group"`
	BatchID   string   `json:"batch_id"`
	Count     int      `json:"count"`
	Subjects  []string `json:"subjects"`
	// Replies are the server's answers to messages 1..n, verbatim (empty
	// for the non-commit messages).
	Replies []string `json:"replies"`
	// Seqs are the stream sequences the batch got (from the commit's ack).
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Note     string `json:"note,omitempty"`
}

type LifeRestart struct {
	Why string `json:"why"`
	// Cycles are the graceful stop/start cycles between phases A and B
	// (repeated while a member had no snapshot of PURGED's group after the
	// stop).
	Cycles []LifeCycle `json:"cycles"`
}

type LifeCycle struct {
	Stopped string `json:"stopped"`
	Started string `json:"started"`
	// PurgedSnapshots: PURGED group's snapshot files on each stopped member.
	PurgedSnapshots map[string][]string `json:"purged_snapshots"`
	Missing         []string            `json:"missing"`
}

type LifeStoreCopy struct {
	// Live: the bundled stores were copied while the servers ran (after
	// the quiet captures and natscli), before the graceful stop.
	Live         bool   `json:"live"`
	At           string `json:"at"`
	SinceRestart string `json:"since_restart"`
	Why          string `json:"why"`
	// MetaFiles lists every server's _meta_ files in the bundled copy and in
	// its store after the graceful stop (not bundled), with sizes.
	MetaFilesCopy      map[string][]string `json:"meta_files_copy"`
	MetaFilesAfterStop map[string][]string `json:"meta_files_after_stop"`
}

type LifeNatsCmd struct {
	Command []string `json:"command"` // argv without credentials
	File    string   `json:"file"`
	Lines   int      `json:"lines"`
}

type LifeStandalone struct {
	Name     string `json:"name"`
	Account  string `json:"account"`
	Stream   string `json:"stream"`
	StoreDir string `json:"store_dir"`
	Log      string `json:"log"`
}

type LifeFolderLists struct {
	// Stream folders of APP in each bundled store.
	AppStreams map[string][]string `json:"app_streams"`
	// Raft group folders under SYS/_js_ (the system account's folder) in each bundled store.
	RaftGroups map[string][]string `json:"raft_groups"`
}

const (
	lifeAccount = "APP"
	lifeBatchID = "lifecycle-batch-1"
)

func lifecycle(ctx context.Context, env *Env) error {
	cli, err := natsCLI(ctx)
	if err != nil {
		return err
	}
	c, err := NewCluster(ctx, env.Scratch, "v2.12.1", "life", []string{"lc-0", "lc-1", "lc-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	sc, err := NewCluster(ctx, env.Scratch, "v2.12.1", "", []string{"solo"})
	if err != nil {
		return err
	}
	defer sc.Kill()
	solo := sc.Servers[0]
	solo.NoCluster = true
	solo.Routes = nil

	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := solo.Start(ctx); err != nil {
		return err
	}
	x := LifecycleExpect{Account: lifeAccount, SystemAccount: "SYS", StreamsDeleted: []string{}, ConsumersDeleted: []string{},
		Standalone: LifeStandalone{Name: "solo", Account: "$G", Stream: "SOLO"}}
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	groups := map[string]string{} // stream or stream/consumer -> raft group

	// --- standalone
	if err := soloWorkload(ctx, solo); err != nil {
		return err
	}

	// --- phase A
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	create := func(cfg jetstream.StreamConfig) (jetstream.Stream, error) {
		var st jetstream.Stream
		err := retry(ctx, "create stream "+cfg.Name, func(ctx context.Context) error {
			var err error
			st, err = js.CreateStream(ctx, cfg)
			return err
		})
		return st, err
	}
	pub := func(subj string, n int, tag string) error {
		for i := 1; i <= n; i++ {
			var hdr nats.Header
			if i%5 == 0 {
				hdr = nats.Header{"X-Tag": []string{fmt.Sprintf("%s-%d", tag, i)}}
			}
			if _, err := publish(ctx, js, subj, []byte(fmt.Sprintf(`{"%s":%d}`, tag, i)), hdr); err != nil {
				return err
			}
		}
		return nil
	}
	catalogCfg := jetstream.StreamConfig{Name: "CATALOG", Subjects: []string{"catalog.>"}, Replicas: 3, Storage: jetstream.FileStorage, MaxMsgs: 100}
	catalog, err := create(catalogCfg)
	if err != nil {
		return err
	}
	if err := pub("catalog.items", 20, "item"); err != nil {
		return err
	}
	if err := consume(ctx, catalog, jetstream.ConsumerConfig{Durable: "KEEP", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 5, 5); err != nil {
		return err
	}
	if err := consume(ctx, catalog, jetstream.ConsumerConfig{Durable: "DROPME", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 3, 2); err != nil {
		return err
	}
	scratch, err := create(jetstream.StreamConfig{Name: "SCRATCH", Subjects: []string{"scratch.>"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	if err := pub("scratch.tmp", 15, "scratch"); err != nil {
		return err
	}
	if err := consume(ctx, scratch, jetstream.ConsumerConfig{Durable: "SCR", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 4, 4); err != nil {
		return err
	}
	purged, err := create(jetstream.StreamConfig{Name: "PURGED", Subjects: []string{"purged.>"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	if err := pub("purged.a", 18, "pa"); err != nil {
		return err
	}
	if err := pub("purged.b", 12, "pb"); err != nil {
		return err
	}
	atomic, err := create(jetstream.StreamConfig{Name: "ATOMIC", Subjects: []string{"atomic.>"}, Replicas: 3, Storage: jetstream.FileStorage,
		AllowAtomicPublish: true})
	if err != nil {
		return err
	}
	if err := pub("atomic.single", 2, "single"); err != nil {
		return err
	}
	for _, st := range []jetstream.Stream{catalog, scratch, purged, atomic} {
		var info *jetstream.StreamInfo
		if err := retry(ctx, "stream info", func(ctx context.Context) error {
			var err error
			info, err = st.Info(ctx)
			return err
		}); err != nil {
			return err
		}
		ls := LifeStream{Name: info.Config.Name, Replicas: info.Config.Replicas, Subjects: info.Config.Subjects}
		if info.Cluster != nil {
			ls.Group = info.Cluster.RaftGroup
		}
		groups[ls.Name] = ls.Group
		lister := st.ListConsumers(ctx)
		for ci := range lister.Info() {
			g := ""
			if ci.Cluster != nil {
				g = ci.Cluster.RaftGroup
			}
			ls.Consumers = append(ls.Consumers, struct {
				Name  string `json:"name"`
				Group string `json:"group"`
			}{ci.Name, g})
			groups[ls.Name+"/"+ci.Name] = g
		}
		if err := lister.Err(); err != nil {
			return fmt.Errorf("list consumers of %s: %w", ls.Name, err)
		}
		sort.Slice(ls.Consumers, func(i, k int) bool { return ls.Consumers[i].Name < ls.Consumers[k].Name })
		x.StreamsCreated = append(x.StreamsCreated, ls)
	}
	// Whole-stream purge of the R3 stream PURGED.
	pinfo, err := purged.Info(ctx)
	if err != nil {
		return err
	}
	var presp struct {
		Success bool   `json:"success"`
		Purged  uint64 `json:"purged"`
		Error   any    `json:"error"`
	}
	if err := apiRequest(ctx, nc, "$JS.API.STREAM.PURGE.PURGED", nil, &presp); err != nil {
		return err
	}
	if !presp.Success || presp.Purged != pinfo.State.Msgs {
		return fmt.Errorf("purge PURGED (%d messages): %+v", pinfo.State.Msgs, presp)
	}
	x.Purged = LifePurge{Stream: "PURGED", Group: groups["PURGED"], MessagesBefore: pinfo.State.Msgs, LastSeq: pinfo.State.LastSeq, Purged: presp.Purged}
	x.Ops = append(x.Ops, LifeOp{Phase: "A", Action: "purge whole stream", Op: 5, OpName: "purgeStreamOp", Group: groups["PURGED"], Stream: "PURGED", At: now()})
	nc.Close()

	// Graceful stop and start: PURGED's snapshot now holds the emptied
	// stream. The snapshot at shutdown is best effort (a member sometimes
	// stops without one), so stop/start again until every member has one.
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	x.Restart.Why = "graceful stop after phase A installs the groups' snapshots (PURGED: the emptied stream; _meta_: the assignments); phase B's ops then stay in the WALs"
	var restart time.Time
	for cycle := 1; ; cycle++ {
		x.Restart.Cycles = append(x.Restart.Cycles, LifeCycle{Stopped: now()})
		if err := c.Stop(); err != nil {
			return err
		}
		cy := &x.Restart.Cycles[len(x.Restart.Cycles)-1]
		cy.PurgedSnapshots = map[string][]string{}
		missing := []string{}
		for _, s := range c.Servers {
			snaps, err := listFiles(filepath.Join(s.JSRoot(), x.SystemAccount, "_js_", groups["PURGED"], "snapshots"))
			if err != nil {
				return err
			}
			cy.PurgedSnapshots[s.Name] = snaps
			if len(snaps) == 0 {
				missing = append(missing, s.Name)
			}
		}
		cy.Missing = missing
		restart = time.Now()
		cy.Started = restart.UTC().Format(time.RFC3339Nano)
		if err := c.Start(ctx); err != nil {
			return err
		}
		if err := c.WaitQuiet(ctx, 30*time.Second); err != nil {
			return err
		}
		if len(missing) == 0 {
			break
		}
		logf("no PURGED snapshot after the stop on %v; stopping and starting again", missing)
		if cycle == 4 {
			return fmt.Errorf("PURGED's group still has no snapshot on %v after %d graceful stops", missing, cycle)
		}
	}

	// --- phase B (meta ops must stay in the WAL: bounded by lifeMetaWindow)
	nc, js, err = connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	newCfg := catalogCfg
	newCfg.MaxMsgs = 1000
	newCfg.Subjects = []string{"catalog.>", "catalog-v2.>"}
	if err := retry(ctx, "update CATALOG", func(ctx context.Context) error {
		_, err := js.UpdateStream(ctx, newCfg)
		return err
	}); err != nil {
		return err
	}
	x.StreamUpdated = LifeUpdate{Stream: "CATALOG", MaxMsgsBefore: catalogCfg.MaxMsgs, MaxMsgsAfter: newCfg.MaxMsgs,
		SubjectsBefore: catalogCfg.Subjects, SubjectsAfter: newCfg.Subjects}
	x.Ops = append(x.Ops, LifeOp{Phase: "B", Action: "update stream config (max_msgs 100->1000, subject catalog-v2.> added)", Op: 11, OpName: "updateStreamOp",
		Group: "_meta_", Stream: "CATALOG", At: now()})
	for i := 1; i <= 2; i++ {
		seq, err := publish(ctx, js, "catalog-v2.items", []byte(fmt.Sprintf(`{"item-v2":%d}`, i)), nil)
		if err != nil {
			return err
		}
		x.StreamUpdated.PublishedAfter = append(x.StreamUpdated.PublishedAfter, seq)
	}
	// A clustered delete is answered by the asset's leader only: wait for
	// leaders so the request is answered (a retry after an unanswered one
	// would find the asset gone).
	if err := waitAssetLeader(ctx, js, "SCRATCH", ""); err != nil {
		return err
	}
	if err := waitAssetLeader(ctx, js, "CATALOG", "DROPME"); err != nil {
		return err
	}
	if err := deleteOnce(ctx, "delete consumer CATALOG/DROPME", func(ctx context.Context) error { return js.DeleteConsumer(ctx, "CATALOG", "DROPME") },
		jetstream.ErrConsumerNotFound); err != nil {
		return err
	}
	x.ConsumersDeleted = append(x.ConsumersDeleted, "CATALOG/DROPME")
	x.Ops = append(x.Ops, LifeOp{Phase: "B", Action: "delete consumer", Op: 3, OpName: "removeConsumerOp", Group: "_meta_", Stream: "CATALOG", Consumer: "DROPME", At: now()})
	if err := deleteOnce(ctx, "delete stream SCRATCH", func(ctx context.Context) error { return js.DeleteStream(ctx, "SCRATCH") },
		jetstream.ErrStreamNotFound); err != nil {
		return err
	}
	x.StreamsDeleted = append(x.StreamsDeleted, "SCRATCH")
	x.Ops = append(x.Ops, LifeOp{Phase: "B", Action: "delete stream (with its consumer SCR)", Op: 2, OpName: "removeStreamOp", Group: "_meta_", Stream: "SCRATCH", At: now()})
	x.GroupsRemoved = []string{groups["SCRATCH"], groups["SCRATCH/SCR"], groups["CATALOG/DROPME"]}
	sort.Strings(x.GroupsRemoved)

	// Atomic batch publish of 3 messages (no retries: one batch only).
	if err := waitAssetLeader(ctx, js, "ATOMIC", ""); err != nil {
		return err
	}
	x.AtomicBatch = LifeBatch{Supported: true, Stream: "ATOMIC", Group: groups["ATOMIC"], BatchID: lifeBatchID, Count: 3,
		Subjects: []string{"atomic.order", "atomic.payment", "atomic.shipment"}}
	for i, subj := range x.AtomicBatch.Subjects {
		m := &nats.Msg{Subject: subj, Data: []byte(fmt.Sprintf(`{"batch":%q,"part":%d}`, lifeBatchID, i+1)), Header: nats.Header{}}
		m.Header.Set("Nats-Batch-Id", lifeBatchID)
		m.Header.Set("Nats-Batch-Sequence", fmt.Sprint(i+1))
		last := i == len(x.AtomicBatch.Subjects)-1
		if last {
			m.Header.Set("Nats-Batch-Commit", "1")
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := nc.RequestMsgWithContext(rctx, m)
		cancel()
		if err != nil {
			return fmt.Errorf("atomic batch message %d: %w", i+1, err)
		}
		x.AtomicBatch.Replies = append(x.AtomicBatch.Replies, string(resp.Data))
		if !last {
			if len(resp.Data) != 0 {
				return fmt.Errorf("atomic batch message %d: server answered %q", i+1, resp.Data)
			}
			x.Ops = append(x.Ops, LifeOp{Phase: "B", Action: fmt.Sprintf("atomic batch message %d", i+1), Op: 16, OpName: "batchMsgOp", Group: groups["ATOMIC"], Stream: "ATOMIC", At: now()})
			continue
		}
		var ack struct {
			Stream  string `json:"stream"`
			Seq     uint64 `json:"seq"`
			BatchID string `json:"batch"`
			Count   int    `json:"count"`
			Error   any    `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &ack); err != nil || ack.Error != nil || ack.Seq == 0 {
			return fmt.Errorf("atomic batch commit: %q (%v)", resp.Data, err)
		}
		if ack.Count != 3 || ack.BatchID != lifeBatchID {
			return fmt.Errorf("atomic batch commit ack %q: want batch %s count 3", resp.Data, lifeBatchID)
		}
		x.AtomicBatch.LastSeq, x.AtomicBatch.FirstSeq = ack.Seq, ack.Seq-2
		x.Ops = append(x.Ops, LifeOp{Phase: "B", Action: "atomic batch message 3 (Nats-Batch-Commit: 1)", Op: 17, OpName: "batchCommitMsgOp", Group: groups["ATOMIC"], Stream: "ATOMIC", At: now()})
	}

	caps, err := quietCapture(ctx, c, sc)
	if err != nil {
		return err
	}
	x.MetaLeader = c.MetaLeader(ctx)
	before, _ := c.convergence(ctx)

	// natscli, as the system user, against the cluster.
	x.Natscli = []LifeNatsCmd{}
	x.NatscliVersion = natscliVersion
	x.NatscliNote = "natscli " + natscliVersion + " has no `server request health`; its health request is `server request jetstream-health` (alias healthz), run instead. Each file is the command's stdout verbatim: one JSON object {server, data} per responding server"
	extra := map[string][]byte{}
	for _, sub := range []string{"jetstream", "raft", "variables", "jetstream-health"} {
		args := []string{"server", "request", sub}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cmd := exec.CommandContext(cctx, cli, append([]string{"--server", fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", c.Servers[0].ClientPort)}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+env.Scratch) // no user natscli context
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			return fmt.Errorf("nats %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		lines := bytes.Count(stdout.Bytes(), []byte("\n"))
		if lines != len(c.Servers) {
			return fmt.Errorf("nats %s: %d lines, want one per cluster server (%d)", strings.Join(args, " "), lines, len(c.Servers))
		}
		file := "natscli/server-request-" + sub + ".jsonl"
		extra[file] = stdout.Bytes()
		x.Natscli = append(x.Natscli, LifeNatsCmd{Command: append([]string{"nats", "--server", "nats://sys:***@127.0.0.1:<port>"}, args...),
			File: file, Lines: lines})
	}
	if after, ok := c.convergence(ctx); !ok || after != before {
		return fmt.Errorf("cluster state changed during the natscli requests")
	}

	// Copy the stores while the servers run, then stop gracefully.
	since := time.Since(restart)
	if since > lifeMetaWindow {
		return fmt.Errorf("phase B took %v since the restart (> %v): the meta layer may have compacted its WAL", since, lifeMetaWindow)
	}
	roots := map[string]string{}
	x.StoreCopy = LifeStoreCopy{Live: true, At: now(), SinceRestart: since.Round(time.Millisecond).String(),
		Why:           "the meta layer snapshots and compacts its WAL every minute and at a clean shutdown, stream groups at shutdown: the copy keeps ops 11/3/2 and 16/17 in the WALs",
		MetaFilesCopy: map[string][]string{}, MetaFilesAfterStop: map[string][]string{}}
	for _, s := range append(append([]*Server{}, c.Servers...), solo) {
		roots[s.Name] = filepath.Join(env.Scratch, "live-copy", s.Name, "jetstream")
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	if err := solo.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		if x.StoreCopy.MetaFilesCopy[s.Name], err = listFiles(filepath.Join(roots[s.Name], x.SystemAccount, "_js_", "_meta_")); err != nil {
			return err
		}
		if x.StoreCopy.MetaFilesAfterStop[s.Name], err = listFiles(filepath.Join(s.JSRoot(), x.SystemAccount, "_js_", "_meta_")); err != nil {
			return err
		}
	}
	if err := verifyStoresOnCopy(ctx, env, c, roots, caps); err != nil {
		return err
	}
	if err := verifySoloCopy(ctx, env, solo, roots[solo.Name], caps[solo.Name]); err != nil {
		return err
	}

	layout := LayoutFlat()
	x.Standalone.StoreDir, x.Standalone.Log = layout.Store(solo.Name), layout.Log(solo.Name)
	x.Purged.Snapshots = map[string][]string{}
	x.Folders = LifeFolderLists{AppStreams: map[string][]string{}, RaftGroups: map[string][]string{}}
	for _, s := range c.Servers {
		snaps, err := listFiles(filepath.Join(roots[s.Name], x.SystemAccount, "_js_", groups["PURGED"], "snapshots"))
		if err != nil {
			return err
		}
		if len(snaps) == 0 {
			return fmt.Errorf("%s: no snapshot of PURGED's group %s in the copy", s.Name, groups["PURGED"])
		}
		x.Purged.Snapshots[s.Name] = snaps
		x.Folders.AppStreams[s.Name], _ = dirNames(filepath.Join(roots[s.Name], lifeAccount, "streams"))
		x.Folders.RaftGroups[s.Name], _ = dirNames(filepath.Join(roots[s.Name], x.SystemAccount, "_js_"))
		for _, g := range x.GroupsRemoved {
			for _, have := range x.Folders.RaftGroups[s.Name] {
				if have == g {
					return fmt.Errorf("%s: removed group %s still has a folder in the copy", s.Name, g)
				}
			}
		}
	}
	b := &Bundle{Name: "lifecycle-v2.12.1", Version: "2.12.1", Layout: layout, Servers: c.Servers, Standalone: []*Server{solo},
		Captures: caps, StoreRoots: roots, Extra: extra, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// waitAssetLeader waits (up to 20 s) until the stream (or its consumer)
// reports a leader.
func waitAssetLeader(ctx context.Context, js jetstream.JetStream, stream, consumer string) error {
	what := stream
	if consumer != "" {
		what += "/" + consumer
	}
	return waitFor(ctx, 20*time.Second, what+" leader", func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if consumer != "" {
			ci, err := js.Consumer(cctx, stream, consumer)
			if err != nil {
				return false, nil
			}
			info := ci.CachedInfo()
			return info.Cluster != nil && info.Cluster.Leader != "", nil
		}
		st, err := js.Stream(cctx, stream)
		if err != nil {
			return false, nil
		}
		info := st.CachedInfo()
		return info.Cluster != nil && info.Cluster.Leader != "", nil
	})
}

// deleteOnce runs a delete request; when an attempt went unanswered and the
// next one says notFound, the first one did the deletion.
func deleteOnce(ctx context.Context, what string, del func(context.Context) error, notFound error) error {
	unanswered := false
	return retry(ctx, what, func(ctx context.Context) error {
		err := del(ctx)
		switch {
		case err == nil:
			return nil
		case unanswered && errors.Is(err, notFound):
			logf("%s: unanswered, then %v: taken as done", what, err)
			return nil
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
			unanswered = true
		}
		logf("%s: %v", what, err)
		return err
	})
}

// soloWorkload: stream SOLO on the standalone server (global account):
// 12 messages, delete of seq 4, durable SOLO_C (4 fetched, 3 acked).
func soloWorkload(ctx context.Context, s *Server) error {
	nc, js, err := connect(s)
	if err != nil {
		return err
	}
	defer nc.Close()
	var st jetstream.Stream
	if err := retry(ctx, "create SOLO", func(ctx context.Context) error {
		var err error
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "SOLO", Subjects: []string{"solo.>"}, Storage: jetstream.FileStorage})
		return err
	}); err != nil {
		return err
	}
	for i := 1; i <= 12; i++ {
		if _, err := publish(ctx, js, fmt.Sprintf("solo.%d", i%3), []byte(fmt.Sprintf("solo message %d", i)), nil); err != nil {
			return err
		}
	}
	if err := retry(ctx, "delete", func(ctx context.Context) error { return st.DeleteMsg(ctx, 4) }); err != nil {
		return err
	}
	return consume(ctx, st, jetstream.ConsumerConfig{Durable: "SOLO_C", AckPolicy: jetstream.AckExplicitPolicy}, 4, 3)
}

// verifySoloCopy starts a server on a copy of the standalone's store and
// checks it reports the captured stream and consumer state.
func verifySoloCopy(ctx context.Context, env *Env, solo *Server, root string, cp *Capture) error {
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "verify-solo"), solo.Version, "", []string{solo.Name})
	if err != nil {
		return err
	}
	defer r.Kill()
	s := r.Servers[0]
	s.NoCluster, s.Routes = true, nil
	if err := copyTree(root, s.JSRoot()); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	var was, now jszInfo
	if err := jsonUnmarshal(cp.Files["jsz"], &was); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, "solo copy state", func() (bool, error) {
		now = jszInfo{}
		if err := s.GetJSON(ctx, jszCapturePath, &now); err != nil {
			return false, nil
		}
		return streamStates(now) == streamStates(was), nil
	}); err != nil {
		return fmt.Errorf("%w: captured %s, copy %s", err, streamStates(was), streamStates(now))
	}
	logf("verified: standalone copy reports the captured state")
	return s.Stop()
}

// apiRequest sends a JetStream API request and decodes the answer.
func apiRequest(ctx context.Context, nc *nats.Conn, subj string, req any, resp any) error {
	var data []byte
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return err
		}
	}
	return retry(ctx, subj, func(ctx context.Context) error {
		m, err := nc.RequestWithContext(ctx, subj, data)
		if err != nil {
			return err
		}
		return json.Unmarshal(m.Data, resp)
	})
}

// listFiles lists the regular files under dir as "rel/path size".
func listFiles(dir string) ([]string, error) {
	out := []string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d", filepath.ToSlash(rel), st.Size()))
		return nil
	})
	sort.Strings(out)
	return out, err
}

// dirNames lists the sub-directories of dir.
func dirNames(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return []string{}, err
	}
	out := []string{}
	for _, e := range es {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}
