package analysis

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// withoutFiles copies a committed fixture's bundle folder and removes the
// given paths (relative to the bundle) from the copy.
func withoutFiles(t *testing.T, fixture string, rel ...string) string {
	t.Helper()
	dir := copyTree(t, filepath.Join(bundlesDir, fixture, "bundle"))
	for _, r := range rel {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(r))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// advisesPeerRemove says whether any finding's remedy peer-removes id.
func advisesPeerRemove(fs []report.Finding, id string) []string {
	var out []string
	for _, f := range fs {
		if strings.Contains(f.Remedy, remedy.PeerRemoveCommand(id)) {
			out = append(out, f.Code)
		}
	}
	return out
}

// TestPeerOfflineFollowerCaptures: the captures of a follower alone (n1 of
// v2.15.2-flat answers /raftz for _meta_, led by n3) have no last_seen for
// n2, another follower: nats-server stamps last_seen on a follower for its
// leader only (raft.go updateLeader, processAppendEntry). n2's own log runs
// past the capture to its graceful stop, so nothing may call it gone or
// advise its peer-remove. The same removal on scaledown-v2.12.1 (the meta
// leader n3's captures taken away) keeps n4 and n5 departed: their logs end
// in a stop 38 s before the followers' captures.
func TestPeerOfflineFollowerCaptures(t *testing.T) {
	flat := withoutFiles(t, "v2.15.2-flat", "n2-healthz.json", "n2-jsz.json", "n2-raftz.json", "n2-raftz-acc-_G.json", "n2-varz.json",
		"n3-healthz.json", "n3-jsz.json", "n3-raftz.json", "n3-raftz-acc-_G.json", "n3-varz.json", "n1-raftz-acc-_G.json")
	rep := analyze(t, flat)
	if off := byCode(rep.Findings, "peer-offline"); len(off) > 0 {
		t.Errorf("a running follower called gone: %s", off[0].Message)
	}
	if codes := advisesPeerRemove(rep.Findings, natsfmt.PeerID("n2")); len(codes) > 0 {
		t.Errorf("peer-remove of running n2 advised by %v", codes)
	}

	sd := withoutFiles(t, "scaledown-v2.12.1", "captures/n3")
	rep = analyze(t, sd)
	var gone []string
	for _, f := range byCode(rep.Findings, "peer-offline") {
		gone = append(gone, f.Server)
	}
	if strings.Join(gone, " ") != "n4 n5" {
		t.Errorf("followers' captures, departed n4 n5 (logs end in a stop): peer-offline for %v", gone)
	}
}

// TestDepartedNeedsLeaderView: on a small model, a follower's view that
// lacks last_seen for another follower says nothing of it; the leader's
// view that lacks it does.
func TestDepartedNeedsLeaderView(t *testing.T) {
	for _, tc := range []struct {
		name     string
		leader   string
		departed bool
	}{{"follower view", "n3", false}, {"leader view", "n1", true}, {"leaderless view", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &model.Model{IDs: map[string]string{}}
			for _, n := range []string{"n1", "n2", "n3"} {
				m.IDs[natsfmt.PeerID(n)] = n
				src := map[string]bool{"store": true}
				if n == "n1" {
					src["raftz"] = true
				}
				m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: natsfmt.PeerID(n), StoreDir: n, Sources: src})
			}
			v := model.View{GroupView: model.GroupView{Server: "n1", ClusterSize: 3, Quorum: 2, Source: "raftz",
				Peers: []string{natsfmt.PeerID("n1"), natsfmt.PeerID("n2"), natsfmt.PeerID("n3")}}, LeaderKnown: true}
			if tc.leader != "" {
				v.Leader = natsfmt.PeerID(tc.leader)
			}
			v.Alive = []string{natsfmt.PeerID("n3")}
			m.Groups = []*model.Group{{Name: "_meta_", Kind: "meta", Views: []model.View{v}}}
			d := facts.DepartedPeers(m, facts.FormerIDs(m))
			if d[natsfmt.PeerID("n2")] != tc.departed {
				t.Errorf("n2 departed = %v, want %v", d[natsfmt.PeerID("n2")], tc.departed)
			}
		})
	}
}

