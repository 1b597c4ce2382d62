package analysis

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// membershipExpectations derives, from what the live servers reported,
// the findings of a rename or scale-down fixture: one server-renamed per
// renamed server (its old id, the meta group's size and how many of its
// peers a live server answers to), one peer-offline per departed server,
// and quorum-unreachable for every group the survivors report with less
// than a quorum of survivors among its peers.
//
// A departed server's copy of a stream that took a write after it left is
// behind: replica-gap (the publish the generator made after the scale-down
// was acknowledged, expect.publish_after).
func membershipExpectations(fx fixture) []expectedFinding {
	var exp struct {
		Renamed      map[string]string   `json:"renamed"` // old -> new name
		OldIDs       map[string]string   `json:"old_ids"`
		Departed     []string            `json:"departed"`
		Placement    map[string][]string `json:"placement"`
		PublishAfter map[string]string   `json:"publish_after"`
	}
	if json.Unmarshal(fx.want.Expect, &exp) != nil {
		return nil
	}
	renamed, oldIDs, departed := exp.Renamed, exp.OldIDs, exp.Departed
	var out []expectedFinding
	live := map[string]bool{}
	for _, ws := range fx.want.Servers {
		live[ws.PeerID] = true
	}
	members := func(peers []string, self string) int {
		n := 0
		for _, p := range peers {
			if live[p] && p != self {
				n++
			}
		}
		return n
	}
	for old, now := range renamed {
		for _, ws := range fx.want.Servers {
			if ws.Name != now || ws.Meta == nil {
				continue
			}
			// /raftz lists the answering node too; it is a member only
			// if the group is not one peer short without it.
			self := ""
			if len(ws.Meta.Peers) > ws.Meta.ClusterSize {
				self = ws.PeerID
			}
			peer, reachable := oldIDs[old], members(ws.Meta.Peers, self)
			out = append(out, expectedFinding{Code: "server-renamed", Server: now, Peer: &peer, Group: "_meta_",
				ClusterSize: ws.Meta.ClusterSize, Quorum: ws.Meta.Quorum, Reachable: &reachable})
		}
	}
	if len(departed) == 0 {
		return out
	}
	for _, d := range departed {
		peer := natsfmt.PeerID(d)
		e := expectedFinding{Code: "peer-offline", Server: d, Peer: &peer}
		if len(fx.want.Servers) > 0 && fx.want.Servers[0].Meta != nil {
			reachable := members(fx.want.Servers[0].Meta.Peers, "")
			e.Group, e.ClusterSize, e.Reachable = "_meta_", fx.want.Servers[0].Meta.ClusterSize, &reachable
		}
		out = append(out, e)
	}
	account := map[string]string{}
	for _, ws := range fx.want.Servers {
		for _, st := range ws.Streams {
			account[st.Name] = st.Account
		}
	}
	for _, stream := range sortedKeys(exp.Placement) {
		if !strings.HasPrefix(exp.PublishAfter[stream], "seq ") {
			continue
		}
		for _, d := range departed {
			if slices.Contains(exp.Placement[stream], d) {
				out = append(out, expectedFinding{Code: "replica-gap", Server: d, Account: account[stream], Stream: stream, Kind: "behind"})
			}
		}
	}
	stalled := map[string]wantGroup{}
	for _, ws := range fx.want.Servers {
		for name, g := range ws.Groups {
			if members(g.Peers, "") < g.ClusterSize/2+1 {
				stalled[name] = g
			}
		}
	}
	names := make([]string, 0, len(stalled))
	for n := range stalled {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := stalled[n]
		reachable := members(g.Peers, "")
		out = append(out, expectedFinding{Code: "quorum-unreachable", Group: n, ClusterSize: g.ClusterSize, Quorum: g.ClusterSize/2 + 1, Reachable: &reachable})
	}
	return out
}

