package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

func TestPeerUnknownFarID(t *testing.T) {
	m := incidentModel()
	m.Groups[0].Views = []model.View{{GroupView: model.GroupView{Server: "nats-0", ClusterSize: 6, Peers: []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW", natsfmt.PeerID("nats-9")}, Source: "peers.idx"}}}
	fs, _ := runChecks(m, Checks, defaultSettings(), nil)
	if n := len(byCode(fs, "peer-unknown")); n != 1 {
		t.Errorf("%d peer-unknown, want 1", n)
	}
	if n := len(byCode(fs, "peer-id-corrupt")); n != 0 {
		t.Errorf("%d peer-id-corrupt, want 0", n)
	}
	if n := len(byCode(fs, "quorum-unreachable")); n != 0 {
		t.Errorf("5 of 6 reachable must not be unreachable")
	}
}

// TestPeerUnknownHealedBySnapshot: an unknown id only peers.idx lists,
// whose group's snapshot peer state does not, is gone at the next start of
// a 2.12.5+ server (info, nothing to remove); on 2.10 it stays a warning
// with the peer-remove.
func TestPeerUnknownHealedBySnapshot(t *testing.T) {
	five := []string{"HuYMtjaW", "S1Nunr6R", "bkCGheKT", "cnrtt3eg", "yrzKKRBu"}
	for version, want := range map[string]report.Severity{"2.15.2": report.Info, "2.10.22": report.Warning} {
		m := incidentModel()
		for _, s := range m.Servers {
			s.Version = version
		}
		m.Groups[0].Views = []model.View{{GroupView: model.GroupView{Server: "nats-0", ClusterSize: 6, Peers: append(slices.Clone(five), natsfmt.PeerID("nats-9")), Source: "peers.idx"},
			StartPeers: five, StartSize: 5, StartFile: "snapshots/snap.1.30"}}
		fs := byCode(runCheck(peers.CheckPeerUnknown, m), "")
		if len(fs) != 1 {
			t.Fatalf("%s: %d findings", version, len(fs))
		}
		got := fs[0].Severity
		if got == "" {
			got = report.Warning // the check's own
		}
		if got != want || (want == report.Info) != strings.HasPrefix(fs[0].Remedy, "Nothing to remove") {
			t.Errorf("%s: %s, remedy %s", version, got, fs[0].Remedy)
		}
	}
}
