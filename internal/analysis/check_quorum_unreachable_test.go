package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

func TestIncidentQuorumUnreachable(t *testing.T) {
	fs, _ := runChecks(incidentModel(), Checks, nil)
	q := byCode(fs, "quorum-unreachable")
	if len(q) != 1 {
		t.Fatalf("%d quorum-unreachable findings, want 1: %+v", len(q), q)
	}
	f := q[0]
	if f.ClusterSize != 10 || f.Quorum != 6 || f.Reachable == nil || *f.Reachable != 5 || len(f.Missing) != 5 {
		t.Errorf("got size %d quorum %d reachable %v missing %v", f.ClusterSize, f.Quorum, f.Reachable, f.Missing)
	}
	// 2.10: add one temporary server (11 peers, 6 alive), then remove the five ids.
	if !strings.Contains(f.Remedy, "Add 1 temporary") || strings.Count(f.Remedy, "$JS.API.SERVER.REMOVE") != 5 {
		t.Errorf("remedy: %s", f.Remedy)
	}
	if f.Severity != report.Critical {
		t.Errorf("severity %s", f.Severity)
	}
}

func TestQuorumRemedyRescueOn215(t *testing.T) {
	m := incidentModel()
	for _, s := range m.Servers {
		s.Version = "2.15.2"
	}
	q := byCode(runCheck(checkQuorumUnreachable, m), "")
	if len(q) != 1 || !strings.Contains(q[0].Remedy, "$JS.API.META.RESCUE") {
		t.Fatalf("want a rescue remedy on 2.15: %+v", q)
	}
}