// renamedModel: three servers that ran as nats-0..2 and run as js-0..2 on
// the same stores (their logs' boots say so); every group still lists the
// old ids, and js-0's log shows it deleting a stream after its first boot
// under the new name.
func renamedModel() *Model {
	m := &Model{IDs: map[string]string{}}
	olds, news := []string{"nats-0", "nats-1", "nats-2"}, []string{"js-0", "js-1", "js-2"}
	var oldIDs []string
	for i := range olds {
		m.IDs[natsfmt.PeerID(olds[i])], m.IDs[natsfmt.PeerID(news[i])] = olds[i], news[i]
		oldIDs = append(oldIDs, natsfmt.PeerID(olds[i]))
		m.Servers = append(m.Servers, &Server{Name: news[i], PeerID: natsfmt.PeerID(news[i]), StoreDir: news[i], Alive: true,
			Version: "2.15.2", Sources: map[string]bool{"store": true, "log": true, "raftz": true}})
		m.Renames = append(m.Renames, Rename{Old: olds[i], New: news[i], File: news[i] + ".log", Line: 100, OldLine: 1})
	}
	meta := &Group{Name: "_meta_", Kind: "meta"}
	stream := &Group{Name: "S-R3F-x", Kind: "stream", Account: "APP", Asset: "ORDERS"}
	for _, n := range news {
		meta.Views = append(meta.Views, View{GroupView: report.GroupView{Server: n, ClusterSize: 3, Quorum: 2, Source: "raftz",
			Peers: append([]string{natsfmt.PeerID(n)}, oldIDs...)}, LeaderKnown: true})
		stream.Views = append(stream.Views, View{GroupView: report.GroupView{Server: n, ClusterSize: 3, Quorum: 2, Source: "peers.idx", Peers: oldIDs}})
	}
	m.Groups = []*Group{meta, stream}
	m.Timeline = []report.TimelineEvent{
		{Server: "js-0", File: "js-0.log", Line: 120, Kind: "restored-stream", Account: "APP", Stream: "ORDERS", Text: "Restored 20 messages for stream 'APP > ORDERS' in 0s"},
		{Server: "js-0", File: "js-0.log", Line: 130, Kind: "stream-removed", Account: "APP", Stream: "ORDERS", Text: "JetStream removing stream 'APP > ORDERS' from this server"},
		// Before the rename: not the rename's doing.
		{Server: "js-0", File: "js-0.log", Line: 50, Kind: "stream-removed", Account: "APP", Stream: "OLD", Text: "JetStream removing stream 'APP > OLD' from this server"},
	}
	return m
}

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
		if f.Remedy == "" || !strings.Contains(f.Remedy, "What this destroys first") || !strings.Contains(f.Remedy, "not a voting member") {
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
	// One problem, one finding: the old ids are neither unknown peers nor a
	// separate quorum loss, and the renamed servers' own ids split nothing.
	for _, code := range []string{"peer-unknown", "peer-id-corrupt", "quorum-unreachable", "meta-split", "peer-offline"} {
		if n := len(byCode(fs, code)); n > 0 {
			t.Errorf("%d %s findings beside server-renamed: %+v", n, code, byCode(fs, code))
		}
	}
}

// The remedy is the one the fixture of the bundle's version proved:
// reverting names works on 2.15.2, not on 2.12.1; the old-names-beside way
// works on both, with the peer-removes in the old names' order.
func TestServerRenamedRemedyByVersion(t *testing.T) {
	for _, tc := range []struct {
		version     string
		revert, not string
	}{{"2.15.2", "b) or revert server_name", "not a voting member"}, {"2.12.1", "", "Not: reverting server_name"}} {
		m := renamedModel()
		for _, s := range m.Servers {
			s.Version = tc.version
		}
		fs := byCode(runAllChecks(t, m), "server-renamed")
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", tc.version)
		}
		r := fs[0].Remedy
		if (tc.revert != "") != strings.Contains(r, "b) or revert server_name") || !strings.Contains(r, tc.not) {
			t.Errorf("%s: remedy %s", tc.version, r)
		}
		i0, i1, i2 := strings.Index(r, "stop nats-0"), strings.Index(r, "stop nats-1"), strings.Index(r, "stop nats-2")
		if !strings.HasPrefix(r, "What this destroys first") || i0 < 0 || i1 < i0 || i2 < i1 {
			t.Errorf("%s: order in remedy: %s", tc.version, r)
		}
	}
}

