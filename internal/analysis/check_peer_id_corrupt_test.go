package analysis

import (
	"strings"
	"testing"
)

func TestIncidentPeerIDCorrupt(t *testing.T) {
	m := incidentModel()
	fs, outcomes := runChecks(m, Checks, nil)
	if broke := notRun(outcomes); len(broke) > 0 {
		t.Fatalf("checks not run: %v", broke)
	}
	got := map[string]string{}
	for _, f := range byCode(fs, "peer-id-corrupt") {
		if f.LikelyOrigin == nil {
			t.Errorf("%s: no likely origin", f.Peer)
			continue
		}
		if f.LikelyOrigin.Bits != 1 {
			t.Errorf("%s: %d bits from %s", f.Peer, f.LikelyOrigin.Bits, f.LikelyOrigin.Peer)
		}
		got[f.Peer] = f.LikelyOrigin.Server
		if !strings.Contains(f.Remedy, "$JS.API.SERVER.REMOVE") {
			t.Errorf("%s: remedy lacks the raw request: %s", f.Peer, f.Remedy)
		}
	}
	want := map[string]string{`"kCGheKT`: "nats-3", "cnr4t3eg": "nats-2", "cnrtu3eg": "nats-2", "yrzKKR@u": "nats-1", "yrzKKRBt": "nats-1"}
	if len(got) != len(want) {
		t.Fatalf("peer-id-corrupt for %v, want %v", got, want)
	}
	for p, s := range want {
		if got[p] != s {
			t.Errorf("%s: origin %q, want %q", p, got[p], s)
		}
	}
	if n := len(byCode(fs, "peer-unknown")); n != 0 {
		t.Errorf("%d peer-unknown findings, want 0", n)
	}
}
