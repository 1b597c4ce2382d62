package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

func TestServerRenamedOneFindingPerServer(t *testing.T) {
	m := renamedModel()
	fs := runAllChecks(t, m)
	got := byCode(fs, "server-renamed")
	if len(got) != 3 {
		t.Fatalf("%d server-renamed findings, want 3: %+v", len(got), got)
	}
	for _, f := range got {
		if f.Peer != natsfmt.PeerID("nats-"+f.Server[len("js-"):]) {
			t.Errorf("%s: peer %s is not its old id", f.Server, f.Peer)
		}
		if f.Group != "_meta_" || f.ClusterSize != 3 || f.Quorum != 2 || f.Reachable == nil || *f.Reachable != 0 || len(f.Missing) != 3 {
			t.Errorf("%s: cost %s %d/%d reachable %v missing %v", f.Server, f.Group, f.ClusterSize, f.Quorum, f.Reachable, f.Missing)
		}
		if f.Remedy == "" || !strings.Contains(f.Remedy, "What this destroys:") || !strings.Contains(f.Remedy, "not a voting member") {
			t.Errorf("%s: remedy does not start with what it destroys or misses the refused rescue: %s", f.Server, f.Remedy)
		}
	}
	// Only js-0's log deleted a stream after the rename, and only ORDERS.
	for _, f := range got {
		deleted := strings.Contains(f.Message, "deleted its copies of APP > ORDERS")
		if deleted != (f.Server == "js-0") || strings.Contains(f.Message, "OLD") {
			t.Errorf("%s: %s", f.Server, f.Message)
		}
	}
	// One problem per server: the old ids are no unknown peers, and the
	// renamed servers' own ids split nothing.
	for _, code := range []string{"peer-unknown", "peer-id-corrupt", "meta-split", "peer-offline"} {
		if n := len(byCode(fs, code)); n > 0 {
			t.Errorf("%d %s findings beside server-renamed: %+v", n, code, byCode(fs, code))
		}
	}
	// Each group it leaves without quorum has its quorum-unreachable, once,
	// naming the rename as the cause and pointing to its remedy.
	var groups []string
	for _, q := range byCode(fs, "quorum-unreachable") {
		groups = append(groups, q.Group)
		if len(q.Missing) != 3 || !strings.Contains(q.Message, "renamed server's old id") ||
			!strings.Contains(q.Remedy, "server-renamed") || strings.Contains(q.Remedy, "peer-remove") {
			t.Errorf("quorum-unreachable of %s: %+v", q.Group, q)
		}
	}
	if strings.Join(groups, " ") != "_meta_ S-R3F-x" {
		t.Errorf("quorum-unreachable for %v, want _meta_ and S-R3F-x", groups)
	}
}

// The remedy is the one the fixture of the bundle's version proved:
// reverting names works on 2.15.2, not on 2.12.1; the old-names-beside way
// works on both, with the peer-removes in the old names' order.
// TestServerRenamedRemedyByVersion: the ways out offered follow what the
// renamed servers did to the meta group (their new ids added, as 2.12.1
// did, or not, as 2.12.15 and 2.15.2) and the version, as the rename
// fixtures proved.
func TestServerRenamedRemedyByVersion(t *testing.T) {
	for _, tc := range []struct {
		version        string
		grown          bool
		revert, beside bool
		not            string
	}{
		{"2.15.2", false, true, true, "not a voting member"},
		{"2.12.15", false, true, false, "Not: servers named"},
		{"2.12.1", true, false, true, "Not: reverting server_name"},
	} {
		m := renamedModel()
		for _, s := range m.Servers {
			s.Version = tc.version
		}
		if tc.grown { // every meta view counts the three new ids too
			for _, g := range m.Groups {
				if g.Kind != "meta" {
					continue
				}
				for i := range g.Views {
					v := &g.Views[i]
					v.Peers = []string{natsfmt.PeerID("nats-0"), natsfmt.PeerID("nats-1"), natsfmt.PeerID("nats-2"),
						natsfmt.PeerID("js-0"), natsfmt.PeerID("js-1"), natsfmt.PeerID("js-2")}
					v.ClusterSize, v.Quorum = 6, 4
				}
			}
		}
		fs := byCode(runAllChecks(t, m), "server-renamed")
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", tc.version)
		}
		r := fs[0].Remedy
		if offersRevert(r) != tc.revert || offersBeside(r) != tc.beside || !strings.Contains(r, tc.not) {
			t.Errorf("%s (grown %v): remedy %s", tc.version, tc.grown, r)
		}
		if !strings.HasPrefix(r, "What this destroys:") {
			t.Errorf("%s: remedy does not begin with what it destroys: %s", tc.version, r)
		}
		if tc.beside {
			i0, i1, i2 := strings.Index(r, "stop nats-0"), strings.Index(r, "stop nats-1"), strings.Index(r, "stop nats-2")
			if i0 < 0 || i1 < i0 || i2 < i1 {
				t.Errorf("%s: order in remedy: %s", tc.version, r)
			}
		}
	}
}

// TestServerRenamedRemedyNothingDeleted: where no log shows a renamed
// server deleting a stream copy, what the rename destroys is said without
// naming any, and no parameter is left unfilled.
func TestServerRenamedRemedyNothingDeleted(t *testing.T) {
	m := renamedModel()
	m.Timeline = nil
	fs := byCode(runAllChecks(t, m), "server-renamed")
	if len(fs) == 0 {
		t.Fatal("no finding")
	}
	r := fs[0].Remedy
	if strings.Contains(r, "{{") || strings.Contains(r, "(here:") || !strings.Contains(r, "lists only its old id. Their messages") {
		t.Errorf("remedy: %s", r)
	}
}

func TestServerRenamedNotWhenOldNameRunsAgain(t *testing.T) {
	m := renamedModel()
	// nats-1 runs under its old name again (reverted): its id is no former id.
	m.Servers = append(m.Servers, &model.Server{Name: "nats-1", PeerID: natsfmt.PeerID("nats-1"), Alive: true, Sources: map[string]bool{"raftz": true}})
	fs := runAllChecks(t, m)
	for _, f := range byCode(fs, "server-renamed") {
		if f.Server == "js-1" {
			t.Errorf("js-1 reported renamed though nats-1 runs: %s", f.Message)
		}
	}
	if len(byCode(fs, "server-renamed")) != 2 {
		t.Errorf("want 2 server-renamed findings, got %d", len(byCode(fs, "server-renamed")))
	}
}
