package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/groups"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// stalledModel is a small model: the R3 stream S (group S-R3F-g) on s1..s3,
// each copy ending at held; raftz views naming leader ("" none) when
// views, each server's snapshot of the group recording snap when snap > 0.
func stalledModel(held, snap uint64, views bool, leader string) *model.Model {
	m := &model.Model{}
	st := &model.Stream{Account: "A", Name: "S", Replicas: 3, Group: "S-R3F-g"}
	g := &model.Group{Name: "S-R3F-g", Kind: natsfmt.GroupStream, Account: "A", Asset: "S"}
	for _, n := range []string{"s1", "s2", "s3"} {
		m.Servers = append(m.Servers, &model.Server{Name: n, Version: "2.15.3"})
		st.AssignedTo = append(st.AssignedTo, model.ServerID(n))
		st.Copies = append(st.Copies, &model.StreamCopy{Server: model.ServerID(n), Path: n + "/A/streams/S", FirstSeq: 1, LastSeq: held, Clustered: true})
		if views {
			g.Views = append(g.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 3, Quorum: 2, Leader: leader, Source: "raftz", Commit: 41}, LeaderKnown: true})
		}
		if snap > 0 {
			m.RaftRecords = append(m.RaftRecords, &model.RaftRecord{Server: model.ServerID(n), Group: "S-R3F-g", Kind: natsfmt.GroupStream,
				Snapshot: &model.SnapshotRecord{File: n + "/$SYS/_js_/S-R3F-g/snapshots/snap.1.41", Stream: &model.StreamSnapState{Msgs: snap, FirstSeq: 1, LastSeq: snap}}})
		}
	}
	m.Streams = []*model.Stream{st}
	m.Groups = []*model.Group{g}
	return m
}

// logEvents adds, per server, a start and then lines of kind with text.
func logEvents(m *model.Model, servers []string, group, kind, text string, n int) {
	t0 := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	for _, s := range servers {
		m.Timeline = append(m.Timeline, model.TimelineEvent{Time: t0, Server: model.ServerID(s), Source: "log", Kind: string(natsfmt.EventStart), File: s + ".log", Line: 1})
		for i := range n {
			m.Timeline = append(m.Timeline, model.TimelineEvent{Time: t0.Add(time.Duration(i+1) * 5 * time.Second), Server: model.ServerID(s), Source: "log", Kind: kind,
				Group: group, Account: "A", Stream: "S", Text: text, File: s + ".log", Line: i + 2})
		}
		m.Servers[0].Sources = map[string]bool{"log": true}
	}
}

