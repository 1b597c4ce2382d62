package main

// Executors of the block remedies (store-block-lost, store-block-resurrected)
// and the perturbed fixtures as their input: testdata/perturbed/<name> has
// oracle.json instead of want.json; its outcome goes to
// testdata/remedies/<name>.json, never into the fixture.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fixtureOutcome: the bundle folder of -fixtures NAME and where its outcome
// goes. A name no testdata/bundles folder has is looked for in
// testdata/perturbed.
func fixtureOutcome(dir, fx string) (string, string) {
	if _, err := os.Stat(dir); err != nil && !strings.Contains(fx, "/") {
		if p := filepath.Join("..", "perturbed", fx); exists(filepath.Join(p, "oracle.json")) {
			dir = p
		}
	}
	if exists(filepath.Join(dir, "oracle.json")) && !exists(filepath.Join(dir, "want.json")) {
		return dir, filepath.Join("..", "remedies", filepath.Base(dir)+".json")
	}
	return dir, filepath.Join(dir, "remedy-outcome.json")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readWant reads dir/want.json, or makes a Want of a perturbed fixture's
// oracle.json: its servers (store-<name>), the cluster name from their log,
// and each stream's figures before the damage.
func readWant(dir string) (Want, error) {
	var want Want
	b, err := os.ReadFile(filepath.Join(dir, "want.json"))
	if err == nil {
		return want, json.Unmarshal(b, &want)
	}
	ob, oerr := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if oerr != nil {
		return want, err
	}
	var o Oracle
	if err := json.Unmarshal(ob, &o); err != nil {
		return want, err
	}
	want.Scenario, want.ServerVersion = o.Name, strings.TrimPrefix(o.Version, "v")
	idx := map[string]int{}
	var servers []WantServer
	for _, st := range o.Streams {
		i, ok := idx[st.Server]
		if !ok {
			i = len(servers)
			idx[st.Server] = i
			ws := WantServer{Name: st.Server, StoreDir: "store-" + st.Server, Log: st.Server + ".log"}
			if lb, err := os.ReadFile(filepath.Join(dir, "bundle", ws.Log)); err == nil {
				if m := clusterNameRE.FindSubmatch(lb); m != nil {
					ws.Cluster = string(m[1])
				}
			}
			servers = append(servers, ws)
		}
		replicas := 1
		if o.Mode == "cluster" {
			replicas = 3 // perturbReplica's ORDERS
		}
		servers[i].Streams = append(servers[i].Streams, WantStream{Account: st.Account, Name: st.Stream, Replicas: replicas,
			FirstSeq: st.Before.FirstSeq, LastSeq: st.Before.LastSeq, Messages: st.Before.Msgs, NumDeleted: st.Before.NumDeleted})
	}
	if o.Mode == "standalone" {
		want.Standalone = servers
	} else {
		want.Servers = servers
	}
	want.Expect = o
	return want, nil
}

var editReplicasRE = regexp.MustCompile(`nats stream edit \S+ --replicas (\d+)`)

var clusterNameRE = regexp.MustCompile(`\[INF\]\s+Cluster:\s+(\S+)`)

func rangesHave(rs []SeqRange, seq uint64) bool {
	for _, r := range rs {
		if seq >= r.First && seq <= r.Last {
			return true
		}
	}
	return false
}

func rangesCount(rs []SeqRange) uint64 {
	var n uint64
	for _, r := range rs {
		n += r.Last - r.First + 1
	}
	return n
}

func rangesString(rs []SeqRange) string {
	var p []string
	for _, r := range rs {
		if r.First == r.Last {
			p = append(p, fmt.Sprint(r.First))
		} else {
			p = append(p, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, ",")
}

// rangesAnd: the sequences of a that are in b.
func rangesAnd(a, b []SeqRange) []SeqRange {
	var out []SeqRange
	for _, x := range a {
		for seq := x.First; seq <= x.Last; seq++ {
			if rangesHave(b, seq) {
				out = appendSeq(out, seq)
			}
		}
	}
	return out
}

// startBlocks starts every server of the bundle and, in a cluster, waits
// for a meta leader and up to 90 s for the streams to settle.
func startBlocks(ctx context.Context, r *remedyRun) (string, error) {
	for _, n := range r.live {
		if err := r.c.Server(n).Start(ctx); err != nil {
			return "", err
		}
		r.started[n] = true
	}
	if r.standalone {
		return "started " + strings.Join(r.live, ", ") + " (standalone) on the copy", nil
	}
	if err := waitAnyMetaLeader(ctx, r.c, 60*time.Second); err != nil {
		return "", err
	}
	d := "started " + strings.Join(r.live, ", ") + " on the copy; meta " + metaSize(ctx, r.c.Server(r.live[0]))
	if err := r.c.WaitQuiet(ctx, 90*time.Second); err != nil {
		d += "; not settled in 90 s (" + err.Error() + ")"
	}
	return d, nil
}

// replicaStates: each running server's /jsz state of stream.
func replicaStates(ctx context.Context, r *remedyRun, stream string) string {
	var p []string
	for _, n := range r.live {
		st, ok, err := stateOf(ctx, r.c.Server(n), stream)
		switch {
		case err != nil:
			p = append(p, n+": "+err.Error())
		case !ok:
			p = append(p, n+": no replica")
		default:
			p = append(p, fmt.Sprintf("%s: %d msgs, %d-%d, %d deleted", n, st.Msgs, st.FirstSeq, st.LastSeq, st.NumDeleted))
		}
	}
	return strings.Join(p, "; ")
}

// servedBy makes server the stream's leader (stream leader step-downs, at
// most 15) and returns the sequences it serves up to last.
func servedBy(ctx context.Context, r *remedyRun, nc *nats.Conn, js jetstream.JetStream, stream, server string, last uint64) ([]SeqRange, error) {
	for i := 0; ; i++ {
		var leader string
		_ = waitFor(ctx, 20*time.Second, stream+" leader", func() (bool, error) {
			info, err := blkStreamInfo(ctx, js, stream)
			if err != nil || info.Cluster == nil {
				return false, nil
			}
			leader = info.Cluster.Leader
			return leader != "", nil
		})
		if leader == server || r.standalone {
			break
		}
		if i == 15 {
			return nil, fmt.Errorf("%s did not become leader of %s in 15 step-downs (leader %q)", server, stream, leader)
		}
		// A preferred server from 2.11 (2.10 takes no body and elects at random).
		var body any
		if v := r.c.Server(server).Version; !strings.HasPrefix(v, "v2.10.") {
			body = json.RawMessage(fmt.Sprintf(`{"placement":{"preferred":%q}}`, server))
		}
		var raw json.RawMessage
		if err := apiRequest(ctx, nc, "$JS.API.STREAM.LEADER.STEPDOWN."+stream, body, &raw); err != nil {
			return nil, err
		}
		if err := pause(ctx, 2*time.Second); err != nil {
			return nil, err
		}
	}
	return served(ctx, js, stream, last)
}

func blkStreamInfo(ctx context.Context, js jetstream.JetStream, stream string) (*jetstream.StreamInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := js.Stream(cctx, stream)
	if err != nil {
		return nil, err
	}
	return st.Info(cctx)
}

// expectedServed: what the stream served before the damage (the oracle),
// less what a single copy lost (the report's lost and missing findings).
func expectedServed(r *remedyRun, stream string, single bool) []SeqRange {
	o, _ := r.want.Expect.(Oracle)
	var before []SeqRange
	for _, st := range o.Streams {
		if st.Stream == stream && len(st.Before.Served) > 0 {
			before = st.Before.Served
			break
		}
	}
	if !single {
		return before
	}
	var lost []SeqRange
	for _, x := range r.findings {
		if x.Stream == stream && (x.RemedyID == "store-block-lost" || x.RemedyID == "store-block-missing") {
			lost = append(lost, x.Ranges...)
		}
	}
	var out []SeqRange
	for _, x := range before {
		for seq := x.First; seq <= x.Last; seq++ {
			if !rangesHave(lost, seq) {
				out = appendSeq(out, seq)
			}
		}
	}
	return out
}

// execBlockResurrected: "Start the server on it", then the verify step:
// the deleted sequences served again are deleted again (nats stream rmm is
// STREAM.MSG.DELETE), and what the stream serves is compared with what it
// served before the damage (less what a single copy lost).
func execBlockResurrected(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	d, err := startBlocks(ctx, r)
	for _, i := range destructiveActions(fs[0]) {
		r.action(fs[0].Steps[i].Text, d)
	}
	if err != nil {
		return err
	}
	nc, js, err := connectWait(ctx, r.c.Server(r.live[0]))
	if err != nil {
		return err
	}
	defer nc.Close()
	if r.standalone {
		// What the damaged copies still hold is the baseline: the
		// messages before the damage less the lost ones.
		for k, b := range r.out.Before {
			stream := k[strings.Index(k, " > ")+3:]
			if want := expectedServed(r, stream, true); len(want) > 0 {
				b.Msgs = rangesCount(want)
				r.out.Before[k] = b
			}
		}
		r.out.Note = "standalone: the figures before are the messages before the damage less those the report's store-block-lost and store-block-missing findings name"
	}
	for _, f := range fs {
		res := f.Ranges
		single := r.standalone
		k := "$G > " + f.Stream
		want := expectedServed(r, f.Stream, single)
		last := r.out.Before[k].Msgs
		if len(want) > 0 {
			last = want[len(want)-1].Last
		}
		if len(res) > 0 {
			last = max(last, res[len(res)-1].Last)
		}
		var done []string
		if !single {
			done = append(done, "replicas after the start: "+replicaStates(ctx, r, f.Stream))
		}
		got, err := served(ctx, js, f.Stream, last)
		if err != nil {
			r.checks = append(r.checks, f.Stream+": "+err.Error())
		}
		again := rangesAnd(res, got)
		done = append(done, fmt.Sprintf("%s serves %s; of the deleted %s served again: %s", f.Stream, rangesString(got), rangesString(res), rangesString(again)))
		st, err := js.Stream(ctx, f.Stream)
		if err != nil {
			return err
		}
		var dels []string
		for _, x := range again {
			for seq := x.First; seq <= x.Last; seq++ {
				err := st.DeleteMsg(ctx, seq)
				dels = append(dels, fmt.Sprintf("%d: %v", seq, errText(err)))
			}
		}
		if len(dels) > 0 {
			done = append(done, "deleted again (STREAM.MSG.DELETE): "+strings.Join(dels, ", "))
		}
		if len(again) > 0 && !single {
			_ = r.c.WaitQuiet(ctx, 60*time.Second)
		}
		if got, err = served(ctx, js, f.Stream, last); err != nil {
			r.checks = append(r.checks, f.Stream+": "+err.Error())
		}
		done = append(done, fmt.Sprintf("then %s serves %s (before the damage%s: %s)", f.Stream, rangesString(got), map[bool]string{true: ", less the lost", false: ""}[single], rangesString(want)))
		if rangesString(got) != rangesString(want) {
			r.checks = append(r.checks, fmt.Sprintf("%s serves %s, not %s", f.Stream, rangesString(got), rangesString(want)))
		}
		verify := ""
		for _, s := range f.Steps {
			if s.Kind == "verify" {
				verify = s.Text
			}
		}
		if !single {
			qerr := r.c.WaitQuiet(ctx, 60*time.Second)
			done = append(done, "replicas: "+replicaStates(ctx, r, f.Stream))
			if qerr != nil && strings.Contains(verify, "rebuild it as store-block-lost says") {
				// "if it stays behind, rebuild it as store-block-lost
				// says": that finding's commands for this replica.
				var cmds []string
				for _, x := range r.all {
					if x.RemedyID == "store-block-lost" && x.Server == f.Server && x.Stream == f.Stream {
						if acts := destructiveActions(x); len(acts) > 0 {
							cmds = x.Steps[acts[0]].Commands
						}
					}
				}
				done = append(done, fmt.Sprintf("%s stays behind (%v): rebuilt with store-block-lost's commands", f.Server, qerr))
				if len(cmds) == 0 {
					r.checks = append(r.checks, "no store-block-lost finding with commands for "+f.Server+" "+f.Stream)
				} else {
					rd, err := rebuildReplica(ctx, r, nc, js, f.Server, f.Stream, cmds)
					done = append(done, rd...)
					if err != nil {
						return err
					}
					qerr = r.c.WaitQuiet(ctx, 60*time.Second)
					done = append(done, "replicas: "+replicaStates(ctx, r, f.Stream))
				}
			}
			if qerr != nil {
				r.checks = append(r.checks, f.Stream+": replicas not settled: "+qerr.Error())
			}
			if sb, err := servedBy(ctx, r, nc, js, f.Stream, f.Server, last); err != nil {
				r.checks = append(r.checks, err.Error())
			} else {
				done = append(done, fmt.Sprintf("%s as leader serves %s", f.Server, rangesString(sb)))
				if rangesString(sb) != rangesString(want) {
					r.checks = append(r.checks, fmt.Sprintf("%s's replica serves %s, not %s", f.Server, rangesString(sb), rangesString(want)))
				}
			}
		}
		r.out.Steps = append(r.out.Steps, "verify: "+verify, "done: "+strings.Join(done, "; "))
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// execBlockLost: with every server started, the damaged replica is
// rebuilt the way the action's command says (a stream peer removal of it),
// then the stream is scaled back up to its replicas; the rebuilt replica
// is compared with the others, and whether the sequences it lost are back
// on it (it is made stream leader and asked for them).
func execBlockLost(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	d, err := startBlocks(ctx, r)
	r.out.Steps = append(r.out.Steps, "done: "+d)
	if err != nil {
		return err
	}
	nc, js, err := connectWait(ctx, r.c.Server(r.live[0]))
	if err != nil {
		return err
	}
	defer nc.Close()
	f := fs[0]
	acts := destructiveActions(f)
	if len(acts) == 0 || f.Stream == "" {
		return fmt.Errorf("%s: no destructive action naming a stream", f.subject())
	}
	lost := f.Ranges
	// The step's condition: the other replicas hold these sequences.
	var damaged, healthy []string
	for _, x := range fs {
		if x.Stream == f.Stream {
			damaged = append(damaged, x.Server)
		}
	}
	for _, n := range r.live {
		if !slices.Contains(damaged, n) {
			healthy = append(healthy, n)
		}
	}
	cond := fmt.Sprintf("the other replicas' copies: %s hold them (no lost finding on them)", strings.Join(healthy, ", "))
	if len(healthy) == 0 {
		cond = fmt.Sprintf("the condition does not hold: every replica of %s (%s) lost %s; carried out on %s anyway, to see what the rebuild brings back", f.Stream, strings.Join(damaged, ", "), rangesString(lost), f.Server)
		r.checks = append(r.checks, "no replica holds "+rangesString(lost)+": the step's condition (the other replicas hold these sequences) does not hold")
	}
	last := r.out.Before["$G > "+f.Stream].Msgs
	if len(lost) > 0 {
		last = max(last, lost[len(lost)-1].Last)
	}
	if o, ok := r.want.Expect.(Oracle); ok {
		for _, st := range o.Streams {
			if st.Stream == f.Stream {
				last = max(last, st.Before.LastSeq)
			}
		}
	}
	before := replicaStates(ctx, r, f.Stream)
	done := []string{cond, "replicas before: " + before}
	rd, err := rebuildReplica(ctx, r, nc, js, f.Server, f.Stream, f.Steps[acts[0]].Commands)
	done = append(done, rd...)
	if err != nil {
		return err
	}
	done = append(done, "replicas after: "+replicaStates(ctx, r, f.Stream))
	// Whether the lost sequences came back on the rebuilt replica: it
	// serves them as leader, as the healthy replicas do.
	sb, err := servedBy(ctx, r, nc, js, f.Stream, f.Server, last)
	if err != nil {
		r.checks = append(r.checks, err.Error())
	} else {
		back := rangesAnd(lost, sb)
		done = append(done, fmt.Sprintf("%s as leader serves %s; of the lost %s back: %s", f.Server, rangesString(sb), rangesString(lost), rangesString(back)))
		if rangesString(back) != rangesString(lost) {
			r.checks = append(r.checks, fmt.Sprintf("the lost sequences %s are not back on %s (back: %s)", rangesString(lost), f.Server, rangesString(back)))
		}
		for _, h := range healthy {
			hs, err := servedBy(ctx, r, nc, js, f.Stream, h, last)
			if err != nil {
				done = append(done, err.Error())
				continue
			}
			done = append(done, fmt.Sprintf("%s as leader serves %s", h, rangesString(hs)))
			if rangesString(hs) != rangesString(sb) {
				r.checks = append(r.checks, fmt.Sprintf("%s serves %s, %s %s", f.Server, rangesString(sb), h, rangesString(hs)))
			}
		}
	}
	r.action(f.Steps[acts[0]].Text, strings.Join(done, "; "))
	return nil
}

// rebuildReplica carries out a rebuild's commands on server's replica of
// stream, in order: the stream peer removal (a request), each `nats stream
// edit --replicas N` as a stream update; a step without edits ("then scale
// back up") gets the replicas set to N again, then N-1 and N. It waits for
// server back in the group and current.
func rebuildReplica(ctx context.Context, r *remedyRun, nc *nats.Conn, js jetstream.JetStream, server, stream string, commands []string) ([]string, error) {
	info, err := blkStreamInfo(ctx, js, stream)
	if err != nil {
		return nil, err
	}
	n := info.Config.Replicas
	var done []string
	update := func(replicas int) error {
		info, err := blkStreamInfo(ctx, js, stream)
		if err != nil {
			return err
		}
		cfg := info.Config
		cfg.Replicas = replicas
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err = js.UpdateStream(cctx, cfg)
		if err == nil {
			err = pause(ctx, 5*time.Second)
		}
		done = append(done, fmt.Sprintf("stream update replicas %d -> %s; group %s", replicas, errText(err), groupOf(ctx, js, stream)))
		return nil
	}
	edits := 0
	for _, cmd := range commands {
		if m := editReplicasRE.FindStringSubmatch(cmd); m != nil {
			edits++
			n, _ := strconv.Atoi(m[1])
			if err := update(n); err != nil {
				return done, err
			}
			continue
		}
		answer, err := request(ctx, nc, cmd)
		if err != nil {
			return done, err
		}
		werr := waitFor(ctx, 60*time.Second, server+" out of "+stream, func() (bool, error) {
			info, err := blkStreamInfo(ctx, js, stream)
			return err == nil && !inGroup(info, server), nil
		})
		folder := filepath.Join(r.c.Server(server).JSRoot(), "$G", "streams", stream)
		done = append(done, fmt.Sprintf("%s -> %s; group after it: %s (%v); %s's stream folder there: %v", requestRE.FindString(cmd), answer, groupOf(ctx, js, stream), errText(werr), server, exists(folder)))
	}
	if edits == 0 {
		// A step that says only "then scale back up": the replicas set to
		// n again, and if that does not bring the server back, n-1 and n.
		if err := update(n); err != nil {
			return done, err
		}
		if waitFor(ctx, 15*time.Second, server+" back", func() (bool, error) {
			info, err := blkStreamInfo(ctx, js, stream)
			return err == nil && inGroup(info, server), nil
		}) != nil {
			if err := update(n - 1); err != nil {
				return done, err
			}
			if err := update(n); err != nil {
				return done, err
			}
		}
	}
	cerr := waitFor(ctx, 90*time.Second, server+" current in "+stream, func() (bool, error) {
		info, err := blkStreamInfo(ctx, js, stream)
		if err != nil || info.Cluster == nil {
			return false, nil
		}
		if info.Cluster.Leader == server {
			return true, nil
		}
		for _, p := range info.Cluster.Replicas {
			if p.Name == server && p.Current && p.Lag == 0 {
				return true, nil
			}
		}
		return false, nil
	})
	done = append(done, fmt.Sprintf("%s in the group again and current: %v; group %s", server, errText(cerr), groupOf(ctx, js, stream)))
	if cerr != nil {
		r.checks = append(r.checks, server+" not back and current in "+stream+": "+cerr.Error())
	}
	if err := r.c.WaitQuiet(ctx, 60*time.Second); err != nil {
		done = append(done, "not settled: "+err.Error())
	}
	return done, nil
}

// inGroup: server is the stream's leader or one of its replicas.
func inGroup(info *jetstream.StreamInfo, server string) bool {
	if info.Cluster == nil {
		return false
	}
	if info.Cluster.Leader == server {
		return true
	}
	for _, p := range info.Cluster.Replicas {
		if p.Name == server {
			return true
		}
	}
	return false
}

func groupOf(ctx context.Context, js jetstream.JetStream, stream string) string {
	info, err := blkStreamInfo(ctx, js, stream)
	if err != nil {
		return err.Error()
	}
	if info.Cluster == nil {
		return "no cluster info"
	}
	p := []string{info.Cluster.Leader + "*"}
	for _, x := range info.Cluster.Replicas {
		s := x.Name
		if !x.Current {
			s += fmt.Sprintf("(lag %d)", x.Lag)
		}
		p = append(p, s)
	}
	return fmt.Sprintf("R%d [%s]", info.Config.Replicas, strings.Join(p, " "))
}
