package main

// Issue 21 item 9: streams deleted on purpose, after the meta layer has
// compacted the delete away. Three servers create streams, are restarted
// (so every log names each stream in a "Restored N messages" line), two
// streams are deleted through the JetStream API, the cluster runs past the
// meta layer's one-minute compaction tick (jetstream_cluster.go
// monitorCluster: compactInterval) and is stopped gracefully (a meta
// snapshot at shutdown too). The bundle is that state: the logs name the
// deleted streams, no store holds them and no meta WAL keeps the
// removeStream ops. A copy restarted on it serves the kept stream only.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func deletedScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.12.15", "v2.15.3"} {
		out = append(out, Scenario{Name: "deleted-" + v,
			Doc:     "issue 21: 3 x " + v + ": streams restored at a restart, two deleted through the API, the meta layer compacted; expect = what a restarted copy serves",
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return deletedStreams(ctx, env, v) }})
	}
	return out
}

// DeletedExpect is want.json's expect for deleted-<version>.
type DeletedExpect struct {
	Account string `json:"account"`
	// Created: stream -> replicas; Deleted the streams deleted through
	// $JS.API.STREAM.DELETE (with their consumers), in order, with the time
	// each delete was answered; Kept the others.
	Created   map[string]int `json:"created"`
	Deleted   []string       `json:"deleted"`
	DeletedAt []string       `json:"deleted_at"`
	Kept      []string       `json:"kept"`
	// WaitedSeconds: how long the cluster ran after the last delete before
	// the captures (past the meta compaction tick of one minute).
	WaitedSeconds int `json:"waited_seconds"`
	// RestoredLines: per server, its log lines naming a deleted stream.
	RestoredLines map[string][]string `json:"restored_lines"`
	// MetaFiles: per server, the files of $SYS/_js_/_meta_ ("path size")
	// after the graceful stop (the bundled state).
	MetaFiles map[string][]string `json:"meta_files"`
	// Folders: per server, the stream folders of the account after the stop.
	Folders map[string][]string `json:"folders"`
	// ServedAfter: the streams a copy restarted on the bundled stores
	// served (verifyOnCopy checked them against the captures).
	ServedAfter []string `json:"served_after"`
}

func deletedStreams(ctx context.Context, env *Env, version string) error {
	name := "deleted-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "del", []string{"del-0", "del-1", "del-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	x := DeletedExpect{Account: "$G", Created: map[string]int{}, RestoredLines: map[string][]string{},
		MetaFiles: map[string][]string{}, Folders: map[string][]string{}}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	streams := []struct {
		name     string
		replicas int
		msgs     int
		deleted  bool
	}{{"KEEP", 3, 10, false}, {"GONE_R3", 3, 10, true}, {"GONE_R1", 1, 5, true}}
	for _, s := range streams {
		st, err := createFilled(ctx, js, jetstream.StreamConfig{Name: s.name, Subjects: []string{s.name + ".>"}, Replicas: s.replicas, Storage: jetstream.FileStorage}, s.msgs, 64)
		if err != nil {
			return err
		}
		x.Created[s.name] = s.replicas
		if s.name == "GONE_R3" {
			if err := consume(ctx, st, jetstream.ConsumerConfig{Durable: "GC", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 4, 2); err != nil {
				return err
			}
		}
	}
	nc.Close()
	// A restart, so that every log names every stream it holds.
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
	nc, js, err = connect(c.Servers...)
	if err != nil {
		return err
	}
	for _, s := range streams {
		if !s.deleted {
			x.Kept = append(x.Kept, s.name)
			continue
		}
		if err := waitAssetLeader(ctx, js, s.name, ""); err != nil {
			return err
		}
		sn := s.name
		if err := deleteOnce(ctx, "delete stream "+sn, func(ctx context.Context) error { return js.DeleteStream(ctx, sn) }, jetstream.ErrStreamNotFound); err != nil {
			return err
		}
		x.Deleted = append(x.Deleted, sn)
		x.DeletedAt = append(x.DeletedAt, time.Now().UTC().Format(time.RFC3339Nano))
	}
	nc.Close()
	// Past the meta layer's compaction tick (one minute on 2.12 and 2.15).
	const wait = 70 * time.Second
	if err := pause(ctx, wait); err != nil {
		return err
	}
	x.WaitedSeconds = int(wait / time.Second)
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	var named []string
	for _, d := range x.Deleted {
		named = append(named, regexp.QuoteMeta("'"+x.Account+" > "+d+"'"))
	}
	re := regexp.MustCompile(strings.Join(named, "|"))
	for _, s := range c.Servers {
		lines, err := logLinesSince(s.LogFile, 0, re)
		if err != nil {
			return err
		}
		x.RestoredLines[s.Name] = lines
		if x.MetaFiles[s.Name], err = listFiles(filepath.Join(s.JSRoot(), "$SYS", "_js_", "_meta_")); err != nil {
			return err
		}
		x.Folders[s.Name], _ = dirNames(filepath.Join(s.JSRoot(), x.Account, "streams"))
		for _, d := range x.Deleted {
			if _, err := os.Stat(filepath.Join(s.JSRoot(), x.Account, "streams", d)); err == nil {
				return fmt.Errorf("%s still has the folder of deleted stream %s", s.Name, d)
			}
		}
	}
	if err := verifyOnCopy(ctx, env, c, caps); err != nil {
		return err
	}
	served := map[string]bool{}
	for _, s := range c.Servers {
		var j jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &j); err != nil {
			return err
		}
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				served[st.Name] = true
			}
		}
	}
	for n := range served {
		x.ServedAfter = append(x.ServedAfter, n)
	}
	sort.Strings(x.ServedAfter)
	for _, d := range x.Deleted {
		if served[d] {
			return fmt.Errorf("deleted stream %s is still served", d)
		}
	}
	logf("%s: deleted %v, served after %v", name, x.Deleted, x.ServedAfter)
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}
