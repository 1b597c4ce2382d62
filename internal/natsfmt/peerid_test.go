package natsfmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestPeerIDFromWant: for every server of every committed bundle, the peer
// id the live server reported (want.json, from its /jsz and /raftz) is the
// hash of its name.
func TestPeerIDFromWant(t *testing.T) {
	n := 0
	files, _ := filepath.Glob("../../testdata/bundles/*/want.json")
	for _, k := range files {
		b, err := os.ReadFile(k)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Servers []struct {
				Name   string `json:"name"`
				PeerID string `json:"peer_id"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		for _, s := range w.Servers {
			if s.PeerID == "" {
				continue
			}
			n++
			if got := PeerID(s.Name); got != s.PeerID {
				t.Errorf("%s: PeerID(%q) = %q, the server said %q", k, s.Name, got, s.PeerID)
			}
			if !ValidPeerID(s.PeerID) {
				t.Errorf("%s: ValidPeerID(%q) false", k, s.PeerID)
			}
		}
	}
	if n == 0 {
		t.Fatal("no server with a peer id in any want.json")
	}
	t.Logf("%d servers", n)
}

func TestPeerIDRules(t *testing.T) {
	// Pairs from formats.md 5.1 (verified against real servers) and the
	// incident-000 thread (a real 2.10.22 cluster's raftz).
	for name, id := range map[string]string{
		"n1": "fjFyEjc1", "n2": "44jzkV9D", "n3": "BXScrY9i",
		"nats-0": "S1Nunr6R", "nats-1": "yrzKKRBu", "nats-2": "cnrtt3eg", "nats-3": "bkCGheKT", "nats-4": "HuYMtjaW",
	} {
		if PeerID(name) != id {
			t.Errorf("PeerID(%q) = %q, want %q", name, PeerID(name), id)
		}
	}
	if PeerID("") != NoLeaderPeer {
		t.Errorf("PeerID(\"\") = %q, NoLeaderPeer is %q", PeerID(""), NoLeaderPeer)
	}
	// Stored ids seen with bit flips in incident 000.
	for _, id := range []string{"yrzKKR@u", "\"kCGheKT", "S1Nunr6", "S1Nunr6RR"} {
		if ValidPeerID(id) {
			t.Errorf("ValidPeerID(%q) true", id)
		}
	}
	if d := BitDistance("yrzKKRBu", "yrzKKR@u"); d != 1 {
		t.Errorf("BitDistance = %d, want 1", d)
	}
	if d := BitDistance("ab", "abcd"); d != 16 {
		t.Errorf("BitDistance over lengths = %d, want 16", d)
	}
	if p, d, ok := NearestPeer("yrzKKR@u", []string{"S1Nunr6R", "yrzKKRBu"}); !ok || p != "yrzKKRBu" || d != 1 {
		t.Errorf("NearestPeer = %q %d %v", p, d, ok)
	}
	for size, q := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 0: 1} {
		if Quorum(size) != q {
			t.Errorf("Quorum(%d) = %d, want %d", size, Quorum(size), q)
		}
	}
}
