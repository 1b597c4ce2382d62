package main

// Issue 30, consumers ahead of their stream and stalled groups: every
// replica of a stream loses the same tail (a power loss with the default
// sync_interval) while the raft snapshot and the consumers' state record
// the longer stream. Three servers; the R3 stream ORDERS with the R3
// durable PROC and the R1 durable SHIP (consumer replicas 1 on the R3
// stream), the R1 stream EVENTS with the R1 durable AUDIT; every consumer
// has fetched and acknowledged every message. The cluster is stopped
// gracefully (SIGTERM: each stream and consumer group writes its snapshot),
// the stores copied and the same last records cut off every replica's last
// block (at a record boundary), then the servers are started on the copies
// and what they do is recorded: their log lines, /healthz, /jsz, a publish
// to each stream, the consumers' state. The bundle is that restarted state
// (stores as the restarted servers left them after a graceful stop, their
// logs, the captures taken after the publishes) and the /jsz each server
// answered before the loss. Beside the cluster a standalone server (no
// raft: nothing records the longer stream but the consumer's own state)
// holds the R1 stream AUDITLOG with the durable READER; it is killed
// (SIGKILL) instead and its tail cut the same way.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func aheadScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.10.27", "v2.12.15", "v2.14.10", "v2.15.3"} {
		out = append(out, aheadScenario(v))
	}
	return out
}

func aheadScenario(v string) Scenario {
	return Scenario{Name: "ahead-" + v, Timeout: 8 * time.Minute,
		Doc: "issue 30: 3 x " + v + ", streams ORDERS (R3; consumers PROC R3, SHIP R1) and EVENTS (R1; AUDIT) fully delivered and acked; graceful stop, the same tail cut off every replica, restart: what the servers do (consumers ahead; from 2.12 the R3 group without a leader); also ahead-<v>-cut, the stores before the restart",
		Run: func(ctx context.Context, env *Env) error { return ahead(ctx, env, v) }}
}

const (
	aheadR3, aheadR1            = "ORDERS", "EVENTS"
	aheadR3Msgs, aheadR1Msgs    = 40, 30
	aheadR3Cut, aheadR1Cut      = 8, 6
	aheadStop                   = "graceful (SIGTERM to every server at once)"
	aheadBeforeDir              = "before-loss/"
	aheadProbeSubjR3            = "orders.probe"
	aheadProbeSubjR1            = "events.probe"
	aheadConsumerR3, aheadSHP   = "PROC", "SHIP"
	aheadConsumerR1             = "AUDIT"
	aheadSolo, aheadSoloStr     = "ah-solo", "AUDITLOG"
	aheadSoloCons               = "READER"
	aheadSoloMsgs, aheadSoloCut = 30, 7
)

var aheadLogPattern = regexp.MustCompile(`(?i)ORDERS|EVENTS|AUDITLOG|catchup|catch up|no leader|past last stream sequence|not current|Falling behind|Resetting|Healthcheck`)

// AheadExpect is want.json's expect for ahead-<version>.
type AheadExpect struct {
	Account string `json:"account"`
	// Stop is how the servers were stopped before the loss, SoloStop the
	// standalone server.
	Stop     string `json:"stop"`
	SoloStop string `json:"solo_stop"`
	// Before is each server's /jsz view of the streams before the loss
	// (the captures are in the bundle under BeforeCaptures).
	Before         map[string][]AheadStream `json:"before"`
	BeforeCaptures map[string]string        `json:"before_captures"`
	Cuts           []AckLossCut             `json:"cuts"`
	// Restart: each server's /jsz view right after the restart (before the
	// probes) and its /healthz.
	Restart       map[string][]AheadStream `json:"restart"`
	RestartHealth map[string]string        `json:"restart_health"`
	// Probes: one publish to each stream after the restart, the reply or
	// the client's error verbatim.
	Probes map[string]string `json:"probes"`
	// After is each server's view at the bundle's captures (after the
	// probes) and its /healthz.
	After       map[string][]AheadStream `json:"after"`
	AfterHealth map[string]string        `json:"after_health"`
	// Ahead: per server, the consumers whose delivered or ack floor stream
	// sequence is past its stream's last_seq in that server's /jsz at the
	// bundle's captures, and which sequences they will skip.
	Ahead []AheadConsumer `json:"ahead"`
	// Reconciled: the consumers a server's log says it moved back at its
	// start (2.14+: "delivered sequence X past last stream sequence of Y").
	Reconciled []string `json:"reconciled"`
	// Stalled: the stream groups every server answered for with no leader.
	Stalled []string `json:"stalled"`
	// LogLines: the restarted servers' lines matching LogPattern.
	LogPattern string              `json:"log_pattern"`
	LogLines   map[string][]string `json:"log_lines"`
	// Trial is what the remedies did on a copy of the bundle's stores.
	Trial *AheadTrial `json:"trial,omitempty"`
	// Findings the analysis must make, from the above.
	Findings []map[string]string `json:"findings"`
}

