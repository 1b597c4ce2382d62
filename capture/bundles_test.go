package capture

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// want.json of the real-server bundles written by testdata/gen (the fields
// this package can check).
type wantBundle struct {
	Scenario string       `json:"scenario"`
	Servers  []wantServer `json:"servers"`
}

type wantServer struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	PeerID   string            `json:"peer_id"`
	Cluster  string            `json:"cluster"`
	Captures map[string]string `json:"captures"`
	Health   string            `json:"health"`
	// JetStreamDisabled: the server had disabled JetStream (its /jsz said
	// so); its /raftz is {} and its meta is no view (diskfull-*).
	JetStreamDisabled bool `json:"jetstream_disabled"`
	Meta              *struct {
		ClusterSize    int      `json:"cluster_size"`
		Quorum         int      `json:"quorum"`
		Term           uint64   `json:"term"`
		Leader         string   `json:"leader"`
		LeaderID       string   `json:"leader_id"`
		Peers          []string `json:"peers"`
		JszClusterSize *int     `json:"jsz_cluster_size"`
	} `json:"meta"`
	Groups map[string]struct {
		Account     string   `json:"account"`
		ClusterSize int      `json:"cluster_size"`
		Quorum      int      `json:"quorum"`
		Term        uint64   `json:"term"`
		Committed   *uint64  `json:"committed"`
		Applied     *uint64  `json:"applied"`
		State       string   `json:"state"`
		LeaderID    string   `json:"leader_id"`
		Peers       []string `json:"peers"`
	} `json:"groups"`
	Streams []struct {
		Account    string `json:"account"`
		Name       string `json:"name"`
		Replicas   int    `json:"replicas"`
		Group      string `json:"group"`
		Leader     string `json:"leader"`
		FirstSeq   uint64 `json:"first_seq"`
		LastSeq    uint64 `json:"last_seq"`
		Messages   uint64 `json:"messages"`
		Bytes      uint64 `json:"bytes"`
		NumDeleted int    `json:"num_deleted"`
		Consumers  []struct {
			Name            string `json:"name"`
			AckFloorStream  uint64 `json:"ack_floor_stream"`
			DeliveredStream uint64 `json:"delivered_stream"`
			NumPending      uint64 `json:"num_pending"`
			NumAckPending   int    `json:"num_ack_pending"`
		} `json:"consumers"`
	} `json:"streams"`
}

// bundleFiles returns a function reading a file of the bundle by the path
// want.json gives: relative to bundle/, or to the archive's root or its one
// top folder.
func bundleFiles(t *testing.T, dir string) (func(p string) ([]byte, bool), bool) {
	if fi, err := os.Stat(filepath.Join(dir, "bundle")); err == nil && fi.IsDir() {
		return func(p string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(dir, "bundle", filepath.FromSlash(p)))
			return b, err == nil
		}, true
	}
	entries := map[string][]byte{}
	if b, err := os.ReadFile(filepath.Join(dir, "bundle.zip")); err == nil {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if zr.File != nil && zr.File[0] != nil {
			if _, ok := findEntry(zr, AuditManifest); ok {
				return nil, false // an audit archive: TestBundleAudit
			}
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() || !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			entries[f.Name], _ = io.ReadAll(rc)
			rc.Close()
		}
	} else if b, err := os.ReadFile(filepath.Join(dir, "bundle.tar.gz")); err == nil {
		gz, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, ".json") {
				entries[path.Clean(h.Name)], _ = io.ReadAll(tr)
			}
		}
	} else {
		return nil, false
	}
	return func(p string) ([]byte, bool) {
		for name, b := range entries {
			if name == p || strings.HasSuffix(name, "/"+p) {
				return b, true
			}
		}
		return nil, false
	}, true
}

