package main

// Issue 30, consumer-stuck: consumers that deliver nothing while messages
// wait. Three servers (cs-0..2, cluster stuck, $G):
//
//   - WORK (R3, 12 messages) with durable pull consumer STALLED (R3, explicit
//     ack, ack_wait 1 h, max_ack_pending 4): 4 messages fetched, none acked,
//     the client gone. The consumer is at max_ack_pending with 8 messages
//     waiting, and delivers nothing until an ack or the ack wait ends.
//   - JOBS (R3, 10 messages) with durable pull consumer LOST (R3, explicit
//     ack, ack_wait 1 h, max_ack_pending 3, from sequence 4): 3 messages
//     fetched (4..6), none acked; LOST's leader is killed (the stream led
//     elsewhere) and the 3 pending messages are deleted at once through
//     $JS.API.STREAM.MSG.DELETE, before LOST has a new leader; the server
//     is started again, then the whole cluster is restarted. On
//     releases without nats-server #7984 (MaxAckPending stuck after a
//     message delete) LOST keeps counting the deleted messages as pending.
//
// The bundle is the state after the restarts (quiet captures, graceful
// stop). A copy of it is started and each consumer asked for one message
// (expect.probe): what the servers do next.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func consumerStuckScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.12.1", "v2.12.15", "v2.15.3"} {
		out = append(out, Scenario{Name: "consumerstuck-" + v,
			Doc:     "issue 30: 3 x " + v + ": a consumer at max_ack_pending whose client vanished, and one whose pending messages were deleted while it had no leader (#7984)",
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return consumerStuck(ctx, env, v) }})
	}
	return out
}

// StuckConsumer is what the servers said of one consumer at a step.
type StuckConsumer struct {
	Stream        string     `json:"stream"`
	Consumer      string     `json:"consumer"`
	Leader        string     `json:"leader"`
	MaxAckPending int        `json:"max_ack_pending"`
	AckWait       string     `json:"ack_wait"`
	NumAckPending int        `json:"num_ack_pending"`
	NumPending    uint64     `json:"num_pending"`
	NumWaiting    int        `json:"num_waiting"`
	Delivered     uint64     `json:"delivered_stream"`
	AckFloor      uint64     `json:"ack_floor_stream"`
	LastActive    *time.Time `json:"last_active,omitempty"`
	StreamFirst   uint64     `json:"stream_first_seq"`
	StreamLast    uint64     `json:"stream_last_seq"`
	StreamMsgs    uint64     `json:"stream_messages"`
}

// ConsumerStuckExpect is want.json's expect for consumerstuck-<version>.
type ConsumerStuckExpect struct {
	Account string `json:"account"`
	// Fetched: per consumer, the stream sequences delivered and never acked.
	Fetched map[string][]uint64 `json:"fetched"`
	// LostServer: the leader of LOST, killed (SIGKILL) while its pending
	// messages were deleted (DeletedSeqs, at DeletedAt) with the stream led
	// by StreamLeader; started again after.
	LostServer   string   `json:"lost_server"`
	StreamLeader string   `json:"stream_leader"`
	DeletedSeqs  []uint64 `json:"deleted_seqs"`
	DeletedAt    string   `json:"deleted_at"`
	// Steps: each consumer as consumer info answered it after each step
	// ("fetched", "deleted" (its old leader still down, a new one elected), "server back",
	// "cluster restarted").
	Steps map[string][]StuckConsumer `json:"steps"`
	// KeepsDeleted: after the restarts LOST still counts the deleted
	// messages as pending (num_ack_pending > 0 with none of its fetched
	// messages left in the stream): the #7984 bug on this release.
	KeepsDeleted bool `json:"keeps_deleted"`
	// Probe: on a copy of the bundled stores, each consumer asked for one
	// message (3 s): how many it delivered.
	Probe map[string]int `json:"probe"`
	// NotSettled: steps after which the cluster did not become quiet in
	// 45 s (the consumer's replicas disagreeing), with why; the captures
	// are then taken as they are.
	NotSettled map[string]string `json:"not_settled,omitempty"`
	// Views: per server, each consumer's delivered/ack floor/ack pending
	// in its captured /jsz.
	Views map[string]map[string]string `json:"views"`
	// ProbeInfo: each consumer's info on the copy before its probe.
	ProbeInfo map[string]StuckConsumer `json:"probe_info"`
	// Upgrade: the same probe on a copy started on a newer release (when
	// this one kept the deleted messages).
	Upgrade *StuckUpgrade `json:"upgrade,omitempty"`
	// Findings the analyzer must raise (consumer-stuck per stuck consumer).
	Findings []map[string]string `json:"findings"`
}

