package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

func TestIncidentQuorumUnreachable(t *testing.T) {
	fs, _ := runChecks(incidentModel(), Checks, defaultSettings(), nil)
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
	q := byCode(runCheck(peers.CheckQuorumUnreachable, m), "")
	if len(q) != 1 || !strings.Contains(q[0].Remedy, "$JS.API.META.RESCUE") {
		t.Fatalf("want a rescue remedy on 2.15: %+v", q)
	}
}

// TestQuorumFromSnapshotPeersByVersion: peers.idx inflated to 10 while the
// meta snapshot's peer state lists the 5 servers (the incident's edit): a
// 2.12.5+ or 2.14+ server starts from the snapshot, so no group is stuck;
// 2.10 and 2.12.4 start from peers.idx; an unknown version keeps the
// finding and says both.
func TestQuorumFromSnapshotPeersByVersion(t *testing.T) {
	five := []string{"HuYMtjaW", "S1Nunr6R", "bkCGheKT", "cnrtt3eg", "yrzKKRBu"}
	for _, tc := range []struct {
		version string
		want    int
		says    string
	}{
		{"2.15.3", 0, ""},
		{"2.12.5", 0, ""},
		{"2.12.4", 1, "which starts the group from peers.idx"},
		{"2.10.22", 1, "which starts the group from peers.idx"},
		{"", 1, "version is not known"},
	} {
		m := incidentModel()
		for _, s := range m.Servers {
			s.Version = tc.version
		}
		for i := range m.Groups[0].Views {
			v := &m.Groups[0].Views[i]
			v.StartPeers, v.StartSize, v.StartFile = five, 5, "snapshots/snap.1.30"
		}
		q := byCode(runCheck(peers.CheckQuorumUnreachable, m), "")
		if len(q) != tc.want {
			t.Fatalf("%q: %d findings, want %d: %+v", tc.version, len(q), tc.want, q)
		}
		if tc.want > 0 && !strings.Contains(strings.Join(q[0].Evidence, "\n"), tc.says) {
			t.Errorf("%q: evidence %q lacks %q", tc.version, q[0].Evidence, tc.says)
		}
	}
	// A live view of the inflated set (raftz: the server runs with it now)
	// is stuck whatever the version does at its next start.
	m := incidentModel()
	for _, s := range m.Servers {
		s.Version = "2.15.3"
	}
	live := m.Groups[0].Views[0]
	live.Source = "raftz"
	m.Groups[0].Views = append(m.Groups[0].Views, live)
	for i := range m.Groups[0].Views {
		v := &m.Groups[0].Views[i]
		if v.Source == "peers.idx" {
			v.StartPeers, v.StartSize, v.StartFile = five, 5, "snapshots/snap.1.30"
		}
	}
	if q := byCode(runCheck(peers.CheckQuorumUnreachable, m), ""); len(q) != 1 {
		t.Errorf("live inflated view on 2.15.3: %d findings, want 1", len(q))
	}
}

func TestStartsFromSnapshotPeers(t *testing.T) {
	for v, want := range map[string][2]bool{
		"2.10.27": {false, true}, "2.11.17": {false, true}, "2.12.4": {false, true}, "2.12.5": {true, true},
		"2.12.15": {true, true}, "2.14.0": {true, true}, "2.15.3": {true, true}, "": {false, false}, "dev": {false, false},
		// no source read: never released, or past the newest release read
		"2.13.0": {false, false}, "2.11.18": {false, false}, "2.15.4": {false, false}, "2.16.0": {false, false}, "3.0.0": {false, false},
	} {
		yes, known := releases.StartsFromSnapshotPeers(v)
		if [2]bool{yes, known} != want {
			t.Errorf("%q: %v %v, want %v", v, yes, known, want)
		}
	}
}

// TestQuorumRemedyStreamUnknown: scaledown-v2.12.1's consumer group
// C-R3F-jG3qJgsz has no stream in any file of the bundle; its remedy says
// so and where STREAM is to be filled in, and a group whose stream is known
// gets its name and no such note.
func TestQuorumRemedyStreamUnknown(t *testing.T) {
	rep := analyze(t, bundlesDir+"/scaledown-v2.12.1/bundle")
	var unknown, known int
	for _, f := range rep.Findings {
		if f.Code != "quorum-unreachable" || f.Group == "" || f.Group == "_meta_" {
			continue
		}
		note := strings.Contains(f.Remedy, "put the stream's name where STREAM stands")
		placeholder := strings.Contains(f.Remedy, "peer-remove STREAM ")
		if placeholder != note {
			t.Errorf("group %s: STREAM in the commands %v, note %v: %s", f.Group, placeholder, note, f.Remedy)
		}
		if note {
			unknown++
		} else {
			known++
		}
	}
	if unknown == 0 {
		t.Error("no quorum-unreachable for the consumer group whose stream is unknown")
	}
}

