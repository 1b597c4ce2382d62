package main

// Issue 30, consumer-missing: a consumer the meta layer assigns that no
// server holds (nats-server #8123). Three servers (cm-0..2, cluster ghost,
// $G): a WorkQueue stream TASKS (R3, 10 messages) with the unfiltered
// durable WORKER (R3; 2 fetched, 1 acked), a restart of the cluster. Then, in rounds, six creates of
// R3 consumers filtered on TASKS.m.1 are sent at once through
// $JS.API.CONSUMER.CREATE: every one collides with WORKER on a WorkQueue
// stream and is answered with an error (10100 "filtered consumer not
// unique on workqueue stream"), yet the meta layer sometimes keeps one of
// them assigned: `$JS.API.CONSUMER.LIST.TASKS` lists it under "missing",
// no server creates it (no obs folder, no C- group) and every /healthz
// fails on it. Rounds are repeated (8 at most) until one stays.
//
// The bundle is that state: captures, then the stores and logs copied with
// the servers running. The maintainers' remedy is then carried out on the
// running cluster: each missing consumer deleted through
// $JS.API.CONSUMER.DELETE.TASKS.<name>, every /healthz read again and
// WORKER's state compared (remedy-outcome.json). Last, what a restart does
// with the assignment: a copy of the bundle's stores started, then
// restarted one server at a time, every /healthz after each
// (expect.restart).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func consumerMissingScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.12.1", "v2.12.15", "v2.15.3"} {
		out = append(out, Scenario{Name: "consumermissing-" + v,
			Doc:     "issue 30 (#8123): 3 x " + v + ": colliding consumer creates on a WorkQueue stream, one left assigned that no server holds; the remedy (delete through the API) on the running cluster; a start and rolling restart on a copy (consumermissing-restarted-" + v + ")",
			Timeout: 10 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return consumerMissing(ctx, env, v) }})
	}
	return out
}

// GhostRound is one round of colliding creates.
type GhostRound struct {
	Round int `json:"round"`
	// Answers: consumer name -> the CONSUMER.CREATE answer verbatim.
	Answers map[string]string `json:"answers"`
	// Missing: what CONSUMER.LIST reported under "missing" 3 s later.
	Missing []string `json:"missing"`
}

// RollingStep is every server's /healthz after one server was restarted.
type RollingStep struct {
	Restarted string            `json:"restarted"`
	Health    map[string]string `json:"health"`
}

// ConsumerMissingExpect is want.json's expect for consumermissing-<version>.
type ConsumerMissingExpect struct {
	Account string       `json:"account"`
	Stream  string       `json:"stream"`
	Rounds  []GhostRound `json:"rounds"`
	// Missing: the consumers CONSUMER.LIST reports under "missing" (the
	// meta layer assigns them, no server holds them).
	Missing []string `json:"missing"`
	// HealthBefore: every /healthz right after the round that left one.
	HealthBefore map[string]string `json:"health_before"`
	// Health: the /healthz of the captures (the bundle's state).
	Health map[string]string `json:"health"`
	// Consumers: per server, the consumer folders of TASKS (obs/) and the
	// consumer raft groups (C-*) after the graceful stop.
	Consumers map[string][]string `json:"consumers"`
	Groups    map[string][]string `json:"groups"`
	// Remedy: the maintainers' remedy carried out on a copy of the
	// bundled stores (also written as remedy-outcome.json).
	Remedy  GhostRemedy  `json:"remedy"`
	Restart GhostRestart `json:"restart"`
	// StoreCopy: the stores were copied with the servers running (so
	// index.db may be missing or older than the blocks).
	StoreCopy LiveCopy            `json:"store_copy"`
	Findings  []map[string]string `json:"findings"`
}

// GhostRemedy is the delete of each missing consumer on a copy.
type GhostRemedy struct {
	Requests     []GhostRequest    `json:"requests"`
	HealthAfter  map[string]string `json:"health_after"`
	MissingAfter []string          `json:"missing_after"`
	// Worker: WORKER's delivered/ack floor before and after; Messages:
	// TASKS's message count before and after.
	WorkerBefore   string `json:"worker_before"`
	WorkerAfter    string `json:"worker_after"`
	MessagesBefore uint64 `json:"messages_before"`
	MessagesAfter  uint64 `json:"messages_after"`
	Proven         bool   `json:"proven"`
	Why            string `json:"why,omitempty"`
}