func consumerStuck(ctx context.Context, env *Env, version string) error {
	name := "consumerstuck-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "stuck", []string{"cs-0", "cs-1", "cs-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	x := ConsumerStuckExpect{Account: "$G", Fetched: map[string][]uint64{}, Steps: map[string][]StuckConsumer{}, Probe: map[string]int{}}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer func() { nc.Close() }()
	work, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"WORK.>"}, Replicas: 3, Storage: jetstream.FileStorage}, 12, 64)
	if err != nil {
		return err
	}
	jobs, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"JOBS.>"}, Replicas: 3, Storage: jetstream.FileStorage}, 10, 64)
	if err != nil {
		return err
	}
	hour := time.Hour
	if x.Fetched["STALLED"], err = fetchNoAck(ctx, work, jetstream.ConsumerConfig{Durable: "STALLED", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: hour, MaxAckPending: 4, Replicas: 3}, 4); err != nil {
		return err
	}
	// LOST starts at sequence 4, so its pending messages are interior ones:
	// deleting them leaves the stream's first sequence where it is.
	if x.Fetched["LOST"], err = fetchNoAck(ctx, jobs, jetstream.ConsumerConfig{Durable: "LOST", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: hour, MaxAckPending: 3, Replicas: 3, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 4}, 3); err != nil {
		return err
	}
	step := func(what string) error {
		for _, sc := range []struct{ stream, cons string }{{"WORK", "STALLED"}, {"JOBS", "LOST"}} {
			s, err := stuckInfo(ctx, js, sc.stream, sc.cons)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			x.Steps[what] = append(x.Steps[what], s)
		}
		return nil
	}
	if err := step("fetched"); err != nil {
		return err
	}
	lost := x.Steps["fetched"][1].Leader
	srv := c.Server(lost)
	if srv == nil {
		return fmt.Errorf("LOST's leader %q is no member", lost)
	}
	x.LostServer = lost
	// The stream's leader must stay up, so that the deletes are applied
	// while LOST has no leader: move it off LOST's leader first.
	for tries := 0; ; tries++ {
		si, err := stuckInfo(ctx, js, "JOBS", "LOST")
		if err != nil {
			return err
		}
		sl, err := streamLeader(ctx, js, "JOBS")
		if err != nil {
			return err
		}
		if si.Leader != lost {
			return fmt.Errorf("LOST's leader moved from %s to %s", lost, si.Leader)
		}
		if sl != lost {
			x.StreamLeader = sl
			break
		}
		if tries == 5 {
			return fmt.Errorf("JOBS stays led by %s", sl)
		}
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.JOBS", nil, 5*time.Second); err != nil {
			return err
		}
		if err := pause(ctx, 2*time.Second); err != nil {
			return err
		}
	}
	// LOST's leader killed (no leadership handed over), and the pending
	// messages deleted at once, before the other replicas elect a leader.
	if err := srv.Kill(); err != nil {
		return err
	}
	for _, seq := range x.Fetched["LOST"] {
		if err := retry(ctx, fmt.Sprintf("delete JOBS %d", seq), func(ctx context.Context) error { return jobs.DeleteMsg(ctx, seq) }); err != nil {
			return err
		}
		x.DeletedSeqs = append(x.DeletedSeqs, seq)
	}
	x.DeletedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := waitAssetLeader(ctx, js, "JOBS", "LOST"); err != nil {
		return err
	}
	if err := step("deleted"); err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	x.NotSettled = map[string]string{}
	if err := c.WaitQuiet(ctx, 45*time.Second); err != nil {
		// The consumer's replicas may not agree again (seen on 2.12.15).
		x.NotSettled["server back"] = err.Error()
		logf("%s: server back: %v", name, err)
	}
	if err := waitAssetLeader(ctx, js, "JOBS", "LOST"); err != nil {
		return err
	}
	if err := step("server back"); err != nil {
		return err
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 45*time.Second); err != nil {
		x.NotSettled["cluster restarted"] = err.Error()
		logf("%s: cluster restarted: %v", name, err)
	}
	if nc, js, err = connect(c.Servers...); err != nil {
		return err
	}
	for _, sc := range [][2]string{{"WORK", "STALLED"}, {"JOBS", "LOST"}} {
		if err := waitAssetLeader(ctx, js, sc[0], sc[1]); err != nil {
			return err
		}
	}
	if err := step("cluster restarted"); err != nil {
		return err
	}
	nc.Close()
	final := x.Steps["cluster restarted"]
	x.KeepsDeleted = final[1].NumAckPending > 0
	x.Findings = append(x.Findings, map[string]string{"code": "consumer-stuck", "account": x.Account, "stream": "WORK", "consumer": "STALLED"})
	if x.KeepsDeleted {
		x.Findings = append(x.Findings, map[string]string{"code": "consumer-stuck", "account": x.Account, "stream": "JOBS", "consumer": "LOST"})
	}
	var caps map[string]*Capture
	if len(x.NotSettled) == 0 {
		caps, err = quietCapture(ctx, c)
	} else {
		// Not quiet: every server's own view, as it is.
		caps, err = CaptureAll(ctx, c)
	}
	if err != nil {
		return err
	}
	x.Views = consumerViews(caps)
	if err := c.Stop(); err != nil {
		return err
	}
	if len(x.NotSettled) == 0 {
		if err := verifyOnCopy(ctx, env, c, caps); err != nil {
			return err
		}
	}
	probe := map[string]string{"STALLED": "WORK", "LOST": "JOBS"}
	if x.Probe, x.ProbeInfo, err = probeConsumers(ctx, env, c, c.Version, probe); err != nil {
		return err
	}
	// The same stores started on the newest 2.12 release read: whether a
	// release with nats-server #7984 frees LOST by itself.
	if x.KeepsDeleted && versionLess(version, upgradeTo) {
		x.Upgrade = &StuckUpgrade{Version: upgradeTo}
		if x.Upgrade.Probe, x.Upgrade.Info, err = probeConsumers(ctx, env, c, upgradeTo, probe); err != nil {
			return err
		}
		logf("%s: on %s: %+v probe %v", name, upgradeTo, x.Upgrade.Info, x.Upgrade.Probe)
	}
	logf("%s: LOST on %s, deleted %v; after the restarts num_ack_pending %d (keeps deleted: %v); probe %v", name, lost, x.DeletedSeqs,
		final[1].NumAckPending, x.KeepsDeleted, x.Probe)
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// upgradeTo is the release the #7984 state is started on once it is made.
const upgradeTo = "v2.12.15"

