package main

// The subset of the servers' monitoring JSON the generator reads, and the
// capture of every endpoint into files.

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

type jszInfo struct {
	ServerID string           `json:"server_id"`
	Disabled bool             `json:"disabled"`
	Meta     *metaClusterInfo `json:"meta_cluster"`
	Accounts []accountDetail  `json:"account_details"`
	sys      string
}

func (j jszInfo) sysAccount() string {
	if j.sys != "" {
		return j.sys
	}
	return "$SYS"
}

type metaClusterInfo struct {
	Name     string     `json:"name"`
	Leader   string     `json:"leader"`
	Peer     string     `json:"peer"`
	Replicas []peerInfo `json:"replicas"`
	Size     int        `json:"cluster_size"`
}

type peerInfo struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Offline bool   `json:"offline"`
	Peer    string `json:"peer"`
}

type accountDetail struct {
	Name    string         `json:"name"`
	ID      string         `json:"id"`
	Streams []streamDetail `json:"stream_detail"`
}

// Key is the account as the server names it: its id (in operator mode the
// public key, while name is the JWT's name claim), else its name.
func (a accountDetail) Key() string {
	if a.ID != "" {
		return a.ID
	}
	return a.Name
}

type streamDetail struct {
	Name    string `json:"name"`
	Cluster *struct {
		Name      string `json:"name"`
		RaftGroup string `json:"raft_group"`
		Leader    string `json:"leader"`
	} `json:"cluster"`
	Config *struct {
		Replicas int `json:"num_replicas"`
	} `json:"config"`
	State struct {
		Msgs       uint64 `json:"messages"`
		Bytes      uint64 `json:"bytes"`
		FirstSeq   uint64 `json:"first_seq"`
		LastSeq    uint64 `json:"last_seq"`
		NumDeleted int    `json:"num_deleted"`
	} `json:"state"`
	Consumers []consumerInfo `json:"consumer_detail"`
	RaftGroup string         `json:"stream_raft_group"`
}

type consumerInfo struct {
	Name      string `json:"name"`
	Delivered struct {
		Consumer uint64 `json:"consumer_seq"`
		Stream   uint64 `json:"stream_seq"`
	} `json:"delivered"`
	AckFloor struct {
		Consumer uint64 `json:"consumer_seq"`
		Stream   uint64 `json:"stream_seq"`
	} `json:"ack_floor"`
	NumAckPending int    `json:"num_ack_pending"`
	NumPending    uint64 `json:"num_pending"`
	Cluster       *struct {
		Leader string `json:"leader"`
	} `json:"cluster"`
}

type raftzStatus map[string]map[string]raftzGroup

type raftzGroup struct {
	ID           string                    `json:"id"`
	State        string                    `json:"state"`
	Size         int                       `json:"size"`
	QuorumNeeded int                       `json:"quorum_needed"`
	Committed    uint64                    `json:"committed"`
	Applied      uint64                    `json:"applied"`
	CatchingUp   bool                      `json:"catching_up"`
	Leader       string                    `json:"leader"`
	Term         uint64                    `json:"term"`
	Peers        map[string]raftzGroupPeer `json:"peers"`
}

type raftzGroupPeer struct {
	Name  string `json:"name"`
	Known bool   `json:"known"`
}

type varzInfo struct {
	Name    string `json:"server_name"`
	Version string `json:"version"`
	SysAcc  string `json:"system_account"`
	Mem     int64  `json:"mem"`
	Cluster struct {
		Name string `json:"name"`
	} `json:"cluster"`
}

func urlEscape(s string) string { return url.QueryEscape(s) }

const jszCapturePath = "/jsz?accounts=1&streams=1&consumers=1&config=1&raft=1"

// Capture is what was fetched from one server just before it was stopped.
type Capture struct {
	Server string
	// Files maps a capture name ("jsz", "raftz", "healthz", "varz",
	// "raftz-acc-<account>") to the exact bytes the server answered.
	Files map[string][]byte
}

// captureServer fetches /jsz (full), /raftz (default = system account, plus
// ?acc=<a> for every account holding streams, since v2.15.2 keys stream and
// consumer groups by the asset account), /healthz and /varz.
func captureServer(ctx context.Context, s *Server) (*Capture, error) {
	c := &Capture{Server: s.Name, Files: map[string][]byte{}}
	get := func(name, path string, must bool) error {
		b, err := s.Get(ctx, path)
		if err != nil {
			if must {
				return err
			}
			return nil
		}
		c.Files[name] = b
		return nil
	}
	if err := get("varz", "/varz", true); err != nil {
		return nil, err
	}
	if err := get("jsz", jszCapturePath, true); err != nil {
		return nil, err
	}
	// A standalone server has no raft groups: its /raftz answers 404.
	if err := get("raftz", "/raftz", !s.NoCluster); err != nil {
		return nil, err
	}
	if err := get("healthz", "/healthz", true); err != nil {
		return nil, err
	}
	var v varzInfo
	if err := jsonUnmarshal(c.Files["varz"], &v); err != nil {
		return nil, err
	}
	var j jszInfo
	if err := jsonUnmarshal(c.Files["jsz"], &j); err != nil {
		return nil, err
	}
	j.sys = v.SysAcc
	for _, acc := range raftzAccounts(j)[1:] {
		_ = get("raftz-acc-"+safeName(acc), "/raftz?acc="+urlEscape(acc), false)
	}
	return c, nil
}

// CaptureAll captures every running server of the clusters.
func CaptureAll(ctx context.Context, cs ...*Cluster) (map[string]*Capture, error) {
	out := map[string]*Capture{}
	for _, c := range cs {
		for _, s := range c.Running() {
			cp, err := captureServer(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("capture %s: %w", s.Name, err)
			}
			out[s.Name] = cp
		}
	}
	return out, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// captureNames returns the capture names in a stable order.
func (c *Capture) names() []string {
	var ns []string
	for n := range c.Files {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
