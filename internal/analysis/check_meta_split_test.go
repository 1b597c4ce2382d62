package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
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

// TestMetaSplitNamesWinner: on the supercluster fixture, whose generator
// recorded which side created each stream and which streams were gone
// after the two meta groups met, the meta-split finding (and the cause's
// headline) names the side whose meta state was kept, the side that lost,
// and each stream it lost; the split's winner is a server of the side that
// kept its streams, though the losing side's views carry the higher term
// (4 against 3). That the losing side's server followed the winner's
// leader is evidence, not the story.
func TestMetaSplitNamesWinner(t *testing.T) {
	const fx = "v2.15.2-supercluster-split"
	var w struct {
		Expect struct {
			Created map[string]string `json:"streams_created"`
			Lost    []string          `json:"streams_lost"`
		} `json:"expect"`
	}
	b, err := os.ReadFile(filepath.Join(bundlesDir, fx, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Expect.Lost) == 0 {
		t.Fatal("want.json records no lost stream")
	}
	loser := w.Expect.Created[strings.TrimPrefix(w.Expect.Lost[0], "$G > ")]
	winner := ""
	for _, side := range w.Expect.Created {
		if side != loser {
			winner = side
		}
	}
	if loser == "" || winner == "" {
		t.Fatalf("want.json: lost %v created %v: no two sides", w.Expect.Lost, w.Expect.Created)
	}
	side := func(s string) string { return s + "-0," + s + "-1," + s + "-2" }
	rep := analyze(t, filepath.Join(bundlesDir, fx, "bundle"))
	var split *report.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Code == "meta-split" {
			split = &rep.Findings[i]
		}
	}
	if split == nil {
		t.Fatal("no meta-split finding")
	}
	story := fmt.Sprintf("the meta state of %s won: it replaced that of %s, which lost ", side(winner), side(loser))
	if !strings.Contains(split.Message, story) {
		t.Errorf("meta-split message lacks %q: %s", story, split.Message)
	}
	for _, l := range w.Expect.Lost {
		if !strings.Contains(split.Message, "which lost "+l) {
			t.Errorf("meta-split message does not name the lost %s: %s", l, split.Message)
		}
	}
	if strings.Contains(split.Message, "followed meta leader") {
		t.Errorf("the message tells who followed whom, not who won: %s", split.Message)
	}
	if len(split.Evidence) == 0 || !strings.HasPrefix(split.Evidence[0], "the meta state kept is that of "+side(winner)) {
		t.Errorf("evidence does not open with the side kept: %q", split.Evidence)
	}
	headline := false
	for _, c := range rep.Diagnosis {
		headline = headline || strings.Contains(c.Summary, story)
	}
	if !headline {
		t.Errorf("no cause's headline tells %q: %+v", story, rep.Diagnosis)
	}

	b2, err := bundle.Open(filepath.Join(bundlesDir, fx, "bundle"), bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	m := load.Model(b2, load.Options{})
	f := facts.ComputeAll(m)
	if win := f.SplitWinner(); win == nil || !strings.HasPrefix(win.Name, winner+"-") || f.SplitWinnerBy() != "lost assets" {
		t.Errorf("split winner %v by %q, want a server of %s told by the lost assets", win, f.SplitWinnerBy(), winner)
	}
	if hi := f.HighestMetaTerm(m); hi == nil || !strings.HasPrefix(hi.Name, loser+"-") {
		t.Logf("the highest term is no longer the losing side's (%v): the test's premise changed", hi)
	}
}
