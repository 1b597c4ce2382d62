package main

// want.json: derived only from the live captures (what the servers said),
// never typed by hand.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Want is the content of testdata/bundles/<name>/want.json.
type Want struct {
	Scenario      string       `json:"scenario"`
	ServerVersion string       `json:"server_version"`
	Layout        string       `json:"layout"`
	Servers       []WantServer `json:"servers"`
	// Stopped lists servers whose store and log are in the bundle but which
	// were down when the others were captured (no captures, no figures).
	Stopped []WantStopped `json:"stopped_servers,omitempty"`
	// Standalone lists servers outside any cluster (no raft groups, no
	// _meta_: meta and groups are empty, peer_id is getHash(name)) whose
	// store, log and captures are in the bundle, same fields as Servers.
	Standalone []WantServer `json:"standalone_servers,omitempty"`
	Expect     any          `json:"expect,omitempty"`
}

// WantStopped is a bundled server that was not running at capture time.
type WantStopped struct {
	Name     string `json:"name"`
	PeerID   string `json:"peer_id"` // getHash(name)
	Cluster  string `json:"cluster"`
	StoreDir string `json:"store_dir"`
	Log      string `json:"log"`
}

// WantServer is one server as its own captures describe it.
type WantServer struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	PeerID   string `json:"peer_id"`
	Cluster  string `json:"cluster"`
	StoreDir string `json:"store_dir"`
	Log      string `json:"log"`
	// Captures maps capture name (jsz, raftz, healthz, varz, raftz-acc-<acc>) to its path in the bundle.
	Captures map[string]string `json:"captures"`
	Health   string            `json:"health"`
	// JetStreamDisabled: its /jsz said disabled (JetStream shut down while
	// the process runs: no streams in /jsz, /raftz {}); its store is what
	// it left then.
	JetStreamDisabled bool                 `json:"jetstream_disabled,omitempty"`
	Meta              WantMeta             `json:"meta"`
	Groups            map[string]WantGroup `json:"groups"`
	Streams           []WantStream         `json:"streams"`
}

// WantMeta is the server's view of the _meta_ group.
type WantMeta struct {
	ClusterSize int      `json:"cluster_size"`
	Quorum      int      `json:"quorum"`
	Term        uint64   `json:"term"`
	Leader      string   `json:"leader"` // server name ("" = none)
	LeaderID    string   `json:"leader_id"`
	Peers       []string `json:"peers"` // 8-char ids, including self, sorted
	// JSZClusterSize is /jsz meta_cluster.cluster_size.
	JSZClusterSize int `json:"jsz_cluster_size"`
}

// WantGroup is the server's view of one raft group.
type WantGroup struct {
	Account     string   `json:"account"` // /raftz account key the group was listed under
	ClusterSize int      `json:"cluster_size"`
	Quorum      int      `json:"quorum"`
	Term        uint64   `json:"term"`
	Committed   uint64   `json:"committed"`
	Applied     uint64   `json:"applied"`
	State       string   `json:"state"`
	LeaderID    string   `json:"leader_id"`
	Peers       []string `json:"peers"`
}

// WantStream is one stream as the server's /jsz reports it.
type WantStream struct {
	Account    string         `json:"account"`
	Name       string         `json:"name"`
	Replicas   int            `json:"replicas"`
	Group      string         `json:"group"`
	Leader     string         `json:"leader"`
	FirstSeq   uint64         `json:"first_seq"`
	LastSeq    uint64         `json:"last_seq"`
	Messages   uint64         `json:"messages"`
	Bytes      uint64         `json:"bytes"`
	NumDeleted int            `json:"num_deleted"`
	Consumers  []WantConsumer `json:"consumers"`
}

// WantConsumer is one consumer as the server's /jsz reports it.
type WantConsumer struct {
	Name            string `json:"name"`
	AckFloorStream  uint64 `json:"ack_floor_stream"`
	DeliveredStream uint64 `json:"delivered_stream"`
	NumPending      uint64 `json:"num_pending"`
	NumAckPending   int    `json:"num_ack_pending"`
}

func jsonUnmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %.60q: %w", b, err)
	}
	return nil
}