// TestLostQuorumRescue: lostquorum-v2.15.3, three of five servers lost with
// their stores: the meta group's remedy is the quorum rescue down to the
// two survivors' quorum, sent once with every answer shown, then the three
// server removals; peer-offline's removals are sent to quorum-unreachable
// first (alone they elected no leader: the fixture's remedy-outcome.json).
func TestLostQuorumRescue(t *testing.T) {
	rep := analyze(t, bundlesDir+"/lostquorum-v2.15.3/bundle")
	var rescue, offline int
	for _, f := range rep.Findings {
		switch {
		case f.Code == "quorum-unreachable" && f.Group == "_meta_":
			rescue++
			if f.RemedyID != "meta-quorum-rescue" || !strings.Contains(f.Remedy, `nats request '$JS.API.META.RESCUE' '{"quorum_needed":2}' --replies 0`) ||
				strings.Count(f.Remedy, "$JS.API.SERVER.REMOVE") != 3 || !strings.Contains(f.Remedy, "5 minutes") {
				t.Errorf("meta remedy %s: %s", f.RemedyID, f.Remedy)
			}
		case f.Code == "peer-offline":
			offline++
			if !strings.Contains(f.Remedy, "carry out quorum-unreachable's remedy first") {
				t.Errorf("peer-offline %s: no pointer to quorum-unreachable: %s", f.Server, f.Remedy)
			}
		case f.Severity == report.Critical && f.Code != "meta-no-leader":
			t.Errorf("unexpected critical %s %s: %s", f.Code, f.Group, f.Message)
		}
	}
	if rescue != 1 || offline == 0 {
		t.Errorf("%d meta quorum-unreachable, %d peer-offline findings; want 1 and some", rescue, offline)
	}
}

// TestLostQuorumByVersion: lostquorum-v2.15.3's model read as other
// versions: where the survivors count only their group's votes (2.12.15,
// 2.14.10) the way out is servers under the lost names on empty stores
// (temporary servers elected no leader there:
// testdata/remedies/lostquorum-v2.1{2.15,4.10}-temporary-servers.json);
// 2.11.17 keeps the temporary servers; 2.12.10 (not read) keeps them with
// a note that it cannot be told; 2.15 the rescue.
func TestLostQuorumByVersion(t *testing.T) {
	b, err := bundle.Open(bundlesDir+"/lostquorum-v2.15.3/bundle", bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := Load(b)
	for _, tc := range []struct{ version, remedy, says string }{
		{"2.15.3", "meta-quorum-rescue", "$JS.API.META.RESCUE"},
		{"2.14.10", "meta-quorum-same-names", "start 3 server(s) named n3, n4, n5 on EMPTY stores"},
		{"2.12.15", "meta-quorum-same-names", "start 3 server(s) named n3, n4, n5 on EMPTY stores"},
		{"2.12.10", "meta-quorum-temporary-servers", "cannot be told"},
		{"2.11.17", "meta-quorum-temporary-servers", "Add 2 temporary"},
		{"2.16.0", "meta-quorum-rescue", "whether 2.16.0 does cannot be told"},
		{"2.14.11", "meta-quorum-temporary-servers", "cannot be told"},
	} {
		for _, s := range m.Servers {
			s.Version = tc.version
		}
		var got []report.Finding
		for _, f := range runCheck(peers.CheckQuorumUnreachable, m) {
			if f.Group == "_meta_" {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].RemedyID != tc.remedy || !strings.Contains(got[0].Remedy, tc.says) {
			t.Errorf("%s: want %s saying %q: %+v", tc.version, tc.remedy, tc.says, got)
		}
	}
	for v, want := range map[string][2]bool{"2.10.27": {false, true}, "2.11.17": {false, true}, "2.12.4": {false, true},
		"2.12.10": {false, false}, "2.12.15": {true, true}, "2.14.10": {true, true}, "2.15.3": {true, true}, "2.13.0": {false, false}} {
		if yes, known := releases.CountsMemberVotesOnly(v); [2]bool{yes, known} != want {
			t.Errorf("countsMemberVotesOnly(%s) = %v %v, want %v", v, yes, known, want)
		}
	}
	for v, want := range map[string][2]bool{"2.10.27": {false, true}, "2.14.10": {false, true}, "2.14.11": {false, false},
		"2.13.0": {false, false}, "2.15.0": {true, true}, "2.15.3": {true, true}, "2.15.4": {true, false}, "2.16.0": {true, false}} {
		if yes, known := releases.HasMetaRescue(v); [2]bool{yes, known} != want {
			t.Errorf("hasMetaRescue(%s) = %v %v, want %v", v, yes, known, want)
		}
	}
}