// GhostRequest is one request of the remedy and its answer.
type GhostRequest struct {
	Subject string `json:"subject"`
	Answer  string `json:"answer"`
}

const ghostStream = "TASKS"

func consumerMissing(ctx context.Context, env *Env, version string) error {
	name := "consumermissing-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "ghost", []string{"cm-0", "cm-1", "cm-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	x := ConsumerMissingExpect{Account: "$G", Stream: ghostStream, Consumers: map[string][]string{}, Groups: map[string][]string{},
		StoreCopy: LiveCopy{Live: true}}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer func() { nc.Close() }()
	st, err := createFilled(ctx, js, jetstream.StreamConfig{Name: ghostStream, Subjects: []string{ghostStream + ".>"}, Replicas: 3,
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}, 10, 64)
	if err != nil {
		return err
	}
	if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "WORKER", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 2, 1); err != nil {
		return err
	}
	// A restart before the incident, so that every log shows the servers
	// restoring the stream and its consumer.
	nc.Close()
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	if nc, _, err = connect(c.Servers...); err != nil {
		return err
	}
	for round := 1; round <= 8 && len(x.Missing) == 0; round++ {
		r := GhostRound{Round: round, Answers: map[string]string{}}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			cn := fmt.Sprintf("GHOST%d_%d", round, i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := createRaw(nc, ghostStream, cn, map[string]any{"ack_policy": "explicit", "num_replicas": 3, "filter_subject": ghostStream + ".m.1"})
				if err != nil {
					a = "client: " + err.Error()
				}
				mu.Lock()
				r.Answers[cn] = a
				mu.Unlock()
			}()
		}
		wg.Wait()
		if err := pause(ctx, 3*time.Second); err != nil {
			return err
		}
		if r.Missing, err = listMissing(nc, ghostStream); err != nil {
			return err
		}
		logf("%s: round %d: missing %v", name, round, r.Missing)
		x.Rounds = append(x.Rounds, r)
		x.Missing = r.Missing
	}
	if len(x.Missing) == 0 {
		return fmt.Errorf("%s: no consumer left assigned in %d rounds", name, len(x.Rounds))
	}
	x.HealthBefore = healthTexts(ctx, c)
	nc.Close()
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	x.Health = map[string]string{}
	for n, cp := range caps {
		x.Health[n] = strings.TrimSpace(string(cp.Files["healthz"]))
	}
	// The bundle's stores and logs: copies taken now, the servers running
	// (as a support bundle of a live cluster has them).
	roots, logs := map[string]string{}, map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(env.Scratch, "bundle-stores", s.Name)
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
		logs[s.Name] = filepath.Join(env.Scratch, "bundle-logs", s.Name+".log")
		if err := copyFile(s.LogFile, logs[s.Name]); err != nil {
			return err
		}
		x.Consumers[s.Name], _ = dirNames(filepath.Join(roots[s.Name], x.Account, "streams", ghostStream, "obs"))
		all, _ := dirNames(filepath.Join(roots[s.Name], "$SYS", "_js_"))
		for _, g := range all {
			if strings.HasPrefix(g, "C-") {
				x.Groups[s.Name] = append(x.Groups[s.Name], g)
			}
		}
		for _, m := range x.Missing {
			for _, f := range x.Consumers[s.Name] {
				if f == m {
					return fmt.Errorf("%s holds a folder of missing consumer %s", s.Name, m)
				}
			}
		}
	}
	for _, m := range x.Missing {
		x.Findings = append(x.Findings, map[string]string{"code": "consumer-missing", "account": x.Account, "stream": ghostStream, "consumer": m})
	}
	// The maintainers' remedy on the live cluster, in the bundle's state.
	if x.Remedy, err = ghostRemedy(ctx, c, x.Missing); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	// What a restart does with the assignment: a copy of the bundle's
	// stores started, then restarted one server at a time.
	if x.Restart, err = ghostRestart(ctx, env, c, roots); err != nil {
		return err
	}
	for _, s := range c.Servers {
		s.LogFile = logs[s.Name]
	}
	logf("%s: missing %v; health %v; remedy proven %v (%s), health after %v; restart %+v", name, x.Missing, x.Health, x.Remedy.Proven, x.Remedy.Why, x.Remedy.HealthAfter, x.Restart)
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, StoreRoots: roots, Expect: x}
	if err := b.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	if err := writeGhostOutcome(filepath.Join(env.Out, name), name, version[1:], x); err != nil {
		return err
	}
	rb := x.Restart.bundle
	rb.Name = "consumermissing-restarted-" + version
	for _, s := range rb.Servers {
		s.LogFile = x.Restart.logs[s.Name]
	}
	rx := RestartedExpect{Account: x.Account, Stream: ghostStream, Before: x.Missing, Missing: x.Restart.Missing, Health: x.Restart.Health,
		Folders: x.Restart.Folders, Lines: x.Restart.Lines, StoreCopy: LiveCopy{Live: true}}
	for _, m := range x.Restart.Missing {
		rx.Findings = append(rx.Findings, map[string]string{"code": "consumer-missing", "account": x.Account, "stream": ghostStream, "consumer": m})
	}
	rb.Expect = rx
	return rb.Write(env.Scratch, env.Out)
}

