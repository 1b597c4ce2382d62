package main

// A server that joins late writes _meta_/tav.idx at a term below its WAL's
// (issue 21 case 3). Two servers start, elect a meta leader and create
// streams; the third starts on an empty store: bootstrapping, it campaigns
// early (jetstream_cluster.go setupMetaGroup: n.Campaign()), votes for itself
// at term 1, then hears the leader, whose log is ahead. processAppendEntry
// (raft.go) takes the candidate to the leader's term and queues a stepdown,
// then "AppendEntry did not match" resets n.term to n.pterm (0, an empty
// log) and starts a catch-up; the stepdown's switchState writes tav.idx with
// term 0 and the vote for itself, and the catch-up entries (term 1) come on
// the catch-up subscription, which does not rewrite it. Whether the
// campaign fires before the first heartbeat is a race: the late server is
// started again on an empty store until its tav.idx holds a term below the
// meta group's (attempts bounded). v2.10.27 no longer resets n.term there
// (seen: ten starts, tav.idx at term 1 each time), so only v2.10.22 is made.

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func tavLagScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.10.22"} {
		out = append(out, tavLagScenario(v))
	}
	return out
}

func tavLagScenario(v string) Scenario {
	return Scenario{Name: "tavlag-" + v,
		Doc:     "3 x " + v + ": t3 joins late on an empty store, campaigns and catches up: its _meta_/tav.idx holds term 0 and its own vote under a term-1 WAL",
		Timeout: 9 * time.Minute,
		Run:     func(ctx context.Context, env *Env) error { return tavLag(ctx, env, "tavlag-"+v, v) }}
}

// TavLagExpect is want.json's expect for tavlag-<version>.
type TavLagExpect struct {
	Late     string `json:"late"`     // the server that joined late
	Attempts int    `json:"attempts"` // starts of the late server until its tav.idx lagged
	// TermVote per server: _meta_/tav.idx as the stopped server left it.
	TermVote map[string]TavFile `json:"term_vote"`
	// MetaTerm per server: the _meta_ term its /raftz reported at capture.
	MetaTerm map[string]uint64 `json:"meta_term"`
	// LateLog: the late server's raft lines of its last start.
	LateLog []string `json:"late_log"`
}

// TavFile is a tav.idx read as raft.go writeTermVote writes it: LE u64
// term, then the vote (a peer id, or nothing).
type TavFile struct {
	Term     uint64 `json:"term"`
	Vote     string `json:"vote"`
	VoteName string `json:"vote_name,omitempty"`
	Size     int    `json:"size"`
}

func readTav(p string) (TavFile, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return TavFile{}, err
	}
	if len(b) < 8 {
		return TavFile{Size: len(b)}, fmt.Errorf("%s: %d bytes", p, len(b))
	}
	return TavFile{Term: binary.LittleEndian.Uint64(b), Vote: string(b[8:]), Size: len(b)}, nil
}

func tavLag(ctx context.Context, env *Env, name, v string) error {
	const attempts = 10
	for i := 1; ; i++ {
		c, caps, x, err := tavLagAttempt(ctx, filepath.Join(env.Scratch, fmt.Sprint("attempt", i)), name, v)
		if err == nil {
			x.Attempts = i
			// The oracle: the three restarted on a copy run with it and
			// serve what was captured.
			if err := verifyOnCopy(ctx, env, c, caps); err != nil {
				return err
			}
			b := &Bundle{Name: name, Version: strings.TrimPrefix(v, "v"), Layout: LayoutFlat(), Servers: c.Servers, Captures: caps, Expect: x}
			return b.Write(env.Scratch, env.Out)
		}
		if c != nil {
			c.Kill()
		}
		if i == attempts || ctx.Err() != nil {
			return fmt.Errorf("%s: %d attempts, the last: %w", name, i, err)
		}
		logf("%s attempt %d: %v; again", name, i, err)
	}
}

// tavLagAttempt runs the cluster once; an error also when t3's tav.idx
// does not lag (the race went the other way).
func tavLagAttempt(ctx context.Context, dir, name, v string) (*Cluster, map[string]*Capture, *TavLagExpect, error) {
	c, err := NewCluster(ctx, dir, v, "lag", []string{"t1", "t2", "t3"})
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*Cluster, map[string]*Capture, *TavLagExpect, error) { return c, nil, nil, err }
	late := c.Server("t3")
	for _, s := range c.Servers {
		s.Debug = true
	}
	early := &Cluster{Name: c.Name, Version: v, Servers: c.Servers[:2]}
	if err := early.StartAll(ctx); err != nil {
		return fail(err)
	}
	if err := waitFor(ctx, 60*time.Second, "meta leader of t1,t2", func() (bool, error) {
		return early.MetaLeader(ctx) != "", nil
	}); err != nil {
		return fail(err)
	}
	nc, js, err := connectWait(ctx, early.Servers...)
	if err != nil {
		return fail(err)
	}
	for _, sn := range []string{"A", "B", "C"} {
		if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: sn, Subjects: []string{sn + ".>"}, Replicas: 1}, 3, 40); err != nil {
			nc.Close()
			return fail(err)
		}
	}
	nc.Close()
	if err := late.Start(ctx); err != nil {
		return fail(err)
	}
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return fail(err)
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return fail(err)
	}
	if err := c.Stop(); err != nil {
		return fail(err)
	}
	x := &TavLagExpect{Late: late.Name, TermVote: map[string]TavFile{}, MetaTerm: map[string]uint64{}}
	ids := map[string]string{}
	for _, s := range c.Servers {
		ids[nodeID(s.Name)] = s.Name
	}
	for _, s := range c.Servers {
		t, err := readTav(filepath.Join(metaDir(s.JSRoot()), "tav.idx"))
		if err != nil {
			return fail(err)
		}
		t.VoteName = ids[t.Vote]
		x.TermVote[s.Name] = t
		var rz raftzStatus
		if err := jsonUnmarshal(caps[s.Name].Files["raftz"], &rz); err == nil {
			for _, gs := range rz {
				if g, ok := gs["_meta_"]; ok {
					x.MetaTerm[s.Name] = g.Term
				}
			}
		}
	}
	lt := x.TermVote[late.Name]
	logf("%s: t3 tav.idx term %d vote %q (%s), _meta_ term %d", name, lt.Term, lt.Vote, lt.VoteName, x.MetaTerm[late.Name])
	if lt.Term >= x.MetaTerm[late.Name] || lt.Vote == "" {
		return fail(fmt.Errorf("t3's tav.idx holds term %d vote %q, meta term %d", lt.Term, lt.Vote, x.MetaTerm[late.Name]))
	}
	if b, err := os.ReadFile(late.LogFile); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "_meta_") && (strings.Contains(l, "ampaign") || strings.Contains(l, "andidate") || strings.Contains(l, "did not match") || strings.Contains(l, "ollower") || strings.Contains(l, "atchup") || strings.Contains(l, "vote")) {
				x.LateLog = append(x.LateLog, l)
			}
		}
	}
	return c, caps, x, nil
}