func TestServerRenamedNotWhenOldNameRunsAgain(t *testing.T) {
	m := renamedModel()
	// nats-1 runs under its old name again (reverted): its id is no former id.
	m.Servers = append(m.Servers, &Server{Name: "nats-1", PeerID: natsfmt.PeerID("nats-1"), Alive: true, Sources: map[string]bool{"raftz": true}})
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

// scaledModel: five servers n1..n5, n4 and n5 departed (stores and logs in
// the bundle, no captures, not heard from); the meta group keeps all five,
// stream A sits on n1, n2, n4 and stream B on n3, n4, n5.
func scaledModel() *Model {
	m := &Model{IDs: map[string]string{}}
	id := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		id[n] = natsfmt.PeerID(n)
		m.IDs[id[n]] = n
		src := map[string]bool{"store": true, "log": true}
		if n <= "n3" {
			src["raftz"] = true
		}
		m.Servers = append(m.Servers, &Server{Name: n, PeerID: id[n], StoreDir: n, Alive: true, Version: "2.12.1", Sources: src})
	}
	view := func(srv string, size int, peers, alive []string) View {
		var ps, as []string
		for _, p := range peers {
			ps = append(ps, id[p])
		}
		for _, p := range alive {
			as = append(as, id[p])
		}
		return View{GroupView: report.GroupView{Server: srv, ClusterSize: size, Quorum: size/2 + 1, Source: "raftz", Peers: ps}, Alive: as, LeaderKnown: true}
	}
	all := []string{"n1", "n2", "n3", "n4", "n5"}
	meta := &Group{Name: "_meta_", Kind: "meta"}
	for _, s := range []string{"n1", "n2", "n3"} {
		meta.Views = append(meta.Views, view(s, 5, all, []string{"n1", "n2", "n3"}))
	}
	a := &Group{Name: "S-A", Kind: "stream", Account: "APP", Asset: "A", Views: []View{view("n1", 3, []string{"n1", "n2", "n4"}, []string{"n2"})}}
	b := &Group{Name: "S-B", Kind: "stream", Account: "APP", Asset: "B", Views: []View{view("n3", 3, []string{"n3", "n4", "n5"}, nil)}}
	m.Groups = []*Group{meta, a, b}
	return m
}

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
	m.server("n4").Sources["raftz"] = true
	fs := runAllChecks(t, m)
	for _, f := range byCode(fs, "peer-offline") {
		if f.Server == "n4" {
			t.Errorf("n4 is live but reported offline")
		}
	}
}

// runAllChecks runs every registered check on m; none may fail to run.
func runAllChecks(t *testing.T, m *Model) []report.Finding {
	t.Helper()
	fs, outcomes := runChecks(m, Checks, nil)
	if broke := notRun(outcomes); len(broke) > 0 {
		t.Fatalf("checks not run: %v", broke)
	}
	return fs
}

// TestRenameFixtures: on the rename fixtures, each server-renamed finding
// names the streams that server's log shows it deleting after the rename
// (expect.removed_streams, from the live servers' logs), and its remedy
// offers exactly the ways out that brought a meta leader back on that
// version (expect.remedies_recovered).
func TestRenameFixtures(t *testing.T) {
	deletedRE := regexp.MustCompile(`^\S+ deleted its copy of (.+?) at `)
	ran := 0
	for _, fx := range fixtures(t) {
		var exp struct {
			Renamed   map[string]string   `json:"renamed"`
			Removed   map[string][]string `json:"removed_streams"`
			Recovered []string            `json:"remedies_recovered"`
		}
		if json.Unmarshal(fx.want.Expect, &exp) != nil || len(exp.Renamed) == 0 {
			continue
		}
		ran++
		t.Run(fx.name, func(t *testing.T) {
			rep := analyze(t, fx.forms[0])
			got := byCode(rep.Findings, "server-renamed")
			if len(got) != len(exp.Renamed) {
				t.Fatalf("%d server-renamed findings, want one per renamed server (%d)", len(got), len(exp.Renamed))
			}
			for _, f := range got {
				var deleted []string
				for _, e := range f.Evidence {
					if m := deletedRE.FindStringSubmatch(e); m != nil {
						deleted = append(deleted, m[1])
					}
				}
				sort.Strings(deleted)
				want := append([]string(nil), exp.Removed[f.Server]...)
				sort.Strings(want)
				if strings.Join(deleted, ",") != strings.Join(want, ",") {
					t.Errorf("%s: deleted %v, the live server logged removing %v", f.Server, deleted, want)
				}
				revert := slices.Contains(exp.Recovered, "revert-names")
				beside := slices.Contains(exp.Recovered, "old-names-beside")
				if strings.Contains(f.Remedy, "b) or revert server_name") != revert || strings.Contains(f.Remedy, "a) keep the new names") != beside {
					t.Errorf("%s: remedy does not offer what worked (%v): %s", f.Server, exp.Recovered, f.Remedy)
				}
			}
			for _, code := range []string{"peer-unknown", "peer-id-corrupt", "quorum-unreachable", "meta-split", "peer-offline"} {
				if fs := byCode(rep.Findings, code); len(fs) > 0 {
					t.Errorf("%s beside server-renamed: %s", code, fs[0].Message)
				}
			}
		})
	}
	if ran == 0 {
		t.Skip("no rename fixture")
	}
}

