package main

// Issue 17: a 5-server cluster loses three servers for good (stopped, their
// stores gone): the two survivors cannot elect a meta leader (2 of 5). The
// survivors hold two R1 streams (one each) and an R3 stream placed on both
// of them and one lost server (its group keeps a quorum of 2 of 3). The
// bundle is the two survivors (captured while the meta group has no
// leader); the lost servers leave nothing in it. The family exists for
// `go run . remedies`: on 2.15+ the analyzer prescribes meta-quorum-rescue
// (remedy_rescue.go), before 2.15 meta-quorum-temporary-servers.

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LostQuorumExpect is want.json's expect for lostquorum-<version>.
type LostQuorumExpect struct {
	Lost      []string          `json:"lost"`
	Survivors []string          `json:"survivors"`
	IDs       map[string]string `json:"ids"` // name -> getHash
	// Placement: STREAM.INFO before the loss, leader first.
	Placement map[string][]string `json:"placement"`
	Messages  map[string]uint64   `json:"messages"`
	MetaAfter map[string]MetaView `json:"meta_after"`
	Health    map[string]string   `json:"health"`
	LogLines  map[string][]string `json:"log_lines"`
}

var lostQuorumLogRE = regexp.MustCompile(`NO quorum|metadata leader|lost quorum|Lost quorum|No meta leader|JetStream cluster no metadata leader`)

// lostQuorumStreams: name, replicas, the placement tag (servers carry
// "node:<name>", and "keep" on n1, n2, n3).
var lostQuorumStreams = []struct {
	name     string
	replicas int
	tag      string
}{{"SOLO_1", 1, "node:n1"}, {"SOLO_2", 1, "node:n2"}, {"KEEP", 3, "keep"}}

func lostQuorumOn(ctx context.Context, env *Env, version string) error {
	names := []string{"n1", "n2", "n3", "n4", "n5"}
	c, err := NewCluster(ctx, env.Scratch, version, "lost", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	for _, s := range c.Servers {
		tags := fmt.Sprintf("%q", "node:"+s.Name)
		if s.Name <= "n3" {
			tags += `, "keep"`
		}
		s.Extra += "\nserver_tags: [" + tags + "]"
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	x := LostQuorumExpect{Lost: []string{"n3", "n4", "n5"}, Survivors: []string{"n1", "n2"}, IDs: map[string]string{},
		Placement: map[string][]string{}, Messages: map[string]uint64{}, MetaAfter: map[string]MetaView{},
		Health: map[string]string{}, LogLines: map[string][]string{}}
	for _, n := range names {
		x.IDs[n] = nodeID(n)
	}
	if err := waitAnyMetaLeader(ctx, c, 60*time.Second); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, sc := range lostQuorumStreams {
		st, err := createFilled(ctx, js, jetstream.StreamConfig{Name: sc.name, Subjects: []string{sc.name + ".>"}, Replicas: sc.replicas,
			Placement: &jetstream.Placement{Tags: []string{sc.tag}}}, 10+sc.replicas, 64)
		if err != nil {
			return err
		}
		if sc.replicas == 3 {
			if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "WORK", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 4, 2); err != nil {
				return err
			}
		}
	}
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	for _, sc := range lostQuorumStreams {
		st, err := js.Stream(ctx, sc.name)
		if err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		x.Messages[sc.name] = info.State.Msgs
		if ci := info.Cluster; ci != nil {
			x.Placement[sc.name] = []string{ci.Leader}
			for _, p := range ci.Replicas {
				x.Placement[sc.name] = append(x.Placement[sc.name], p.Name)
			}
		}
	}
	nc.Close()

	// The loss: n3, n4 and n5 stop and never come back.
	live := []*Server{c.Server("n1"), c.Server("n2")}
	logStart := map[string]int64{}
	for _, s := range live {
		if st, err := os.Stat(s.LogFile); err == nil {
			logStart[s.Name] = st.Size()
		}
	}
	lostAt := time.Now()
	for _, n := range x.Lost {
		if err := c.Server(n).Stop(); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, 60*time.Second, "no meta leader on the survivors", func() (bool, error) {
		for _, s := range live {
			if metaView(ctx, s).RaftzLeaderID != "" {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	// Captured 45 s after the loss at the earliest: the survivors' /raftz
	// then shows the lost peers last seen over 30 s ago (the analyzer counts
	// a peer seen within 30 s as alive: a capture 15 s after the loss, on
	// 2.15.2, had no quorum-unreachable), and the lost-quorum warning,
	// throttled to one per 10 s, is in the logs.
	if err := pause(ctx, time.Until(lostAt.Add(45*time.Second))); err != nil {
		return err
	}
	caps, err := CaptureAll(ctx, c)
	if err != nil {
		return err
	}
	logEnd := map[string]int64{}
	for _, s := range live {
		if st, err := os.Stat(s.LogFile); err == nil {
			logEnd[s.Name] = st.Size()
		}
		x.MetaAfter[s.Name] = metaView(ctx, s)
		if x.Health[s.Name], err = healthStatus(caps[s.Name]); err != nil {
			return err
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range live {
		if x.LogLines[s.Name], err = logLinesBetween(s.LogFile, logStart[s.Name], logEnd[s.Name], lostQuorumLogRE); err != nil {
			return err
		}
		if len(x.LogLines[s.Name]) > 12 {
			x.LogLines[s.Name] = x.LogLines[s.Name][:12]
		}
	}
	b := &Bundle{Name: "lostquorum-" + version, Version: version[1:], Layout: LayoutPerServer(), Servers: live,
		Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}
