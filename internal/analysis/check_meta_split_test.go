package analysis

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

func TestMetaSplitViews(t *testing.T) {
	m := &model.Model{IDs: map[string]string{}}
	var all []string
	for _, n := range []string{"old-0", "old-1", "old-2", "new-0", "new-1", "new-2"} {
		m.IDs[natsfmt.PeerID(n)] = n
		m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: natsfmt.PeerID(n), Alive: true})
		all = append(all, natsfmt.PeerID(n))
	}
	small := []string{natsfmt.PeerID("new-0"), natsfmt.PeerID("new-1"), natsfmt.PeerID("new-2"), natsfmt.PeerID("old-1")}
	g := &model.Group{Name: "_meta_", Kind: "meta"}
	for _, s := range m.Servers {
		v := model.View{GroupView: model.GroupView{Server: model.ServerID(s.Name), ClusterSize: 6, Peers: all, Leader: "new-2", Source: "raftz"}}
		if strings.HasPrefix(s.Name, "new") {
			v.ClusterSize, v.Peers = 4, small
		}
		g.Views = append(g.Views, v)
	}
	m.Groups = []*model.Group{g}
	fs := runCheck(meta.CheckMetaSplit, m)
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
	m := &model.Model{IDs: map[string]string{}}
	for i, n := range []string{"old-0", "old-1", "old-2"} {
		m.MetaFoundings = append(m.MetaFoundings, model.MetaFounding{Time: t0.Add(time.Duration(i) * time.Millisecond), Server: model.ServerID(n), Leader: "old-1", Source: "log"})
	}
	for i, n := range []string{"new-0", "new-1", "new-2"} {
		m.MetaFoundings = append(m.MetaFoundings, model.MetaFounding{Time: t0.Add(time.Minute + time.Duration(i)*time.Millisecond), Server: model.ServerID(n), Leader: "new-2", Source: "log"})
	}
	if fs := runCheck(meta.CheckMetaSplit, m); len(fs) != 1 {
		t.Fatalf("want one founded-apart split: %+v", fs)
	}
	// One founding, seen by all: nothing.
	m.MetaFoundings = m.MetaFoundings[:3]
	if fs := runCheck(meta.CheckMetaSplit, m); len(fs) != 0 {
		t.Fatalf("single founding flagged: %+v", fs)
	}
}
