package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

func TestPeerOfflineSurvivableFailures(t *testing.T) {
	m := scaledModel()
	fs := runAllChecks(t, m)
	off := byCode(fs, "peer-offline")
	if len(off) != 2 || off[0].Server != "n4" || off[1].Server != "n5" {
		t.Fatalf("peer-offline: %+v", off)
	}
	n4 := off[0]
	if n4.Group != "_meta_" || n4.ClusterSize != 5 || n4.Reachable == nil || *n4.Reachable != 3 {
		t.Errorf("n4 meta cost: %s %d reachable %v", n4.Group, n4.ClusterSize, n4.Reachable)
	}
	want := map[string]bool{"_meta_: cluster_size 5, quorum 3, 3 live": false, "S-A (APP > A): cluster_size 3, quorum 2, 2 live": false, "S-B (APP > B): cluster_size 3, quorum 2, 1 live": false}
	for _, e := range n4.Evidence {
		for w := range want {
			if strings.Contains(e, w) {
				want[w] = true
			}
		}
	}
	for w, ok := range want {
		if !ok {
			t.Errorf("n4 evidence lacks %q: %v", w, n4.Evidence)
		}
	}
	// The remedy says what removal destroys before the commands, and lists
	// n4 before n5, one at a time.
	r := n4.Remedy
	if i, j, k := strings.Index(r, "destroys"), strings.Index(r, natsfmt.PeerID("n4")), strings.Index(r, natsfmt.PeerID("n5")); i < 0 || j < i || k < j {
		t.Errorf("remedy order: %s", r)
	}
	// Only B kept less than a quorum of live peers: one quorum-unreachable,
	// and nothing calls the departed ids unknown or corrupt.
	qu := byCode(fs, "quorum-unreachable")
	if len(qu) != 1 || qu[0].Group != "S-B" || qu[0].Reachable == nil || *qu[0].Reachable != 1 {
		t.Errorf("quorum-unreachable: %+v", qu)
	}
	for _, code := range []string{"peer-unknown", "peer-id-corrupt", "server-renamed"} {
		if n := len(byCode(fs, code)); n > 0 {
			t.Errorf("%d %s findings for departed servers", n, code)
		}
	}
}

func TestPeerOfflineNotWhenHeard(t *testing.T) {
	m := scaledModel()
	// n4 answered the captures: it is running, whatever the views say.
	m.Server("n4").Sources["raftz"] = true
	fs := runAllChecks(t, m)
	for _, f := range byCode(fs, "peer-offline") {
		if f.Server == "n4" {
			t.Errorf("n4 is live but reported offline")
		}
	}
}
