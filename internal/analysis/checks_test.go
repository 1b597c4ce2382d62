package analysis

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// incidentModel is the first incident's state as facts: five servers, and a
// meta group whose every view lists the five real ids plus five one-bit
// corruptions of them (the ids as /raftz reported them in the thread).
func incidentModel() *Model {
	m := &Model{IDs: map[string]string{}}
	names := []string{"nats-0", "nats-1", "nats-2", "nats-3", "nats-4"}
	for _, n := range names {
		id := natsfmt.PeerID(n)
		m.IDs[id] = n
		m.Servers = append(m.Servers, &Server{Name: n, PeerID: id, StoreDir: n, Version: "2.10.22", Sources: map[string]bool{"store": true}})
	}
	peers := []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW", `"kCGheKT`, "cnr4t3eg", "cnrtu3eg", "yrzKKR@u", "yrzKKRBt"}
	g := &Group{Name: "_meta_", Kind: "meta"}
	for _, n := range names {
		g.Views = append(g.Views, View{GroupView: report.GroupView{Server: n, ClusterSize: 10, Quorum: 6, Term: 1191202101440508490, Peers: peers, Source: "peers.idx"}})
	}
	m.Groups = []*Group{g}
	return m
}

func byCode(fs []report.Finding, code string) []report.Finding {
	var out []report.Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

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

func TestPeerRemoveCommandQuotes(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"@uYMtjaW", `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"@uYMtjaW"}'`},
		{`"kCGheKT`, `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"\"kCGheKT"}'`},
		{"it's", `nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"it'\''s"}'`},
		{"yrzKKRBt", `nats server cluster peer-remove -f yrzKKRBt   # or: nats request '$JS.API.SERVER.REMOVE' '{"peer_id":"yrzKKRBt"}'`},
	} {
		if got := peerRemoveCommand(tc.id); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.id, got, tc.want)
		}
	}
	if got := peerRemoveCommand("ab\xffcdefg"); !strings.HasPrefix(got, "#") {
		t.Errorf("non-UTF-8 id: %s", got)
	}
}

