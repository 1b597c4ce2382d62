package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

func TestUnsafeMembershipChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	g := &model.Group{Name: "S-R5F-x", Kind: "stream", History: []model.HistoryEvent{
		{Time: at(0), Event: "peer-state", Peers: []string{"a", "b", "c", "d", "e"}, Source: "wal"},
		{Time: at(time.Second), Event: "remove-peer", Peer: "a", Source: "wal"},
		{Time: at(2 * time.Second), Event: "remove-peer", Peer: "b", Source: "wal"},
		{Time: at(time.Hour), Event: "remove-peer", Peer: "c", Source: "wal"},
	}}
	fs := runCheck(peers.CheckUnsafeMembershipChange, &model.Model{Groups: []*model.Group{g}})
	if len(fs) != 1 || len(fs[0].Events) != 2 {
		t.Fatalf("want one burst of two removals: %+v", fs)
	}
	if strings.Contains(fs[0].Remedy, "meta group") || !strings.Contains(fs[0].Remedy, "stream folder") {
		t.Errorf("a stream group's remedy: %s", fs[0].Remedy)
	}
	// The meta group's removals are server removals: no stream folder of
	// its own to save, the servers' stores are.
	g.Name, g.Kind = "_meta_", natsfmt.GroupMeta
	fs = runCheck(peers.CheckUnsafeMembershipChange, &model.Model{Groups: []*model.Group{g}})
	if len(fs) != 1 || strings.Contains(fs[0].Remedy, "stream folder") || !strings.Contains(fs[0].Remedy, "JetStream folder") {
		t.Errorf("the meta group's remedy: %+v", fs)
	}
}

func TestReplacedMajority(t *testing.T) {
	ids := map[string]string{}
	var servers []*model.Server
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		ids[natsfmt.PeerID(n)] = n
		servers = append(servers, &model.Server{Name: n, PeerID: natsfmt.PeerID(n), StoreDir: n})
	}
	old := []string{natsfmt.PeerID("n2"), natsfmt.PeerID("n4"), natsfmt.PeerID("n5")}
	cur := []string{natsfmt.PeerID("n1"), natsfmt.PeerID("n3"), natsfmt.PeerID("n5")}
	for _, s := range servers {
		peers := cur
		if s.Name == "n2" || s.Name == "n4" {
			peers = old
		}
		s.Meta = &model.MetaState{Streams: map[model.AssetKey]*model.Assignment{{Account: "APP", Stream: "R"}: {Account: "APP", Stream: "R", Group: "S-R3F-x", Peers: peers}}}
	}
	m := &model.Model{Servers: servers, IDs: ids}
	fs := runCheck(peers.CheckUnsafeMembershipChange, m)
	if len(fs) != 1 || fs[0].Stream != "R" || len(fs[0].Events) != 2 {
		t.Fatalf("%+v", fs)
	}
	// Replacing one of three keeps a majority: safe.
	for _, s := range servers {
		if s.Name == "n2" || s.Name == "n4" {
			s.Meta.Streams[model.AssetKey{Account: "APP", Stream: "R"}].Peers = []string{natsfmt.PeerID("n2"), natsfmt.PeerID("n3"), natsfmt.PeerID("n5")}
		}
	}
	if fs := runCheck(peers.CheckUnsafeMembershipChange, m); len(fs) != 0 {
		t.Fatalf("one replaced of three flagged: %+v", fs)
	}
}
