package main

// Issue 12 item 1: servers renamed in place (a Helm serverNamePrefix change:
// nats-0..2 become js-0..2 on the same store dirs and log files). The bundle
// is the state after the renamed servers ran and were stopped; expect
// records what the live servers said, what the rename deleted, and what each
// remedy did when tried on a copy of that state (the live server is the
// oracle).

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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func renameScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.15.2", "v2.12.1", "v2.12.15", "v2.11.17"} {
		out = append(out, Scenario{Name: "rename-" + v,
			Doc:     "issue 12: 3 x " + v + " renamed nats-N -> js-N on the same stores; expect = what the servers said and which remedy brought them back",
			Timeout: 9 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return rename(ctx, env, v) }})
	}
	return out
}

const renameAccount = "APP"

// renameLogRE selects the log lines expect keeps: banners, restores, the
// removals the rename causes, elections and rescue answers.
var renameLogRE = regexp.MustCompile(`Server name:|Restored \d+ messages|JetStream removing stream|removing consumer|not a voting member|NO quorum|metadata leader|Rescue|rescue|Removing peer|removed peer`)

// RenameExpect is want.json's expect for rename-<version>.
type RenameExpect struct {
	OldNames []string `json:"old_names"`
	NewNames []string `json:"new_names"`
	// Renamed maps old name -> new name (same store dir, same log file).
	Renamed map[string]string `json:"renamed"`
	OldIDs  map[string]string `json:"old_ids"` // old name -> getHash
	NewIDs  map[string]string `json:"new_ids"`
	// Streams before the rename, "<acc> > <name>" -> replicas, and their
	// messages per server (/jsz).
	Streams         map[string]int               `json:"streams"`
	MessagesBefore  map[string]map[string]uint64 `json:"messages_before"`
	FoldersBefore   map[string][]string          `json:"folders_before"` // per old name
	FoldersAfter    map[string][]string          `json:"folders_after"`  // per new name, after the renamed run
	RemovedStreams  map[string][]string          `json:"removed_streams"`
	MetaAfterRename map[string]MetaView          `json:"meta_after_rename"`
	// TermsClimbing: every renamed server's _meta_ term at the first and
	// the last poll of the renamed run.
	TermsFirst map[string]uint64 `json:"terms_first"`
	TermsLast  map[string]uint64 `json:"terms_last"`
	// JSZUnknownPeers: meta_cluster replicas /jsz names "Server name unknown…".
	JSZUnknownPeers map[string][]string `json:"jsz_unknown_peers"`
	Health          map[string]string   `json:"health"`
	LogLines        map[string][]string `json:"log_lines"`
	Remedies        []RenameRemedy      `json:"remedies"`
	// RemediesRecovered names the remedies that brought a meta leader back
	// with the meta group at the cluster's own size (none brought data back:
	// see each remedy's streams and data_back).
	RemediesRecovered []string `json:"remedies_recovered"`
	// Leader is the meta leader every renamed server's /jsz named ("" when
	// one of them named none).
	Leader string `json:"leader"`
	// RaftzAcc is each renamed server's /raftz?acc=APP answer verbatim.
	RaftzAcc map[string]string `json:"raftz_acc"`
	// Leaders is what each renamed server's /jsz named.
	Leaders map[string]string `json:"leaders"`
}

// RenameRemedy is one remedy tried on a copy of the bundle's state.
type RenameRemedy struct {
	Name  string   `json:"name"`
	Steps []string `json:"steps"`
	// Answers are the API answers verbatim (server replies to requests).
	Answers []string `json:"answers,omitempty"`
	// MetaLeader and the meta group's size/quorum at the end, from /raftz.
	MetaLeader  string   `json:"meta_leader"`
	ClusterSize int      `json:"cluster_size"`
	Quorum      int      `json:"quorum"`
	MetaPeers   []string `json:"meta_peers"`
	// Sizes the meta group went through (raftz size/quorum), in order.
	SizeSteps []string `json:"size_steps,omitempty"`
	// Streams at the end, "<acc> > <name>" -> "msgs=N leader=L" from /jsz
	// of the meta leader's view (or any server).
	Streams map[string]string `json:"streams"`
	// Recovered: a meta leader exists and the meta group is back to the
	// cluster's own size (3) with only live peers.
	Recovered bool   `json:"recovered"`
	DataBack  bool   `json:"data_back"`
	Error     string `json:"error,omitempty"`
}

