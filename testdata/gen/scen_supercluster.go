package main

// Phase 2d: shared/incidents/003 recreated. Cluster `old` runs JetStream
// with gateways and reject_unknown_cluster; cluster `new` starts WITHOUT a
// gateway block, founds its own meta group (size 3) and creates a stream.
// Then old is rolling-restarted with new in its gateway list, and new is
// rolling-restarted with a gateway block listing old and new (gateway config
// cannot be reloaded by SIGHUP); every server's meta view is polled every
// second while the clusters join.
//
// Why not gateway remotes on new from the start, as in the incident: on
// v2.15.2 the bootstrap then expects 2 routes + 3 gateway URLs = 5 peers, and
// a _meta_ candidate with an empty log (Recovering, so not "initializing")
// needs votes from the full cluster size; new's three servers stay
// CANDIDATE (size 5, quorum 3, no peers) and never elect (observed, raft.go
// processVoteResponse/campaign empty-vote rule).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func superclusterScenarios() []Scenario {
	return []Scenario{
		{Name: "v2.15.2-supercluster-split",
			Doc:     "incident 003: clusters old and new (3 x v2.15.2 each); new founds its own meta group before gateways connect; poll series of the join",
			Timeout: 8 * time.Minute,
			Run:     superclusterSplit},
	}
}

// MetaView is one server's view of the meta group at one moment.
type MetaView struct {
	Server         string   `json:"server"`
	Time           string   `json:"time,omitempty"`
	Up             bool     `json:"up"`
	JSZLeader      string   `json:"jsz_leader"`
	JSZClusterSize int      `json:"jsz_cluster_size"`
	JSZReplicas    []string `json:"jsz_replicas"` // meta_cluster.replicas names (excludes the leader)
	RaftzSize      int      `json:"raftz_size"`
	RaftzQuorum    int      `json:"raftz_quorum"`
	RaftzTerm      uint64   `json:"raftz_term"`
	RaftzState     string   `json:"raftz_state"`
	RaftzLeaderID  string   `json:"raftz_leader_id"`
	RaftzPeers     []string `json:"raftz_peers"` // ids incl. self; "id(name)" when the name is known
	Streams        []string `json:"streams"`     // "<acc> > <name>" this server hosts (/jsz)
	Err            string   `json:"error,omitempty"`
}

// SuperclusterExpect is want.json's expect for the split scenario.
type SuperclusterExpect struct {
	StreamsCreated map[string]string   `json:"streams_created"` // stream -> cluster it was created in
	BeforeJoin     map[string]MetaView `json:"before_join"`
	AfterJoin      map[string]MetaView `json:"after_join"`
	// Leaders seen across the whole poll series, per server: distinct values in order.
	LeadersSeen map[string][]string `json:"leaders_seen"`
	// Distinct (leader, cluster_size) views at the end.
	FinalViews   []string            `json:"final_views"`
	StreamsAfter map[string][]string `json:"streams_after"` // stream -> servers hosting it at the end
	StreamsLost  []string            `json:"streams_lost"`  // created streams hosted by fewer servers at the end than before the join
	Restarts     []string            `json:"restarts"`      // rolling restart order with times
	// OrphanLines are every "Detected orphaned stream" line in any server's log
	// (empty when streams vanished silently).
	OrphanLines []string `json:"orphan_lines"`
	// StreamFoldersAfter lists <acc>/<stream> folders per server after the graceful stop.
	StreamFoldersAfter map[string][]string `json:"stream_folders_after"`
	Polls              string              `json:"polls"` // path inside the bundle of the JSON-lines poll series
	PollCount          int                 `json:"poll_count"`
}