// AheadStream is one stream in one server's /jsz.
type AheadStream struct {
	Name      string          `json:"name"`
	Leader    string          `json:"leader"`
	FirstSeq  uint64          `json:"first_seq"`
	LastSeq   uint64          `json:"last_seq"`
	Messages  uint64          `json:"messages"`
	Consumers []AheadConsView `json:"consumers"`
}

// AheadConsView is one consumer in one server's /jsz.
type AheadConsView struct {
	Name            string `json:"name"`
	Leader          string `json:"leader"`
	DeliveredStream uint64 `json:"delivered_stream"`
	AckFloorStream  uint64 `json:"ack_floor_stream"`
	NumPending      uint64 `json:"num_pending"`
	NumAckPending   int    `json:"num_ack_pending"`
}

// AheadConsumer is a consumer ahead of its stream on one server.
type AheadConsumer struct {
	Server          string   `json:"server"`
	Stream          string   `json:"stream"`
	Consumer        string   `json:"consumer"`
	StreamLast      uint64   `json:"stream_last_seq"`
	DeliveredStream uint64   `json:"delivered_stream"`
	AckFloorStream  uint64   `json:"ack_floor_stream"`
	Skips           SeqRange `json:"skips"`
}

func aheadView(c *Capture) ([]AheadStream, error) {
	var j jszInfo
	if err := jsonUnmarshal(c.Files["jsz"], &j); err != nil {
		return nil, err
	}
	out := []AheadStream{}
	for _, a := range j.Accounts {
		for _, sd := range a.Streams {
			st := AheadStream{Name: sd.Name, FirstSeq: sd.State.FirstSeq, LastSeq: sd.State.LastSeq, Messages: sd.State.Msgs, Consumers: []AheadConsView{}}
			if sd.Cluster != nil {
				st.Leader = sd.Cluster.Leader
			}
			for _, cd := range sd.Consumers {
				cv := AheadConsView{Name: cd.Name, DeliveredStream: cd.Delivered.Stream, AckFloorStream: cd.AckFloor.Stream,
					NumPending: cd.NumPending, NumAckPending: cd.NumAckPending}
				if cd.Cluster != nil {
					cv.Leader = cd.Cluster.Leader
				}
				st.Consumers = append(st.Consumers, cv)
			}
			sort.Slice(st.Consumers, func(i, k int) bool { return st.Consumers[i].Name < st.Consumers[k].Name })
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Name < out[k].Name })
	return out, nil
}

