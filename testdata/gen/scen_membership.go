package main

// shared/incidents/002 (membership part) recreated on v2.12.1: five servers,
// an R3 file stream under a steady trickle of acknowledged publishes; two
// servers hosting the stream's replicas are SIGKILLed and, right after,
// peer-removed from the meta group ($JS.API.SERVER.REMOVE from the system
// account) while publishing goes on. The survivors are left to settle and
// are captured; the killed servers' stores and logs go into the bundle too.
//
// Three outcomes were seen on this machine with the same steps:
//   - the two removals' stream re-assignments are computed from the same
//     (old) peer set, so the last one wins and a removed server stays in
//     the stream group beside the surviving replica and one fresh peer; the
//     surviving replica is elected with its data (no loss). It needs the
//     second removal to be processed before the first re-assignment is
//     applied (seen with the requests 1 ms apart); the pause membRemoveGap
//     between the two requests avoids it.
//   - the surviving replica and two fresh, empty peers; the surviving replica
//     campaigns first and is elected in a higher term (no loss).
//   - the same group, but a fresh peer campaigns first and the other fresh
//     one elects it in the old leader's term: the stream restarts at
//     sequence 1, acknowledged messages are gone from the leader, the
//     surviving replica keeps its old messages under the same sequences
//     (replicas diverged) and every /healthz says ok.
// `membership@<version>` makes the same on other versions.
// When the meta leader leads the stream too, it is not a victim and the
// stream keeps its leader (no loss). The fault is therefore repeated on a
// fresh cluster (up to membAttempts times) until the servers lose
// acknowledged messages; expect.attempts summarises every try.

import (
	"context"
	"encoding/json"
	"errors"
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

func membershipScenarios() []Scenario {
	return []Scenario{
		{Name: "membership-v2.12.1",
			Doc:     "incident 002: 5 x v2.12.1, R3 stream under publishes; SIGKILL two replica hosts, peer-remove both 250 ms apart; retried until acked writes are lost",
			Timeout: 12 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return membership(ctx, env, "v2.12.1") }},
	}
}

const (
	membStream  = "RECORDS"
	membAccount = "APP"
	// membPubEvery is the trickle's pace: one publish (awaited) at a time,
	// then this pause.
	membPubEvery = 20 * time.Millisecond
	// membPubTimeout bounds each publish's wait for its ack.
	membPubTimeout = 2 * time.Second
	// membRemoveGap separates the two peer-remove requests.
	membRemoveGap = 250 * time.Millisecond
	// membAttempts bounds the number of fresh clusters tried.
	membAttempts = 8
	// membSettle bounds the wait for the survivors to become quiet.
	membSettle = 60 * time.Second
)

