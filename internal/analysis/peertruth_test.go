package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		if strings.Contains(f.Remedy, peerRemoveCommand(id)) {
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
			m := &Model{IDs: map[string]string{}}
			for _, n := range []string{"n1", "n2", "n3"} {
				m.IDs[natsfmt.PeerID(n)] = n
				src := map[string]bool{"store": true}
				if n == "n1" {
					src["raftz"] = true
				}
				m.Servers = append(m.Servers, &Server{Name: n, PeerID: natsfmt.PeerID(n), StoreDir: n, Sources: src})
			}
			v := View{GroupView: GroupView{Server: "n1", ClusterSize: 3, Quorum: 2, Source: "raftz",
				Peers: []string{natsfmt.PeerID("n1"), natsfmt.PeerID("n2"), natsfmt.PeerID("n3")}}, LeaderKnown: true}
			if tc.leader != "" {
				v.Leader = natsfmt.PeerID(tc.leader)
			}
			v.Alive = []string{natsfmt.PeerID("n3")}
			m.Groups = []*Group{{Name: "_meta_", Kind: "meta", Views: []View{v}}}
			d := departedPeers(m)
			if d[natsfmt.PeerID("n2")] != tc.departed {
				t.Errorf("n2 departed = %v, want %v", d[natsfmt.PeerID("n2")], tc.departed)
			}
		})
	}
}