func ahead(ctx context.Context, env *Env, version string) error {
	names := []string{"ah-0", "ah-1", "ah-2"}
	c, err := NewCluster(ctx, env.Scratch, version, "ahead", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	sc, err := NewCluster(ctx, env.Scratch, version, "", []string{aheadSolo})
	if err != nil {
		return err
	}
	defer sc.Kill()
	solo := sc.Servers[0]
	solo.NoCluster, solo.Routes = true, nil
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := solo.Start(ctx); err != nil {
		return err
	}
	if err := waitAnyMetaLeader(ctx, c, 45*time.Second); err != nil {
		return err
	}
	// v2.10: a meta leader that left a server out of its group (metapeers.go).
	if err := ensureMetaPeers(ctx, c); err != nil {
		return err
	}
	x := AheadExpect{Account: "$G", Stop: aheadStop, SoloStop: "kill -9 (SIGKILL)", Before: map[string][]AheadStream{}, BeforeCaptures: map[string]string{},
		Restart: map[string][]AheadStream{}, RestartHealth: map[string]string{}, Probes: map[string]string{},
		After: map[string][]AheadStream{}, AfterHealth: map[string]string{}, Ahead: []AheadConsumer{}, Reconciled: []string{},
		Stalled: []string{}, LogPattern: aheadLogPattern.String(), LogLines: map[string][]string{}}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	for _, sc := range []struct {
		name, subj string
		replicas   int
		msgs       int
	}{{aheadR3, "orders.>", 3, aheadR3Msgs}, {aheadR1, "events.>", 1, aheadR1Msgs}} {
		if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: sc.name, Subjects: []string{sc.subj}, Replicas: sc.replicas, Storage: jetstream.FileStorage}, 0, 0); err != nil {
			nc.Close()
			return err
		}
		prefix := strings.TrimSuffix(sc.subj, ">")
		for i := 1; i <= sc.msgs; i++ {
			if _, err := publish(ctx, js, fmt.Sprintf("%s%d", prefix, i%4), payload(sc.name, i, 120), nil); err != nil {
				nc.Close()
				return err
			}
		}
	}
	for _, d := range []struct {
		stream, name string
		replicas, n  int
	}{{aheadR3, aheadConsumerR3, 3, aheadR3Msgs}, {aheadR3, aheadSHP, 1, aheadR3Msgs}, {aheadR1, aheadConsumerR1, 1, aheadR1Msgs}} {
		if err := durableWithAcks(ctx, js, d.stream, d.name, d.replicas, d.n, d.n); err != nil {
			nc.Close()
			return err
		}
	}
	nc.Close()
	snc, sjs, err := connect(solo)
	if err != nil {
		return err
	}
	if _, err := createFilled(ctx, sjs, jetstream.StreamConfig{Name: aheadSoloStr, Subjects: []string{"audit.>"}, Storage: jetstream.FileStorage}, 0, 0); err != nil {
		snc.Close()
		return err
	}
	for i := 1; i <= aheadSoloMsgs; i++ {
		if _, err := publish(ctx, sjs, fmt.Sprintf("audit.%d", i%3), payload(aheadSoloStr, i, 120), nil); err != nil {
			snc.Close()
			return err
		}
	}
	if err := durableWithAcks(ctx, sjs, aheadSoloStr, aheadSoloCons, 1, aheadSoloMsgs, aheadSoloMsgs); err != nil {
		snc.Close()
		return err
	}
	snc.Close()
	before, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if before[solo.Name], err = captureServer(ctx, solo); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	// The standalone server is killed (SIGKILL): no state file is written
	// at a stop, so its index.db does not remember the tail the cut takes
	// (a graceful stop's would, and the server keeps that last sequence).
	if err := solo.Kill(); err != nil {
		return err
	}
	layout := LayoutFlat()
	extra := map[string][]byte{}
	for _, s := range append(append([]*Server{}, c.Servers...), solo) {
		if x.Before[s.Name], err = aheadView(before[s.Name]); err != nil {
			return err
		}
		p := aheadBeforeDir + s.Name + "-jsz.json"
		x.BeforeCaptures[s.Name] = p
		extra[p] = before[s.Name].Files["jsz"]
	}

	// The copies with the tail cut, restarted: same names, new ports; each
	// log starts as the first run's, so the restart is appended to it.
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
		for _, sc := range []struct {
			name string
			n    int
		}{{aheadR3, aheadR3Cut}, {aheadR1, aheadR1Cut}} {
			msgs := filepath.Join(s.JSRoot(), "$G", "streams", sc.name, "msgs")
			if _, err := os.Stat(msgs); err != nil {
				continue // the R1 stream is on one server
			}
			cut, err := cutLastRecords(msgs, sc.n)
			if err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
			cut.Server = s.Name
			cut.File = layout.Store(s.Name) + "/$G/streams/" + sc.name + "/msgs/" + cut.File
			x.Cuts = append(x.Cuts, cut)
		}
	}
	rsc, err := NewCluster(ctx, filepath.Join(env.Scratch, "restart"), c.Version, "", []string{aheadSolo})
	if err != nil {
		return err
	}
	defer rsc.Kill()
	rsolo := rsc.Servers[0]
	rsolo.NoCluster, rsolo.Routes = true, nil
	if err := copyTree(solo.JSRoot(), rsolo.JSRoot()); err != nil {
		return err
	}
	if err := copyFile(solo.LogFile, rsolo.LogFile); err != nil {
		return err
	}
	cut, err := cutLastRecords(filepath.Join(rsolo.JSRoot(), "$G", "streams", aheadSoloStr, "msgs"), aheadSoloCut)
	if err != nil {
		return fmt.Errorf("%s: %w", rsolo.Name, err)
	}
	cut.Server = rsolo.Name
	cut.File = layout.Store(rsolo.Name) + "/$G/streams/" + aheadSoloStr + "/msgs/" + cut.File
	x.Cuts = append(x.Cuts, cut)
	all := append(append([]*Server{}, r.Servers...), rsolo)
	logSizes := map[string]int64{}
	for _, s := range all {
		fi, err := os.Stat(s.LogFile)
		if err != nil {
			return err
		}
		logSizes[s.Name] = fi.Size()
	}
	// The stores as the loss left them, before any start: the bundle one
	// step earlier (ahead-<version>-cut).
	cutStores := map[string]string{}
	for _, s := range all {
		d := filepath.Join(env.Scratch, "cut", s.Name)
		if err := copyTree(s.JSRoot(), d); err != nil {
			return err
		}
		cutStores[s.Name] = d
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := rsolo.Start(ctx); err != nil {
		return err
	}
	if err := waitAnyMetaLeader(ctx, r, 45*time.Second); err != nil { // on 2.10.27 the leader may list a replica not current for long
		return err
	}
	err = waitFor(ctx, 30*time.Second, "every server reporting its streams", func() (bool, error) {
		n := 0
		for _, s := range r.Servers {
			var j jszInfo
			if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
				return false, nil
			}
			for _, a := range j.Accounts {
				n += len(a.Streams)
			}
		}
		return n == 4, nil
	})
	if err != nil {
		return err
	}
	time.Sleep(15 * time.Second) // elections, catch-up attempts, health checks
	restart, err := CaptureAll(ctx, r)
	if err != nil {
		return err
	}
	if restart[rsolo.Name], err = captureServer(ctx, rsolo); err != nil {
		return err
	}
	for _, s := range all {
		if x.Restart[s.Name], err = aheadView(restart[s.Name]); err != nil {
			return err
		}
		x.RestartHealth[s.Name] = httpBody(s, "/healthz")
	}
	pc, _, err := connect(r.Servers...)
	if err != nil {
		return err
	}
	for _, p := range []struct{ stream, subj string }{{aheadR3, aheadProbeSubjR3}, {aheadR1, aheadProbeSubjR1}} {
		m, err := pc.Request(p.subj, []byte("probe after the restart"), 4*time.Second)
		if err != nil {
			x.Probes[p.stream] = "client: " + err.Error()
		} else {
			x.Probes[p.stream] = string(m.Data)
		}
	}
	pc.Close()
	spc, _, err := connect(rsolo)
	if err != nil {
		return err
	}
	if m, err := spc.Request("audit.probe", []byte("probe after the restart"), 4*time.Second); err != nil {
		x.Probes[aheadSoloStr] = "client: " + err.Error()
	} else {
		x.Probes[aheadSoloStr] = string(m.Data)
	}
	spc.Close()
	time.Sleep(3 * time.Second)
	after, err := CaptureAll(ctx, r)
	if err != nil {
		return err
	}
	if after[rsolo.Name], err = captureServer(ctx, rsolo); err != nil {
		return err
	}
	for _, s := range all {
		if x.After[s.Name], err = aheadView(after[s.Name]); err != nil {
			return err
		}
		x.AfterHealth[s.Name] = httpBody(s, "/healthz")
	}
	if err := r.Stop(); err != nil {
		return err
	}
	if err := rsolo.Stop(); err != nil {
		return err
	}
	reconcile := regexp.MustCompile(`consumer '([^']*)' delivered sequence \d+ past last stream sequence`)
	for _, s := range all {
		logb, err := os.ReadFile(s.LogFile)
		if err != nil {
			return err
		}
		x.LogLines[s.Name] = []string{}
		for _, l := range strings.Split(string(logb[logSizes[s.Name]:]), "\n") {
			if aheadLogPattern.MatchString(l) {
				x.LogLines[s.Name] = append(x.LogLines[s.Name], l)
			}
			if m := reconcile.FindStringSubmatch(l); m != nil {
				x.Reconciled = append(x.Reconciled, s.Name+": "+m[1])
			}
		}
	}
	// The truth the analysis is held to, from the servers' own answers.
	leaderless := map[string]int{}
	for _, s := range all {
		for _, st := range x.After[s.Name] {
			if st.Leader == "" {
				leaderless[st.Name]++
			}
			for _, cv := range st.Consumers {
				if cv.DeliveredStream <= st.LastSeq && cv.AckFloorStream <= st.LastSeq {
					continue
				}
				a := AheadConsumer{Server: s.Name, Stream: st.Name, Consumer: cv.Name, StreamLast: st.LastSeq,
					DeliveredStream: cv.DeliveredStream, AckFloorStream: cv.AckFloorStream,
					Skips: SeqRange{First: st.LastSeq + 1, Last: max(cv.DeliveredStream, cv.AckFloorStream)}}
				x.Ahead = append(x.Ahead, a)
				x.Findings = append(x.Findings, map[string]string{"code": "consumer-ahead", "server": s.Name, "account": x.Account, "stream": st.Name, "consumer": cv.Name})
			}
		}
	}
	for st, n := range leaderless {
		if n == len(r.Servers) && st == aheadR3 {
			x.Stalled = append(x.Stalled, st)
			x.Findings = append(x.Findings, map[string]string{"code": "group-stalled", "account": x.Account, "stream": st})
		}
	}
	if len(x.Ahead) == 0 {
		return fmt.Errorf("no consumer ahead of its stream after the restart: %+v", x.After)
	}
	logf("ahead-%s: probes %v; ahead %d (%v); reconciled %v; stalled %v", version, x.Probes, len(x.Ahead), x.Ahead, x.Reconciled, x.Stalled)
	if x.Trial, err = aheadTrial(ctx, env, r, rsolo, &x); err != nil {
		return err
	}
	logf("ahead-%s: trial %+v", version, *x.Trial)
	if err := writeAheadOutcome(env, version, x.Trial); err != nil {
		return err
	}
	b := &Bundle{Name: "ahead-" + version, Version: version[1:], Layout: layout, Servers: r.Servers, Standalone: []*Server{rsolo}, Captures: after, Extra: extra, Expect: x}
	if err := b.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	return aheadCut(env, version, layout, append(append([]*Server{}, c.Servers...), solo), cutStores, &x)
}