// StuckUpgrade is the probe on a copy started on another release.
type StuckUpgrade struct {
	Version string                   `json:"version"`
	Info    map[string]StuckConsumer `json:"info"`
	Probe   map[string]int           `json:"probe"`
}

// fetchNoAck creates a durable pull consumer and fetches n messages without
// acknowledging any: their stream sequences.
func fetchNoAck(ctx context.Context, st jetstream.Stream, cfg jetstream.ConsumerConfig, n int) ([]uint64, error) {
	var cons jetstream.Consumer
	if err := retry(ctx, "create consumer "+cfg.Durable, func(ctx context.Context) error {
		var err error
		cons, err = st.CreateOrUpdateConsumer(ctx, cfg)
		return err
	}); err != nil {
		return nil, err
	}
	var seqs []uint64
	for tries := 0; len(seqs) < n && tries < 10; tries++ {
		batch, err := cons.Fetch(n-len(seqs), jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			seqs = append(seqs, md.Sequence.Stream)
		}
	}
	if len(seqs) < n {
		return nil, fmt.Errorf("fetch %s: %d of %d messages", cfg.Durable, len(seqs), n)
	}
	return seqs, nil
}

// stuckInfo asks for a consumer's info and its stream's state.
func stuckInfo(ctx context.Context, js jetstream.JetStream, stream, consumer string) (StuckConsumer, error) {
	var s StuckConsumer
	err := retry(ctx, "info "+stream+"/"+consumer, func(ctx context.Context) error {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		cons, err := st.Consumer(ctx, consumer)
		if err != nil {
			return err
		}
		ci, si := cons.CachedInfo(), st.CachedInfo()
		s = StuckConsumer{Stream: stream, Consumer: consumer, MaxAckPending: ci.Config.MaxAckPending, AckWait: ci.Config.AckWait.String(),
			NumAckPending: ci.NumAckPending, NumPending: ci.NumPending, NumWaiting: ci.NumWaiting,
			Delivered: ci.Delivered.Stream, AckFloor: ci.AckFloor.Stream, LastActive: ci.Delivered.Last,
			StreamFirst: si.State.FirstSeq, StreamLast: si.State.LastSeq, StreamMsgs: si.State.Msgs}
		if ci.Cluster != nil {
			s.Leader = ci.Cluster.Leader
		}
		return nil
	})
	return s, err
}