// TestDeletedStreamsNotLost: on deleted-v2.12.15 and deleted-v2.15.3 two
// streams were deleted through the JetStream API after a restart that
// logged them ("Restored N messages"), and the meta layer compacted the
// removeStream ops into its snapshot (one-minute tick, clean stop): no
// store holds them, no meta WAL records their delete, and a restarted copy
// served only KEEP. That is a delete, not a loss: no asset-lost.
func TestDeletedStreamsNotLost(t *testing.T) {
	for _, fx := range []string{"deleted-v2.12.15", "deleted-v2.15.3"} {
		t.Run(fx, func(t *testing.T) {
			var want struct {
				Expect struct {
					Deleted     []string            `json:"deleted"`
					Restored    map[string][]string `json:"restored_lines"`
					ServedAfter []string            `json:"served_after"`
				} `json:"expect"`
			}
			b, err := os.ReadFile(filepath.Join(bundlesDir, fx, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			x := want.Expect
			if len(x.Deleted) != 2 || len(x.Restored) == 0 || slices.Contains(x.ServedAfter, x.Deleted[0]) {
				t.Fatalf("fixture does not show logged, deleted, unserved streams: %+v", x)
			}
			rep := analyze(t, filepath.Join(bundlesDir, fx, "bundle"))
			for _, f := range byCode(rep.Findings, "asset-lost") {
				t.Errorf("deleted stream reported lost: %s", f.Message)
			}
			for _, st := range rep.Streams {
				if slices.Contains(x.Deleted, st.Name) {
					t.Errorf("deleted stream %s in the report's streams", st.Name)
				}
			}
		})
	}
}

// TestAssetLostNeedsCause: a stream the logs name, in no store, that the
// holder's intact meta state no longer assigns and whose delete no meta WAL
// keeps is what a compacted API delete leaves: no finding; the same stream
// with the holder's meta snapshot corrupt and dropped at a start its log
// shows is lost, the snapshot its cause. Not when the log shows no such
// start (the snapshot was damaged after the server's last start: it has
// dropped nothing yet), nor when another server's intact snapshot of the
// same term and index does not assign the stream (it was gone before that
// index: deleted on purpose), nor on a release that refuses to start on a
// corrupt meta snapshot rather than drop it, nor when it was last seen
// before the run in which the drop is logged (perturbed-metasnapdel-*).
func TestAssetLostNeedsCause(t *testing.T) {
	gone := model.AssetKey{Account: "APP", Stream: "GONE"}
	start := time.Date(2026, 12, 7, 4, 46, 10, 0, time.UTC)
	mkModel := func(corrupt, logged bool, version string, other map[model.AssetKey]bool, seen time.Time) *model.Model {
		m := &model.Model{IDs: map[string]string{}}
		m.Servers = []*model.Server{{Name: "a", PeerID: natsfmt.PeerID("a"), StoreDir: "a", Version: version, Sources: map[string]bool{"store": true, "log": true},
			Meta: &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{}, SnapshotCorrupt: corrupt, SnapshotTerm: 2, SnapshotIndex: 11}}}
		if other != nil {
			m.Servers = append(m.Servers, &model.Server{Name: "b", PeerID: natsfmt.PeerID("b"), StoreDir: "b", Version: version, Sources: map[string]bool{"store": true, "log": true},
				Meta: &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{}, SnapshotTerm: 2, SnapshotIndex: 11, SnapshotAssigns: other}})
		}
		three := uint64(3)
		m.LogStreams = map[model.ServerID]map[model.AssetKey]model.LogStream{"a": {gone: {TimelineEvent: model.TimelineEvent{Time: seen, Server: "a", Kind: "restored-stream", Account: "APP", Stream: "GONE",
			Text: "  Restored 3 messages for stream 'APP > GONE' in 1ms", File: "a.log", Line: 9}, Restored: &three}}}
		if !seen.IsZero() {
			// the start of the run in which the drop is logged
			m.Timeline = append(m.Timeline, model.TimelineEvent{Time: start, Server: "a", Kind: string(natsfmt.EventStart), Text: "Starting nats-server", File: "a.log", Line: 15})
		}
		if logged {
			m.Timeline = append(m.Timeline, model.TimelineEvent{Time: time.Date(2026, 12, 7, 4, 46, 11, 0, time.UTC), Server: "a", Kind: string(natsfmt.EventSnapshotCorrupt),
				Text: "RAFT [a - _meta_] Snapshot corrupt, checksums did not match", File: "a.log", Line: 20})
		}
		return m
	}
	for _, tc := range []struct {
		name            string
		corrupt, logged bool
		version         string
		other           map[model.AssetKey]bool
		seen            time.Time
		lost            bool
	}{
		{"intact meta state, no cause", false, false, "2.12.15", nil, time.Time{}, false},
		{"dropped at a start the log shows", true, true, "2.12.15", nil, time.Time{}, true},
		{"dropped, another intact snapshot of that index assigns it", true, true, "2.12.15", map[model.AssetKey]bool{gone: true}, time.Time{}, true},
		{"corrupt, the log shows no start on it", true, false, "2.12.15", nil, time.Time{}, false},
		{"dropped, another intact snapshot of that index does not assign it", true, true, "2.12.15", map[model.AssetKey]bool{}, time.Time{}, false},
		{"corrupt on a release that refuses to start on it", true, true, "2.15.3", nil, time.Time{}, false},
		{"dropped, seen in the run that dropped it", true, true, "2.12.15", nil, start.Add(time.Second), true},
		{"dropped, last seen before the run that dropped it", true, true, "2.12.15", nil, start.Add(-time.Minute), false},
	} {
		fs := runCheck(meta.CheckAssetLost, mkModel(tc.corrupt, tc.logged, tc.version, tc.other, tc.seen))
		switch {
		case tc.lost && (len(fs) != 1 || !strings.Contains(fs[0].Message, "meta snapshot dropped")):
			t.Errorf("%s: want the stream lost, the snapshot its cause: %+v", tc.name, fs)
		case !tc.lost && len(fs) != 0:
			t.Errorf("%s: no loss, yet %d finding(s): %s", tc.name, len(fs), fs[0].Message)
		}
	}
}