func findEntry(zr *zip.Reader, name string) (*zip.File, bool) {
	for _, f := range zr.File {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

func loadWant(t *testing.T, dir string) wantBundle {
	var w wantBundle
	b, err := os.ReadFile(filepath.Join(dir, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// Every capture of every real bundle decodes, and its figures are the ones
// the generator recorded from the live servers.
func TestBundles(t *testing.T) {
	// $JSF_BUNDLES: bundles written with other nats-server versions
	// (`go run . healthy@v2.10.27 -out DIR`), never committed.
	dirs, _ := filepath.Glob(filepath.Join(cmp.Or(os.Getenv("JSF_BUNDLES"), "../testdata/bundles"), "*"))
	checked, withMeta := 0, 0
	var n counts
	for _, dir := range dirs {
		read, ok := bundleFiles(t, dir)
		if !ok {
			continue
		}
		w := loadWant(t, dir)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, ws := range w.Servers {
				if ws.JetStreamDisabled {
					ws.Meta = nil // /raftz {}: the generator's meta is all zero
				}
				var caps []Capture
				for key, p := range ws.Captures {
					b, ok := read(p)
					if !ok {
						t.Errorf("%s: capture %s not found", ws.Name, p)
						continue
					}
					cs, err := Decode(p, bytes.NewReader(b))
					if err != nil {
						t.Errorf("%s: %v", p, err)
					}
					kind := strings.SplitN(key, "-", 2)[0]
					if len(cs) != 1 || cs[0].Kind != kind {
						t.Errorf("%s: %d captures, want one %s", p, len(cs), kind)
					}
					caps = append(caps, cs...)
				}
				checkServer(t, ws, caps, &n)
				checked++
				if ws.Meta != nil {
					withMeta++
				}
			}
		})
	}
	if checked == 0 {
		t.Skip("no real bundles under testdata/bundles yet")
	}
	t.Logf("%d servers checked: %+v", checked, n)
	if n.streams == 0 || n.consumers == 0 || n.groups == 0 || n.metas != withMeta {
		t.Errorf("too little compared: %+v", n)
	}
}

// The `nats audit gather` bundle: the archive reader finds every server
// with the figures of want.json.
func TestBundleAudit(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	n := 0
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "bundle.zip"))
		if err != nil {
			continue
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := findEntry(zr, AuditManifest); !ok {
			continue
		}
		n++
		w := loadWant(t, dir)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			a, err := ReadAuditArchive(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Problems) != 0 {
				t.Errorf("problems: %v", a.Problems)
			}
			for _, ws := range w.Servers {
				i := slices.IndexFunc(a.Servers, func(s AuditServer) bool { return s.Name == ws.Name })
				if i < 0 {
					t.Errorf("server %s not in archive", ws.Name)
					continue
				}
				var n counts
				checkServer(t, ws, a.Servers[i].Captures, &n)
				if n.streams != len(ws.Streams) || n.metas != 1 {
					t.Errorf("%s: compared %+v", ws.Name, n)
				}
			}
		})
	}
	if n == 0 {
		t.Skip("no audit gather bundle yet")
	}
}

type counts struct{ streams, consumers, groups, metas int }