func TestGroupStalledOnModel(t *testing.T) {
	one := func(m *model.Model, what string) *report.Finding {
		t.Helper()
		fs := runCheck(groups.CheckGroupStalled, m)
		if len(fs) != 1 {
			t.Fatalf("%s: findings %+v, want one", what, fs)
		}
		return &fs[0]
	}
	none := func(m *model.Model, what string) {
		t.Helper()
		if fs := runCheck(groups.CheckGroupStalled, m); len(fs) != 0 {
			t.Errorf("%s: %+v", what, fs)
		}
	}
	// Every raftz view without a leader, a quorum answered; every replica
	// behind its own snapshot: critical, why, the move-aside remedy.
	f := one(stalledModel(32, 40, true, ""), "no leader, behind snapshots")
	if f.Severity != report.Critical || f.Kind != "no-leader" || f.Group != "S-R3F-g" || f.Stream != "S" || *f.Reachable != 3 ||
		f.RemedyID != "group-stalled-move-aside" || len(f.Ranges) != 1 || f.Ranges[0] != (report.Range{First: 33, Last: 40}) {
		t.Errorf("finding %+v", f)
	}
	// The same without the why (the snapshots hold no more): critical, the
	// remedy that finds the cause.
	if f := one(stalledModel(40, 40, true, ""), "no leader"); f.RemedyID != "group-not-current" || len(f.Ranges) != 0 {
		t.Errorf("no leader, snapshots held: %+v", f)
	}
	// A leader: nothing.
	none(stalledModel(32, 40, true, "s1id"), "a leader")
	// One raftz view only, of three: no quorum seen, nothing.
	m := stalledModel(40, 0, true, "")
	m.Groups[0].Views = m.Groups[0].Views[:1]
	none(m, "one view of three")
	// Stores alone (no capture, no log): every replica behind its own
	// snapshot predicts the stall at the next start.
	if f := one(stalledModel(32, 40, false, ""), "stores alone"); f.Severity != report.Critical || !strings.Contains(f.Message, "next start") {
		t.Errorf("stores alone: %+v", f)
	}
	// One replica holding what the snapshots record: it serves the others.
	m = stalledModel(32, 40, false, "")
	m.Streams[0].Copies[2].LastSeq = 40
	none(m, "one replica holds 40")
	// A stale index.db remembering 40 on a release that keeps it (2.11.17):
	// nothing; on 2.15.3, which rebuilds from the blocks: stalled.
	m = stalledModel(32, 40, false, "")
	for i, c := range m.Streams[0].Copies {
		c.Index = &model.IndexRecord{File: "index.db", LastSeq: 40, Stale: true}
		m.Servers[i].Version = "2.11.17"
	}
	none(m, "2.11.17 keeps the stale index.db's last sequence")
	for _, s := range m.Servers {
		s.Version = "2.15.3"
	}
	one(m, "2.15.3 rebuilds from the blocks")
	// Logs alone: "catchup aborted, no leader" again and again on a quorum.
	m = stalledModel(40, 0, false, "")
	logEvents(m, []string{"s1", "s2"}, "", "stream-apply-error", "Error applying stream entries to 'A > S': catchup aborted, no leader for stream 'A > S'", 3)
	if f := one(m, "logs alone"); f.Kind != "no-leader" || len(f.TimelineRefs) != 2 {
		t.Errorf("logs alone: %+v", f)
	}
	// On one server only: no quorum of them; nothing.
	m = stalledModel(40, 0, false, "")
	logEvents(m, []string{"s1"}, "", "stream-apply-error", "Error applying stream entries to 'A > S': catchup aborted, no leader for stream 'A > S'", 3)
	none(m, "one server's log")
	// A member falling behind with a leader: a warning; caught up after:
	// nothing.
	m = stalledModel(40, 0, true, "s1id")
	logEvents(m, []string{"s2"}, "S-R3F-g", "raft-falling-behind", "RAFT [x - S-R3F-g] Falling behind in health check, commit 90 != applied 40", 1)
	if f := one(m, "falling behind"); f.Severity != report.Warning || f.Kind != "not-current" || len(f.Servers) != 1 || f.Servers[0] != "s2" {
		t.Errorf("falling behind: %+v", f)
	}
	m.Timeline = append(m.Timeline, model.TimelineEvent{Time: m.Timeline[len(m.Timeline)-1].Time.Add(time.Second), Server: "s2", Source: "log",
		Kind: "raft-caught-up", Group: "S-R3F-g", Text: "Health check OK, no longer falling behind"})
	none(m, "caught up")
	// A reset loop: three resets since the start.
	m = stalledModel(40, 0, true, "s1id")
	logEvents(m, []string{"s3"}, "", "stream-reset", "Resetting stream cluster state for 'A > S'", 3)
	if f := one(m, "reset loop"); f.Kind != "not-current" {
		t.Errorf("reset loop: %+v", f)
	}
	// No raft group and no log: skipped, because of that.
	if r := groups.CheckGroupStalled.Skip(check.NewPass(&model.Model{}, facts.ComputeAll(&model.Model{}), &groups.CheckGroupStalled, defaultSettings(), nil)); !strings.Contains(r, "no stream or consumer raft group") {
		t.Errorf("skip reason %q", r)
	}
}

