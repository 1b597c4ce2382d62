package raftlog_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// want.json of the generator (testdata/gen/want.go), the parts used here.
type wantDoc struct {
	Scenario string          `json:"scenario"`
	Expect   json.RawMessage `json:"expect"`
	Servers  []struct {
		Name     string `json:"name"`
		PeerID   string `json:"peer_id"`
		Cluster  string `json:"cluster"`
		StoreDir string `json:"store_dir"`
		Meta     struct {
			ClusterSize int      `json:"cluster_size"`
			Term        uint64   `json:"term"`
			Peers       []string `json:"peers"`
		} `json:"meta"`
		Groups map[string]struct {
			ClusterSize int      `json:"cluster_size"`
			Term        uint64   `json:"term"`
			Peers       []string `json:"peers"`
		} `json:"groups"`
		Streams []struct {
			Account   string `json:"account"`
			Name      string `json:"name"`
			Group     string `json:"group"`
			Consumers []struct {
				Name string `json:"name"`
			} `json:"consumers"`
		} `json:"streams"`
	} `json:"servers"`
}

// loadBundleServers reads ../testdata/bundles/*/want.json and returns the
// servers of directory bundles whose store holds a _js_ folder.
func loadBundleServers(t testing.TB) []*serverCase {
	t.Helper()
	wants, _ := filepath.Glob("../testdata/bundles/*/want.json")
	var out []*serverCase
	for _, wf := range wants {
		dir := filepath.Dir(wf)
		var w wantDoc
		mustJSON(t, wf, &w)
		var cs []*serverCase
		var union []streamWant
		for _, s := range w.Servers {
			root := filepath.Join(dir, "bundle", s.StoreDir)
			if _, err := os.Stat(root); err != nil {
				root = filepath.Join(dir, s.StoreDir)
			}
			jsDirs, _ := filepath.Glob(filepath.Join(root, "*", "_js_"))
			for _, sw := range s.Streams {
				st := streamWant{Account: sw.Account, Name: sw.Name, Group: sw.Group}
				for _, c := range sw.Consumers {
					st.Consumers = append(st.Consumers, c.Name)
				}
				union = append(union, st)
			}
			if len(jsDirs) != 1 {
				continue
			}
			sc := &serverCase{label: filepath.Base(dir) + "/" + s.Name, cluster: filepath.Base(dir), name: s.Name,
				peerID: s.PeerID, js: os.DirFS(jsDirs[0]), groups: map[string]groupWant{}, expect: w.Expect}
			for _, o := range w.Servers {
				sc.clusterIDs = append(sc.clusterIDs, o.PeerID)
			}
			for g, gw := range s.Groups {
				p := append([]string(nil), gw.Peers...)
				sort.Strings(p)
				sc.groups[g] = groupWant{Size: gw.ClusterSize, Term: gw.Term, Peers: p}
			}
			if len(s.Meta.Peers) > 0 {
				p := append([]string(nil), s.Meta.Peers...)
				sort.Strings(p)
				sc.meta = &groupWant{Size: s.Meta.ClusterSize, Term: s.Meta.Term, Peers: p}
			}
			cs = append(cs, sc)
		}
		union = dedupStreams(union)
		for _, sc := range cs {
			sc.streams = union
		}
		out = append(out, cs...)
	}
	return out
}

// expectKeys lists the top-level keys of a bundle's "expect" object.
func expectKeys(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// strict reports whether the server's state should look healthy: real
// fixtures, and bundles whose scenario is not one that damages the raft or
// meta state on purpose (phantom peers, orphans).
func (sc *serverCase) strict() bool {
	m := expectKeys(sc.expect)
	_, phantom := m["phantom_peers"]
	_, orphan := m["streams_b"]
	return !phantom && !orphan
}
