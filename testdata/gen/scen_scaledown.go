package main

// Issue 12 item 2: a 5-server cluster scaled down to 3 without peer-remove
// (a StatefulSet scale-down). The two departed servers stay in the meta
// group and in the stream groups they hosted; a stream whose replicas were
// on both of them keeps one live peer of three and stalls. The bundle is
// the three survivors (captured) and the departed servers' stores and logs
// (a StatefulSet keeps its volumes); expect records what the live servers
// said and what $JS.API.SERVER.REMOVE of the departed servers did on a copy.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func scaledownScenarios() []Scenario {
	return []Scenario{
		{Name: "scaledown-v2.12.1",
			Doc:     "issue 12: 5 x v2.12.1 scaled to 3 without peer-remove; a stream on two departed servers stalls; expect = what SERVER.REMOVE did on a copy",
			Timeout: 9 * time.Minute,
			Run:     scaledown},
	}
}

// ScaledownExpect is want.json's expect for scaledown-v2.12.1.
type ScaledownExpect struct {
	Departed  []string          `json:"departed"`
	Survivors []string          `json:"survivors"`
	IDs       map[string]string `json:"ids"` // name -> getHash
	// Stream placement before the scale-down (STREAM.INFO: leader first).
	Placement map[string][]string `json:"placement"`
	// StalledStream has a single surviving replica of three.
	StalledStream string `json:"stalled_stream"`
	// PublishAfter: what a publish to each stream answered after the
	// scale-down ("seq N" or the client error).
	PublishAfter map[string]string   `json:"publish_after"`
	MetaAfter    map[string]MetaView `json:"meta_after"`
	Health       map[string]string   `json:"health"`
	LogLines     map[string][]string `json:"log_lines"`
	// Remedy: the peer-removes tried on a copy of the survivors, in order.
	Remedy ScaledownRemedy `json:"remedy"`
}

// ScaledownRemedy is the peer-remove sequence tried on a copy.
type ScaledownRemedy struct {
	Steps     []string `json:"steps"`
	Answers   []string `json:"answers"`
	SizeSteps []string `json:"size_steps"`
	// Streams at the end: "<acc> > <name>" -> "msgs=N leader=L peers=…".
	Streams map[string]string `json:"streams"`
	// PublishAfter: what a publish to each stream answered after the remedy.
	PublishAfter map[string]string `json:"publish_after"`
	Recovered    bool              `json:"recovered"`
	Error        string            `json:"error,omitempty"`
}

var scaledownLogRE = regexp.MustCompile(`NO quorum|metadata leader|Removing peer|removed|peer-remove|stalled|lost quorum`)

// scaledownStreams: STUCK is created while n1 and n2 are down (so it lands
// on n3, n4, n5, two of which depart), KEEP while n4 and n5 are down (all
// its replicas survive), MIXED with everyone up.
var scaledownStreams = []struct {
	name string
	down []int // indexes stopped while the stream is created
}{{"STUCK", []int{0, 1}}, {"KEEP", []int{3, 4}}, {"MIXED", nil}}

func scaledown(ctx context.Context, env *Env) error { return scaledownOn(ctx, env, "v2.12.1") }

