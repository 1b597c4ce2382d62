package report

import (
	"strings"
	"testing"
	"time"
)

// TestLeaderOfTheLastMoment: three servers captured twice, twenty seconds
// apart, the first round naming leader a, the second b. The overview marks
// b alone; each server's row in the groups table says when its last
// capture was answered and which source said which leader when; the store's
// undated view changes nothing. Two servers whose last captures name
// different leaders (two meta groups at once) are both marked; without any
// dated view, every leader named is.
func TestLeaderOfTheLastMoment(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 54, 0, time.UTC)
	t1 := t0.Add(20 * time.Second)
	r := &Report{Servers: []Server{{Name: "a", PeerID: "AAAAAAAA"}, {Name: "b", PeerID: "BBBBBBBB"}, {Name: "c", PeerID: "CCCCCCCC"}}}
	meta := Group{Name: "_meta_", Kind: "meta"}
	for _, s := range []string{"a", "b", "c"} {
		meta.Views = append(meta.Views,
			GroupView{Server: s, ClusterSize: 3, Quorum: 2, Leader: "a", Source: "jsz", Time: &t0},
			GroupView{Server: s, ClusterSize: 3, Quorum: 2, Leader: "b", Source: "jsz", Time: &t1},
			GroupView{Server: s, ClusterSize: 3, Quorum: 2, Leader: "b", Source: "varz", Time: Ptr(t1.Add(time.Second))},
			GroupView{Server: s, ClusterSize: 3, Quorum: 2, Term: 2, Peers: []string{"AAAAAAAA", "BBBBBBBB", "CCCCCCCC"}, Source: "peers.idx"})
	}
	r.Groups = []Group{meta}
	if got := marked(OverviewTable(r)); got != "b" {
		t.Errorf("overview marks %q, want b (the leader the last captures name)", got)
	}
	g := GroupsTable(r)
	for _, row := range g.Rows {
		if want := FormatTime(Ptr(t1.Add(time.Second))); row[10] != want {
			t.Errorf("%s: captured %q, want %q", row[2], row[10], want)
		}
		if want := "a (AAAAAAAA) (jsz 2026-12-01T12:00:54Z)"; !strings.Contains(row[6], want) || !strings.Contains(row[6], "b (BBBBBBBB) (jsz 2026-12-01T12:01:14Z, varz 2026-12-01T12:01:15Z)") {
			t.Errorf("%s: leader %q does not say which capture named which leader when", row[2], row[6])
		}
		if !strings.HasSuffix(row[2], "*") != (row[2] != "b (BBBBBBBB)*") {
			t.Errorf("row %q: the leader mark is not on b alone", row[2])
		}
	}

	// Two groups at the last moment: a's and c's last captures name a,
	// b's names b.
	split := Group{Name: "_meta_", Kind: "meta", Views: []GroupView{
		{Server: "a", Leader: "a", Source: "jsz", Time: &t1}, {Server: "c", Leader: "a", Source: "jsz", Time: &t1},
		{Server: "b", Leader: "c", Source: "jsz", Time: &t0}, {Server: "b", Leader: "b", Source: "jsz", Time: &t1},
	}}
	r.Groups = []Group{split}
	if got := marked(OverviewTable(r)); got != "a,b" {
		t.Errorf("two groups at once: overview marks %q, want a,b", got)
	}
	// Nothing dated: every leader a view names.
	r.Groups = []Group{{Name: "_meta_", Kind: "meta", Views: []GroupView{{Server: "a", Leader: "a", Source: "raftz"}, {Server: "b", Leader: "b", Source: "raftz"}}}}
	if got := marked(OverviewTable(r)); got != "a,b" {
		t.Errorf("undated views: overview marks %q, want a,b", got)
	}
}

// marked lists the servers the overview marks as meta leader.
func marked(t *Table) string {
	var out []string
	for _, row := range t.Rows {
		if row[3] == "*" {
			out = append(out, strings.Fields(row[0])[0])
		}
	}
	return strings.Join(out, ",")
}
