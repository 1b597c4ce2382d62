package analysis

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

func TestIncidentPeerIDCorrupt(t *testing.T) {
	m := incidentModel()
	fs, outcomes := runChecks(m, Checks, defaultSettings(), nil)
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

// TestPeerIDCorruptHealedBySnapshot: on the real servers' incident-000 edit
// (phantom ids in every _meta_/peers.idx, the snapshot untouched), what the
// servers did at the restart decides the verdict: where they elected a
// leader (v2.15.3: they start from the snapshot's peers and rewrite
// peers.idx) each phantom is a warning with nothing to remove and no group
// is stuck; where they did not (v2.12.4, v2.10.22) each is critical with a
// peer-remove, beside quorum-unreachable.
func TestPeerIDCorruptHealedBySnapshot(t *testing.T) {
	n := 0
	for _, fx := range fixtures(t) {
		if !strings.HasSuffix(fx.name, "-incident-phantom-peers") {
			continue
		}
		n++
		var x struct {
			Leader string `json:"leader"`
		}
		if err := json.Unmarshal(fx.want.Expect, &x); err != nil {
			t.Fatal(err)
		}
		rep := analyze(t, fx.forms[0])
		healed := x.Leader != ""
		fs := byCode(rep.Findings, "peer-id-corrupt")
		if len(fs) != 5 {
			t.Errorf("%s: %d peer-id-corrupt, want the 5 phantoms", fx.name, len(fs))
		}
		for _, f := range fs {
			warned := f.Severity == report.Warning && strings.HasPrefix(f.Remedy, "Nothing to remove") && !strings.Contains(f.Remedy, "SERVER.REMOVE")
			if warned != healed || !healed && (f.Severity != report.Critical || !strings.Contains(f.Remedy, "SERVER.REMOVE")) {
				t.Errorf("%s (leader %q after the restart): %s %s; remedy %s", fx.name, x.Leader, f.Severity, f.Message, f.Remedy)
			}
		}
		if stuck := len(byCode(rep.Findings, "quorum-unreachable")) > 0; stuck == healed {
			t.Errorf("%s (leader %q after the restart): quorum-unreachable raised: %v", fx.name, x.Leader, stuck)
		}
	}
	if n < 3 {
		t.Fatalf("%d phantom-peers fixtures, want v2.10.22, v2.12.4 and v2.15.3", n)
	}
}