// MembershipExpect is want.json's expect for membership-v2.12.1: what the
// generator did and what the servers answered.
type MembershipExpect struct {
	// Attempt is the number (1-based) of the try this bundle comes from;
	// Attempts summarises every try (earlier ones were discarded).
	Attempt  int           `json:"attempt"`
	Attempts []MembAttempt `json:"attempts"`
	// RemoveGap is the pause between the two removal requests.
	RemoveGap   string `json:"remove_gap"`
	Stream      string `json:"stream"`
	Account     string `json:"account"`
	StreamGroup string `json:"stream_group"`
	// Stream placement from $JS.API.STREAM.INFO (leader first, then replicas).
	ReplicasBefore     []MembReplica `json:"replicas_before"`
	StreamLeaderBefore string        `json:"stream_leader_before"`
	MetaLeaderBefore   string        `json:"meta_leader_before"`
	// Killed servers, in order (SIGKILL, as in the incident).
	Kills []MembKill `json:"kills"`
	// Peer removals, in order, with the meta leader's answer verbatim.
	Removals []MembRemoval `json:"removals"`
	// Settled is false when the survivors never became quiet (every group
	// led and applied, all replicas equal) within SettleTimeout; the
	// captures were then taken as they were.
	Settled            bool          `json:"settled"`
	SettleTimeout      string        `json:"settle_timeout"`
	NotSettledWhy      string        `json:"not_settled_why,omitempty"`
	ReplicasAfter      []MembReplica `json:"replicas_after"`
	StreamLeaderAfter  string        `json:"stream_leader_after"`
	MetaLeaderAfter    string        `json:"meta_leader_after"`
	StreamInfoErrAfter string        `json:"stream_info_error_after,omitempty"`
	// Publishing: every attempt of the trickle (one at a time).
	Published int `json:"published"`
	Acked     int `json:"acked"`
	// Acked before the first kill, between the first kill and the last
	// removal answer, and after it.
	AckedBeforeKill  int `json:"acked_before_kill"`
	AckedDuringFault int `json:"acked_during_fault"`
	AckedAfterRemove int `json:"acked_after_remove"`
	Unacked          int `json:"unacked"`
	// UnackedErrors counts the client errors of unacknowledged publishes.
	UnackedErrors     map[string]int `json:"unacked_errors"`
	FirstAckedSeq     uint64         `json:"first_acked_seq"`
	LastAckedSeq      uint64         `json:"last_acked_seq"`
	LastAckBeforeKill uint64         `json:"last_ack_before_kill"`
	// When the last ack before the first kill and the first ack after it
	// arrived (the stream's write outage as the client saw it).
	LastAckBeforeKillAt string `json:"last_ack_before_kill_at"`
	FirstAckAfterKillAt string `json:"first_ack_after_kill_at"`
	FirstSeqAfterKill   uint64 `json:"first_seq_after_kill"`
	// Read-back through $JS.API.STREAM.MSG.GET (the stream leader) after
	// settling, of every sequence from 1 to the leader's last_seq.
	Readback MembReadback `json:"readback"`
	// Per live server, from its /jsz capture.
	StreamLastSeqPerServer  map[string]uint64 `json:"stream_last_seq_per_server"`
	StreamMessagesPerServer map[string]uint64 `json:"stream_messages_per_server"`
	StreamFirstSeqPerServer map[string]uint64 `json:"stream_first_seq_per_server"`
	StreamBytesPerServer    map[string]uint64 `json:"stream_bytes_per_server"`
	// ReplicasDiverged: the live hosts' /jsz disagree on the stream state.
	ReplicasDiverged bool `json:"replicas_diverged"`
	// SeqsAckedTwice counts sequences the servers acknowledged for two
	// different publishes (the stream's sequence went back).
	SeqsAckedTwice int `json:"seqs_acked_twice"`
	// Per server (all five), /jsz of the stream just before the first kill.
	StreamBeforeKill map[string]MembState `json:"stream_before_kill"`
	// Meta group after settling, from the meta leader's /raftz.
	MetaClusterSizeAfter int      `json:"meta_cluster_size_after"`
	MetaPeersAfter       []string `json:"meta_peers_after"` // "id(name)"
	// The stream group as the stream leader's /raftz?acc= reported it after
	// settling ("id(name)", self included), and which of the removed peers
	// it still lists.
	StreamGroupPeersAfter []string `json:"stream_group_peers_after"`
	StreamGroupSizeAfter  int      `json:"stream_group_size_after"`
	// StreamTermAfter is the stream leader's raft term after settling.
	StreamTermAfter         uint64   `json:"stream_term_after"`
	RemovedStillStreamPeers []string `json:"removed_still_stream_peers"`
	// LogLines: every line of any server's log (from the first kill on)
	// matching LogPattern and not LogExclude (the killed servers' routes
	// being redialled every second), "<server>: <line>".
	LogPattern string   `json:"log_pattern"`
	LogExclude string   `json:"log_exclude"`
	LogLines   []string `json:"log_lines"`
}

// MembAttempt summarises one try of the fault.
type MembAttempt struct {
	Victims               []string `json:"victims"`
	StreamGroupPeersAfter []string `json:"stream_group_peers_after"`
	StreamLeaderAfter     string   `json:"stream_leader_after"`
	StreamTermAfter       uint64   `json:"stream_term_after"`
	Acked                 int      `json:"acked"`
	AckedLost             int      `json:"acked_lost_count"`
	SeqsAckedTwice        int      `json:"seqs_acked_twice"`
	ReplicasDiverged      bool     `json:"replicas_diverged"`
	Settled               bool     `json:"settled"`
}

// MembReplica is one peer of the stream group as STREAM.INFO reported it.
type MembReplica struct {
	Name    string `json:"name"`
	PeerID  string `json:"peer_id"`
	Leader  bool   `json:"leader,omitempty"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline,omitempty"`
	Lag     uint64 `json:"lag,omitempty"`
}