func checkServer(t *testing.T, ws wantServer, caps []Capture, n *counts) {
	t.Helper()
	merged := Raftz{}
	for _, c := range caps {
		checkMetaView(t, ws.Name+" "+c.File, c, ws)
		switch {
		case c.Jsz != nil:
			j := c.Jsz
			if ws.Meta != nil && j.Meta != nil {
				want := ws.Meta.ClusterSize
				if ws.Meta.JszClusterSize != nil {
					want = *ws.Meta.JszClusterSize
				}
				if j.Meta.ClusterSize != want || j.Meta.Leader != ws.Meta.Leader || j.Meta.LeaderPeer() != ws.Meta.LeaderID {
					t.Errorf("%s jsz meta: size %d leader %s/%s, want %d %s/%s", ws.Name, j.Meta.ClusterSize, j.Meta.Leader,
						j.Meta.LeaderPeer(), want, ws.Meta.Leader, ws.Meta.LeaderID)
				}
			}
			for _, st := range ws.Streams {
				sd := findStream(j, st.Account, st.Name)
				if sd == nil {
					t.Errorf("%s: stream %s/%s not in /jsz", ws.Name, st.Account, st.Name)
					continue
				}
				n.streams++
				s := sd.State
				if s.FirstSeq != st.FirstSeq || s.LastSeq != st.LastSeq || s.Messages != st.Messages || s.Bytes != st.Bytes ||
					s.NumDeleted != st.NumDeleted || sd.RaftGroup != st.Group || sd.Config == nil || sd.Config.Replicas != st.Replicas {
					t.Errorf("%s: stream %s: %+v group %s, want %+v", ws.Name, st.Name, s, sd.RaftGroup, st)
				}
				if st.Leader != "" && (sd.Cluster == nil || sd.Cluster.Leader != st.Leader) {
					t.Errorf("%s: stream %s leader %+v, want %s", ws.Name, st.Name, sd.Cluster, st.Leader)
				}
				for _, wc := range st.Consumers {
					k := slices.IndexFunc(sd.Consumers, func(c ConsumerInfo) bool { return c.Name == wc.Name })
					if k < 0 {
						t.Errorf("%s: consumer %s/%s missing", ws.Name, st.Name, wc.Name)
						continue
					}
					n.consumers++
					c := sd.Consumers[k]
					if c.AckFloor.Stream != wc.AckFloorStream || c.Delivered.Stream != wc.DeliveredStream ||
						c.NumPending != wc.NumPending || c.NumAckPending != wc.NumAckPending {
						t.Errorf("%s: consumer %s/%s %+v, want %+v", ws.Name, st.Name, wc.Name, c, wc)
					}
				}
			}
		case c.Raftz != nil:
			if len(c.Raftz.Accounts()) > 0 && c.Server.Node != ws.PeerID {
				t.Errorf("%s: raftz names node %q, want %s", ws.Name, c.Server.Node, ws.PeerID)
			}
			for acc, gs := range *c.Raftz {
				if merged[acc] == nil {
					merged[acc] = map[string]RaftzGroup{}
				}
				for n, g := range gs {
					merged[acc][n] = g
				}
			}
		case c.Healthz != nil:
			// A gather archive asks the system API's healthz with details:
			// nats-server answers "error" and its errors where /healthz
			// over HTTP (want.json) answers "unavailable"; both are 503.
			details := c.Healthz.Status == "error" && ws.Health == "unavailable" && c.Healthz.StatusCode == 503 && len(c.Healthz.Errors) > 0
			if ws.Health != "" && c.Healthz.Status != ws.Health && !details {
				t.Errorf("%s: health %s, want %s", ws.Name, c.Healthz.Status, ws.Health)
			}
		case c.Varz != nil:
			v := c.Varz
			if v.ServerName != ws.Name || (ws.Version != "" && v.Version != ws.Version) || v.Cluster.Name != ws.Cluster {
				t.Errorf("%s: varz %s %s %s", ws.Name, v.ServerName, v.Version, v.Cluster.Name)
			}
			if c.Server.Name != ws.Name {
				t.Errorf("%s: server ref %+v", ws.Name, c.Server)
			}
		}
	}
	if ws.Meta != nil {
		g, _, ok := merged.Meta()
		if !ok {
			t.Errorf("%s: no _meta_ in raftz", ws.Name)
		} else {
			n.metas++
			v := MetaFromRaftz(g)
			if v.ClusterSize != ws.Meta.ClusterSize || v.Quorum != ws.Meta.Quorum || !sameTerm(v.Term, ws.Meta.Term, ws.Meta.LeaderID) ||
				v.Leader != ws.Meta.LeaderID || !slices.Equal(peerIDs(v), ws.Meta.Peers) || v.Self != ws.PeerID {
				t.Errorf("%s: meta view %+v, want %+v", ws.Name, v, *ws.Meta)
			}
		}
	}
	for name, wg := range ws.Groups {
		g, ok := merged[wg.Account][name]
		if !ok {
			t.Errorf("%s: group %s/%s not in raftz", ws.Name, wg.Account, name)
			continue
		}
		n.groups++
		v := MetaFromRaftz(g)
		if g.Size != wg.ClusterSize || g.QuorumNeeded != wg.Quorum || !sameTerm(g.Term, wg.Term, wg.LeaderID) ||
			(g.State != wg.State && !(wg.LeaderID == "" && (g.State == "CANDIDATE" || g.State == "FOLLOWER"))) ||
			g.Leader != wg.LeaderID || !slices.Equal(peerIDs(v), wg.Peers) ||
			(wg.Committed != nil && g.Committed != *wg.Committed) || (wg.Applied != nil && g.Applied != *wg.Applied) {
			t.Errorf("%s: group %s %+v, want %+v", ws.Name, name, g, wg)
		}
	}
}