// TestScaledownFixture: the peer-offline remedy removes the departed
// servers in the order that brought the stalled stream back on the real
// cluster (expect.remedy.steps), after saying what removal destroys.
func TestScaledownFixture(t *testing.T) {
	for _, fx := range fixtures(t) {
		var exp struct {
			Departed []string `json:"departed"`
			Remedy   struct {
				Steps     []string `json:"steps"`
				Recovered bool     `json:"recovered"`
			} `json:"remedy"`
		}
		if json.Unmarshal(fx.want.Expect, &exp) != nil || len(exp.Departed) == 0 {
			continue
		}
		if !exp.Remedy.Recovered {
			t.Fatalf("%s: the fixture's peer-remove did not bring the cluster back", fx.name)
		}
		rep := analyze(t, fx.forms[0])
		off := byCode(rep.Findings, "peer-offline")
		if len(off) != len(exp.Departed) {
			t.Fatalf("%s: %d peer-offline findings for %v", fx.name, len(off), exp.Departed)
		}
		idRE := regexp.MustCompile(`"peer_id":"([^"]+)"`)
		var proved []string
		for _, s := range exp.Remedy.Steps {
			if m := idRE.FindStringSubmatch(s); m != nil {
				proved = append(proved, m[1])
			}
		}
		for _, f := range off {
			last := strings.Index(f.Remedy, "destroys")
			if !strings.HasPrefix(f.Remedy, "What removing a peer destroys") {
				t.Errorf("%s: remedy does not start with what removal destroys: %s", f.Server, f.Remedy)
			}
			for _, id := range proved {
				i := strings.Index(f.Remedy, `"peer_id":"`+id+`"`)
				if i < last {
					t.Errorf("%s: remedy removes %s out of the proved order %v: %s", f.Server, id, proved, f.Remedy)
				}
				last = i
			}
		}
	}
}

// TestIncidentDiagnosis: on the rename and scale-down fixtures the
// diagnosis makes one cause of the incident: the renamed servers with the
// leaderless meta group, the departed servers with the groups they left
// below quorum and their copies that fell behind.
func TestIncidentDiagnosis(t *testing.T) {
	for _, fx := range fixtures(t) {
		var exp struct {
			Renamed  map[string]string `json:"renamed"`
			Departed []string          `json:"departed"`
		}
		if json.Unmarshal(fx.want.Expect, &exp) != nil || len(exp.Renamed)+len(exp.Departed) == 0 {
			continue
		}
		rep := analyze(t, fx.forms[0])
		lead := "server-renamed"
		if len(exp.Departed) > 0 {
			lead = "peer-offline"
		}
		var cause *report.Cause
		for i, c := range rep.Diagnosis {
			if rep.Findings[c.Findings[0]].Code == lead {
				if cause != nil {
					t.Fatalf("%s: two causes lead with %s", fx.name, lead)
				}
				cause = &rep.Diagnosis[i]
			}
		}
		if cause == nil {
			t.Fatalf("%s: no cause leads with %s: %+v", fx.name, lead, rep.Diagnosis)
		}
		in := map[int]bool{}
		for _, i := range cause.Findings {
			in[i] = true
		}
		for i, f := range rep.Findings {
			chained := f.Code == lead || f.Code == "meta-no-leader" && lead == "server-renamed" ||
				lead == "peer-offline" && (f.Code == "quorum-unreachable" || f.Code == "replica-gap" && slices.Contains(exp.Departed, f.Server))
			if chained != in[i] {
				t.Errorf("%s: finding %s (%s %s) in the %s cause: %v, want %v", fx.name, f.Code, f.Group, f.Server, lead, in[i], chained)
			}
		}
	}
}
