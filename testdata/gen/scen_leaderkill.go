package main

// Phase 2a: SIGKILL of the meta leader in a debug-logging v2.15.2 cluster.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func leaderKillScenarios() []Scenario {
	return []Scenario{
		{Name: "v2.15.2-leader-kill-debug",
			Doc: "3 x v2.15.2 with debug logs; R3 stream; SIGKILL the meta leader, re-election, restart, rejoin; kubectl-style log copies",
			Run: leaderKillDebug},
	}
}

// LeaderKillExpect is what the servers reported at each step.
type LeaderKillExpect struct {
	MetaLeaderBefore   string `json:"meta_leader_before"`
	MetaTermBefore     uint64 `json:"meta_term_before"`
	StreamLeaderBefore string `json:"stream_leader_before"`
	Stream             string `json:"stream"`
	StreamGroup        string `json:"stream_group"`
	Killed             string `json:"killed"`
	KilledPeerID       string `json:"killed_peer_id"`
	KilledAt           string `json:"killed_at"` // RFC3339Nano, generator clock
	// After the kill, as the survivors reported it.
	MetaLeaderAfterKill   string `json:"meta_leader_after_kill"`
	MetaTermAfterKill     uint64 `json:"meta_term_after_kill"`
	StreamLeaderAfterKill string `json:"stream_leader_after_kill"`
	RestartedAt           string `json:"restarted_at"`
	// After the restart and rejoin (final captures).
	MetaLeaderFinal   string `json:"meta_leader_final"`
	MetaTermFinal     uint64 `json:"meta_term_final"`
	StreamLeaderFinal string `json:"stream_leader_final"`
	// Messages published while the killed server was down.
	PublishedWhileDown int `json:"published_while_down"`
	// kubectl-style copies of the killed server's log inside the bundle.
	KubectlTimestamps string `json:"kubectl_timestamps"`
	KubectlPrefix     string `json:"kubectl_prefix"`
}

