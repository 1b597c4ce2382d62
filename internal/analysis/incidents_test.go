package analysis

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
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
	for _, stream := range model.SortedKeys(exp.Placement) {
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
// offersRevert and offersBeside say whether a server-renamed remedy offers
// reverting the names, or servers with the old names beside, as a way out
// (not under "Not:").
func offersRevert(r string) bool {
	return strings.Contains(r, "a) revert server_name") || strings.Contains(r, "b) or revert server_name")
}

func offersBeside(r string) bool { return strings.Contains(r, "a) keep the new names") }

func renamedModel() *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	olds, news := []string{"nats-0", "nats-1", "nats-2"}, []string{"js-0", "js-1", "js-2"}
	var oldIDs []string
	for i := range olds {
		m.IDs[natsfmt.PeerID(olds[i])], m.IDs[natsfmt.PeerID(news[i])] = olds[i], news[i]
		oldIDs = append(oldIDs, natsfmt.PeerID(olds[i]))
		m.Servers = append(m.Servers, &model.Server{Name: news[i], PeerID: natsfmt.PeerID(news[i]), StoreDir: news[i], Alive: true,
			Version: "2.15.2", Sources: map[string]bool{"store": true, "log": true, "raftz": true}})
		m.Renames = append(m.Renames, model.Rename{Old: olds[i], New: news[i], File: news[i] + ".log", Line: 100, OldLine: 1})
	}
	meta := &model.Group{Name: "_meta_", Kind: "meta"}
	stream := &model.Group{Name: "S-R3F-x", Kind: "stream", Account: "APP", Asset: "ORDERS"}
	for _, n := range news {
		meta.Views = append(meta.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 3, Quorum: 2, Source: "raftz",
			Peers: append([]string{natsfmt.PeerID(n)}, oldIDs...)}, LeaderKnown: true})
		stream.Views = append(stream.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 3, Quorum: 2, Source: "peers.idx", Peers: oldIDs}})
	}
	m.Groups = []*model.Group{meta, stream}
	m.Timeline = []model.TimelineEvent{
		{Server: "js-0", File: "js-0.log", Line: 120, Kind: "restored-stream", Account: "APP", Stream: "ORDERS", Text: "Restored 20 messages for stream 'APP > ORDERS' in 0s"},
		{Server: "js-0", File: "js-0.log", Line: 130, Kind: "stream-removed", Account: "APP", Stream: "ORDERS", Text: "JetStream removing stream 'APP > ORDERS' from this server"},
		// Before the rename: not the rename's doing.
		{Server: "js-0", File: "js-0.log", Line: 50, Kind: "stream-removed", Account: "APP", Stream: "OLD", Text: "JetStream removing stream 'APP > OLD' from this server"},
	}
	return m
}

// scaledModel: five servers n1..n5, n4 and n5 departed (stores and logs in
// the bundle, no captures, not heard from); the meta group keeps all five,
// stream A sits on n1, n2, n4 and stream B on n3, n4, n5.
func scaledModel() *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	id := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		id[n] = natsfmt.PeerID(n)
		m.IDs[id[n]] = n
		src := map[string]bool{"store": true, "log": true}
		if n <= "n3" {
			src["raftz"] = true
		}
		m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: id[n], StoreDir: n, Alive: true, Version: "2.12.1", Sources: src})
	}
	view := func(srv string, size int, peers, alive []string) model.View {
		var ps, as []string
		for _, p := range peers {
			ps = append(ps, id[p])
		}
		for _, p := range alive {
			as = append(as, id[p])
		}
		return model.View{GroupView: model.GroupView{Server: model.ServerID(srv), ClusterSize: size, Quorum: size/2 + 1, Source: "raftz", Peers: ps}, Alive: as, LeaderKnown: true}
	}
	// n1 leads the meta group and S-A: its views hear every live peer
	// (raft.go trackPeer); S-B has no leader.
	led := func(v model.View) model.View { v.Leader = id["n1"]; return v }
	all := []string{"n1", "n2", "n3", "n4", "n5"}
	meta := &model.Group{Name: "_meta_", Kind: "meta"}
	for _, s := range []string{"n1", "n2", "n3"} {
		meta.Views = append(meta.Views, led(view(s, 5, all, []string{"n1", "n2", "n3"})))
	}
	a := &model.Group{Name: "S-A", Kind: "stream", Account: "APP", Asset: "A", Views: []model.View{led(view("n1", 3, []string{"n1", "n2", "n4"}, []string{"n2"}))}}
	b := &model.Group{Name: "S-B", Kind: "stream", Account: "APP", Asset: "B", Views: []model.View{view("n3", 3, []string{"n3", "n4", "n5"}, nil)}}
	m.Groups = []*model.Group{meta, a, b}
	return m
}

// runAllChecks runs every registered check on m; none may fail to run.
func runAllChecks(t *testing.T, m *model.Model) []report.Finding {
	t.Helper()
	fs, outcomes := runChecks(m, Checks, defaultSettings(), nil)
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
				if offersRevert(f.Remedy) != revert || offersBeside(f.Remedy) != beside {
					t.Errorf("%s: remedy does not offer what worked (%v): %s", f.Server, exp.Recovered, f.Remedy)
				}
			}
			for _, code := range []string{"peer-unknown", "peer-id-corrupt", "meta-split", "peer-offline"} {
				if fs := byCode(rep.Findings, code); len(fs) > 0 {
					t.Errorf("%s beside server-renamed: %s", code, fs[0].Message)
				}
			}
			// Every group the old ids leave below quorum has its
			// quorum-unreachable (issue 21 item 6), _meta_ among them, once
			// each, with the old ids as the missing peers and server-renamed's
			// remedy rather than removing them as lost servers.
			old := map[string]bool{}
			for o := range exp.Renamed {
				old[natsfmt.PeerID(o)] = true
			}
			groups := map[string]int{}
			for _, q := range byCode(rep.Findings, "quorum-unreachable") {
				groups[q.Group]++
				for _, p := range q.Missing {
					if !old[p] {
						t.Errorf("quorum-unreachable %s: missing %s is no old id", q.Group, p)
					}
				}
				if !strings.Contains(q.Remedy, "server-renamed") || strings.Contains(q.Remedy, "peer-remove") {
					t.Errorf("quorum-unreachable %s: remedy %s", q.Group, q.Remedy)
				}
			}
			if groups["_meta_"] != 1 {
				t.Errorf("quorum-unreachable for _meta_: %d findings, want 1 (%v)", groups["_meta_"], groups)
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
			if !strings.HasPrefix(f.Remedy, "What this destroys:") {
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
			chained := f.Code == lead || (f.Code == "meta-no-leader" || f.Code == "quorum-unreachable") && lead == "server-renamed" ||
				lead == "peer-offline" && (f.Code == "quorum-unreachable" || f.Code == "replica-gap" && slices.Contains(exp.Departed, f.Server))
			if chained != in[i] {
				t.Errorf("%s: finding %s (%s %s) in the %s cause: %v, want %v", fx.name, f.Code, f.Group, f.Server, lead, in[i], chained)
			}
		}
	}
}