// scaledownOn is scaledown on nats-server version (a family, see main.go).
func scaledownOn(ctx context.Context, env *Env, version string) error {
	names := []string{"n1", "n2", "n3", "n4", "n5"}
	c, err := NewCluster(ctx, env.Scratch, version, "scale", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := ensureMetaPeers(ctx, c); err != nil {
		return err
	}
	x := ScaledownExpect{Departed: []string{"n4", "n5"}, Survivors: []string{"n1", "n2", "n3"}, IDs: map[string]string{},
		Placement: map[string][]string{}, StalledStream: renameAccount + " > STUCK", PublishAfter: map[string]string{},
		MetaAfter: map[string]MetaView{}, Health: map[string]string{}, LogLines: map[string][]string{}}
	for _, n := range names {
		x.IDs[n] = nodeID(n)
	}
	for _, sc := range scaledownStreams {
		for _, i := range sc.down {
			if err := c.Servers[i].Stop(); err != nil {
				return err
			}
		}
		if err := waitAnyMetaLeader(ctx, c, 60*time.Second); err != nil {
			return err
		}
		if err := createAndFill(ctx, c, sc.name, 3, 10); err != nil {
			return err
		}
		for _, i := range sc.down {
			if err := c.Servers[i].Start(ctx); err != nil {
				return err
			}
		}
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := retry(ctx, "consumer", func(ctx context.Context) error {
		st, err := js.Stream(ctx, "STUCK")
		if err != nil {
			return err
		}
		return consume(ctx, st, jetstream.ConsumerConfig{Durable: "WORK", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 4, 2)
	}); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	for _, sc := range scaledownStreams {
		info, err := js.Stream(ctx, sc.name)
		if err != nil {
			return err
		}
		ci := info.CachedInfo().Cluster
		x.Placement[sc.name] = []string{ci.Leader}
		for _, p := range ci.Replicas {
			x.Placement[sc.name] = append(x.Placement[sc.name], p.Name)
		}
	}
	stuck := x.Placement["STUCK"]
	sort.Strings(stuck[1:])
	if got := strings.Join(append([]string{}, stuck...), ","); !strings.Contains(got, "n4") || !strings.Contains(got, "n5") {
		return fmt.Errorf("STUCK placed on %s, want n4 and n5 among its replicas", got)
	}
	// Let the surviving replica lead STUCK, so the loss of quorum is its to log.
	var sd json.RawMessage
	_ = apiRequest(ctx, nc, "$JS.API.STREAM.LEADER.STEPDOWN.STUCK", json.RawMessage(`{"placement":{"preferred":"n3"}}`), &sd)
	time.Sleep(3 * time.Second)
	nc.Close()

	// The scale-down: the two highest ordinals go, gracefully.
	logStart := map[string]int64{}
	for _, n := range x.Survivors {
		if st, err := os.Stat(c.Server(n).LogFile); err == nil {
			logStart[n] = st.Size()
		}
	}
	for _, n := range x.Departed {
		if err := c.Server(n).Stop(); err != nil {
			return err
		}
	}
	time.Sleep(25 * time.Second)
	live := []*Server{c.Server("n1"), c.Server("n2"), c.Server("n3")}
	x.PublishAfter = publishEach(ctx, live)
	time.Sleep(12 * time.Second) // the lost-quorum warning is throttled to one per 10 s
	caps, err := CaptureAll(ctx, c)
	if err != nil {
		return err
	}
	// Log lines up to the capture: the final stop logs lost quorum too.
	logEnd := map[string]int64{}
	for _, s := range live {
		if st, err := os.Stat(s.LogFile); err == nil {
			logEnd[s.Name] = st.Size()
		}
	}
	for _, s := range live {
		x.MetaAfter[s.Name] = metaView(ctx, s)
		if x.Health[s.Name], err = healthStatus(caps[s.Name]); err != nil {
			return err
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range live {
		if x.LogLines[s.Name], err = logLinesBetween(s.LogFile, logStart[s.Name], logEnd[s.Name], scaledownLogRE); err != nil {
			return err
		}
	}
	x.Remedy = scaledownRemedy(ctx, env, live, x.Departed)
	killAll()
	if !x.Remedy.Recovered {
		return fmt.Errorf("peer-remove did not bring STUCK back: %+v", x.Remedy)
	}
	var departed []*Server
	for _, n := range x.Departed {
		departed = append(departed, c.Server(n))
	}
	b := &Bundle{Name: "scaledown-" + version, Version: version[1:], Layout: LayoutPerServer(), Servers: live,
		Stopped: departed, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// publishEach publishes one message to every scenario stream, once (no
// retry), and says what came back.
func publishEach(ctx context.Context, live []*Server) map[string]string {
	out := map[string]string{}
	nc, js, err := connect(live...)
	if err != nil {
		out["*"] = err.Error()
		return out
	}
	defer nc.Close()
	for _, sc := range scaledownStreams {
		cctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		ack, err := js.Publish(cctx, strings.ToLower(sc.name)+".after", []byte("after"))
		cancel()
		if err != nil {
			out[sc.name] = err.Error()
		} else {
			out[sc.name] = fmt.Sprintf("seq %d", ack.Sequence)
		}
	}
	return out
}

// scaledownRemedy restarts copies of the survivors and peer-removes the
// departed servers one at a time, each once the previous removal has
// shrunk the meta group (a removal while another is applied recomputes
// placements from a stale peer set: see membership-v2.12.1).
func scaledownRemedy(ctx context.Context, env *Env, live []*Server, departed []string) ScaledownRemedy {
	r := ScaledownRemedy{Streams: map[string]string{}}
	state := map[string]string{}
	var names []string
	for _, s := range live {
		state[s.Name] = s.JSRoot()
		names = append(names, s.Name)
	}
	c, err := remedyClusterIn(ctx, env, "remedy-remove", live[0].Version, "scale", names, state)
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
	if err := waitAnyMetaLeader(ctx, c, 60*time.Second); err != nil {
		r.Error = err.Error()
		return r
	}
	r.SizeSteps = append(r.SizeSteps, metaSize(ctx, c.Servers[0]))
	nc, err := sysConn(c.Servers[0])
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer nc.Close()
	for i, d := range departed {
		step, answer, err := removePeerAndWait(ctx, nc, c.Servers[0], nodeID(d), len(live)+len(departed)-i-1)
		r.Steps = append(r.Steps, step)
		if answer == "" {
			r.Error = err.Error()
			return r
		}
		r.Answers, r.SizeSteps = append(r.Answers, answer), append(r.SizeSteps, metaSize(ctx, c.Servers[0]))
		if err != nil {
			r.Error = err.Error()
		}
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		r.Error = err.Error()
	}
	r.PublishAfter = publishEach(ctx, c.Servers)
	var j jszInfo
	if err := c.Servers[0].GetJSON(ctx, jszCapturePath, &j); err == nil {
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				leader := ""
				if st.Cluster != nil {
					leader = st.Cluster.Leader
				}
				r.Streams[a.Name+" > "+st.Name] = fmt.Sprintf("msgs=%d leader=%s", st.State.Msgs, leader)
			}
		}
	}
	r.Recovered = strings.HasPrefix(r.PublishAfter["STUCK"], "seq ")
	_ = c.Stop()
	return r
}

// logLinesBetween returns the lines of the log file between byte offsets
// from and to (to past the end: the end) that re matches; never nil.
func logLinesBetween(file string, from, to int64, re *regexp.Regexp) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines := []string{}
	for _, line := range splitLines(data[min(from, int64(len(data))):min(to, int64(len(data)))]) {
		if re.MatchString(line) {
			lines = append(lines, line)
		}
	}
	return lines, nil
}