// MembKill is one SIGKILL.
type MembKill struct {
	Server string `json:"server"`
	PeerID string `json:"peer_id"`
	At     string `json:"at"`
	Signal string `json:"signal"`
}

// MembRemoval is one $JS.API.SERVER.REMOVE request and its answer.
type MembRemoval struct {
	Server     string          `json:"server"`
	PeerID     string          `json:"peer_id"`
	Request    string          `json:"request"`
	At         string          `json:"at"`
	AnsweredAt string          `json:"answered_at"`
	Response   json.RawMessage `json:"response"`
	Error      string          `json:"error,omitempty"`
}

// MembState is one server's view of the stream.
type MembState struct {
	At       string `json:"at"`
	Leader   string `json:"leader"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Messages uint64 `json:"messages"`
}

// MembReadback is the result of reading the stream back.
type MembReadback struct {
	Error   string `json:"error,omitempty"`
	LastSeq uint64 `json:"last_seq"`
	Present int    `json:"present"`
	Missing int    `json:"missing"` // sequences <= last_seq the leader had no message for
	// AckedLost: acknowledged publishes whose sequence holds nothing or a
	// different payload now.
	AckedLost     []MembLost `json:"acked_lost"`
	AckedLostN    int        `json:"acked_lost_count"`
	AckedPresent  int        `json:"acked_present"`
	UnackedStored int        `json:"unacked_stored"` // unacknowledged publishes found in the stream
	Foreign       int        `json:"foreign"`        // stored messages matching no publish
}

// MembLost is one acknowledged publish not found at its sequence.
type MembLost struct {
	Seq     uint64 `json:"seq"`
	Payload string `json:"payload"`
	AckedAt string `json:"acked_at"`
	Found   string `json:"found"` // payload now at that sequence ("" = none)
}

// pubRec is one publish attempt of the trickle.
type pubRec struct {
	payload string
	sent    time.Time
	acked   bool
	ackedAt time.Time
	seq     uint64
	err     string
}

// membLogRE selects the log lines listed in expect: membership, elections,
// catch-up, resets and anything about lost or truncated state.
var (
	membLogRE     = regexp.MustCompile(`(?i)remov|peer|disabl|leader|catchup|catch up|reset|truncat|lost|mismatch|inconsisten|stream state|snapshot|quorum|duplicate|\[ERR\]|\[WRN\]`)
	membLogSkipRE = regexp.MustCompile(`Error trying to connect to route`)
)

func membership(ctx context.Context, env *Env, version string) error {
	var (
		attempts []MembAttempt
		r        *membRun
		err      error
	)
	for n := 1; n <= membAttempts; n++ {
		logf("attempt %d of %d", n, membAttempts)
		r, err = membershipAttempt(ctx, env, filepath.Join(env.Scratch, fmt.Sprintf("attempt-%d", n)), version)
		if err != nil {
			return err
		}
		x := &r.x
		attempts = append(attempts, MembAttempt{Victims: []string{r.victims[0].Name, r.victims[1].Name},
			StreamGroupPeersAfter: x.StreamGroupPeersAfter, StreamLeaderAfter: x.StreamLeaderAfter, StreamTermAfter: x.StreamTermAfter,
			Acked: x.Acked, AckedLost: x.Readback.AckedLostN, SeqsAckedTwice: x.SeqsAckedTwice, ReplicasDiverged: x.ReplicasDiverged,
			Settled: x.Settled})
		x.Attempt = n
		logf("attempt %d: %+v", n, attempts[len(attempts)-1])
		if x.Readback.AckedLostN > 0 || x.ReplicasDiverged {
			break
		}
	}
	r.x.Attempts = attempts
	b := &Bundle{Name: "membership-" + version, Version: version[1:], Layout: r.layout, Servers: r.live, Stopped: r.victims,
		Captures: r.caps, Expect: r.x}
	return b.Write(env.Scratch, env.Out)
}

// membRun is one attempt, its servers stopped.
type membRun struct {
	x       MembershipExpect
	layout  Layout
	live    []*Server
	victims []*Server
	caps    map[string]*Capture
}

func membershipAttempt(ctx context.Context, env *Env, dir, version string) (*membRun, error) {
	names := []string{"n1", "n2", "n3", "n4", "n5"}
	c, err := NewCluster(ctx, dir, version, "jepsen", names)
	if err != nil {
		return nil, err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	x := MembershipExpect{Stream: membStream, Account: membAccount, UnackedErrors: map[string]int{}, RemovedStillStreamPeers: []string{},
		StreamBeforeKill: map[string]MembState{}, LogPattern: membLogRE.String(), LogExclude: membLogSkipRE.String(), RemoveGap: membRemoveGap.String()}

	nc, js, err := connect(c.Servers...)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if err := retry(ctx, "create "+membStream, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: membStream, Subjects: []string{"records.>"},
			Replicas: 3, Storage: jetstream.FileStorage})
		return err
	}); err != nil {
		return nil, err
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		return nil, err
	}
	info, err := streamInfo(ctx, nc)
	if err != nil {
		return nil, err
	}
	x.StreamGroup, x.StreamLeaderBefore, x.ReplicasBefore = info.Cluster.RaftGroup, info.Cluster.Leader, info.replicas()
	x.MetaLeaderBefore = c.MetaLeader(ctx)
	if x.StreamLeaderBefore == "" || x.MetaLeaderBefore == "" {
		return nil, fmt.Errorf("no stream leader (%q) or meta leader (%q)", x.StreamLeaderBefore, x.MetaLeaderBefore)
	}
	// Victims: two stream hosts other than the meta leader (which answers
	// the removals), the stream leader first when it is one of them.
	var victims []*Server
	for _, r := range x.ReplicasBefore {
		if r.Name != x.MetaLeaderBefore && len(victims) < 2 {
			victims = append(victims, c.Server(r.Name))
		}
	}
	if len(victims) != 2 || victims[0] == nil || victims[1] == nil {
		return nil, fmt.Errorf("cannot pick two victims from %v (meta leader %s)", x.ReplicasBefore, x.MetaLeaderBefore)
	}
	var live []*Server
	for _, s := range c.Servers {
		if s != victims[0] && s != victims[1] {
			live = append(live, s)
		}
	}
	logf("stream %s group %s leader %s replicas %v; meta leader %s; victims %s, %s", membStream, x.StreamGroup,
		x.StreamLeaderBefore, x.ReplicasBefore, x.MetaLeaderBefore, victims[0].Name, victims[1].Name)

	// The publisher and the operator connect to survivors only.
	pnc, pjs, err := connect(live...)
	if err != nil {
		return nil, err
	}
	defer pnc.Close()
	var sysURLs []string
	for _, s := range live {
		sysURLs = append(sysURLs, fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", s.ClientPort))
	}
	snc, err := nats.Connect(strings.Join(sysURLs, ","), nats.Name("jsforensics-gen-operator"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer snc.Close()

	var (
		mu   sync.Mutex
		recs []*pubRec
	)
	stopPub := trickle(ctx, pjs, func(r *pubRec) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	})
	defer stopPub()

	time.Sleep(4 * time.Second)
	for _, s := range c.Servers {
		x.StreamBeforeKill[s.Name] = streamState(ctx, s)
	}

	// The fault: kill both, then remove both, back to back.
	var firstKill time.Time
	for _, v := range victims {
		t := time.Now()
		if firstKill.IsZero() {
			firstKill = t
		}
		if err := v.Kill(); err != nil {
			return nil, err
		}
		x.Kills = append(x.Kills, MembKill{Server: v.Name, PeerID: nodeID(v.Name), At: t.UTC().Format(time.RFC3339Nano), Signal: "SIGKILL"})
	}
	var lastAnswer time.Time
	for i, v := range victims {
		if i > 0 {
			time.Sleep(membRemoveGap)
		}
		req := fmt.Sprintf(`{"peer":%q}`, v.Name)
		t := time.Now()
		m, err := snc.Request("$JS.API.SERVER.REMOVE", []byte(req), 5*time.Second)
		lastAnswer = time.Now()
		rm := MembRemoval{Server: v.Name, PeerID: nodeID(v.Name), Request: req, At: t.UTC().Format(time.RFC3339Nano),
			AnsweredAt: lastAnswer.UTC().Format(time.RFC3339Nano)}
		if err != nil {
			rm.Error = err.Error()
		} else {
			rm.Response = json.RawMessage(m.Data)
		}
		x.Removals = append(x.Removals, rm)
		logf("peer-remove %s: %s %s", v.Name, rm.Response, rm.Error)
	}
	for _, rm := range x.Removals {
		if rm.Error != "" {
			return nil, fmt.Errorf("peer-remove %s: %s", rm.Server, rm.Error)
		}
	}

	// Keep publishing, then let the survivors settle.
	time.Sleep(15 * time.Second)
	stopPub()
	x.SettleTimeout = membSettle.String()
	var caps map[string]*Capture
	if err := c.WaitQuiet(ctx, membSettle); err != nil {
		x.NotSettledWhy = err.Error()
		logf("not settled: %v", err)
	} else {
		x.Settled = true
	}

	mu.Lock()
	all := append([]*pubRec(nil), recs...)
	mu.Unlock()
	bySeq := map[uint64][]*pubRec{}
	byPayload := map[string]*pubRec{}
	for _, r := range all {
		byPayload[r.payload] = r
		x.Published++
		if !r.acked {
			x.Unacked++
			x.UnackedErrors[errKind(r.err)]++
			continue
		}
		x.Acked++
		bySeq[r.seq] = append(bySeq[r.seq], r)
		if len(bySeq[r.seq]) == 2 {
			x.SeqsAckedTwice++
		}
		if x.FirstAckedSeq == 0 || r.seq < x.FirstAckedSeq {
			x.FirstAckedSeq = r.seq
		}
		if r.seq > x.LastAckedSeq {
			x.LastAckedSeq = r.seq
		}
		switch {
		case r.ackedAt.Before(firstKill):
			x.AckedBeforeKill++
			if r.seq > x.LastAckBeforeKill {
				x.LastAckBeforeKill, x.LastAckBeforeKillAt = r.seq, r.ackedAt.UTC().Format(time.RFC3339Nano)
			}
		case r.ackedAt.Before(lastAnswer):
			x.AckedDuringFault++
		default:
			x.AckedAfterRemove++
		}
		if !r.ackedAt.Before(firstKill) && x.FirstAckAfterKillAt == "" {
			x.FirstAckAfterKillAt, x.FirstSeqAfterKill = r.ackedAt.UTC().Format(time.RFC3339Nano), r.seq
		}
	}

	// Read back every sequence through the stream leader.
	info, err = streamInfo(ctx, nc)
	if err != nil {
		x.StreamInfoErrAfter = err.Error()
		x.Readback.Error = err.Error()
	} else {
		x.StreamLeaderAfter, x.ReplicasAfter = info.Cluster.Leader, info.replicas()
		x.Readback = readBack(ctx, js, info.State.LastSeq, bySeq, byPayload)
	}
	x.MetaLeaderAfter = c.MetaLeader(ctx)

	if x.Settled {
		caps, err = quietCapture(ctx, c)
	} else {
		caps, err = CaptureAll(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	x.StreamLastSeqPerServer, x.StreamMessagesPerServer, x.StreamFirstSeqPerServer = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	x.StreamBytesPerServer = map[string]uint64{}
	states := map[string]bool{}
	for _, s := range live {
		var j jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &j); err != nil {
			return nil, err
		}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				if sd.Name == membStream {
					x.StreamLastSeqPerServer[s.Name] = sd.State.LastSeq
					x.StreamMessagesPerServer[s.Name] = sd.State.Msgs
					x.StreamFirstSeqPerServer[s.Name] = sd.State.FirstSeq
					x.StreamBytesPerServer[s.Name] = sd.State.Bytes
					states[fmt.Sprintf("%d/%d/%d/%d", sd.State.FirstSeq, sd.State.LastSeq, sd.State.Msgs, sd.State.Bytes)] = true
				}
			}
		}
		if f, ok := caps[s.Name].Files["raftz-acc-"+membAccount]; ok && s.Name == x.StreamLeaderAfter {
			var rz raftzStatus
			if err := jsonUnmarshal(f, &rz); err != nil {
				return nil, err
			}
			for _, groups := range rz {
				if g, ok := groups[x.StreamGroup]; ok {
					x.StreamGroupSizeAfter, x.StreamTermAfter = g.Size, g.Term
					x.StreamGroupPeersAfter = []string{g.ID + "(" + s.Name + ")"}
					for id, p := range g.Peers {
						x.StreamGroupPeersAfter = append(x.StreamGroupPeersAfter, id+"("+p.Name+")")
						for _, rm := range x.Removals {
							if rm.PeerID == id {
								x.RemovedStillStreamPeers = append(x.RemovedStillStreamPeers, rm.Server)
							}
						}
					}
					sort.Strings(x.StreamGroupPeersAfter)
					sort.Strings(x.RemovedStillStreamPeers)
				}
			}
		}
		if s.Name == x.MetaLeaderAfter {
			var rz raftzStatus
			if err := jsonUnmarshal(caps[s.Name].Files["raftz"], &rz); err != nil {
				return nil, err
			}
			for _, groups := range rz {
				if g, ok := groups["_meta_"]; ok {
					x.MetaClusterSizeAfter = g.Size
					x.MetaPeersAfter = []string{g.ID + "(" + s.Name + ")"}
					for id, p := range g.Peers {
						x.MetaPeersAfter = append(x.MetaPeersAfter, id+"("+p.Name+")")
					}
					sort.Strings(x.MetaPeersAfter)
				}
			}
		}
	}
	x.ReplicasDiverged = len(states) > 1
	pnc.Close()
	snc.Close()
	nc.Close()
	lc := &Cluster{Name: c.Name, Version: c.Version, Servers: live}
	if err := lc.Stop(); err != nil {
		return nil, err
	}
	if x.Settled {
		if err := verifyOnCopy(ctx, &Env{Scratch: dir, Out: env.Out}, lc, caps); err != nil {
			return nil, err
		}
	}

	layout := LayoutPerServer()
	for _, s := range c.Servers {
		b, err := os.ReadFile(s.LogFile)
		if err != nil {
			return nil, err
		}
		for _, line := range splitLines(b) {
			if t, ok := logLineTime(line); ok && t.Before(firstKill.Truncate(time.Microsecond)) {
				continue
			}
			if membLogRE.MatchString(line) && !membLogSkipRE.MatchString(line) {
				x.LogLines = append(x.LogLines, s.Name+": "+line)
			}
		}
	}
	logf("published %d, acked %d (before kill %d, during %d, after %d), unacked %d; read back %d of %d (error %q), acked lost %d",
		x.Published, x.Acked, x.AckedBeforeKill, x.AckedDuringFault, x.AckedAfterRemove, x.Unacked, x.Readback.Present,
		x.Readback.LastSeq, x.Readback.Error, x.Readback.AckedLostN)
	return &membRun{x: x, layout: layout, live: live, victims: victims, caps: caps}, nil
}

// membStreamInfo is the part of $JS.API.STREAM.INFO read here.
type membStreamInfo struct {
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
	State struct {
		LastSeq uint64 `json:"last_seq"`
	} `json:"state"`
	Cluster struct {
		RaftGroup string `json:"raft_group"`
		Leader    string `json:"leader"`
		Replicas  []struct {
			Name    string `json:"name"`
			Peer    string `json:"peer"`
			Current bool   `json:"current"`
			Offline bool   `json:"offline"`
			Lag     uint64 `json:"lag"`
		} `json:"replicas"`
	} `json:"cluster"`
}

func (i membStreamInfo) replicas() []MembReplica {
	out := []MembReplica{{Name: i.Cluster.Leader, PeerID: nodeID(i.Cluster.Leader), Leader: true, Current: true}}
	for _, r := range i.Cluster.Replicas {
		out = append(out, MembReplica{Name: r.Name, PeerID: r.Peer, Current: r.Current, Offline: r.Offline, Lag: r.Lag})
	}
	return out
}

// streamInfo asks $JS.API.STREAM.INFO (answered by the stream leader),
// retrying for up to 30 s while there is no leader.
func streamInfo(ctx context.Context, nc *nats.Conn) (membStreamInfo, error) {
	var info membStreamInfo
	err := retry(ctx, "stream info", func(ctx context.Context) error {
		m, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.INFO."+membStream, nil)
		if err != nil {
			return err
		}
		info = membStreamInfo{}
		if err := json.Unmarshal(m.Data, &info); err != nil {
			return err
		}
		if info.Error != nil {
			return fmt.Errorf("%d %s", info.Error.Code, info.Error.Description)
		}
		if info.Cluster.Leader == "" {
			return fmt.Errorf("no leader")
		}
		return nil
	})
	return info, err
}

// streamState is one server's /jsz view of the stream ("" leader when the
// server does not host it).
func streamState(ctx context.Context, s *Server) MembState {
	st := MembState{At: time.Now().UTC().Format(time.RFC3339Nano)}
	var j jszInfo
	if s.GetJSON(ctx, "/jsz?accounts=1&streams=1", &j) != nil {
		return st
	}
	for _, a := range j.Accounts {
		for _, sd := range a.Streams {
			if sd.Name == membStream {
				st.FirstSeq, st.LastSeq, st.Messages = sd.State.FirstSeq, sd.State.LastSeq, sd.State.Msgs
				if sd.Cluster != nil {
					st.Leader = sd.Cluster.Leader
				}
			}
		}
	}
	return st
}

// readBack reads sequences 1..last through the stream leader and compares
// them with what was acknowledged (a sequence may have been acknowledged for
// more than one publish when the stream's sequence went back).
func readBack(ctx context.Context, js jetstream.JetStream, last uint64, bySeq map[uint64][]*pubRec, byPayload map[string]*pubRec) MembReadback {
	rb := MembReadback{LastSeq: last, AckedLost: []MembLost{}}
	st, err := js.Stream(ctx, membStream)
	if err != nil {
		rb.Error = err.Error()
		return rb
	}
	found := map[uint64]string{}
	for seq := uint64(1); seq <= last; seq++ {
		var m *jetstream.RawStreamMsg
		err := retry(ctx, "get", func(ctx context.Context) error {
			var err error
			m, err = st.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				m, err = nil, nil
			}
			return err
		})
		if err != nil {
			rb.Error = fmt.Sprintf("seq %d: %v", seq, err)
			return rb
		}
		if m == nil {
			rb.Missing++
			continue
		}
		rb.Present++
		found[seq] = string(m.Data)
		if r, ok := byPayload[string(m.Data)]; !ok {
			rb.Foreign++
		} else if !r.acked {
			rb.UnackedStored++
		}
	}
	var seqs []uint64
	for seq := range bySeq {
		seqs = append(seqs, seq)
	}
	sort.Slice(seqs, func(i, k int) bool { return seqs[i] < seqs[k] })
	for _, seq := range seqs {
		for _, r := range bySeq[seq] {
			if found[seq] == r.payload {
				rb.AckedPresent++
				continue
			}
			rb.AckedLostN++
			rb.AckedLost = append(rb.AckedLost, MembLost{Seq: seq, Payload: r.payload, AckedAt: r.ackedAt.UTC().Format(time.RFC3339Nano), Found: found[seq]})
		}
	}
	return rb
}

// errKind shortens a client error for counting.
func errKind(e string) string {
	switch {
	case strings.Contains(e, "deadline"), strings.Contains(e, "timeout"):
		return "timeout"
	case strings.Contains(e, "no responders"):
		return "no responders"
	}
	return e
}

// trickle publishes one record at a time to the membership stream's
// subjects, each awaited up to membPubTimeout, and hands each to keep (on
// the publisher's goroutine). stop ends it and waits for the last publish;
// it may be called more than once.
func trickle(ctx context.Context, pjs jetstream.JetStream, keep func(*pubRec)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			default:
			}
			r := &pubRec{payload: fmt.Sprintf("%d-%d", i/64, i%64), sent: time.Now()}
			pctx, cancel := context.WithTimeout(ctx, membPubTimeout)
			ack, err := pjs.Publish(pctx, fmt.Sprintf("records.p%d", i%8), []byte(r.payload))
			cancel()
			if err != nil {
				r.err = err.Error()
			} else {
				r.acked, r.ackedAt, r.seq = true, time.Now(), ack.Sequence
			}
			keep(r)
			time.Sleep(membPubEvery)
		}
	}()
	return func() {
		select {
		case <-quit:
		default:
			close(quit)
		}
		<-done
	}
}