// wantServer derives one server's entry from its captures.
func wantServer(s *Server, c *Capture) (WantServer, error) {
	w := WantServer{Name: s.Name, Cluster: s.Cluster, Groups: map[string]WantGroup{}, Streams: []WantStream{}}
	var v varzInfo
	if err := jsonUnmarshal(c.Files["varz"], &v); err != nil {
		return w, err
	}
	w.Version = v.Version
	if v.Cluster.Name != "" {
		w.Cluster = v.Cluster.Name
	}
	var h struct {
		Status string `json:"status"`
	}
	if err := jsonUnmarshal(c.Files["healthz"], &h); err != nil {
		return w, err
	}
	w.Health = h.Status
	var j jszInfo
	if err := jsonUnmarshal(c.Files["jsz"], &j); err != nil {
		return w, err
	}
	w.JetStreamDisabled = j.Disabled
	// Raft groups from every /raftz capture.
	names := map[string]string{} // peer id -> server name
	for _, n := range c.names() {
		if n != "raftz" && !strings.HasPrefix(n, "raftz-acc-") {
			continue
		}
		var rz raftzStatus
		if err := jsonUnmarshal(c.Files[n], &rz); err != nil {
			return w, err
		}
		for acc, groups := range rz {
			for g, rg := range groups {
				peers := []string{rg.ID}
				for id, p := range rg.Peers {
					peers = append(peers, id)
					if p.Name != "" {
						names[id] = p.Name
					}
				}
				sort.Strings(peers)
				w.Groups[g] = WantGroup{Account: acc, ClusterSize: rg.Size, Quorum: rg.QuorumNeeded, Term: rg.Term,
					Committed: rg.Committed, Applied: rg.Applied, State: rg.State, LeaderID: rg.Leader, Peers: peers}
				if g == "_meta_" {
					w.PeerID = rg.ID
					names[rg.ID] = s.Name
					w.Meta = WantMeta{ClusterSize: rg.Size, Quorum: rg.QuorumNeeded, Term: rg.Term, LeaderID: rg.Leader, Peers: peers}
				}
			}
		}
	}
	if j.Meta != nil {
		w.Meta.JSZClusterSize = j.Meta.Size
		w.Meta.Leader = j.Meta.Leader
	}
	if w.Meta.Leader == "" && w.Meta.LeaderID != "" {
		w.Meta.Leader = names[w.Meta.LeaderID]
	}
	if w.PeerID == "" {
		w.PeerID = nodeID(s.Name)
	}
	for _, a := range j.Accounts {
		for _, st := range a.Streams {
			ws := WantStream{Account: a.Key(), Name: st.Name, Group: st.RaftGroup, FirstSeq: st.State.FirstSeq,
				LastSeq: st.State.LastSeq, Messages: st.State.Msgs, Bytes: st.State.Bytes, NumDeleted: st.State.NumDeleted,
				Consumers: []WantConsumer{}}
			if st.Config != nil {
				ws.Replicas = st.Config.Replicas
			}
			if st.Cluster != nil {
				if ws.Group == "" {
					ws.Group = st.Cluster.RaftGroup
				}
				ws.Leader = st.Cluster.Leader
			}
			for _, cd := range st.Consumers {
				ws.Consumers = append(ws.Consumers, WantConsumer{Name: cd.Name, AckFloorStream: cd.AckFloor.Stream,
					DeliveredStream: cd.Delivered.Stream, NumPending: cd.NumPending, NumAckPending: cd.NumAckPending})
			}
			sort.Slice(ws.Consumers, func(i, k int) bool { return ws.Consumers[i].Name < ws.Consumers[k].Name })
			w.Streams = append(w.Streams, ws)
		}
	}
	sort.Slice(w.Streams, func(i, k int) bool {
		if w.Streams[i].Account != w.Streams[k].Account {
			return w.Streams[i].Account < w.Streams[k].Account
		}
		return w.Streams[i].Name < w.Streams[k].Name
	})
	if w.PeerID != nodeID(s.Name) {
		return w, fmt.Errorf("%s: raftz id %s != getHash(name) %s", s.Name, w.PeerID, nodeID(s.Name))
	}
	return w, nil
}