func rename(ctx context.Context, env *Env, version string) error {
	oldNames := []string{"nats-0", "nats-1", "nats-2"}
	newNames := []string{"js-0", "js-1", "js-2"}
	x := RenameExpect{OldNames: oldNames, NewNames: newNames, Renamed: map[string]string{}, OldIDs: map[string]string{},
		NewIDs: map[string]string{}, Streams: map[string]int{}, MessagesBefore: map[string]map[string]uint64{},
		FoldersBefore: map[string][]string{}, FoldersAfter: map[string][]string{}, RemovedStreams: map[string][]string{},
		MetaAfterRename: map[string]MetaView{}, TermsFirst: map[string]uint64{}, TermsLast: map[string]uint64{},
		JSZUnknownPeers: map[string][]string{}, Health: map[string]string{}, LogLines: map[string][]string{}, Leaders: map[string]string{},
		RaftzAcc: map[string]string{}}
	for i := range oldNames {
		x.Renamed[oldNames[i]] = newNames[i]
		x.OldIDs[oldNames[i]], x.NewIDs[newNames[i]] = nodeID(oldNames[i]), nodeID(newNames[i])
	}
	c, err := NewCluster(ctx, env.Scratch, version, "nats", oldNames)
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	for _, s := range c.Servers {
		s.Debug = true
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := renameWorkload(ctx, c); err != nil {
		return err
	}
	before, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		var j jszInfo
		if err := jsonUnmarshal(before[s.Name].Files["jsz"], &j); err != nil {
			return err
		}
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				k := a.Name + " > " + st.Name
				if st.Config != nil {
					x.Streams[k] = st.Config.Replicas
				}
				if x.MessagesBefore[k] == nil {
					x.MessagesBefore[k] = map[string]uint64{}
				}
				x.MessagesBefore[k][s.Name] = st.State.Msgs
			}
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		if x.FoldersBefore[s.Name], err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
	}

	// The rename: same dirs, ports, log files; new server_name.
	for i, s := range c.Servers {
		s.Name = newNames[i]
	}
	logStart := map[string]int64{}
	for _, s := range c.Servers {
		if st, err := os.Stat(s.LogFile); err == nil {
			logStart[s.Name] = st.Size()
		}
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	for _, s := range c.Servers {
		x.TermsFirst[s.Name] = metaView(ctx, s).RaftzTerm
	}
	time.Sleep(25 * time.Second)
	for _, s := range c.Servers {
		v := metaView(ctx, s)
		x.MetaAfterRename[s.Name], x.TermsLast[s.Name] = v, v.RaftzTerm
	}
	caps, err := CaptureAll(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		// No stream is left to make captureServer ask for the account's
		// groups; an empty answer ({}) is kept in expect only (no bundle
		// reader can tell an empty object for a capture).
		if b, err := s.Get(ctx, "/raftz?acc="+renameAccount); err == nil {
			x.RaftzAcc[s.Name] = strings.TrimSpace(string(b))
			if x.RaftzAcc[s.Name] != "{}" {
				caps[s.Name].Files["raftz-acc-"+renameAccount] = b
			}
		}
		var j jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &j); err != nil {
			return err
		}
		x.JSZUnknownPeers[s.Name] = []string{}
		if j.Meta != nil {
			x.Leaders[s.Name] = j.Meta.Leader
		}
		if j.Meta != nil {
			for _, r := range j.Meta.Replicas {
				if strings.Contains(r.Name, "unknown") {
					x.JSZUnknownPeers[s.Name] = append(x.JSZUnknownPeers[s.Name], r.Name)
				}
			}
		}
		if x.Health[s.Name], err = healthStatus(caps[s.Name]); err != nil {
			return err
		}
	}
	x.Leader = x.Leaders[newNames[0]]
	for _, n := range newNames {
		if x.Leaders[n] != x.Leader {
			x.Leader = ""
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	removedRE := regexp.MustCompile(`JetStream removing stream '([^']*)' from this server`)
	for _, s := range c.Servers {
		if x.FoldersAfter[s.Name], err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
		data, err := os.ReadFile(s.LogFile)
		if err != nil {
			return err
		}
		x.LogLines[s.Name] = []string{}
		x.RemovedStreams[s.Name] = []string{}
		for _, line := range splitLines(data[logStart[s.Name]:]) {
			if renameLogRE.MatchString(line) && !strings.Contains(line, "[TRC]") {
				x.LogLines[s.Name] = append(x.LogLines[s.Name], line)
			}
			if m := removedRE.FindStringSubmatch(line); m != nil {
				x.RemovedStreams[s.Name] = append(x.RemovedStreams[s.Name], m[1])
			}
		}
		sort.Strings(x.RemovedStreams[s.Name])
	}
	state := map[string]string{}
	for _, s := range c.Servers {
		state[s.Name] = s.JSRoot()
	}

	for _, r := range []func(context.Context, *Env, string, []string, []string, map[string]string) RenameRemedy{
		renameRevert, renameRescue, renameOldBeside,
	} {
		rem := r(ctx, env, version, oldNames, newNames, state)
		killAll() // a failed attempt may leave servers behind
		logf("remedy %s: recovered=%v data_back=%v %s", rem.Name, rem.Recovered, rem.DataBack, rem.Error)
		x.Remedies = append(x.Remedies, rem)
		if rem.Recovered {
			x.RemediesRecovered = append(x.RemediesRecovered, rem.Name)
		}
	}
	if len(x.RemediesRecovered) == 0 {
		return fmt.Errorf("no remedy brought the renamed cluster back: %+v", x.Remedies)
	}
	b := &Bundle{Name: "rename-" + version, Version: strings.TrimPrefix(version, "v"), Layout: LayoutPerServer(),
		Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// renameWorkload: ORDERS R3 (20 messages) with durable R3 consumer PROC, and
// EVENTS R1 (10 messages); small payloads.
func renameWorkload(ctx context.Context, c *Cluster) error {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, sc := range []struct {
		name     string
		replicas int
		n        int
	}{{"ORDERS", 3, 20}, {"EVENTS", 1, 10}} {
		var st jetstream.Stream
		if err := retry(ctx, "create "+sc.name, func(ctx context.Context) error {
			st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: sc.name,
				Subjects: []string{strings.ToLower(sc.name) + ".>"}, Replicas: sc.replicas})
			return err
		}); err != nil {
			return err
		}
		for i := 0; i < sc.n; i++ {
			if _, err := publish(ctx, js, strings.ToLower(sc.name)+".x", payload(sc.name, i, 48), nil); err != nil {
				return err
			}
		}
		if sc.name == "ORDERS" {
			if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "PROC", AckPolicy: jetstream.AckExplicitPolicy}, 5, 3); err != nil {
				return err
			}
		}
	}
	return nil
}