// AheadCutExpect is want.json's expect for ahead-<version>-cut: the stores
// as the loss left them (cut, never started again), the first run's logs,
// no captures; what the servers did when started on them is the
// ahead-<version> run's.
type AheadCutExpect struct {
	Of      string       `json:"of"`
	Account string       `json:"account"`
	Stop    string       `json:"stop"`
	Cuts    []AckLossCut `json:"cuts"`
	// AheadAtStart: the consumers each server's /jsz showed past the
	// stream 15 s after the start on these stores; Reconciled those a
	// 2.14+ server moved back at that start (its log line).
	AheadAtStart []string `json:"ahead_at_start"`
	Reconciled   []string `json:"reconciled"`
	Stalled      []string `json:"stalled"`
	// Findings: consumer-ahead kind skips for the first, reset-at-start
	// for the second; group-stalled for each stalled stream.
	Findings []map[string]string `json:"findings"`
}

func aheadCut(env *Env, version string, layout Layout, servers []*Server, stores map[string]string, x *AheadExpect) error {
	cx := AheadCutExpect{Of: "ahead-" + version, Account: x.Account, Stop: x.Stop + "; " + aheadSolo + ": " + x.SoloStop,
		Cuts: x.Cuts, AheadAtStart: []string{}, Reconciled: x.Reconciled, Stalled: x.Stalled}
	for _, s := range servers {
		for _, st := range x.Restart[s.Name] {
			for _, cv := range st.Consumers {
				if cv.DeliveredStream > st.LastSeq || cv.AckFloorStream > st.LastSeq {
					cx.AheadAtStart = append(cx.AheadAtStart, s.Name+": "+x.Account+" > "+st.Name+" > "+cv.Name)
					cx.Findings = append(cx.Findings, map[string]string{"code": "consumer-ahead", "kind": "skips", "server": s.Name,
						"account": x.Account, "stream": st.Name, "consumer": cv.Name})
				}
			}
		}
	}
	for _, rc := range x.Reconciled {
		srv, asset, _ := strings.Cut(rc, ": ")
		p := strings.Split(asset, " > ")
		if len(p) == 3 {
			cx.Findings = append(cx.Findings, map[string]string{"code": "consumer-ahead", "kind": "reset-at-start", "server": srv,
				"account": p[0], "stream": p[1], "consumer": p[2]})
		}
	}
	// Every cut took messages no copy holds any more: the restart logged
	// fewer restored than before ("Restored N messages"). The bundle shows
	// it where the copy's index.db remembers the tail (not on the killed
	// server, which wrote none).
	for _, c := range x.Cuts {
		st := strings.Split(c.File, "/")
		if len(st) < 4 {
			continue
		}
		if _, err := os.Stat(filepath.Join(stores[c.Server], x.Account, "streams", st[len(st)-3], "msgs", "index.db")); err == nil {
			cx.Findings = append(cx.Findings, map[string]string{"code": "store-corrupt", "server": c.Server, "account": x.Account, "stream": st[len(st)-3]})
		}
	}
	for _, st := range x.Stalled {
		cx.Findings = append(cx.Findings, map[string]string{"code": "group-stalled", "kind": "no-leader", "account": x.Account, "stream": st})
	}
	b := &Bundle{Name: "ahead-" + version + "-cut", Version: version[1:], Layout: layout, Stopped: servers, StoreRoots: stores, Expect: cx}
	return b.Write(env.Scratch, env.Out)
}

