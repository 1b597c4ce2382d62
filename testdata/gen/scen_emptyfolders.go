package main

// Issue 11: empty stream folders, as a restore stopped halfway leaves them.
// A healthy 3-server cluster is stopped; empty folders are made in the
// app account's streams/ of two servers (one of them named like a stream
// that server does not host); the cluster is started again on those stores.
// Expect records what the real server did with them: the folders its log
// warned of at that start, the folders still on disk after a graceful stop,
// and that the served streams are what they were before.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func emptyFoldersScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.15.2", "v2.12.1"} {
		name := "emptyfolders-" + v
		out = append(out, Scenario{Name: name,
			Doc: "issue 11: 3 x " + v + " restarted on stores with empty stream folders; expect = what the server logged and left",
			Run: func(ctx context.Context, env *Env) error { return emptyFolders(ctx, env, name, v) }})
	}
	return out
}

// EmptyFoldersExpect is want.json's expect for emptyfolders-*.
type EmptyFoldersExpect struct {
	Account string `json:"account"`
	// Made: server -> the empty stream folders made before the restart.
	Made map[string][]string `json:"made"`
	// Warned: server -> the stream folders its log warned of
	// ("Missing stream metafile") at the restart.
	Warned map[string][]string `json:"warned"`
	// WarnLines: the log lines themselves, one per warning.
	WarnLines map[string][]string `json:"warn_lines"`
	// LeftAfter: server -> the made folders still on disk, empty, after the
	// restart and a graceful stop.
	LeftAfter map[string][]string `json:"left_after"`
	// StreamsBefore and StreamsAfter: every server's /jsz stream and
	// consumer state before the folders were made and after the restart.
	StreamsBefore map[string]string `json:"streams_before"`
	StreamsAfter  map[string]string `json:"streams_after"`
}

// emptyFolderNames: server index -> folders to make. The second server also
// gets one named like the first R1 stream of HealthyWorkload it does not
// host (placement varies from run to run).
var emptyFolderNames = map[int][]string{0: {"RESTORE_A", "RESTORE_B"}, 1: {"RESTORE_C", "EVENTS|LOGS|TMP"}}

func emptyFolders(ctx context.Context, env *Env, name, version string) error {
	c, err := NewCluster(ctx, env.Scratch, version, "ef", []string{"ef1", "ef2", "ef3"})
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := HealthyWorkload(ctx, c); err != nil {
		return err
	}
	before, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	x := EmptyFoldersExpect{Account: "$G", Made: map[string][]string{}, Warned: map[string][]string{},
		WarnLines: map[string][]string{}, LeftAfter: map[string][]string{},
		StreamsBefore: map[string]string{}, StreamsAfter: map[string]string{}}
	logStart := map[string]int64{}
	for i, s := range c.Servers {
		var was jszInfo
		if err := jsonUnmarshal(before[s.Name].Files["jsz"], &was); err != nil {
			return err
		}
		x.StreamsBefore[s.Name] = streamStates(was)
		fi, err := os.Stat(s.LogFile)
		if err != nil {
			return err
		}
		logStart[s.Name] = fi.Size()
		streams := filepath.Join(s.JSRoot(), x.Account, "streams")
		for _, alts := range emptyFolderNames[i] {
			f, p := "", ""
			for _, f = range strings.Split(alts, "|") {
				p = filepath.Join(streams, f)
				if _, err := os.Stat(p); err != nil {
					break
				}
				p = "" // a stream this server hosts: not made empty
			}
			if p == "" {
				return fmt.Errorf("%s hosts every stream of %s", s.Name, alts)
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			x.Made[s.Name] = append(x.Made[s.Name], f)
		}
	}
	if len(x.Made) == 0 {
		return fmt.Errorf("no empty folder made")
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		var now jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &now); err != nil {
			return err
		}
		x.StreamsAfter[s.Name] = streamStates(now)
	}
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		lines, err := linesFrom(s.LogFile, logStart[s.Name], "Missing stream metafile")
		if err != nil {
			return err
		}
		for _, l := range lines {
			x.WarnLines[s.Name] = append(x.WarnLines[s.Name], l)
			// ... Missing stream metafile for "<root>/$G/streams/<folder>/meta.inf"
			if q := strings.Split(l, `"`); len(q) >= 2 {
				x.Warned[s.Name] = append(x.Warned[s.Name], filepath.Base(filepath.Dir(q[1])))
			}
		}
		sort.Strings(x.Warned[s.Name])
		for _, f := range x.Made[s.Name] {
			ents, err := os.ReadDir(filepath.Join(s.JSRoot(), x.Account, "streams", f))
			if err == nil && len(ents) == 0 {
				x.LeftAfter[s.Name] = append(x.LeftAfter[s.Name], f)
			}
		}
	}
	logf("%s: made %v, warned %v, left after %v", name, x.Made, x.Warned, x.LeftAfter)
	// A zip, because git keeps no empty folder: a tree would lose them.
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutArchive(name, true, false), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// linesFrom returns the lines of file from byte offset on that contain sub.
func linesFrom(file string, offset int64, sub string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return out, sc.Err()
}