// GhostRestart is what servers started on a copy of the bundle's stores
// did with the missing consumers.
type GhostRestart struct {
	// Started: every /healthz 10 s after the copy started; Rolling: every
	// /healthz after each server was restarted in turn (5 s after the meta
	// leader was back).
	Started map[string]string `json:"started"`
	Rolling []RollingStep     `json:"rolling"`
	// Missing: CONSUMER.LIST's "missing" at the end; Folders: the consumer
	// folders of the stream per server at the end; Lines: log lines naming
	// a missing consumer.
	Missing []string            `json:"missing"`
	Folders map[string][]string `json:"folders"`
	Lines   []string            `json:"lines"`
	// Health: every /healthz of the captures of the restarted state
	// (bundle consumermissing-restarted-<version>).
	Health map[string]string `json:"health"`
	bundle *Bundle
	logs   map[string]string
}

// RestartedExpect is want.json's expect for
// consumermissing-restarted-<version>: the state one step after
// consumermissing-<version>, its servers restarted one at a time (the
// restart of that scenario's expect, without the remedy).
type RestartedExpect struct {
	Account string `json:"account"`
	Stream  string `json:"stream"`
	// Before: the consumers missing in the state it was started from.
	Before    []string            `json:"missing_before"`
	Missing   []string            `json:"missing"`
	Health    map[string]string   `json:"health"`
	Folders   map[string][]string `json:"folders"`
	Lines     []string            `json:"lines"`
	Findings  []map[string]string `json:"findings"`
	StoreCopy LiveCopy            `json:"store_copy"`
}

// LiveCopy says a bundle's stores were copied from running servers
// (expect.store_copy.live, as lifecycle-v2.12.1 says it).
type LiveCopy struct {
	Live bool `json:"live"`
}