// AheadTrial is what the remedies of group-stalled and consumer-ahead did,
// carried out on a copy of the bundle's stores (the bundle is not touched):
// the stalled stream's raft group folder moved out of every server's store
// (the stream's blocks and consumers kept), the servers started; then each
// consumer ahead deleted and added again with the same name and config,
// delivering from the stream's next sequence.
type AheadTrial struct {
	// GroupMoved: the raft group folder moved aside on every server.
	GroupMoved string `json:"group_moved"`
	// Leader: the stream's leader after the start ("" = none in 30 s);
	// Streams each server's stream state then.
	Leader  string            `json:"leader"`
	Streams map[string]string `json:"streams"`
	// Probe: a publish to the stream then, its reply verbatim.
	Probe string `json:"probe"`
	// Skipped: per consumer ahead, what a fetch got before it was added
	// again ("none" when nothing came: the new message skipped).
	Skipped map[string]string `json:"skipped"`
	// Recreated: per consumer, what a fetch got after it was deleted and
	// added again with deliver_policy by_start_sequence at the stream's
	// first unseen sequence.
	Recreated map[string]string `json:"recreated"`
	// LogLines: the servers' lines of this start matching LogPattern.
	LogLines map[string][]string `json:"log_lines"`
	// Worked: a leader, the probe acknowledged, and every recreated
	// consumer got the message.
	Worked bool `json:"worked"`
}

