package analysis

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// realMetaSnapshot is the _meta_ snapshot a real v2.15.2 server wrote
// (testdata/bundles/v2.15.2-flat, n1).
func realMetaSnapshot(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundlesDir, "v2.15.2-flat/bundle/store-n1/$SYS/_js_/_meta_/snapshots/snap.1.11"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func snapFile(t *testing.T, srv string, b []byte) store.MetaSnapFile {
	t.Helper()
	snap, err := raftlog.DecodeSnapshot("snap.1.11", "_meta_", b)
	if snap == nil {
		t.Fatalf("%s: %v", srv, err)
	}
	return store.MetaSnapFile{Srv: &model.Server{Name: srv}, File: srv + "/$SYS/_js_/_meta_/snapshots/snap.1.11", B: b, Snap: snap}
}

// TestMetaSnapshotDamageLocated: one bit flipped in a copy of a real meta
// snapshot is found at its byte, in the payload and in the checksum; two
// bits are found by comparing with another server's intact copy, and
// without one the finding says the damage is not located.
func TestMetaSnapshotDamageLocated(t *testing.T) {
	orig := realMetaSnapshot(t)
	good := snapFile(t, "n2", orig)
	if !good.Snap.ChecksumOK {
		t.Fatal("the real snapshot fails its checksum")
	}
	data := int(good.Snap.DataOffset)
	mid := data + (len(orig)-8-data)/2
	twoBits := func(b []byte) []byte { return flipBit(mid+5, 4)(flipBit(mid, 1)(b)) }
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
		others  []store.MetaSnapFile
		want    int64
		say     string
	}{
		{"payload bit", flipBit(mid, 2), nil, int64(mid), "bit 2 of byte"},
		{"header bit", flipBit(3, 0), nil, 3, "in the header"},
		{"checksum bit", flipBit(len(orig)-3, 7), nil, int64(len(orig) - 3), "in the checksum itself"},
		{"two bits, intact copy elsewhere", twoBits, []store.MetaSnapFile{good}, int64(mid), "differ from n2's intact snapshot"},
		{"two bits, nothing to compare", twoBits, nil, int64(len(orig) - 8), "not located"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := snapFile(t, "n1", tc.corrupt(append([]byte(nil), orig...)))
			if bad.Snap.ChecksumOK {
				t.Fatal("the damaged copy passes its checksum")
			}
			where, off := store.LocateSnapshotDamage(bad, append([]store.MetaSnapFile{bad}, tc.others...))
			if off != tc.want || !strings.Contains(where, tc.say) {
				t.Errorf("located at %d (%s), want %d and %q", off, where, tc.want, tc.say)
			}
		})
	}
}

// metaSnapModel: three servers, s0 and s1 with corrupt meta snapshots, s2
// intact and assigning both streams; s0 stores R1 stream L0 and R3 ORDERS.
func metaSnapModel(version string, after int) *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	var peers []string
	for _, n := range []string{"s0", "s1", "s2"} {
		id := natsfmt.PeerID(n)
		m.IDs[id] = n
		peers = append(peers, id)
		m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: id, StoreDir: n, Version: version, Sources: map[string]bool{"store": true}})
	}
	full := map[model.AssetKey]*model.Assignment{
		{Account: "$G", Stream: "L0"}:     {Account: "$G", Stream: "L0", Peers: peers[:1], Replicas: 1},
		{Account: "$G", Stream: "ORDERS"}: {Account: "$G", Stream: "ORDERS", Peers: peers, Replicas: 3},
	}
	m.Servers[0].Meta = &model.MetaState{Source: "the meta WAL after a corrupt snapshot", Streams: map[model.AssetKey]*model.Assignment{}, SnapshotCorrupt: true, AfterSnapshot: after}
	m.Servers[1].Meta = &model.MetaState{Source: "the meta WAL after a corrupt snapshot", Streams: map[model.AssetKey]*model.Assignment{}, SnapshotCorrupt: true}
	m.Servers[2].Meta = &model.MetaState{Source: "snapshot+wal", Streams: full}
	g := &model.Group{Name: "_meta_", Kind: "meta"}
	for i, n := range []string{"s0", "s1", "s2"} {
		g.Views = append(g.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 3, Term: uint64(1 + i), Peers: peers, Source: "peers.idx"}})
	}
	m.Groups = []*model.Group{g}
	for _, st := range []struct {
		name string
		r    int
	}{{"L0", 1}, {"ORDERS", 3}} {
		m.Streams = append(m.Streams, &model.Stream{Account: "$G", Name: st.name, Replicas: st.r,
			Copies: []*model.StreamCopy{{Server: "s0", Path: "s0/$G/streams/" + st.name, Messages: 10, LastSeq: 10, Replicas: st.r}}})
	}
	return m
}

