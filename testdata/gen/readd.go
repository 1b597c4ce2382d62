package main

// `go run . readd -versions v2.10.27,v2.11.17,v2.15.3 -out DIR`: does a
// server removed from the meta group come back into it when it still talks
// raft? raft.go trackPeer: from 2.11.2 a removed peer counts as removed
// only for peerRemoveTimeout (5 min); 2.10 keeps it out for good. Per
// version: 3 servers (SYS/APP accounts), $JS.API.SERVER.REMOVE of a running
// follower, the removed server restarted 20 s later (a removed server
// disables its own JetStream; a restart makes it talk raft again), then
// the meta group watched from the leader every 15 s for -watch (default
// 7 min). DIR/readd-<version>.json records what was seen.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ReaddPoll is one look at the meta group from a server that is not the
// removed one.
type ReaddPoll struct {
	Since    string   `json:"since_removal"`
	Observer string   `json:"observer"`
	Size     int      `json:"size"`
	Leader   string   `json:"leader"`
	Peers    []string `json:"peers"`
	// Back: the removed server's id is among the peers again.
	Back bool `json:"back"`
	// RemovedJS: the removed server's own /jsz (enabled/disabled, its
	// meta view).
	RemovedJS string `json:"removed_js"`
}

// ReaddOutcome is one version's run.
type ReaddOutcome struct {
	Version    string      `json:"version"`
	Removed    string      `json:"removed"`
	RemovedID  string      `json:"removed_id"`
	Request    string      `json:"request"`
	Answer     string      `json:"answer"`
	RestartAt  string      `json:"restart_at"`
	Polls      []ReaddPoll `json:"polls"`
	BackAfter  string      `json:"back_after,omitempty"` // first poll that saw it back
	ReAdded    bool        `json:"re_added"`
	LogLines   []string    `json:"log_lines"`
	Error      string      `json:"error,omitempty"`
	WatchedFor string      `json:"watched_for"`
}

var readdLogRE = regexp.MustCompile(`(?i)peer|remov|JetStream (is )?(disabled|enabled)|Self is new|meta`)

func runReadd(ctx context.Context, out, version string, watch time.Duration) error {
	o := ReaddOutcome{Version: version, WatchedFor: watch.String(), Polls: []ReaddPoll{}}
	err := readdRun(ctx, out, version, watch, &o)
	if err != nil {
		o.Error = err.Error()
	}
	b, _ := json.MarshalIndent(o, "", "  ")
	if werr := os.WriteFile(filepath.Join(out, "readd-"+version+".json"), append(b, '\n'), 0o644); werr != nil {
		return werr
	}
	logf("readd %s: re-added %v (after %s) %s", version, o.ReAdded, o.BackAfter, o.Error)
	return err
}

func readdRun(ctx context.Context, out, version string, watch time.Duration, o *ReaddOutcome) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "jsf-gen-readd-"+version+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	c, err := NewCluster(ctx, scratch, version, "readd", []string{"ra-0", "ra-1", "ra-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	if err := c.Start(ctx); err != nil {
		return err
	}
	leader := c.MetaLeader(ctx)
	var victim, observer *Server
	for _, s := range c.Servers {
		if s.Name != leader && victim == nil {
			victim = s
		} else if observer == nil {
			observer = s
		}
	}
	o.Removed, o.RemovedID = victim.Name, nodeID(victim.Name)
	nc, err := sysConn(observer)
	if err != nil {
		return err
	}
	defer nc.Close()
	req := fmt.Sprintf(`{"peer":%q}`, victim.Name)
	o.Request = "nats request '$JS.API.SERVER.REMOVE' '" + req + "' as the system account (" + victim.Name + " running)"
	var raw json.RawMessage
	if err := apiRequest(ctx, nc, "$JS.API.SERVER.REMOVE", json.RawMessage(req), &raw); err != nil {
		return err
	}
	o.Answer = string(raw)
	removedAt := time.Now()
	look := func() {
		p := ReaddPoll{Since: time.Since(removedAt).Round(time.Second).String(), Observer: observer.Name, Peers: []string{}}
		for _, s := range c.Running() {
			if s == victim {
				continue
			}
			v := metaView(ctx, s)
			if v.RaftzLeaderID != "" {
				p.Observer, p.Size, p.Leader, p.Peers = s.Name, v.RaftzSize, v.JSZLeader, v.RaftzPeers
				break
			}
		}
		for _, id := range p.Peers {
			if strings.HasPrefix(id, o.RemovedID) {
				p.Back = true
			}
		}
		if victim.Running() {
			var j struct {
				Disabled bool `json:"disabled"`
				Meta     *struct {
					Leader string `json:"leader"`
					Size   int    `json:"cluster_size"`
				} `json:"meta_cluster"`
			}
			if err := victim.GetJSON(ctx, "/jsz", &j); err != nil {
				p.RemovedJS = err.Error()
			} else if j.Meta != nil {
				p.RemovedJS = fmt.Sprintf("disabled=%v meta leader=%s size=%d", j.Disabled, j.Meta.Leader, j.Meta.Size)
			} else {
				p.RemovedJS = fmt.Sprintf("disabled=%v no meta", j.Disabled)
			}
		} else {
			p.RemovedJS = "not running"
		}
		if p.Back && !o.ReAdded {
			o.ReAdded, o.BackAfter = true, p.Since
		}
		o.Polls = append(o.Polls, p)
		logf("readd %s %s: size %d leader %s back %v; removed: %s", version, p.Since, p.Size, p.Leader, p.Back, p.RemovedJS)
	}
	restarted := false
	for time.Since(removedAt) < watch {
		look()
		if !restarted && time.Since(removedAt) >= 20*time.Second {
			if err := victim.Stop(); err != nil {
				return err
			}
			if err := victim.Start(ctx); err != nil {
				return err
			}
			restarted = true
			o.RestartAt = time.Since(removedAt).Round(time.Second).String()
		}
		if err := pause(ctx, 15*time.Second); err != nil {
			return err
		}
	}
	look()
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		lines, err := logLinesSince(s.LogFile, 0, readdLogRE)
		if err != nil {
			return err
		}
		for _, l := range lines {
			o.LogLines = append(o.LogLines, s.Name+": "+l)
		}
	}
	return nil
}