func TestPeerUnknownFarID(t *testing.T) {
	m := incidentModel()
	m.Groups[0].Views = []View{{GroupView: report.GroupView{Server: "nats-0", ClusterSize: 6, Peers: []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW", natsfmt.PeerID("nats-9")}, Source: "peers.idx"}}}
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

func TestHealthyModelNoFindings(t *testing.T) {
	m := incidentModel()
	for i := range m.Groups[0].Views {
		m.Groups[0].Views[i].ClusterSize = 5
		m.Groups[0].Views[i].Peers = []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW"}
	}
	fs, outcomes := runChecks(m, Checks, nil)
	if broke := notRun(outcomes); len(fs) != 0 || len(broke) != 0 {
		t.Errorf("healthy model gave %+v, not run: %v", fs, broke)
	}
}

func TestMetaSplitViews(t *testing.T) {
	m := &Model{IDs: map[string]string{}}
	var all []string
	for _, n := range []string{"old-0", "old-1", "old-2", "new-0", "new-1", "new-2"} {
		m.IDs[natsfmt.PeerID(n)] = n
		m.Servers = append(m.Servers, &Server{Name: n, PeerID: natsfmt.PeerID(n), Alive: true})
		all = append(all, natsfmt.PeerID(n))
	}
	small := []string{natsfmt.PeerID("new-0"), natsfmt.PeerID("new-1"), natsfmt.PeerID("new-2"), natsfmt.PeerID("old-1")}
	g := &Group{Name: "_meta_", Kind: "meta"}
	for _, s := range m.Servers {
		v := View{GroupView: report.GroupView{Server: s.Name, ClusterSize: 6, Peers: all, Leader: "new-2", Source: "raftz"}}
		if strings.HasPrefix(s.Name, "new") {
			v.ClusterSize, v.Peers = 4, small
		}
		g.Views = append(g.Views, v)
	}
	m.Groups = []*Group{g}
	fs := runCheck(checkMetaSplit, m)
	if len(fs) != 1 || len(fs[0].Views) != 2 {
		t.Fatalf("want one split with two views: %+v", fs)
	}
	sizes := []int{fs[0].Views[0].ClusterSize, fs[0].Views[1].ClusterSize}
	sort.Ints(sizes)
	if sizes[0] != 4 || sizes[1] != 6 {
		t.Errorf("sizes %v", sizes)
	}
}

func TestMetaSplitFoundedApart(t *testing.T) {
	t0 := time.Date(2026, 10, 5, 12, 0, 0, 0, time.UTC)
	m := &Model{IDs: map[string]string{}}
	for i, n := range []string{"old-0", "old-1", "old-2"} {
		m.MetaFoundings = append(m.MetaFoundings, MetaFounding{Time: t0.Add(time.Duration(i) * time.Millisecond), Server: n, Leader: "old-1", Source: "log"})
	}
	for i, n := range []string{"new-0", "new-1", "new-2"} {
		m.MetaFoundings = append(m.MetaFoundings, MetaFounding{Time: t0.Add(time.Minute + time.Duration(i)*time.Millisecond), Server: n, Leader: "new-2", Source: "log"})
	}
	if fs := runCheck(checkMetaSplit, m); len(fs) != 1 {
		t.Fatalf("want one founded-apart split: %+v", fs)
	}
	// One founding, seen by all: nothing.
	m.MetaFoundings = m.MetaFoundings[:3]
	if fs := runCheck(checkMetaSplit, m); len(fs) != 0 {
		t.Fatalf("single founding flagged: %+v", fs)
	}
}

func TestMetaNoLeaderNeedsPersistence(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &Model{}
	// A healthy start: no leader, then a leader 3 s later.
	m.MetaLeaderStates = []MetaLeaderState{
		{Time: t0, Server: "a", Leader: "", Source: "log", Timeline: -1},
		{Time: t0.Add(3 * time.Second), Server: "a", Leader: "b", Source: "log", Timeline: -1},
		// A short blip at the end of a log is not persistent either.
		{Time: t0.Add(time.Minute), Server: "b", Leader: "", Source: "log", Timeline: -1},
		{Time: t0.Add(time.Minute + time.Second), Server: "b", Leader: "", Source: "log", Timeline: -1},
	}
	if fs := runCheck(checkMetaNoLeader, m); len(fs) != 0 {
		t.Fatalf("flagged a healthy election: %+v", fs)
	}
	m.MetaLeaderStates = append(m.MetaLeaderStates, MetaLeaderState{Time: t0.Add(5 * time.Minute), Server: "b", Leader: "", Source: "log", Timeline: 3})
	fs := runCheck(checkMetaNoLeader, m)
	if len(fs) != 1 || len(fs[0].Servers) != 1 || fs[0].Servers[0] != "b" || !fs[0].Since.Equal(t0.Add(time.Minute)) {
		t.Fatalf("want b stuck since t0+1m: %+v", fs)
	}
}

func TestOrphanRisk(t *testing.T) {
	m := &Model{IDs: map[string]string{}}
	a := &Server{Name: "a", PeerID: natsfmt.PeerID("a"), StoreDir: "a"}
	b := &Server{Name: "b", PeerID: natsfmt.PeerID("b"), StoreDir: "b"}
	m.Servers = []*Server{a, b}
	a.Meta = &MetaState{Source: "snapshot+wal", Streams: map[AssetKey]*Assignment{
		{"$G", "KEEP"}:  {Account: "$G", Stream: "KEEP", Peers: []string{a.PeerID}, Consumers: map[string][]string{"C1": nil}},
		{"$G", "OTHER"}: {Account: "$G", Stream: "OTHER", Peers: []string{b.PeerID}},
	}}
	m.Streams = []*Stream{
		{Account: "$G", Name: "KEEP", Copies: []*StreamCopy{{Server: "a", Path: "a/$G/streams/KEEP", Messages: 3, Consumers: []report.Consumer{{Name: "C1"}, {Name: "GONE"}}}}},
		{Account: "$G", Name: "LOST", Replicas: 1, Copies: []*StreamCopy{{Server: "a", Path: "a/$G/streams/LOST", Messages: 7, Bytes: 700, Replicas: 1}}},
		{Account: "$G", Name: "OTHER", Replicas: 1, Copies: []*StreamCopy{{Server: "a", Path: "a/$G/streams/OTHER", Messages: 1, Replicas: 1}}},
	}
	fs := runCheck(checkOrphanRisk, m)
	got := map[string]report.Finding{}
	for _, f := range fs {
		got[f.Stream+"/"+f.Consumer] = f
	}
	if len(fs) != 3 {
		t.Fatalf("want LOST, OTHER and consumer GONE: %+v", fs)
	}
	lost := got["LOST/"]
	if *lost.Messages != 7 || *lost.Bytes != 700 || !strings.Contains(lost.Message, "R1") {
		t.Errorf("LOST: %+v", lost)
	}
	if _, ok := got["OTHER/"]; !ok {
		t.Error("non-member copy not flagged")
	}
	if _, ok := got["KEEP/GONE"]; !ok {
		t.Error("orphan consumer not flagged")
	}
}

func TestUnsafeMembershipChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	g := &Group{Name: "S-R5F-x", Kind: "stream", History: []report.HistoryEvent{
		{Time: at(0), Event: "peer-state", Peers: []string{"a", "b", "c", "d", "e"}, Source: "wal"},
		{Time: at(time.Second), Event: "remove-peer", Peer: "a", Source: "wal"},
		{Time: at(2 * time.Second), Event: "remove-peer", Peer: "b", Source: "wal"},
		{Time: at(time.Hour), Event: "remove-peer", Peer: "c", Source: "wal"},
	}}
	fs := runCheck(checkUnsafeMembershipChange, &Model{Groups: []*Group{g}})
	if len(fs) != 1 || len(fs[0].Events) != 2 {
		t.Fatalf("want one burst of two removals: %+v", fs)
	}
}

func TestPanickingCheckIsReportedNotRun(t *testing.T) {
	boom := Check{Code: "boom", Severity: report.Info, Run: func(*Pass) []report.Finding { panic("x") }}
	fs, outcomes := runChecks(incidentModel(), []Check{boom, checkQuorumUnreachable}, nil)
	notes := outcomeNotes(outcomes)
	if len(outcomes) != 2 || outcomes[0].Outcome != OutcomeNotRun || outcomes[1].Outcome != OutcomeFailed {
		t.Errorf("outcomes %+v", outcomes)
	}
	if len(fs) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "check boom not run") {
		t.Fatalf("fs %v notes %v", fs, notes)
	}
}

// TestREADMEListsEveryCheck keeps README's table of finding codes and the
// registered checks in step.
func TestREADMEListsEveryCheck(t *testing.T) {
	// README tells a newcomer what raises each code; docs/report.md, the
	// contract that ships with the tool, says which fields each code fills.
	for _, doc := range []string{"../../README.md", "../../docs/report.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start, end := strings.Index(s, "<!-- findings-table"), strings.Index(s, "<!-- end findings-table -->")
		if start < 0 || end < start {
			t.Fatalf("%s has no findings table markers", doc)
		}
		rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (critical|warning|info) \\|").FindAllStringSubmatch(s[start:end], -1)
		inDoc := map[string]string{}
		for _, r := range rows {
			inDoc[r[1]] = r[2]
		}
		for _, c := range Checks {
			sev, ok := inDoc[c.Code]
			if !ok {
				t.Errorf("check %s is not in %s's table", c.Code, doc)
			} else if sev != string(c.Severity) {
				t.Errorf("check %s: %s says %s, code says %s", c.Code, doc, sev, c.Severity)
			}
			delete(inDoc, c.Code)
		}
		for code := range inDoc {
			t.Errorf("%s lists %s, which no check raises", doc, code)
		}
	}
}

func TestReplicaDivergenceAndGap(t *testing.T) {
	a := &StreamCopy{Server: "a", FirstSeq: 1, LastSeq: 10, Messages: 10}
	b := &StreamCopy{Server: "b", FirstSeq: 1, LastSeq: 10, Messages: 10}
	c := &StreamCopy{Server: "c", FirstSeq: 1, LastSeq: 10, Messages: 8}
	span := func(first, last uint64, holders uint64) CoverageSpan {
		return CoverageSpan{Range: report.Range{First: first, Last: last}, Holders: holders}
	}
	// c holds other messages under 3-4 and lacks 7-8.
	cmp := &ReplicaComparison{Copies: []*StreamCopy{a, b, c},
		Coverage: []CoverageSpan{span(7, 8, 0b011)},
		Diverged: []DivergedSpan{{Range: report.Range{First: 3, Last: 4}, Sides: []uint64{0b011, 0b100}}}}
	st := &Stream{Account: "$G", Name: "S", Copies: cmp.Copies, AssignedTo: []string{"a", "b", "c"}, Comparison: cmp}
	m := &Model{Streams: []*Stream{st}}

	div := runCheck(checkReplicaDivergence, m)
	if len(div) != 1 || len(div[0].Ranges) != 1 || div[0].Ranges[0] != (report.Range{First: 3, Last: 4}) || div[0].Seq != 3 {
		t.Fatalf("divergence: %+v", div)
	}
	if !strings.Contains(div[0].Evidence[0], "a,b | c") {
		t.Errorf("sides: %v", div[0].Evidence)
	}
	gap := runCheck(checkReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "c" || gap[0].Kind != "hole" || gap[0].Ranges[0] != (report.Range{First: 7, Last: 8}) {
		t.Fatalf("gap: %+v", gap)
	}
	// A replica that is behind (its last seq is lower) lacks a tail: a gap
	// of kind behind, with the copies that exist.
	c.LastSeq, c.Messages = 6, 6
	cmp.Coverage = []CoverageSpan{span(7, 10, 0b011)}
	gap = runCheck(checkReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "c" || gap[0].Kind != "behind" || gap[0].Ranges[0] != (report.Range{First: 7, Last: 10}) ||
		!strings.Contains(gap[0].Message, "2 full copies") || !strings.Contains(gap[0].Message, "no log or capture shows c running") {
		t.Fatalf("behind: %+v", gap)
	}
	// A removed server's copy is not a current replica: it may lack
	// anything, and what only it holds is no current replica's gap.
	st.AssignedTo = []string{"a", "b"}
	cmp.Coverage = []CoverageSpan{span(5, 5, 0b110), span(7, 10, 0b011)}
	gap = runCheck(checkReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "a" || gap[0].Ranges[0] != (report.Range{First: 5, Last: 5}) ||
		!reflect.DeepEqual(gap[0].Servers, []string{"b"}) || !strings.Contains(gap[0].Message, "1 full copy ") {
		t.Errorf("gap among current replicas: %+v", gap)
	}
	// Below a replica's first sequence nothing is claimed.
	a.FirstSeq = 6
	if gap := runCheck(checkReplicaGap, m); len(gap) != 0 {
		t.Errorf("below first: %+v", gap)
	}
}

func TestReplacedMajority(t *testing.T) {
	ids := map[string]string{}
	var servers []*Server
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		ids[natsfmt.PeerID(n)] = n
		servers = append(servers, &Server{Name: n, PeerID: natsfmt.PeerID(n), StoreDir: n})
	}
	old := []string{natsfmt.PeerID("n2"), natsfmt.PeerID("n4"), natsfmt.PeerID("n5")}
	cur := []string{natsfmt.PeerID("n1"), natsfmt.PeerID("n3"), natsfmt.PeerID("n5")}
	for _, s := range servers {
		peers := cur
		if s.Name == "n2" || s.Name == "n4" {
			peers = old
		}
		s.Meta = &MetaState{Streams: map[AssetKey]*Assignment{{"APP", "R"}: {Account: "APP", Stream: "R", Group: "S-R3F-x", Peers: peers}}}
	}
	m := &Model{Servers: servers, IDs: ids}
	fs := runCheck(checkUnsafeMembershipChange, m)
	if len(fs) != 1 || fs[0].Stream != "R" || len(fs[0].Events) != 2 {
		t.Fatalf("%+v", fs)
	}
	// Replacing one of three keeps a majority: safe.
	for _, s := range servers {
		if s.Name == "n2" || s.Name == "n4" {
			s.Meta.Streams[AssetKey{"APP", "R"}].Peers = []string{natsfmt.PeerID("n2"), natsfmt.PeerID("n3"), natsfmt.PeerID("n5")}
		}
	}
	if fs := runCheck(checkUnsafeMembershipChange, m); len(fs) != 0 {
		t.Fatalf("one replaced of three flagged: %+v", fs)
	}
}

func notRun(outcomes []report.CheckOutcome) []report.CheckOutcome {
	var out []report.CheckOutcome
	for _, o := range outcomes {
		if o.Outcome == OutcomeNotRun {
			out = append(out, o)
		}
	}
	return out
}

// TestSkippedChecksSayWhy: a bundle of logs only gives no store, replica or
// orphan verdict; those checks say they were skipped and why, and are not
// counted as passed.
func TestSkippedChecksSayWhy(t *testing.T) {
	m := &Model{IDs: map[string]string{}, MetaLeaderStates: []MetaLeaderState{{Server: "a", Leader: "b", Timeline: -1}}}
	_, outcomes := runChecks(m, Checks, nil)
	by := map[string]report.CheckOutcome{}
	for _, o := range outcomes {
		by[o.Code] = o
	}
	for _, code := range []string{"store-corrupt", "index-mismatch", "orphan-risk", "replica-gap", "replica-divergence", "peer-id-corrupt", "quorum-unreachable"} {
		if o := by[code]; o.Outcome != OutcomeSkipped || o.Reason == "" {
			t.Errorf("%s: %+v, want skipped with a reason", code, o)
		}
	}
	if o := by["meta-no-leader"]; o.Outcome != OutcomePassed {
		t.Errorf("meta-no-leader: %+v, want passed (a leader is logged)", o)
	}
}

// TestOrphanRiskSkipsServerWithoutMeta: a server whose copy cannot be judged
// (no readable meta state) is named in the outcome, not passed over.
func TestOrphanRiskSkipsServerWithoutMeta(t *testing.T) {
	m := &Model{IDs: map[string]string{},
		Servers: []*Server{{Name: "n1", StoreDir: "s1"}},
		Streams: []*Stream{{Account: "A", Name: "S", Copies: []*StreamCopy{{Server: "n1"}}}}}
	_, outcomes := runChecks(m, []Check{checkOrphanRisk}, nil)
	if len(outcomes) != 1 || outcomes[0].Outcome != OutcomePassed || len(outcomes[0].Skipped) != 1 || !strings.Contains(outcomes[0].Skipped[0], "n1") {
		t.Fatalf("outcomes %+v", outcomes)
	}
}

// TestSettingsOverrideThresholds: a check's threshold is a setting; an
// override changes the verdict, an unknown key is refused.
func TestSettingsOverrideThresholds(t *testing.T) {
	at := func(d time.Duration) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(d) }
	m := &Model{IDs: map[string]string{}, MetaLeaderStates: []MetaLeaderState{
		{Time: at(0), Server: "a", Source: "log", Timeline: -1},
		{Time: at(20 * time.Second), Server: "a", Source: "log", Timeline: -1},
	}}
	if fs, _ := runChecks(m, []Check{checkMetaNoLeader}, nil); len(fs) != 0 {
		t.Fatalf("20 s leaderless is under the 30 s default: %+v", fs)
	}
	if fs, _ := runChecks(m, []Check{checkMetaNoLeader}, map[string]float64{"meta-no-leader.persist": 10}); len(fs) != 1 {
		t.Fatalf("with persist=10 s, 20 s leaderless counts: %+v", fs)
	}
	if err := CheckSettings(map[string]float64{"meta-no-leader.nope": 1}); err == nil {
		t.Fatal("unknown setting accepted")
	}
}