// TestTruncatedArchiveIsNoStoreDamage: a .tar.gz upload cut short loses
// every entry after the cut, unlisted, and tears the one it ends in. What
// the bundle then lacks is not in the bundle, not missing on the server:
// cut at 30..90% of the committed v2.12.1-archive bundle.tar.gz and of the
// v2.10.22-per-server tree packed the same way (healthy clusters), no
// finding may call a store damaged, a replica behind, an index stale or a
// consumer orphaned (on main the 60% cut of the latter gave "meta.inf
// missing; the server skips this stream at start" and three replica-gaps,
// the former an orphan-risk from a torn meta WAL).
// The tree is packed as tar does in directory order, where a folder's
// meta.inf can come after its msgs/ (metaLastTarGz).
func TestTruncatedArchiveIsNoStoreDamage(t *testing.T) {
	whole, err := os.ReadFile(filepath.Join(bundlesDir, "v2.12.1-archive", "bundle.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	packed := metaLastTarGz(t, filepath.Join(bundlesDir, "v2.10.22-per-server", "bundle"))
	dir := t.TempDir()
	for name, b := range map[string][]byte{"v2.12.1-archive": whole, "v2.10.22-per-server": packed} {
		for _, pct := range []int{30, 45, 60, 65, 75, 90} {
			path := writeFile(t, filepath.Join(dir, name, strconv.Itoa(pct)+".tar.gz"), b[:len(b)*pct/100])
			rep := analyze(t, path)
			for _, f := range rep.Findings {
				switch f.Code {
				case "store-corrupt", "replica-gap", "replica-divergence", "index-mismatch", "orphan-risk", "asset-lost", "acked-lost":
					t.Errorf("%s cut at %d%%: %s %s", name, pct, f.Code, f.Message)
				}
			}
		}
	}
}

// metaLastTarGz packs the files under dir as a .tar.gz under "bundle/",
// each folder's meta.inf and meta.sum after its sub-folders, as `tar czf`
// lays out a tree whose directory order lists msgs/ first.
func metaLastTarGz(t *testing.T, dir string) []byte {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	key := func(rel string) string { return strings.ReplaceAll(rel, "/meta.", "/~meta.") }
	sort.Slice(files, func(i, j int) bool { return key(files[i]) < key(files[j]) })
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "bundle/" + rel, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTermBelowEntriesIsNoDamage: a v2.10.22 follower's _meta_/tav.idx
// holding term 0 and a vote while its WAL and snapshot are at a higher term
// (the state issue 16 saw a healthy v2.10.22 follower write; here nats-1's
// file of v2.10.22-per-server rewritten so) is what every version writes
// when it learns a term by catching up (raft.go processAppendEntry writes
// tav.idx for new entries only): no store-corrupt and no note
// (tavlag-v2.10.22 holds the same state written by a real v2.10.22 server).
func TestTermBelowEntriesIsNoDamage(t *testing.T) {
	dir := copyTree(t, filepath.Join(bundlesDir, "v2.10.22-per-server", "bundle"))
	tav := filepath.Join(dir, "nats-1", "data", "jetstream", "$SYS", "_js_", "_meta_", "tav.idx")
	b := append(make([]byte, 8), natsfmt.PeerID("nats-2")...) // term 0, vote for nats-2
	if err := os.WriteFile(tav, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, dir)
	for _, f := range rep.Findings {
		if strings.HasSuffix(f.File, "_meta_/tav.idx") || strings.Contains(f.Message, "tav.idx") {
			t.Errorf("%s %s: %s", f.Severity, f.Code, f.Message)
		}
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "tav.idx") {
			t.Errorf("note on the term below the entries, which tavlag-v2.10.22 shows a server writing: %s", n)
		}
	}
}

// storeNLayout is the folder a support engineer makes by hand: one folder
// per server named by its position, not its name (store-1, store-2, ...,
// in another order than the servers'), each holding data/jetstream, the
// log as nats.log and the captures under monitoring/, below top.
func storeNLayout(top string) func(i int, part string) string {
	return func(i int, part string) string {
		d := fmt.Sprintf("%sstore-%d/", top, (i+1)%3+1+3*(i/3))
		switch {
		case part == "store":
			return d + "data/jetstream"
		case part == "log":
			return d + "nats.log"
		default:
			return d + "monitoring/" + strings.TrimPrefix(part, "capture:") + ".json"
		}
	}
}

// TestStoreNLayouts: fixtures laid out one folder per server named by its
// position (store-N/{data/jetstream, nats.log, monitoring/*.json}), at the
// top and nested below a/b/TOP/, give the same analysis as
// committed: a store is paired with the log and captures of the folder that
// holds it and no other store (issue 21 item 5: main gave unnamed-N servers
// and lost the replica-gap of scaledown-v2.12.1).
func TestStoreNLayouts(t *testing.T) {
	// A departed server's replica-gap, a standalone server beside a cluster.
	for _, fx := range []string{"scaledown-v2.12.1", "lifecycle-v2.12.1"} {
		for _, top := range []string{"", "a/b/TOP/"} {
			t.Run(fx+"/"+top, func(t *testing.T) {
				sameAnalysis(t, fx, rearranged(t, fx, storeNLayout(top)), false)
			})
		}
	}
}

// unpackArchive writes the entries of a committed .zip or .tar.gz under
// dir as unzip or tar xzf would (folders too: empty ones matter).
func unpackArchive(t *testing.T, archive, dir string) {
	t.Helper()
	put := func(name string, isDir bool, r io.Reader) {
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(name, "/")))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("entry %q escapes", name)
		}
		if isDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, b)
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			put(f.Name, f.FileInfo().IsDir(), rc)
			rc.Close()
		}
		return
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		put(h.Name, h.Typeflag == tar.TypeDir, tr)
	}
}