func leaderKillDebug(ctx context.Context, env *Env) error {
	c, err := NewCluster(ctx, env.Scratch, "v2.15.2", "dbg", []string{"dbg-0", "dbg-1", "dbg-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		s.Debug = true
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	var st jetstream.Stream
	if err := retry(ctx, "create ORDERS", func(ctx context.Context) error {
		st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3})
		return err
	}); err != nil {
		return err
	}
	for i := 1; i <= 30; i++ {
		if _, err := publish(ctx, js, "orders.new", []byte(fmt.Sprintf(`{"order":%d}`, i)), nil); err != nil {
			return err
		}
	}
	if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "PROC", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 10, 8); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		return err
	}

	var x LeaderKillExpect
	x.Stream = "ORDERS"
	view := func() (metaLeader string, term uint64, streamLeader, group string, err error) {
		for _, s := range c.Running() {
			var j jszInfo
			if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
				return "", 0, "", "", err
			}
			rz, err := s.raftz(ctx, "")
			if err != nil {
				return "", 0, "", "", err
			}
			if j.Meta == nil || j.Meta.Leader == "" {
				continue
			}
			metaLeader = j.Meta.Leader
			for _, groups := range rz {
				if g, ok := groups["_meta_"]; ok {
					term = g.Term
				}
			}
			for _, a := range j.Accounts {
				for _, sd := range a.Streams {
					if sd.Name == "ORDERS" && sd.Cluster != nil {
						streamLeader, group = sd.Cluster.Leader, sd.RaftGroup
					}
				}
			}
			if streamLeader != "" {
				return metaLeader, term, streamLeader, group, nil
			}
		}
		return metaLeader, term, streamLeader, group, fmt.Errorf("no complete view (meta %q stream %q)", metaLeader, streamLeader)
	}
	if x.MetaLeaderBefore, x.MetaTermBefore, x.StreamLeaderBefore, x.StreamGroup, err = view(); err != nil {
		return err
	}
	victim := c.Server(x.MetaLeaderBefore)
	x.Killed, x.KilledPeerID = victim.Name, nodeID(victim.Name)
	logf("meta leader %s (term %d), ORDERS leader %s: SIGKILL %s", x.MetaLeaderBefore, x.MetaTermBefore, x.StreamLeaderBefore, victim.Name)
	x.KilledAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := victim.Kill(); err != nil {
		return err
	}
	// Wait until the survivors agree on a new meta leader (not the victim)
	// and, if the victim led ORDERS, on a new stream leader.
	if err := waitFor(ctx, 60*time.Second, "re-election", func() (bool, error) {
		ml, term, sl, _, err := view()
		if err != nil || ml == "" || ml == victim.Name || sl == "" || sl == victim.Name || term <= x.MetaTermBefore {
			return false, nil
		}
		x.MetaLeaderAfterKill, x.MetaTermAfterKill, x.StreamLeaderAfterKill = ml, term, sl
		return true, nil
	}); err != nil {
		return err
	}
	logf("new meta leader %s (term %d), ORDERS leader %s", x.MetaLeaderAfterKill, x.MetaTermAfterKill, x.StreamLeaderAfterKill)
	for i := 31; i <= 40; i++ {
		if _, err := publish(ctx, js, "orders.new", []byte(fmt.Sprintf(`{"order":%d}`, i)), nil); err != nil {
			return err
		}
		x.PublishedWhileDown++
	}
	time.Sleep(2 * time.Second)
	x.RestartedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := victim.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return err
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if x.MetaLeaderFinal, x.MetaTermFinal, x.StreamLeaderFinal, _, err = view(); err != nil {
		return err
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	if err := verifyOnCopy(ctx, env, c, caps); err != nil {
		return err
	}
	layout := LayoutFlat()
	log, err := os.ReadFile(victim.LogFile)
	if err != nil {
		return err
	}
	x.KubectlTimestamps = "kubectl/" + victim.Name + ".timestamps.log"
	x.KubectlPrefix = "kubectl/" + victim.Name + ".prefix.log"
	b := &Bundle{Name: "v2.15.2-leader-kill-debug", Version: "2.15.2", Layout: layout, Servers: c.Servers, Captures: caps,
		Expect: x, Extra: map[string][]byte{
			x.KubectlTimestamps: kubectlTimestamps(log),
			x.KubectlPrefix:     kubectlPodPrefix(log, victim.Name),
		}}
	return b.Write(env.Scratch, env.Out)
}

// kubectlTimestamps renders a log as `kubectl logs --timestamps` prints it:
// every line prefixed with an RFC3339Nano UTC timestamp and one space. The
// container runtime stamps lines when it reads them; here the stamp is the
// line's own `YYYY/MM/DD hh:mm:ss.uuuuuu` time (local zone of this machine)
// plus 137 µs, or the previous line's stamp for lines without one.
func kubectlTimestamps(log []byte) []byte {
	var b strings.Builder
	last := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, line := range splitLines(log) {
		if t, ok := logLineTime(line); ok {
			last = t.Add(137 * time.Microsecond)
		}
		b.WriteString(last.UTC().Format(time.RFC3339Nano))
		b.WriteByte(' ')
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// kubectlPodPrefix renders a log as `kubectl logs --prefix` prints it:
// `[pod/<name>/nats] ` before every line.
func kubectlPodPrefix(log []byte, pod string) []byte {
	var b strings.Builder
	for _, line := range splitLines(log) {
		fmt.Fprintf(&b, "[pod/%s/nats] %s\n", pod, line)
	}
	return []byte(b.String())
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// logLineTime parses the `[pid] 2026/11/30 01:24:44.919054 ` stamp.
func logLineTime(line string) (time.Time, bool) {
	i := strings.Index(line, "] ")
	if !strings.HasPrefix(line, "[") || i < 0 || len(line) < i+2+26 {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("2006/01/02 15:04:05.000000", line[i+2:i+2+26], time.Local)
	return t, err == nil
}