func ghostRestart(ctx context.Context, env *Env, c *Cluster, roots map[string]string) (GhostRestart, error) {
	g := GhostRestart{Folders: map[string][]string{}}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "restart"), c.Version, c.Name, names)
	if err != nil {
		return g, err
	}
	defer r.Kill()
	for _, s := range r.Servers {
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return g, err
		}
	}
	if err := r.Start(ctx); err != nil {
		return g, err
	}
	if err := pause(ctx, 10*time.Second); err != nil {
		return g, err
	}
	g.Started = healthTexts(ctx, r)
	for _, s := range r.Servers {
		if err := s.Stop(); err != nil {
			return g, err
		}
		if err := s.Start(ctx); err != nil {
			return g, err
		}
		if err := r.WaitMetaLeader(ctx, 60*time.Second); err != nil {
			return g, err
		}
		if err := pause(ctx, 5*time.Second); err != nil {
			return g, err
		}
		g.Rolling = append(g.Rolling, RollingStep{Restarted: s.Name, Health: healthTexts(ctx, r)})
	}
	nc, _, err := connect(r.Servers...)
	if err != nil {
		return g, err
	}
	g.Missing, err = listMissing(nc, ghostStream)
	nc.Close()
	if err != nil {
		return g, err
	}
	// This state is a bundle of its own (one step later): captures, then
	// the stores and logs copied with the servers running.
	caps, err := CaptureAll(ctx, r)
	if err != nil {
		return g, err
	}
	g.bundle = &Bundle{Version: c.Version[1:], Layout: LayoutPerServer(), Servers: r.Servers, Captures: caps, StoreRoots: map[string]string{}}
	g.logs = map[string]string{}
	for _, s := range r.Servers {
		g.bundle.StoreRoots[s.Name] = filepath.Join(env.Scratch, "restarted-stores", s.Name)
		if err := copyTree(s.JSRoot(), g.bundle.StoreRoots[s.Name]); err != nil {
			return g, err
		}
		g.logs[s.Name] = filepath.Join(env.Scratch, "restarted-logs", s.Name+".log")
		if err := copyFile(s.LogFile, g.logs[s.Name]); err != nil {
			return g, err
		}
	}
	g.Health = map[string]string{}
	for n, cp := range caps {
		g.Health[n] = strings.TrimSpace(string(cp.Files["healthz"]))
	}
	if err := r.Stop(); err != nil {
		return g, err
	}
	re := regexp.MustCompile(`GHOST\d`)
	for _, s := range r.Servers {
		g.Folders[s.Name], _ = dirNames(filepath.Join(s.JSRoot(), "$G", "streams", ghostStream, "obs"))
		lines, err := logLinesSince(s.LogFile, 0, re)
		if err != nil {
			return g, err
		}
		for _, l := range lines {
			if !strings.Contains(l, "Healthcheck failed") {
				g.Lines = append(g.Lines, s.Name+": "+l)
			}
		}
	}
	return g, nil
}

// createRaw sends $JS.API.CONSUMER.CREATE.<stream>.<name> with cfg and
// returns the answer verbatim.
func createRaw(nc *nats.Conn, stream, name string, cfg map[string]any) (string, error) {
	cfg["name"] = name
	cfg["durable_name"] = name
	b, _ := json.Marshal(map[string]any{"stream_name": stream, "config": cfg})
	m, err := nc.Request("$JS.API.CONSUMER.CREATE."+stream+"."+name, b, 5*time.Second)
	if err != nil {
		return "", err
	}
	return string(m.Data), nil
}

// listMissing is what $JS.API.CONSUMER.LIST.<stream> reports under
// "missing", sorted.
func listMissing(nc *nats.Conn, stream string) ([]string, error) {
	m, err := nc.Request("$JS.API.CONSUMER.LIST."+stream, []byte(`{}`), 5*time.Second)
	if err != nil {
		return nil, err
	}
	var l struct {
		Missing []string `json:"missing"`
	}
	if err := json.Unmarshal(m.Data, &l); err != nil {
		return nil, err
	}
	sort.Strings(l.Missing)
	return l.Missing, nil
}

// healthTexts is every running server's /healthz answer.
func healthTexts(ctx context.Context, c *Cluster) map[string]string {
	out := map[string]string{}
	for _, s := range c.Running() {
		b, err := s.Get(ctx, "/healthz")
		if err != nil {
			out[s.Name] = err.Error()
			continue
		}
		out[s.Name] = strings.TrimSpace(string(b))
	}
	return out
}

