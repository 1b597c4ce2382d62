package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

func TestPeerUnknownFarID(t *testing.T) {
	m := incidentModel()
	m.Groups[0].Views = []View{{GroupView: GroupView{Server: "nats-0", ClusterSize: 6, Peers: []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW", natsfmt.PeerID("nats-9")}, Source: "peers.idx"}}}
	fs, _ := runChecks(m, Checks, nil)
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
