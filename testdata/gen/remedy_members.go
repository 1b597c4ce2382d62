package main

// Executors of stream-write-error (a stream whose store volume filled),
// divergence-choose-copy and membership-replace-one-at-a-time.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// swGrown is the size the full stream volume is grown to ("make room").
const swGrown = "64m"

// execStreamWriteError: the full volume of the bundle is made again on
// the copy (the stream's msgs folder on a tmpfs of the scenario's size,
// expect.tmpfs, or of the blocks' size, holding the copied files), every
// server started and one publish sent (the stream's write error back on
// the full volume). Then, as the steps say: room made (the tmpfs grown,
// mount -o remount: a volume resize), a publish (does room alone bring the
// stream back?), the server restarted, a publish, /healthz.
func execStreamWriteError(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	f := fs[0]
	s := r.c.Server(f.Server)
	if s == nil || f.Stream == "" {
		return fmt.Errorf("%s: no server or stream of the bundle", f.subject())
	}
	folder := filepath.Join(s.JSRoot(), f.Account, "streams", f.Stream)
	msgs := filepath.Join(folder, "msgs")
	var x struct {
		Tmpfs string `json:"tmpfs"`
	}
	b, _ := json.Marshal(r.want.Expect)
	_ = json.Unmarshal(b, &x)
	size := strings.TrimPrefix(x.Tmpfs, "size=")
	if size == "" {
		n, err := dirSize(msgs)
		if err != nil {
			return err
		}
		size = fmt.Sprintf("%dk", (n+4095)/4096*4)
	}
	held := filepath.Join(r.saved, "msgs-"+s.Name)
	if err := os.Rename(msgs, held); err != nil {
		return err
	}
	if err := mountTmpfs(msgs, size); err != nil {
		return err
	}
	r.cleanup = append(r.cleanup, func() { unmount(msgs) })
	if err := copyTree(held, msgs); err != nil {
		return fmt.Errorf("the copied blocks do not fit a %s tmpfs: %w", size, err)
	}
	r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: the full volume made again: %s/streams/%s/msgs of %s on a %s tmpfs holding the copied files (%s free)", f.Account, f.Stream, s.Name, size, freeOf(msgs)))

	all := append(append([]string{}, r.live...), r.stopped...)
	if err := r.start(ctx, all...); err != nil {
		return err
	}
	subj, err := swSubject(folder)
	if err != nil {
		return err
	}
	nc, err := nats.Connect(fmt.Sprintf("nats://app:app@127.0.0.1:%d", s.ClientPort), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	data := []byte(strings.Repeat("r", 4000))
	if err := waitFor(ctx, 30*time.Second, f.Stream+" leader", func() (bool, error) {
		return swLastSeq(ctx, s, f.Account, f.Stream) > 0, nil
	}); err != nil {
		return err
	}
	before := swLastSeq(ctx, s, f.Account, f.Stream)
	full := swPublish(ctx, nc, subj, data)
	r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: every server started on the full volume (last seq %d); a publish to %s: %s; %s /healthz: %s", before, subj, full, s.Name, httpBody(s, "/healthz")))

	var acts []int
	for i, st := range f.Steps {
		if st.Kind == "action" {
			acts = append(acts, i)
		}
	}
	restarted := false
	for _, i := range acts {
		st := f.Steps[i]
		switch {
		case !st.Destructive && strings.Contains(st.Text, "Make room"):
			if out, err := exec.Command("mount", "-o", "remount,size="+swGrown, msgs).CombinedOutput(); err != nil {
				return fmt.Errorf("remount %s: %v: %s", msgs, err, out)
			}
			ans := swPublish(ctx, nc, subj, data)
			r.action(st.Text, fmt.Sprintf("the volume grown to %s (mount -o remount; %s free); a publish with the server running: %s; /healthz: %s", swGrown, freeOf(msgs), ans, httpBody(s, "/healthz")))
			if !strings.Contains(ans, "error") && !strings.HasPrefix(ans, "client:") {
				r.out.Note = "room alone brought the stream back (a publish was acknowledged before the restart), which the step says it does not"
			}
		case st.Destructive && strings.Contains(st.Text, "restart nats-server"):
			if err := s.Stop(); err != nil {
				return err
			}
			if err := s.Start(ctx); err != nil {
				return err
			}
			if err := waitAnyMetaLeader(ctx, r.c, 60*time.Second); err != nil {
				return err
			}
			_ = waitFor(ctx, 30*time.Second, f.Stream+" leader", func() (bool, error) {
				return swLastSeq(ctx, s, f.Account, f.Stream) > 0, nil
			})
			restarted = true
			r.action(st.Text, "stopped "+s.Name+" (SIGTERM) and started it again")
		default:
			r.action(st.Text, "not carried out: no executor step for this text")
		}
	}
	if !restarted {
		return fmt.Errorf("no restart step in the remedy")
	}
	last0 := swLastSeq(ctx, s, f.Account, f.Stream)
	ans := swPublish(ctx, nc, subj, data)
	last1 := swLastSeq(ctx, s, f.Account, f.Stream)
	var hz string
	_ = waitFor(ctx, 20*time.Second, s.Name+" healthz ok", func() (bool, error) {
		hz = httpBody(s, "/healthz")
		return strings.Contains(hz, `"ok"`), nil
	})
	for _, st := range f.Steps {
		if st.Kind == "verify" {
			r.out.Steps = append(r.out.Steps, "verify: "+st.Text, fmt.Sprintf("done: a publish after the restart: %s; last seq %d -> %d; %s /healthz: %s", ans, last0, last1, s.Name, hz))
		}
	}
	if last1 <= last0 || !strings.Contains(hz, `"ok"`) {
		return fmt.Errorf("after the restart: last seq %d -> %d, /healthz %s", last0, last1, hz)
	}
	return pause(ctx, 5*time.Second)
}

// swSubject is a literal subject of the stream's first subject filter
// (meta.inf of its folder).
func swSubject(folder string) (string, error) {
	b, err := os.ReadFile(filepath.Join(folder, "meta.inf"))
	if err != nil {
		return "", err
	}
	var cfg struct {
		Subjects []string `json:"subjects"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil || len(cfg.Subjects) == 0 {
		return "", fmt.Errorf("%s/meta.inf: no subjects (%v)", folder, err)
	}
	subj := strings.ReplaceAll(cfg.Subjects[0], ">", "remedy")
	return strings.ReplaceAll(subj, "*", "remedy"), nil
}

// swPublish publishes once and returns the JetStream ack or error verbatim.
func swPublish(ctx context.Context, nc *nats.Conn, subj string, data []byte) string {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, subj, data)
	if err != nil {
		return "client: " + err.Error()
	}
	return strings.TrimSpace(string(m.Data))
}

// swLastSeq is the stream's last sequence in s's /jsz (0 when absent).
func swLastSeq(ctx context.Context, s *Server, acc, stream string) uint64 {
	var j jszInfo
	if s.GetJSON(ctx, "/jsz?accounts=1&streams=1", &j) != nil {
		return 0
	}
	for _, a := range j.Accounts {
		if a.Name != acc {
			continue
		}
		for _, st := range a.Streams {
			if st.Name == stream {
				return st.State.LastSeq
			}
		}
	}
	return 0
}

// freeOf is the free space of the filesystem holding dir.
func freeOf(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d bytes", st.Bavail*uint64(st.Bsize))
}

// copyContent is one copy of a stream: sequence -> digest of the data,
// from `jsforensics extract --server` (blocks only).
type copyContent map[uint64]string

// extractCopy reads server's copy of acc/stream from the bundle (or a run
// folder laid out like one) with the analyzer.
func extractCopy(ctx context.Context, jsf, bundle, server, acc, stream string) (copyContent, error) {
	out, err := os.CreateTemp("", "jsf-extract-*.jsonl")
	if err != nil {
		return nil, err
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.CommandContext(ctx, jsf, "extract", bundle, "--stream", acc+"/"+stream, "--server", server, "-o", out.Name(), "--force")
	if b, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 2 {
			return nil, fmt.Errorf("extract %s: %v: %s", server, err, b)
		}
	}
	fh, err := os.Open(out.Name())
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	cc := copyContent{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			Seq     uint64 `json:"seq"`
			Subject string `json:"subject"`
			Data    string `json:"data"`
			Source  struct {
				Server string `json:"server"`
				From   string `json:"from"`
			} `json:"source"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Source.From != "blocks" {
			continue
		}
		d, _ := base64.StdEncoding.DecodeString(m.Data)
		cc[m.Seq] = payloadOf(string(d))
	}
	return cc, sc.Err()
}

// payloadOf is the digest extractCopy gives a message's data.
func payloadOf(data string) string {
	h := sha256.Sum256([]byte(data))
	return fmt.Sprintf("%x", h[:8])
}

// sameCopy: how many sequences of a are in b with the same content, and
// how many of a differ or are missing in b.
func sameCopy(a, b copyContent) (same, differ int) {
	for seq, h := range a {
		if b[seq] == h {
			same++
		} else {
			differ++
		}
	}
	return
}

// execDivergenceChooseCopy: the save step has copied every store out. As
// the first action says, the authoritative copy is decided from the
// publishers' acknowledgements (want.json expect: the scenario's read-back
// lists each acknowledged write the stream leader no longer serves, with
// its sequence and payload; the leader serves the rest): each server's copy
// is read with `jsforensics extract --server` and the copy holding the most
// acknowledged writes is chosen, on a tie the one holding the writes the
// leader lost. Then, as the destructive action says, the other replicas are
// rebuilt from it: the live servers started, the chosen server made stream
// leader (a stream leader stepdown with placement preferred: scaling to R1
// keeps the leader's copy), the stream scaled to R1 and back to its
// replicas. After the stop each replica is read again: whether it holds
// the chosen copy.
func execDivergenceChooseCopy(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	f := fs[0]
	acc, stream := f.Account, f.Stream
	var x struct {
		Readback struct {
			AckedLost []struct {
				Seq     uint64 `json:"seq"`
				Payload string `json:"payload"`
			} `json:"acked_lost"`
			AckedPresent int `json:"acked_present"`
		} `json:"readback"`
	}
	b, _ := json.Marshal(r.want.Expect)
	_ = json.Unmarshal(b, &x)

	// Every copy of the bundle, grouped by content.
	copies := map[string]copyContent{}
	var holders []string
	for _, n := range append(append([]string{}, r.live...), r.stopped...) {
		cc, err := extractCopy(ctx, r.jsf, r.bundle, n, acc, stream)
		if err != nil {
			return err
		}
		if len(cc) > 0 {
			copies[n] = cc
			holders = append(holders, n)
		}
	}
	leader := ""
	for _, s := range r.want.Servers {
		for _, st := range s.Streams {
			if st.Account == acc && st.Name == stream && st.Leader != "" {
				leader = st.Leader
			}
		}
	}
	if copies[leader] == nil {
		return fmt.Errorf("no copy of %s > %s on its leader %q", acc, stream, leader)
	}
	// Acknowledged writes each copy holds: the leader's messages (acked,
	// the read-back found them all acknowledged: acked_present) and the
	// acknowledged writes it lost, at their sequences (by payload).
	lostHeld := func(cc copyContent) int {
		held := 0
		for _, l := range x.Readback.AckedLost {
			if cc[l.Seq] == payloadOf(l.Payload) {
				held++
			}
		}
		return held
	}
	type score struct {
		name         string
		acked, lost  int
		sameAsLeader int
	}
	var scores []score
	for _, n := range holders {
		same, _ := sameCopy(copies[leader], copies[n])
		lh := lostHeld(copies[n])
		scores = append(scores, score{name: n, acked: same + lh, lost: lh, sameAsLeader: same})
	}
	sort.SliceStable(scores, func(i, k int) bool {
		if scores[i].acked != scores[k].acked {
			return scores[i].acked > scores[k].acked
		}
		return scores[i].lost > scores[k].lost
	})
	var desc []string
	for _, sc := range scores {
		desc = append(desc, fmt.Sprintf("%s: %d messages, %d as the leader %s holds them, %d of the %d acknowledged writes the leader lost", sc.name, len(copies[sc.name]), sc.sameAsLeader, leader, sc.lost, len(x.Readback.AckedLost)))
	}
	// The chosen copy: the best score held by a server of the current
	// assignment (the live servers).
	chosen := ""
	for _, sc := range scores {
		if containsStr(r.live, sc.name) {
			chosen = sc.name
			break
		}
	}
	if chosen == "" {
		return fmt.Errorf("no live server holds a copy of %s", stream)
	}
	var acts []int
	for i, st := range f.Steps {
		if st.Kind == "action" {
			acts = append(acts, i)
		}
	}
	if len(acts) < 2 {
		return fmt.Errorf("the remedy has %d action steps, 2 expected", len(acts))
	}
	lacking := 0
	for seq, h := range copies[leader] {
		if copies[chosen][seq] != h {
			lacking++
		}
	}
	r.action(f.Steps[acts[0]].Text, fmt.Sprintf("each copy read with `jsforensics extract --server` and held to the acknowledged writes of want.json expect (read-back: %d acknowledged writes the leader serves, %d it lost): %s; chosen: %s's copy (%d acknowledged writes the leader serves are not in it, kept in the saved folders only)",
		x.Readback.AckedPresent, len(x.Readback.AckedLost), strings.Join(desc, "; "), chosen, lacking))
	r.out.Note = fmt.Sprintf("chosen copy: %s's (holders %s)", chosen, strings.Join(holders, ", "))

	// Rebuild from it.
	if err := r.start(ctx, r.live...); err != nil {
		return err
	}
	nc, err := nats.Connect(fmt.Sprintf("nats://app:app@127.0.0.1:%d", r.c.Server(r.live[0]).ClientPort), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	var done []string
	info, err := dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return i.Cluster.Leader != "" })
	if err != nil {
		return err
	}
	replicas := int(info.Config["num_replicas"].(float64))
	done = append(done, fmt.Sprintf("started %s: stream leader %s", strings.Join(r.live, ", "), info.Cluster.Leader))
	for try := 0; try < 3 && info.Cluster.Leader != chosen; try++ {
		ans, err := request(ctx, nc, fmt.Sprintf(`nats request '$JS.API.STREAM.LEADER.STEPDOWN.%s' '{"placement":{"preferred":%q}}'`, stream, chosen))
		if err != nil {
			return err
		}
		info, err = dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return i.Cluster.Leader == chosen })
		done = append(done, fmt.Sprintf("stream leader stepdown, placement preferred %s -> %s; leader %s", chosen, ans, info.Cluster.Leader))
		if err != nil && try == 2 {
			r.action(f.Steps[acts[1]].Text, strings.Join(done, "; "))
			return err
		}
	}
	update := func(n int) (string, error) {
		cfg := info.Config
		cfg["num_replicas"] = n
		body, _ := json.Marshal(cfg)
		var raw json.RawMessage
		if err := apiRequest(ctx, nc, "$JS.API.STREAM.UPDATE."+stream, json.RawMessage(body), &raw); err != nil {
			return "", err
		}
		return string(raw), nil
	}
	ans, err := update(1)
	if err != nil {
		return err
	}
	info, err = dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return len(i.Cluster.Replicas) == 0 && i.Cluster.Leader != "" })
	done = append(done, fmt.Sprintf("scaled to R1 (nats stream edit %s --replicas 1): %s; leader %s, %d messages", stream, dvShort(ans), info.Cluster.Leader, info.State.Msgs))
	if err != nil {
		r.action(f.Steps[acts[1]].Text, strings.Join(done, "; "))
		return err
	}
	if info.Cluster.Leader != chosen {
		r.action(f.Steps[acts[1]].Text, strings.Join(done, "; "))
		return fmt.Errorf("R1 on %s, not on the chosen %s", info.Cluster.Leader, chosen)
	}
	if err := pause(ctx, 5*time.Second); err != nil {
		return err
	}
	ans, err = update(replicas)
	if err != nil {
		return err
	}
	info, err = dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool {
		if len(i.Cluster.Replicas) != replicas-1 {
			return false
		}
		for _, p := range i.Cluster.Replicas {
			if !p.Current || p.Offline {
				return false
			}
		}
		return true
	})
	var peers []string
	for _, p := range info.Cluster.Replicas {
		peers = append(peers, fmt.Sprintf("%s current=%v", p.Name, p.Current))
	}
	done = append(done, fmt.Sprintf("scaled back to R%d: %s; leader %s, replicas %s, %d messages", replicas, dvShort(ans), info.Cluster.Leader, strings.Join(peers, ", "), info.State.Msgs))
	r.action(f.Steps[acts[1]].Text, strings.Join(done, "; "))
	if err != nil {
		return err
	}
	// After the stop: each replica read again.
	want := copies[chosen]
	r.cleanup = append(r.cleanup, func() {
		var lines []string
		for _, n := range r.live {
			cc, err := extractCopy(context.Background(), r.jsf, r.c.Server(n).Dir, n, acc, stream)
			if err != nil {
				r.out.Why = append(r.out.Why, err.Error())
				r.out.Proven = false
				continue
			}
			same, differ := sameCopy(want, cc)
			lines = append(lines, fmt.Sprintf("%s: %d messages, %d of the chosen copy's %d as chosen, %d differ or missing", n, len(cc), same, len(want), differ))
			if differ > 0 || len(cc) != len(want) {
				r.out.Proven = false
				r.out.Why = append(r.out.Why, fmt.Sprintf("%s does not hold the chosen copy (%d differ, %d messages)", n, differ, len(cc)))
			}
		}
		r.out.Steps = append(r.out.Steps, "done: after the stop, each replica read with `jsforensics extract --server`: "+strings.Join(lines, "; "))
	})
	return pause(ctx, 5*time.Second)
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func dvShort(s string) string {
	var a struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(s), &a) == nil && a.Error != nil {
		return "error: " + a.Error.Description
	}
	return "ok"
}