// probeConsumers starts a copy of the stopped cluster's stores on version
// and asks each consumer (name -> stream) for its info and then for one
// message (3 s): how many came.
func probeConsumers(ctx context.Context, env *Env, c *Cluster, version string, consumers map[string]string) (map[string]int, map[string]StuckConsumer, error) {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "probe-"+version), version, c.Name, names)
	if err != nil {
		return nil, nil, err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		src := c.Servers[i]
		s.Extra, s.JetStreamExtra, s.User, s.Password = src.Extra, src.JetStreamExtra, src.User, src.Password
		if err := copyTree(src.JSRoot(), s.JSRoot()); err != nil {
			return nil, nil, err
		}
	}
	if err := r.Start(ctx); err != nil {
		return nil, nil, err
	}
	if err := r.WaitQuiet(ctx, 45*time.Second); err != nil {
		logf("probe on %s: %v", version, err)
	}
	nc, js, err := connect(r.Servers...)
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	out, infos := map[string]int{}, map[string]StuckConsumer{}
	for _, cons := range []string{"STALLED", "LOST"} {
		stream, ok := consumers[cons]
		if !ok {
			continue
		}
		if err := waitAssetLeader(ctx, js, stream, cons); err != nil {
			return nil, nil, err
		}
		if infos[cons], err = stuckInfo(ctx, js, stream, cons); err != nil {
			return nil, nil, err
		}
		cc, err := js.Consumer(ctx, stream, cons)
		if err != nil {
			return nil, nil, err
		}
		batch, err := cc.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			return nil, nil, err
		}
		n := 0
		for range batch.Messages() {
			n++
		}
		out[cons] = n
	}
	nc.Close()
	return out, infos, r.Stop()
}

// streamLeader is the stream's leader as stream info names it.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	leader := ""
	err := retry(ctx, "info "+stream, func(ctx context.Context) error {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		if ci := st.CachedInfo().Cluster; ci != nil {
			leader = ci.Leader
		}
		return nil
	})
	return leader, err
}

// consumerViews is each server's captured view of each consumer:
// "delivered/ack_floor/num_ack_pending" by stream sequence.
func consumerViews(caps map[string]*Capture) map[string]map[string]string {
	out := map[string]map[string]string{}
	for n, cp := range caps {
		var j jszInfo
		if jsonUnmarshal(cp.Files["jsz"], &j) != nil {
			continue
		}
		out[n] = map[string]string{}
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				for _, cd := range st.Consumers {
					out[n][st.Name+" > "+cd.Name] = fmt.Sprintf("%d/%d/%d", cd.Delivered.Stream, cd.AckFloor.Stream, cd.NumAckPending)
				}
			}
		}
	}
	return out
}
