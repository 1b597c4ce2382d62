package raftlog_test

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// bundlesDir holds the generator's bundles (testdata/gen); $JSF_BUNDLES
// replaces it with bundles written with other nats-server versions
// (`go run . healthy@v2.10.27 -out DIR`), never committed.
var bundlesDir = cmp.Or(os.Getenv("JSF_BUNDLES"), "../testdata/bundles")

// want.json of the generator (testdata/gen/want.go), the parts used here.
type wantDoc struct {
	Scenario      string          `json:"scenario"`
	ServerVersion string          `json:"server_version"`
	Expect        json.RawMessage `json:"expect"`
	Servers       []struct {
		Name     string `json:"name"`
		Version  string `json:"version"`
		PeerID   string `json:"peer_id"`
		Cluster  string `json:"cluster"`
		StoreDir string `json:"store_dir"`
		Log      string `json:"log"`
		// JetStreamDisabled: /jsz said disabled (diskfull-*).
		JetStreamDisabled bool `json:"jetstream_disabled"`
		Meta              struct {
			ClusterSize int      `json:"cluster_size"`
			Term        uint64   `json:"term"`
			Leader      string   `json:"leader"`
			Peers       []string `json:"peers"`
		} `json:"meta"`
		Groups map[string]struct {
			ClusterSize int      `json:"cluster_size"`
			Term        uint64   `json:"term"`
			State       string   `json:"state"` // raftz: "LEADER", "FOLLOWER", …
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

// bundleFS returns the files of a committed bundle: its bundle/ directory,
// else its bundle.zip read in memory (want.json's paths are relative to
// either). ok is false for a bundle with neither.
func bundleFS(t testing.TB, dir string) (fs.FS, bool) {
	t.Helper()
	if fi, err := os.Stat(filepath.Join(dir, "bundle")); err == nil && fi.IsDir() {
		return os.DirFS(filepath.Join(dir, "bundle")), true
	}
	b, err := os.ReadFile(filepath.Join(dir, "bundle.zip"))
	if err != nil {
		return nil, false
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return zr, true
}

// bundleServer opens the raft folder of one server of a named bundle.
func bundleServer(t testing.TB, bundle, server string) *serverCase {
	t.Helper()
	for _, sc := range allServers(t) {
		if sc.bundle == bundle && sc.name == server {
			return sc
		}
	}
	t.Fatalf("no server %s in bundle %s", server, bundle)
	return nil
}

// loadBundleServers reads ../testdata/bundles/*/want.json and returns the
// servers whose store holds a _js_ folder, in directory and zip bundles.
func loadBundleServers(t testing.TB) []*serverCase {
	t.Helper()
	wants, _ := filepath.Glob(filepath.Join(bundlesDir, "*", "want.json"))
	var out []*serverCase
	for _, wf := range wants {
		dir := filepath.Dir(wf)
		var w wantDoc
		b, err := os.ReadFile(wf)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", wf, err)
		}
		// A store encrypted at rest seals its WAL blocks, snapshots and
		// meta.inf: without the key there is nothing for raftlog to decode
		// (storeparse reports such blocks as unparseable/encrypted).
		var enc struct {
			Encrypted bool `json:"encrypted"`
		}
		if json.Unmarshal(w.Expect, &enc) == nil && enc.Encrypted {
			continue
		}
		fsys, ok := bundleFS(t, dir)
		if !ok {
			continue
		}
		// Servers of one JetStream domain share a meta layer; a bundle of
		// several domains (expect.domains: server -> domain, the domains
		// scenarios) has one per domain.
		var doms struct {
			Domains map[string]string `json:"domains"`
		}
		_ = json.Unmarshal(w.Expect, &doms)
		var cs []*serverCase
		union := map[string][]streamWant{}
		for _, s := range w.Servers {
			for _, sw := range s.Streams {
				st := streamWant{Account: sw.Account, Name: sw.Name, Group: sw.Group}
				for _, c := range sw.Consumers {
					st.Consumers = append(st.Consumers, c.Name)
				}
				union[doms.Domains[s.Name]] = append(union[doms.Domains[s.Name]], st)
			}
			if s.StoreDir == "" {
				continue
			}
			jsDirs, _ := fs.Glob(fsys, path.Join(s.StoreDir, "*", "_js_"))
			if len(jsDirs) != 1 {
				continue
			}
			js, err := fs.Sub(fsys, jsDirs[0])
			if err != nil {
				t.Fatal(err)
			}
			ver := s.Version
			if ver == "" {
				ver = w.ServerVersion
			}
			sc := &serverCase{label: filepath.Base(dir) + "/" + s.Name, bundle: filepath.Base(dir), version: ver, name: s.Name,
				peerID: s.PeerID, js: js, groups: map[string]groupWant{}, expect: w.Expect, banner: map[string]string{},
				disabled: s.JetStreamDisabled}
			for _, o := range w.Servers {
				sc.clusterIDs = append(sc.clusterIDs, o.PeerID)
			}
			for g, gw := range s.Groups {
				p := append([]string(nil), gw.Peers...)
				sort.Strings(p)
				sc.groups[g] = groupWant{Size: gw.ClusterSize, Term: gw.Term, Peers: p, Leader: gw.State == "LEADER"}
			}
			if len(s.Meta.Peers) > 0 {
				p := append([]string(nil), s.Meta.Peers...)
				sort.Strings(p)
				sc.meta = &groupWant{Size: s.Meta.ClusterSize, Term: s.Meta.Term, Peers: p, Leader: s.Meta.Leader == s.Name}
			}
			if s.Log != "" {
				lb, err := fs.ReadFile(fsys, s.Log)
				if err != nil {
					t.Fatalf("%s: log of %s: %v", dir, s.Name, err)
				}
				sc.banner = bannerOf(lb)
			}
			cs = append(cs, sc)
		}
		// Streams of an account the servers could not look up (operator
		// mode, expect.unserved): in the meta state, in no /jsz; as the
		// servers listed them before.
		var unserved map[string][]struct {
			Account   string `json:"account"`
			Name      string `json:"name"`
			Group     string `json:"group"`
			Consumers []struct {
				Name string `json:"name"`
			} `json:"consumers"`
		}
		_ = json.Unmarshal(expectKeys(w.Expect)["unserved"], &unserved)
		for _, sws := range unserved {
			for _, sw := range sws {
				st := streamWant{Account: sw.Account, Name: sw.Name, Group: sw.Group}
				for _, c := range sw.Consumers {
					st.Consumers = append(st.Consumers, c.Name)
				}
				union[""] = append(union[""], st) // operator fixtures: one domain
			}
		}
		for d := range union {
			union[d] = dedupStreams(union[d])
		}
		for _, sc := range cs {
			sc.streams = union[doms.Domains[sc.name]]
		}
		out = append(out, cs...)
	}
	return out
}

// bannerOf maps "Name" and "Node" of the first startup banner of a log.
func bannerOf(log []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(log), "\n") {
		for _, k := range []string{"Name", "Node"} {
			if _, v, ok := strings.Cut(line, "[INF]   "+k+":"); ok && out[k] == "" {
				out[k] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// expectKeys lists the top-level keys of a bundle's "expect" object.
func expectKeys(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// strict reports whether the server's state should look healthy: bundles
// whose scenario is not one that damages the raft or meta state on purpose
// (phantom peers, orphans, renamed servers, an orphan cleanup run).
func (sc *serverCase) strict() bool {
	m := expectKeys(sc.expect)
	_, phantom := m["phantom_peers"]
	_, orphan := m["streams_b"]
	_, renamed := m["renamed"]
	// After an orphan cleanup (metasnap-v2.12.1-restarted) the meta state
	// still assigns a stream no server holds.
	_, cleaned := m["restarted_from"]
	// After a downgrade (downgrade-*, expect.rerun) the older release
	// reports none of the streams it keeps offline, and no group at all
	// where its meta layer stopped: the meta state holds what it does not
	// serve.
	_, downgraded := m["rerun"]
	// A consumer the meta state assigns that no server runs
	// (consumermissing-*: expect.missing, the list API's missing ones).
	var missing []string
	_ = json.Unmarshal(m["missing"], &missing)
	return !phantom && !orphan && !renamed && !cleaned && !downgraded && len(missing) == 0
}

// metaSnapFlip returns the byte and bit the scenario flipped in this
// server's meta snapshot (expect.flips, testdata/gen metasnap scenarios).
func (sc *serverCase) metaSnapFlip() (offset int, bit uint, ok bool) {
	var fs []struct {
		Server string `json:"server"`
		Offset int    `json:"offset"`
		Bit    uint   `json:"bit"`
	}
	_ = json.Unmarshal(expectKeys(sc.expect)["flips"], &fs)
	for _, f := range fs {
		if f.Server == sc.name {
			return f.Offset, f.Bit, true
		}
	}
	return 0, 0, false
}

// removedPeers returns the peer ids the bundle's scenario removed from the
// cluster (expect.removals[].peer_id, testdata/gen membership scenarios);
// nil when the scenario changed no membership.
func (sc *serverCase) removedPeers() []string {
	var rs []struct {
		PeerID string `json:"peer_id"`
	}
	_ = json.Unmarshal(expectKeys(sc.expect)["removals"], &rs)
	var out []string
	for _, r := range rs {
		if r.PeerID != "" {
			out = append(out, r.PeerID)
		}
	}
	return out
}