// TestArchiveFormsSameAnalysis: every committed archive fixture gives the
// same servers, figures and findings as the archive, as the folder it
// unpacks into, as that folder's one top folder, and nested two folders
// deeper (issue 21 item 5).
func TestArchiveFormsSameAnalysis(t *testing.T) {
	archives, _ := filepath.Glob(filepath.Join(bundlesDir, "*", "bundle.*"))
	if len(archives) == 0 {
		t.Fatal("no archive fixture")
	}
	for _, a := range archives {
		t.Run(filepath.Base(filepath.Dir(a))+"/"+filepath.Base(a), func(t *testing.T) {
			want := qaSummary(analyze(t, a))
			if len(want.Servers) == 0 {
				t.Fatal("the archive gives no server")
			}
			dir := t.TempDir()
			unpacked := filepath.Join(dir, "unpacked")
			unpackArchive(t, a, unpacked)
			forms := map[string]string{"unpacked folder": unpacked}
			if ents, _ := os.ReadDir(unpacked); len(ents) == 1 && ents[0].IsDir() {
				forms["its top folder"] = filepath.Join(unpacked, ents[0].Name())
			}
			deep := filepath.Join(dir, "deep")
			copyInto(t, unpacked, filepath.Join(deep, "x", "y"))
			forms["nested deeper"] = deep
			for form, path := range forms {
				got := qaSummary(analyze(t, path))
				for _, d := range []struct {
					what string
					w, g []string
				}{{"servers", want.Servers, got.Servers}, {"figures", want.Figures, got.Figures}, {"findings", want.Findings, got.Findings}} {
					if strings.Join(d.w, "\n") != strings.Join(d.g, "\n") {
						t.Errorf("%s: %s differ:\n archive %q\n    form %q", form, d.what, d.w, d.g)
					}
				}
			}
		})
	}
}