// remedyCluster prepares servers of the given names whose stores are copies
// of state[name] (names absent from state start on empty disks).
func remedyCluster(ctx context.Context, env *Env, dir, version string, names []string, state map[string]string) (*Cluster, error) {
	return remedyClusterIn(ctx, env, dir, version, "nats", names, state)
}

// remedyClusterIn is remedyCluster for a cluster of another name.
func remedyClusterIn(ctx context.Context, env *Env, dir, version, cluster string, names []string, state map[string]string) (*Cluster, error) {
	c, err := NewCluster(ctx, filepath.Join(env.Scratch, dir), version, cluster, names)
	if err != nil {
		return nil, err
	}
	c.UseSysAndAppAccounts()
	for _, s := range c.Servers {
		s.Debug = true
		if src := state[s.Name]; src != "" {
			if err := copyTree(src, s.JSRoot()); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// finishRemedy fills the end state of a remedy from the running servers.
func finishRemedy(ctx context.Context, c *Cluster, r *RenameRemedy, want int) {
	r.Streams = map[string]string{}
	for _, s := range c.Running() {
		v := metaView(ctx, s)
		if v.RaftzLeaderID == "" {
			continue
		}
		r.MetaLeader, r.ClusterSize, r.Quorum, r.MetaPeers = v.JSZLeader, v.RaftzSize, v.RaftzQuorum, v.RaftzPeers
		var j jszInfo
		if s.GetJSON(ctx, jszCapturePath, &j) == nil {
			for _, a := range j.Accounts {
				for _, st := range a.Streams {
					leader := ""
					if st.Cluster != nil {
						leader = st.Cluster.Leader
					}
					r.Streams[a.Name+" > "+st.Name] = fmt.Sprintf("msgs=%d leader=%s", st.State.Msgs, leader)
					if st.State.Msgs > 0 {
						r.DataBack = true
					}
				}
			}
		}
		break
	}
	r.Recovered = r.MetaLeader != "" && r.ClusterSize == want
}

// renameRevert: start the stores under their old names again.
func renameRevert(ctx context.Context, env *Env, version string, oldNames, newNames []string, state map[string]string) RenameRemedy {
	r := RenameRemedy{Name: "revert-names", Steps: []string{"stop the renamed servers", "start them with their old server_name on the same stores"}}
	byOld := map[string]string{}
	for i := range oldNames {
		byOld[oldNames[i]] = state[newNames[i]]
	}
	c, err := remedyCluster(ctx, env, "remedy-revert", version, oldNames, byOld)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		r.Error = err.Error()
	}
	time.Sleep(10 * time.Second) // let the stream groups elect if they can
	finishRemedy(ctx, c, &r, len(oldNames))
	_ = c.Stop()
	return r
}

// renameRescue: $JS.API.META.RESCUE on the renamed servers.
func renameRescue(ctx context.Context, env *Env, version string, _, newNames []string, state map[string]string) RenameRemedy {
	req := `{"quorum_needed":1}`
	r := RenameRemedy{Name: "meta-rescue", Steps: []string{"start the renamed servers", "nats request '$JS.API.META.RESCUE' '" + req + "' as the system account"}}
	c, err := remedyCluster(ctx, env, "remedy-rescue", version, newNames, state)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer c.Kill()
	for _, s := range c.Servers {
		if err := s.Start(ctx); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	time.Sleep(5 * time.Second)
	nc, err := sysConn(c.Servers[0])
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer nc.Close()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err == nil {
		err = nc.PublishRequest("$JS.API.META.RESCUE", inbox, []byte(req))
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	for {
		m, err := sub.NextMsg(3 * time.Second)
		if err != nil {
			break
		}
		if len(m.Data) == 0 && m.Header.Get("Status") != "" {
			// Before 2.15 nothing subscribes to the subject.
			r.Answers = append(r.Answers, "status "+m.Header.Get("Status")+" "+m.Header.Get("Description"))
			continue
		}
		r.Answers = append(r.Answers, string(m.Data))
	}
	sort.Strings(r.Answers)
	time.Sleep(10 * time.Second)
	finishRemedy(ctx, c, &r, len(newNames))
	_ = c.Stop()
	return r
}

// renameOldBeside: start servers under the old names on empty disks beside
// the renamed ones, then stop and peer-remove them one at a time.
func renameOldBeside(ctx context.Context, env *Env, version string, oldNames, newNames []string, state map[string]string) RenameRemedy {
	r := RenameRemedy{Name: "old-names-beside", Steps: []string{"start the renamed servers",
		"start servers with the old server_names on empty stores beside them, same cluster"}}
	c, err := remedyCluster(ctx, env, "remedy-beside", version, append(append([]string{}, newNames...), oldNames...), state)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		r.Error = err.Error()
		return r
	}
	r.SizeSteps = append(r.SizeSteps, metaSize(ctx, c.Server(newNames[0])))
	nc, err := sysConn(c.Servers[0])
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer nc.Close()
	for i, old := range oldNames {
		s := c.Server(old)
		if err := s.Stop(); err != nil {
			r.Error = err.Error()
			return r
		}
		step, answer, err := removePeerAndWait(ctx, nc, c.Server(newNames[0]), nodeID(old), len(newNames)+len(oldNames)-i-1)
		r.Steps = append(r.Steps, "stop "+old, step)
		if answer == "" {
			r.Error = err.Error()
			return r
		}
		r.Answers, r.SizeSteps = append(r.Answers, answer), append(r.SizeSteps, metaSize(ctx, c.Server(newNames[0])))
		if err != nil {
			r.Error = err.Error()
		}
	}
	time.Sleep(5 * time.Second)
	finishRemedy(ctx, c, &r, len(newNames))
	_ = c.Stop()
	return r
}

// waitAnyMetaLeader waits until a running member names a meta leader
// (WaitMetaLeader also wants every peer current, which departed peers never are).
func waitAnyMetaLeader(ctx context.Context, c *Cluster, timeout time.Duration) error {
	return waitFor(ctx, timeout, c.Name+" any meta leader", func() (bool, error) { return c.MetaLeader(ctx) != "", nil })
}

// metaSize is s's meta group as "size/quorum leader=L" (/raftz, /jsz).
func metaSize(ctx context.Context, s *Server) string {
	v := metaView(ctx, s)
	return fmt.Sprintf("%d/%d leader=%s", v.RaftzSize, v.RaftzQuorum, v.JSZLeader)
}

// removePeerAndWait sends $JS.API.SERVER.REMOVE {"peer_id":id} on nc (the
// system account) and waits up to 30 s until observer's meta group has size
// want and a leader. It returns the request as a natscli line and the
// answer verbatim ("" when the request itself failed); err is the request's
// or the wait's error.
func removePeerAndWait(ctx context.Context, nc *nats.Conn, observer *Server, id string, want int) (step, answer string, err error) {
	req := fmt.Sprintf(`{"peer_id":%q}`, id)
	step = "nats request '$JS.API.SERVER.REMOVE' '" + req + "' as the system account"
	var raw json.RawMessage
	if err := apiRequest(ctx, nc, "$JS.API.SERVER.REMOVE", json.RawMessage(req), &raw); err != nil {
		return step, "", err
	}
	return step, string(raw), waitFor(ctx, 30*time.Second, fmt.Sprintf("meta size %d", want), func() (bool, error) {
		v := metaView(ctx, observer)
		return v.RaftzSize == want && v.RaftzLeaderID != "", nil
	})
}

// healthStatus is a captured /healthz as "status error".
func healthStatus(c *Capture) (string, error) {
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := jsonUnmarshal(c.Files["healthz"], &h); err != nil {
		return "", err
	}
	return strings.TrimSpace(h.Status + " " + h.Error), nil
}

// sysConn connects to s as the system account's user (sysAndAppAccounts).
func sysConn(s *Server) (*nats.Conn, error) {
	return nats.Connect(fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", s.ClientPort), nats.Timeout(5*time.Second))
}