func aheadTrial(ctx context.Context, env *Env, r *Cluster, rsolo *Server, x *AheadExpect) (*AheadTrial, error) {
	t := &AheadTrial{Streams: map[string]string{}, Skipped: map[string]string{}, Recreated: map[string]string{}, LogLines: map[string][]string{}}
	var names []string
	for _, s := range r.Servers {
		names = append(names, s.Name)
	}
	tc, err := NewCluster(ctx, filepath.Join(env.Scratch, "trial"), r.Version, r.Name, names)
	if err != nil {
		return nil, err
	}
	defer tc.Kill()
	tsc, err := NewCluster(ctx, filepath.Join(env.Scratch, "trial"), r.Version, "", []string{aheadSolo})
	if err != nil {
		return nil, err
	}
	defer tsc.Kill()
	tsolo := tsc.Servers[0]
	tsolo.NoCluster, tsolo.Routes = true, nil
	for i, s := range append(append([]*Server{}, tc.Servers...), tsolo) {
		src := rsolo
		if i < len(r.Servers) {
			src = r.Servers[i]
		}
		if err := copyTree(src.JSRoot(), s.JSRoot()); err != nil {
			return nil, err
		}
		if s == tsolo || len(x.Stalled) == 0 {
			continue
		}
		js := filepath.Join(s.JSRoot(), "$SYS", "_js_")
		ents, err := os.ReadDir(js)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "S-R3F-") {
				t.GroupMoved = e.Name()
				if err := os.Rename(filepath.Join(js, e.Name()), filepath.Join(s.Dir, "saved-"+e.Name())); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := tc.Start(ctx); err != nil {
		return nil, err
	}
	if err := tsolo.Start(ctx); err != nil {
		return nil, err
	}
	if err := waitAnyMetaLeader(ctx, tc, 45*time.Second); err != nil {
		return nil, err
	}
	nc, js, err := connect(tc.Servers...)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	_ = waitFor(ctx, 30*time.Second, aheadR3+" leader", func() (bool, error) {
		var si struct {
			Cluster struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
		}
		m, err := nc.Request("$JS.API.STREAM.INFO."+aheadR3, nil, 2*time.Second)
		if err == nil && json.Unmarshal(m.Data, &si) == nil && si.Cluster.Leader != "" {
			t.Leader = si.Cluster.Leader
			return true, nil
		}
		return false, nil
	})
	for _, s := range tc.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			return nil, err
		}
		if sd, ok := findStream(j, aheadR3); ok {
			t.Streams[s.Name] = fmt.Sprintf("first=%d last=%d msgs=%d leader=%s", sd.State.FirstSeq, sd.State.LastSeq, sd.State.Msgs, sd.Cluster.Leader)
		}
	}
	if m, err := nc.Request("orders.trial", []byte("after the remedy"), 4*time.Second); err != nil {
		t.Probe = "client: " + err.Error()
	} else {
		t.Probe = string(m.Data)
	}
	snc, sjs, err := connect(tsolo)
	if err != nil {
		return nil, err
	}
	defer snc.Close()
	if _, err := snc.Request("audit.trial", []byte("after the remedy"), 4*time.Second); err != nil {
		return nil, err
	}
	// A new message in every other stream with a consumer ahead.
	for _, a := range x.Ahead {
		if a.Stream == aheadR1 {
			if _, err := nc.Request("events.trial", []byte("after the remedy"), 4*time.Second); err != nil {
				return nil, err
			}
			break
		}
	}
	fetchOne := func(jsx jetstream.JetStream, stream, name string) string {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cons, err := jsx.Consumer(cctx, stream, name)
		if err != nil {
			return "error: " + err.Error()
		}
		b, err := cons.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			return "error: " + err.Error()
		}
		m, ok := <-b.Messages()
		if !ok {
			return "none"
		}
		md, err := m.Metadata()
		if err != nil {
			return "error: " + err.Error()
		}
		_ = m.Ack()
		return fmt.Sprintf("stream seq %d", md.Sequence.Stream)
	}
	worked := t.Leader != "" && strings.Contains(t.Probe, `"seq"`)
	if t.GroupMoved == "" {
		worked = true // nothing stalled, nothing moved
	}
	seen := map[string]bool{}
	for _, a := range x.Ahead {
		key := a.Stream + " > " + a.Consumer
		if seen[key] {
			continue
		}
		seen[key] = true
		jsx := js
		if a.Server == aheadSolo {
			jsx = sjs
		}
		t.Skipped[key] = fetchOne(jsx, a.Stream, a.Consumer)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		st, err := jsx.Stream(cctx, a.Stream)
		if err != nil {
			cancel()
			t.Recreated[key] = "error: " + err.Error()
			worked = false
			continue
		}
		old, err := st.Consumer(cctx, a.Consumer)
		if err != nil {
			cancel()
			t.Recreated[key] = "error: " + err.Error()
			worked = false
			continue
		}
		cfg := old.CachedInfo().Config
		cancel()
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, a.StreamLast+1
		err = retry(ctx, "recreate "+key, func(ctx context.Context) error {
			if err := st.DeleteConsumer(ctx, a.Consumer); err != nil && !strings.Contains(err.Error(), "not found") {
				return err
			}
			_, err := st.CreateConsumer(ctx, cfg)
			return err
		})
		if err != nil {
			t.Recreated[key] = "error: " + err.Error()
			worked = false
			continue
		}
		t.Recreated[key] = fetchOne(jsx, a.Stream, a.Consumer)
		worked = worked && t.Recreated[key] == fmt.Sprintf("stream seq %d", a.StreamLast+1)
	}
	t.Worked = worked
	nc.Close()
	snc.Close()
	if err := tc.Stop(); err != nil {
		return nil, err
	}
	if err := tsolo.Stop(); err != nil {
		return nil, err
	}
	for _, s := range append(append([]*Server{}, tc.Servers...), tsolo) {
		if t.LogLines[s.Name], err = linesMatching(s.LogFile, 0, aheadLogPattern); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// writeAheadOutcome records the trial as a remedy outcome file
// (remedies/ahead-<version>.json beside the bundles root), one outcome per
// remedy carried out: the stalled group's folder moved aside on every
// server (group-stalled-move-aside), each consumer ahead added again from
// the stream's next sequence (consumer-ahead-recreate).
func writeAheadOutcome(env *Env, version string, t *AheadTrial) error {
	type outcome struct {
		RemedyID string   `json:"remedy_id"`
		Steps    []string `json:"steps"`
		Proven   bool     `json:"proven"`
		Why      string   `json:"why,omitempty"`
		// Verified: the remedy's verify step, checked (VerifyCheck).
		Verified []VerifyCheck `json:"verified"`
	}
	moved := outcome{RemedyID: "group-stalled-move-aside", Steps: []string{
		"done: every server's JetStream folder copied out before any action (the scenario's stores are copies)",
		"done: the stream's raft group folder " + t.GroupMoved + " moved out of $SYS/_js_ on every server",
		"done: every server started; stream leader " + fmt.Sprintf("%q", t.Leader) + "; states " + fmt.Sprint(t.Streams),
		"done: a publish: " + t.Probe}}
	moved.Verified = []VerifyCheck{
		{Check: "the stream names a leader (" + t.Leader + ")", Held: t.Leader != ""},
		{Check: "a publish is acknowledged (" + t.Probe + ")", Held: strings.Contains(t.Probe, `"seq"`)},
	}
	moved.Proven = t.Leader != "" && strings.Contains(t.Probe, `"seq"`)
	if !moved.Proven {
		moved.Why = "no stream leader or the publish was not acknowledged"
	}
	re := outcome{RemedyID: "consumer-ahead-recreate", Proven: len(t.Recreated) > 0}
	for _, k := range sortedKeys(t.Recreated) {
		re.Steps = append(re.Steps, "done: "+k+" before: a fetch got "+t.Skipped[k]+"; deleted and added again with deliver_policy by_start_sequence at the stream's next sequence: a fetch got "+t.Recreated[k])
		got := strings.HasPrefix(t.Recreated[k], "stream seq ")
		re.Verified = append(re.Verified, VerifyCheck{Check: "the next message published to the stream is delivered to " + k + " (" + t.Recreated[k] + ")", Held: got})
		re.Proven = re.Proven && got
	}
	if !re.Proven {
		re.Why = "a recreated consumer did not get the stream's next message"
	}
	outcomes := []outcome{re}
	if t.GroupMoved != "" {
		// Only where a group was stalled and moved aside.
		outcomes = []outcome{moved, re}
	}
	name := "ahead-" + version
	o := map[string]any{"bundle": name, "family": "ahead", "version": version[1:],
		"analyzer": "carried out by the ahead scenario on a copy of the bundle's stores (not from a report's steps)",
		"outcomes": outcomes}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(filepath.Dir(env.Out), "remedies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