// On the real-server fixtures where every replica of an R3 stream lost the
// same tail and the servers were restarted (ahead-* on 2.12.15, 2.14.10 and
// 2.15.3; acked-lost-v2.15.2): group-stalled no-leader for that stream,
// critical, with every server's /raftz and "catchup aborted" lines and the
// why (each replica behind its own snapshot) and the move-aside remedy;
// the same from the stores alone (captures and logs left out), and from
// the logs and stores without captures. acked-lost-v2.11.17, whose
// servers kept the stale index.db's last sequence and elected a leader:
// none, also from its stores alone.
func TestGroupStalledFixtures(t *testing.T) {
	type want struct {
		name, stream string
		stalled      bool
	}
	cases := []want{{"acked-lost-v2.15.2", "LEDGER", true}, {"acked-lost-v2.11.17", "LEDGER", false}}
	for _, n := range aheadFixtures {
		cases = append(cases, want{n, "ORDERS", true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(bundlesDir, c.name)
			b, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			// The servers' own answers: no leader named by any (ahead's
			// stalled, acked-lost's stream_leader_after).
			var w struct {
				Expect struct {
					Stalled []string          `json:"stalled"`
					Leaders map[string]string `json:"stream_leader_after"`
				} `json:"expect"`
			}
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatal(err)
			}
			noLeader := len(w.Expect.Stalled) > 0
			if w.Expect.Leaders != nil {
				noLeader = true
				for _, l := range w.Expect.Leaders {
					noLeader = noLeader && l == ""
				}
			}
			if noLeader != c.stalled {
				t.Fatalf("fixture: the servers named no leader: %v, the case says %v", noLeader, c.stalled)
			}
			path := filepath.Join(dir, "bundle")
			forms := map[string]string{"whole": path,
				"no captures": copyWithout(t, path, func(rel string) bool {
					return strings.HasSuffix(rel, ".json") && !strings.Contains(rel, "store-")
				}),
				"stores alone": copyWithout(t, path, func(rel string) bool {
					return !strings.Contains(rel, "store-")
				}),
			}
			for form, p := range forms {
				var got []report.Finding
				for _, f := range analyze(t, p).Findings {
					if f.Code == "group-stalled" {
						got = append(got, f)
					}
				}
				if !c.stalled {
					if len(got) != 0 {
						t.Errorf("%s: %+v", form, got)
					}
					continue
				}
				if len(got) != 1 {
					t.Errorf("%s: group-stalled %+v, want one", form, got)
					continue
				}
				f := got[0]
				ev := strings.Join(f.Evidence, "\n")
				if f.Stream != c.stream || f.Severity != report.Critical || f.Kind != "no-leader" || f.RemedyID != "group-stalled-move-aside" ||
					!strings.Contains(ev, "why: every replica's copy ends before its own snapshot") {
					t.Errorf("%s: %+v", form, f)
				}
				if form == "whole" && (!strings.Contains(ev, "/raftz of ") || !strings.Contains(ev, "catchup aborted, no leader")) {
					t.Errorf("%s: evidence %v", form, f.Evidence)
				}
			}
		})
	}
}

// TestNewCodesNotOnOtherFixtures: consumer-ahead and group-stalled are
// raised on no committed bundle but those of the incidents they are for
// (ahead-*, and group-stalled on acked-lost-v2.15.2 and its Jepsen form,
// whose restarted servers named no leader).
func TestNewCodesNotOnOtherFixtures(t *testing.T) {
	for _, p := range committedBundles(t) {
		name := filepath.Base(filepath.Dir(p))
		if strings.HasPrefix(name, "ahead-") {
			continue
		}
		rep, err := Run(p, Options{ToolVersion: "test", Only: []string{"consumer-ahead", "group-stalled"}})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, f := range rep.Findings {
			if f.Code == "group-stalled" && (name == "acked-lost-v2.15.2" || name == "acked-lost-jepsen-v2.15.2") {
				continue
			}
			if f.Code == "consumer-ahead" || f.Code == "group-stalled" {
				t.Errorf("%s: %s %s: %s", name, f.Code, f.Severity, f.Message)
			}
		}
	}
}