// dvStreamInfo is the part of $JS.API.STREAM.INFO the executors read.
type dvStreamInfo struct {
	Error *struct {
		Description string `json:"description"`
	} `json:"error"`
	Config map[string]any `json:"config"`
	State  struct {
		Msgs    uint64 `json:"messages"`
		LastSeq uint64 `json:"last_seq"`
	} `json:"state"`
	Cluster struct {
		Leader   string `json:"leader"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
			Lag     uint64 `json:"lag"`
		} `json:"replicas"`
	} `json:"cluster"`
}

// dvInfo asks STREAM.INFO until ok holds (60 s at most); the last answer
// is returned either way.
func dvInfo(ctx context.Context, nc *nats.Conn, stream string, ok func(dvStreamInfo) bool) (dvStreamInfo, error) {
	var info dvStreamInfo
	err := waitFor(ctx, 60*time.Second, stream+" info", func() (bool, error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := nc.RequestWithContext(rctx, "$JS.API.STREAM.INFO."+stream, nil)
		cancel()
		if err != nil {
			return false, nil
		}
		var i dvStreamInfo
		if json.Unmarshal(m.Data, &i) != nil || i.Error != nil || i.Config == nil {
			return false, nil
		}
		info = i
		return ok(i), nil
	})
	return info, err
}

// execMembershipReplace: the bundle's state is past the change the
// finding names (the servers of the earlier assignment are out of the meta
// group and the replacement is done), so the remedy is carried out on the
// change itself: the copies' stores are emptied and the bundle's servers
// (same names, cluster, version) made the fault of the membership scenario
// again: an R3 stream under a trickle of acknowledged publishes, two hosts
// of its replicas other than the meta leader SIGKILLed; then, as the step
// says, one server removal ($JS.API.SERVER.REMOVE) at a time, each
// followed by a wait until the stream reports every replica current (60 s
// at most: the other killed server stays offline until it is removed).
// Before is the stream at the kill; after the run every acknowledged
// publish is read back through the stream leader and the replicas' /jsz
// are compared.
func execMembershipReplace(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	f := fs[0]
	stream := f.Stream
	names := append(append([]string{}, r.live...), r.stopped...)
	sort.Strings(names)
	for _, n := range names {
		if err := os.RemoveAll(r.c.Server(n).JSRoot()); err != nil {
			return err
		}
	}
	// Routes among these servers only: a new cluster sizes its meta group
	// by the routes configured.
	for _, n := range names {
		s := r.c.Server(n)
		s.Routes = nil
		for _, o := range names {
			if o != n {
				s.Routes = append(s.Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", r.c.Server(o).ClusterPort))
			}
		}
	}
	r.out.Before, r.out.FoldersBefore = map[string]StreamFig{}, map[string][]string{}
	r.out.Steps = append(r.out.Steps, "done: the bundle's state is past the replacement the finding names; the copies' stores emptied to make the change again on "+strings.Join(names, ", ")+" and carry it out as the step says")
	if err := r.start(ctx, names...); err != nil {
		return err
	}
	var cl []*Server
	for _, n := range names {
		cl = append(cl, r.c.Server(n))
	}
	c := &Cluster{Name: r.c.Name, Version: r.c.Version, Servers: cl}
	nc, err := nats.Connect(fmt.Sprintf("nats://app:app@127.0.0.1:%d", cl[0].ClientPort), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	cfg := fmt.Sprintf(`{"name":%q,"subjects":["records.>"],"num_replicas":3,"storage":"file"}`, stream)
	if err := retry(ctx, "create "+stream, func(ctx context.Context) error {
		var raw json.RawMessage
		if err := apiRequest(ctx, nc, "$JS.API.STREAM.CREATE."+stream, json.RawMessage(cfg), &raw); err != nil {
			return err
		}
		if dvShort(string(raw)) != "ok" {
			return fmt.Errorf("%s", raw)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		return err
	}
	info, err := dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return i.Cluster.Leader != "" })
	if err != nil {
		return err
	}
	metaLeader := c.MetaLeader(ctx)
	hosts := []string{info.Cluster.Leader}
	for _, p := range info.Cluster.Replicas {
		hosts = append(hosts, p.Name)
	}
	var victims, live []string
	for _, h := range hosts {
		if h != metaLeader && len(victims) < 2 {
			victims = append(victims, h)
		}
	}
	for _, n := range names {
		if !containsStr(victims, n) {
			live = append(live, n)
		}
	}
	if len(victims) != 2 {
		return fmt.Errorf("cannot pick two victims from %v (meta leader %s)", hosts, metaLeader)
	}
	var liveURLs, sysURLs []string
	for _, n := range live {
		liveURLs = append(liveURLs, fmt.Sprintf("nats://app:app@127.0.0.1:%d", r.c.Server(n).ClientPort))
		sysURLs = append(sysURLs, fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", r.c.Server(n).ClientPort))
	}
	pnc, err := nats.Connect(strings.Join(liveURLs, ","), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer pnc.Close()
	pjs, err := jetstream.New(pnc)
	if err != nil {
		return err
	}
	snc, err := nats.Connect(strings.Join(sysURLs, ","), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer snc.Close()
	var (
		recMu sync.Mutex
		recs  []*pubRec
	)
	stopPub := trickle(ctx, pjs, func(rec *pubRec) {
		recMu.Lock()
		recs = append(recs, rec)
		recMu.Unlock()
	})
	defer stopPub()
	if err := pause(ctx, 4*time.Second); err != nil {
		return err
	}
	atKill, _ := dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return true })
	for _, v := range victims {
		if err := r.c.Server(v).Kill(); err != nil {
			return err
		}
	}
	r.out.Before[f.Account+" > "+stream] = StreamFig{Msgs: atKill.State.Msgs, Leader: atKill.Cluster.Leader, Replicas: 3}
	for _, n := range live {
		r.out.FoldersBefore[n], _ = streamFolders(r.c.Server(n).JSRoot())
	}
	r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: stream %s R3 on %s (leader %s), meta leader %s; publishing one message at a time; at %d messages SIGKILLed %s", stream, strings.Join(hosts, ", "), info.Cluster.Leader, metaLeader, atKill.State.Msgs, strings.Join(victims, ", ")))

	var acts []int
	for i, st := range f.Steps {
		if st.Kind == "action" && st.Destructive {
			acts = append(acts, i)
		}
	}
	if len(acts) == 0 {
		return fmt.Errorf("no destructive action in the remedy")
	}
	var done []string
	for k, v := range victims {
		var raw json.RawMessage
		if err := apiRequest(ctx, snc, "$JS.API.SERVER.REMOVE", json.RawMessage(fmt.Sprintf(`{"peer":%q}`, v)), &raw); err != nil {
			return err
		}
		start := time.Now()
		var last dvStreamInfo
		werr := waitFor(ctx, 60*time.Second, stream+" every replica current", func() (bool, error) {
			i, err := dvInfo(ctx, nc, stream, func(dvStreamInfo) bool { return true })
			if err != nil {
				return false, nil
			}
			last = i
			if i.Cluster.Leader == "" || len(i.Cluster.Replicas) != 2 {
				return false, nil
			}
			for _, p := range i.Cluster.Replicas {
				if !p.Current || p.Offline {
					return false, nil
				}
			}
			return true, nil
		})
		var ps []string
		for _, p := range last.Cluster.Replicas {
			st := "current"
			if p.Offline {
				st = "offline"
			} else if !p.Current {
				st = fmt.Sprintf("not current (lag %d)", p.Lag)
			}
			ps = append(ps, p.Name+" "+st)
		}
		d := fmt.Sprintf("nats request '$JS.API.SERVER.REMOVE' '{\"peer\":%q}' -> %s; after %.0f s: meta %s, stream leader %q, replicas %s", v, dvShort(string(raw)), time.Since(start).Seconds(), metaSize(ctx, r.c.Server(live[0])), last.Cluster.Leader, strings.Join(ps, ", "))
		if werr != nil {
			d += " (every replica current: " + werr.Error() + ")"
			if k == len(victims)-1 {
				done = append(done, d)
				r.action(f.Steps[acts[0]].Text, strings.Join(done, "; then "))
				return werr
			}
		}
		done = append(done, d)
	}
	r.action(f.Steps[acts[0]].Text, strings.Join(done, "; then "))
	if err := pause(ctx, 5*time.Second); err != nil {
		return err
	}
	stopPub()
	bySeq := map[uint64][]*pubRec{}
	byPayload := map[string]*pubRec{}
	acked, unacked := 0, 0
	for _, rec := range recs {
		byPayload[rec.payload] = rec
		if !rec.acked {
			unacked++
			continue
		}
		acked++
		bySeq[rec.seq] = append(bySeq[rec.seq], rec)
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		r.out.Why = append(r.out.Why, "not quiet before the read-back: "+err.Error())
	}
	info, err = dvInfo(ctx, nc, stream, func(i dvStreamInfo) bool { return i.Cluster.Leader != "" })
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	rb := readBack(ctx, js, info.State.LastSeq, bySeq, byPayload)
	states := map[string]string{}
	distinct := map[string]bool{}
	for _, n := range live {
		var j jszInfo
		if r.c.Server(n).GetJSON(ctx, "/jsz?accounts=1&streams=1", &j) != nil {
			continue
		}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				if sd.Name == stream {
					k := fmt.Sprintf("%d/%d/%d/%d", sd.State.FirstSeq, sd.State.LastSeq, sd.State.Msgs, sd.State.Bytes)
					states[n], distinct[k] = k, true
				}
			}
		}
	}
	r.out.Steps = append(r.out.Steps, "verify: "+stepText(f, "verify"), fmt.Sprintf("done: %d publishes acknowledged, %d not; read back through the leader %s: %d of %d sequences present, %d acknowledged writes present, %d lost (%s); replicas first/last/messages/bytes: %v", acked, unacked, info.Cluster.Leader, rb.Present, rb.LastSeq, rb.AckedPresent, rb.AckedLostN, rb.Error, states))
	if rb.AckedLostN > 0 || rb.Error != "" {
		return fmt.Errorf("%d acknowledged writes lost %s", rb.AckedLostN, rb.Error)
	}
	if len(distinct) > 1 {
		return fmt.Errorf("replicas differ: %v", states)
	}
	return nil
}

// stepText is the text of f's first step of kind.
func stepText(f reportFinding, kind string) string {
	for _, s := range f.Steps {
		if s.Kind == kind {
			return s.Text
		}
	}
	return ""
}