// TestOrphanRiskCorruptMetaSnapshot: a server with a corrupt meta snapshot
// is judged against what its version recovers: on 2.12 with WAL entries
// after the snapshot, its WAL-only state (both streams are orphans); with
// none, the leader's snapshot (no orphan); on 2.14 and 2.15, nothing
// (skipped: JetStream does not start).
func TestOrphanRiskCorruptMetaSnapshot(t *testing.T) {
	for _, tc := range []struct {
		version string
		after   int
		want    []string
		skipped bool
	}{
		{"2.12.1", 1, []string{"L0", "ORDERS"}, false},
		{"2.12.15", 1, []string{"L0", "ORDERS"}, false},
		{"2.12.1", 0, nil, false},
		{"2.14.10", 1, nil, true},
		{"2.15.2", 1, nil, true},
	} {
		t.Run(fmt.Sprintf("%s/after=%d", tc.version, tc.after), func(t *testing.T) {
			m := metaSnapModel(tc.version, tc.after)
			p := check.NewPass(m, facts.ComputeAll(m), &meta.CheckOrphanRisk, defaultSettings(), nil)
			var got []string
			for _, f := range meta.CheckOrphanRisk.Run(p) {
				got = append(got, f.Stream)
				if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, "meta snapshot is corrupt") }) {
					t.Errorf("%s: evidence does not say why: %v", f.Stream, f.Evidence)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("orphan-risk for %v, want %v", got, tc.want)
			}
			if skipped := len(p.Skipped) > 0; skipped != tc.skipped {
				t.Errorf("skipped %v (%v), want %v", skipped, p.Skipped, tc.skipped)
			}
		})
	}
}

// TestMetaSnapNextStart: the evidence names each version's behaviour and,
// on 2.15, the lost quorum.
func TestMetaSnapNextStart(t *testing.T) {
	m := metaSnapModel("2.15.2", 1)
	ev := strings.Join(store.MetaSnapNextStart(m.Servers[0], 2, 3), " ")
	if !strings.Contains(ev, "Can't start JetStream") || !strings.Contains(ev, "below the quorum of 2") || strings.Contains(ev, "orphans") {
		t.Errorf("2.15: %s", ev)
	}
	m = metaSnapModel("2.12.1", 1)
	ev = strings.Join(store.MetaSnapNextStart(m.Servers[0], 2, 3), " ")
	if !strings.Contains(ev, "deletes as orphans") || strings.Contains(ev, "Can't start") {
		t.Errorf("2.12 with WAL entries: %s", ev)
	}
	ev = strings.Join(store.MetaSnapNextStart(m.Servers[1], 2, 3), " ")
	if !strings.Contains(ev, "installs its own snapshot") || strings.Contains(ev, "orphans") {
		t.Errorf("2.12 with an empty WAL: %s", ev)
	}
}

// TestSyncSettingRead: the sync interval a real server ran with (30 s in
// the metasnap scenarios) is read from its captured /varz or /jsz, and,
// in a bundle holding only a copy of its config file and log, from the
// config found by its content.
func TestSyncSettingRead(t *testing.T) {
	src := filepath.Join(bundlesDir, "metasnap-v2.15.2", "bundle")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	m := loadDir(t, src)
	s := m.Server("ms-0")
	if s == nil || s.Sync == nil || s.Sync.Interval != 30*time.Second || !strings.Contains(s.Sync.Source, "/varz") && !strings.Contains(s.Sync.Source, "/jsz") {
		t.Fatalf("ms-0 sync from the captures: %+v", s)
	}
	dir := t.TempDir()
	for _, f := range []string{"conf/ms-0.conf", "ms-0.log"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		// Named like neither a config nor a log: found by content.
		if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(f, "/", "-")+".txt"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m = loadDir(t, dir)
	s = m.Server("ms-0")
	if s == nil || s.Sync == nil || s.Sync.Interval != 30*time.Second || s.Sync.Source != "config conf-ms-0.conf.txt" {
		t.Fatalf("ms-0 sync from the config: %+v", s)
	}
}

func loadDir(t *testing.T, dir string) *model.Model {
	t.Helper()
	b, err := bundle.Open(dir, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return Load(b)
}