func superclusterSplit(ctx context.Context, env *Env) error {
	old, err := NewCluster(ctx, env.Scratch, "v2.15.2", "old", []string{"old-0", "old-1", "old-2"})
	if err != nil {
		return err
	}
	defer old.Kill()
	nw, err := NewCluster(ctx, env.Scratch, "v2.15.2", "new", []string{"new-0", "new-1", "new-2"})
	if err != nil {
		return err
	}
	defer nw.Kill()
	urls := func(c *Cluster) []string {
		var u []string
		for _, s := range c.Servers {
			u = append(u, s.GatewayURL())
		}
		return u
	}
	for _, s := range old.Servers {
		s.GatewayName, s.GatewayExtra = "old", "reject_unknown_cluster: true"
		s.Gateways = []Gateway{{Name: "old", URLs: urls(old)}}
	}
	x := SuperclusterExpect{StreamsCreated: map[string]string{}, Polls: "polls.jsonl"}
	if err := old.Start(ctx); err != nil {
		return err
	}
	if err := createAndFill(ctx, old, "OLD_ORDERS", 3, 20); err != nil {
		return err
	}
	x.StreamsCreated["OLD_ORDERS"] = "old"
	if err := createAndFill(ctx, old, "OLD_R1", 1, 10); err != nil {
		return err
	}
	x.StreamsCreated["OLD_R1"] = "old"
	if err := old.WaitQuiet(ctx, 60*time.Second); err != nil {
		return err
	}
	logf("old: meta leader %s; starting new (no gateways)", old.MetaLeader(ctx))
	if err := nw.Start(ctx); err != nil {
		return err
	}
	logf("new: own meta leader %s", nw.MetaLeader(ctx))
	if err := createAndFill(ctx, nw, "NEW_EVENTS", 3, 15); err != nil {
		return err
	}
	x.StreamsCreated["NEW_EVENTS"] = "new"
	if err := nw.WaitQuiet(ctx, 60*time.Second); err != nil {
		return err
	}
	all := append(append([]*Server{}, old.Servers...), nw.Servers...)
	x.BeforeJoin = map[string]MetaView{}
	for _, s := range all {
		x.BeforeJoin[s.Name] = metaView(ctx, s)
	}
	before := hostsOf(x.BeforeJoin)

	// Poll every second from here on, in the background.
	var polls []byte
	x.LeadersSeen = map[string][]string{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, s := range all {
				v := metaView(ctx, s)
				v.Time = time.Now().UTC().Format(time.RFC3339Nano)
				b, _ := json.Marshal(v)
				polls = append(append(polls, b...), '\n')
				x.PollCount++
				if v.Up {
					seen := x.LeadersSeen[s.Name]
					if len(seen) == 0 || seen[len(seen)-1] != v.JSZLeader {
						x.LeadersSeen[s.Name] = append(seen, v.JSZLeader)
					}
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	// Add new to old's gateway lists, then give new its gateway block:
	// rolling restarts (gateway config is not reloadable).
	for _, s := range old.Servers {
		s.Gateways = []Gateway{{Name: "old", URLs: urls(old)}, {Name: "new", URLs: urls(nw)}}
	}
	for _, s := range nw.Servers {
		s.GatewayName, s.GatewayExtra = "new", "reject_unknown_cluster: true"
		s.Gateways = []Gateway{{Name: "new", URLs: urls(nw)}, {Name: "old", URLs: urls(old)}}
	}
	for _, s := range all {
		if err := s.Stop(); err != nil {
			return err
		}
		if err := s.Start(ctx); err != nil {
			return err
		}
		logf("%s restarted with gateways old+new", s.Name)
		x.Restarts = append(x.Restarts, s.Name+" "+time.Now().UTC().Format(time.RFC3339Nano))
		time.Sleep(5 * time.Second)
	}
	time.Sleep(40 * time.Second)
	close(stop)
	<-done

	x.AfterJoin = map[string]MetaView{}
	views := map[string]bool{}
	for _, s := range all {
		v := metaView(ctx, s)
		x.AfterJoin[s.Name] = v
		views[fmt.Sprintf("leader=%s cluster_size=%d raftz_size=%d", v.JSZLeader, v.JSZClusterSize, v.RaftzSize)] = true
	}
	for v := range views {
		x.FinalViews = append(x.FinalViews, v)
	}
	sort.Strings(x.FinalViews)
	x.StreamsAfter = hostsOf(x.AfterJoin)
	for st, hosts := range before {
		if len(x.StreamsAfter[st]) < len(hosts) {
			x.StreamsLost = append(x.StreamsLost, st)
		}
	}
	sort.Strings(x.StreamsLost)
	for _, v := range x.FinalViews {
		logf("final view: %s", v)
	}
	logf("streams after: %v; lost: %v", x.StreamsAfter, x.StreamsLost)
	caps, err := CaptureAll(ctx, old, nw)
	if err != nil {
		return err
	}
	errOld, errNew := old.Stop(), nw.Stop()
	if errOld != nil || errNew != nil {
		return fmt.Errorf("stop: %v %v", errOld, errNew)
	}
	x.OrphanLines = []string{}
	x.StreamFoldersAfter = map[string][]string{}
	for _, s := range all {
		logb, err := os.ReadFile(s.LogFile)
		if err != nil {
			return err
		}
		for _, line := range splitLines(logb) {
			if orphanStreamRE.MatchString(line) {
				x.OrphanLines = append(x.OrphanLines, s.Name+": "+line)
			}
		}
		if x.StreamFoldersAfter[s.Name], err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
	}
	b := &Bundle{Name: "v2.15.2-supercluster-split", Version: "2.15.2", Layout: LayoutPerServer(), Servers: all, Captures: caps,
		Extra: map[string][]byte{x.Polls: polls}, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// createAndFill creates a file stream in cluster c (client connected to c
// only, so placement defaults to c) and publishes n messages.
func createAndFill(ctx context.Context, c *Cluster, name string, replicas, n int) error {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := retry(ctx, "create "+name, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Replicas: replicas})
		return err
	}); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := publish(ctx, js, strings.ToLower(name)+".x", payload(name, i, 64), nil); err != nil {
			return err
		}
	}
	return nil
}

// metaView reads one server's /jsz and /raftz _meta_ view.
func metaView(ctx context.Context, s *Server) MetaView {
	v := MetaView{Server: s.Name, Streams: []string{}}
	if !s.Running() {
		return v
	}
	var j jszInfo
	if err := s.GetJSON(ctx, "/jsz?accounts=1&streams=1", &j); err != nil {
		v.Err = err.Error()
		return v
	}
	v.Up = true
	if j.Meta != nil {
		v.JSZLeader, v.JSZClusterSize = j.Meta.Leader, j.Meta.Size
		for _, r := range j.Meta.Replicas {
			v.JSZReplicas = append(v.JSZReplicas, r.Name)
		}
		sort.Strings(v.JSZReplicas)
	}
	for _, a := range j.Accounts {
		for _, sd := range a.Streams {
			v.Streams = append(v.Streams, a.Name+" > "+sd.Name)
		}
	}
	sort.Strings(v.Streams)
	rz, err := s.raftz(ctx, "")
	if err != nil {
		v.Err = err.Error()
		return v
	}
	for _, groups := range rz {
		g, ok := groups["_meta_"]
		if !ok {
			continue
		}
		v.RaftzSize, v.RaftzQuorum, v.RaftzTerm, v.RaftzState, v.RaftzLeaderID = g.Size, g.QuorumNeeded, g.Term, g.State, g.Leader
		v.RaftzPeers = []string{g.ID + "(" + s.Name + ")"}
		for id, p := range g.Peers {
			if p.Name != "" {
				id += "(" + p.Name + ")"
			}
			v.RaftzPeers = append(v.RaftzPeers, id)
		}
		sort.Strings(v.RaftzPeers)
	}
	return v
}

// hostsOf maps "<acc> > <stream>" to the servers hosting it.
func hostsOf(views map[string]MetaView) map[string][]string {
	out := map[string][]string{}
	for srv, v := range views {
		for _, st := range v.Streams {
			out[st] = append(out[st], srv)
		}
	}
	for _, hs := range out {
		sort.Strings(hs)
	}
	return out
}