// sameTerm: the archive's term is the one captured, or, for a group that
// had no leader when captured, a later one: its servers go on standing
// for election (audit-faults2-v2.15.3's meta group of 4 with 2 stopped
// moves from term 3 to 4 and between CANDIDATE and FOLLOWER between the
// captures and the gather).
func sameTerm(got, want uint64, leader string) bool {
	return got == want || (leader == "" && got > want)
}

func peerIDs(v MetaView) []string {
	out := []string{}
	for _, p := range v.Peers {
		out = append(out, p.ID)
	}
	return out
}

func findStream(j *Jsz, account, name string) *StreamDetail {
	for i := range j.AccountDetails {
		a := &j.AccountDetails[i]
		if a.Name != account && a.ID != account {
			continue
		}
		for k := range a.Streams {
			if a.Streams[k].Name == name {
				return &a.Streams[k]
			}
		}
	}
	return nil
}

// Every JSON file of every directory bundle decodes without a problem, and
// those that hold answers are recognised (incident-000-captures holds the
// thread's request lines in a .txt file).
func TestBundleFilesDecode(t *testing.T) {
	files, _ := filepath.Glob("../testdata/bundles/*/bundle/*")
	more, _ := filepath.Glob("../testdata/bundles/*/bundle/*/*")
	deeper, _ := filepath.Glob("../testdata/bundles/*/bundle/*/*/*")
	files = append(append(files, more...), deeper...)
	n, polls := 0, 0
	for _, p := range files {
		ext := filepath.Ext(p)
		if ext != ".json" && ext != ".jsonl" && !strings.Contains(p, "request") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a folder
		}
		caps, err := Decode(filepath.Base(p), bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if filepath.Base(p) == "polls.jsonl" {
			// The generator's own record of its polls (one object per
			// server per second), not a server's answer: nothing in it
			// may pass for one.
			for _, c := range caps {
				if c.Kind != KindUnknown {
					t.Errorf("%s line %d: taken for a %s answer", p, c.Line, c.Kind)
				}
			}
			polls++
			continue
		}
		if filepath.Base(filepath.Dir(p)) == "client" {
			// A publisher's ack log (PubAck replies): no server answer.
			for _, c := range caps {
				if c.Kind != KindUnknown {
					t.Errorf("%s line %d: ack log taken for a %s answer", p, c.Line, c.Kind)
				}
			}
			continue
		}
		if len(caps) == 0 {
			t.Errorf("%s: no capture", p)
		}
		n += len(caps)
	}
	if n == 0 {
		t.Skip("no bundles yet")
	}
	t.Logf("%d captures in %d bundle files, %d poll records", n, len(files), polls)
	if polls == 0 {
		t.Error("no polls.jsonl read (supercluster bundle)")
	}
}