// ghostRemedy deletes each missing consumer of the running cluster
// through the API, then reads every /healthz.
func ghostRemedy(ctx context.Context, r *Cluster, missing []string) (GhostRemedy, error) {
	var g GhostRemedy
	nc, js, err := connect(r.Servers...)
	if err != nil {
		return g, err
	}
	defer nc.Close()
	state := func() (string, uint64, error) {
		if err := waitAssetLeader(ctx, js, ghostStream, "WORKER"); err != nil {
			return "", 0, err
		}
		s, err := stuckInfo(ctx, js, ghostStream, "WORKER")
		return fmt.Sprintf("delivered %d ack_floor %d ack_pending %d", s.Delivered, s.AckFloor, s.NumAckPending), s.StreamMsgs, err
	}
	if g.WorkerBefore, g.MessagesBefore, err = state(); err != nil {
		return g, err
	}
	for _, m := range missing {
		subj := "$JS.API.CONSUMER.DELETE." + ghostStream + "." + m
		ans := ""
		if msg, err := nc.Request(subj, nil, 5*time.Second); err != nil {
			ans = "client: " + err.Error()
		} else {
			ans = string(msg.Data)
		}
		g.Requests = append(g.Requests, GhostRequest{Subject: subj, Answer: ans})
	}
	// The servers apply the removal; healthz is read once it passes (30 s
	// at most).
	_ = waitFor(ctx, 30*time.Second, "healthz ok after the deletes", func() (bool, error) {
		for _, h := range healthTexts(ctx, r) {
			if !strings.Contains(h, `"ok"`) {
				return false, nil
			}
		}
		return true, nil
	})
	g.HealthAfter = healthTexts(ctx, r)
	if g.MissingAfter, err = listMissing(nc, ghostStream); err != nil {
		return g, err
	}
	if g.WorkerAfter, g.MessagesAfter, err = state(); err != nil {
		return g, err
	}
	var why []string
	for n, h := range g.HealthAfter {
		if !strings.Contains(h, `"status":"ok"`) {
			why = append(why, n+" /healthz "+h)
		}
	}
	if len(g.MissingAfter) > 0 {
		why = append(why, fmt.Sprintf("still missing %v", g.MissingAfter))
	}
	if g.WorkerAfter != g.WorkerBefore || g.MessagesAfter != g.MessagesBefore {
		why = append(why, fmt.Sprintf("WORKER %s -> %s, messages %d -> %d", g.WorkerBefore, g.WorkerAfter, g.MessagesBefore, g.MessagesAfter))
	}
	sort.Strings(why)
	g.Proven, g.Why = len(why) == 0, strings.Join(why, "; ")
	return g, nil
}

// writeGhostOutcome writes the remedy's run as the remedy runner's
// outcome file (remedy-outcome.json beside want.json), which the remedy
// catalogue's proven cites.
func writeGhostOutcome(dir, bundle, version string, x ConsumerMissingExpect) error {
	var findings, steps []string
	for _, m := range x.Missing {
		findings = append(findings, fmt.Sprintf("consumer-missing %s %s %s", x.Account, x.Stream, m))
	}
	steps = append(steps, "done: every server's JetStream folder copied out (the bundle's stores) before any action, the servers running")
	for _, r := range x.Remedy.Requests {
		steps = append(steps, fmt.Sprintf("done: nats request '%s' '' -> %s", r.Subject, r.Answer))
	}
	var ns []string
	for n := range x.Remedy.HealthAfter {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	for _, n := range ns {
		steps = append(steps, fmt.Sprintf("verify: %s /healthz %s", n, x.Remedy.HealthAfter[n]))
	}
	steps = append(steps, fmt.Sprintf("verify: CONSUMER.LIST missing after: %v; WORKER %s -> %s; %s messages %d -> %d",
		x.Remedy.MissingAfter, x.Remedy.WorkerBefore, x.Remedy.WorkerAfter, x.Stream, x.Remedy.MessagesBefore, x.Remedy.MessagesAfter))
	why := []string{}
	if x.Remedy.Why != "" {
		why = append(why, x.Remedy.Why)
	}
	healthOK := len(x.Remedy.HealthAfter) > 0
	for _, h := range x.Remedy.HealthAfter {
		healthOK = healthOK && strings.Contains(h, `"status":"ok"`)
	}
	// The verify step's promise, as the runner records it (VerifyCheck).
	verified := []VerifyCheck{
		{Check: "every server's /healthz answers ok", Held: healthOK},
		{Check: "the consumer list no longer reports it missing", Held: len(x.Remedy.MissingAfter) == 0},
	}
	out := map[string]any{
		"bundle":  bundle,
		"version": version,
		"outcomes": []map[string]any{{
			"remedy_id":     "consumer-missing-delete",
			"findings":      findings,
			"steps":         steps,
			"health_before": x.Health,
			"health_after":  x.Remedy.HealthAfter,
			"proven":        x.Remedy.Proven,
			"why":           why,
			"verified":      verified,
		}},
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "remedy-outcome.json"), append(b, '\n'), 0o644)
}
