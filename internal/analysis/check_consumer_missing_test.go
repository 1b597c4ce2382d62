package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/consumers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// ghostModel: three servers whose meta states assign consumers W and G of
// stream TASKS (R3) to all three; every store holds the stream with only
// W's folder, and W's raft group. alter changes it before the run.
func ghostModel(alter func(m *model.Model)) *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	st := &model.Stream{Account: "$G", Name: "TASKS", Replicas: 3}
	peers := []string{"p0", "p1", "p2"}
	for i, n := range []string{"cm-0", "cm-1", "cm-2"} {
		s := &model.Server{ID: model.ServerID(n), Name: n, PeerID: peers[i], Version: "2.12.1", Sources: map[string]bool{"store": true}}
		s.Meta = &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{
			{Account: "$G", Stream: "TASKS"}: {Account: "$G", Stream: "TASKS", Group: "S-R3F-x", Peers: peers, Replicas: 3,
				Consumers:           map[string][]string{"W": peers, "G": peers},
				ConsumerAssignments: map[string]model.ConsumerAssignment{"W": {Group: "C-R3F-w"}, "G": {Group: "C-R3F-g"}}},
		}}
		m.Servers = append(m.Servers, s)
		m.IDs[peers[i]] = n
		st.Copies = append(st.Copies, &model.StreamCopy{Server: s.ID, Path: n + "/jetstream/$G/streams/TASKS", LastSeq: 10, Messages: 10,
			Consumers: []report.Consumer{{Name: "W"}}})
		m.RaftRecords = append(m.RaftRecords, &model.RaftRecord{Server: s.ID, Group: "C-R3F-w"})
	}
	m.Streams = []*model.Stream{st}
	m.Timeline = append(m.Timeline, model.TimelineEvent{Time: time.Date(2026, 12, 7, 4, 51, 46, 0, time.UTC), Server: "cm-1", Source: "healthz",
		Kind: "healthcheck-failed", Text: "healthz: unavailable: JetStream consumer '$G > TASKS > G' is not current: consumer not found", File: "captures/cm-1/healthz.json"})
	if alter != nil {
		alter(m)
	}
	return m
}

func TestConsumerMissingOnModel(t *testing.T) {
	fs, _ := runChecks(ghostModel(nil), []check.Check{consumers.CheckConsumerMissing}, defaultSettings(), nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one for G", fs)
	}
	f := fs[0]
	if f.Code != "consumer-missing" || f.Consumer != "G" || f.Stream != "TASKS" || f.Account != "$G" || f.Severity != report.Critical || len(f.Servers) != 3 {
		t.Errorf("finding %+v", f)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"C-R3F-g", "no obs/G folder", "consumer not found", "cm-1 healthz"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if f.RemedyID != "consumer-missing-delete" {
		t.Errorf("remedy %q", f.RemedyID)
	}
	// The steps: a cost and a save before the delete.
	cost, save, del := -1, -1, -1
	for i, s := range f.RemedySteps {
		switch {
		case s.Kind == "cost" && cost < 0:
			cost = i
		case s.Kind == "save" && save < 0:
			save = i
		case s.Destructive && del < 0:
			del = i
			if len(s.Commands) == 0 || !strings.Contains(s.Commands[0], "nats consumer rm TASKS G") {
				t.Errorf("delete step %+v", s)
			}
		}
	}
	if cost < 0 || save < 0 || del < 0 || cost > del || save > del {
		t.Errorf("steps cost %d save %d delete %d: %+v", cost, save, del, f.RemedySteps)
	}
}

// The states next to it: held somewhere, or not agreed on, is no finding.
func TestConsumerMissingHeldOrContested(t *testing.T) {
	for name, alter := range map[string]func(m *model.Model){
		"a folder on one server": func(m *model.Model) {
			m.Streams[0].Copies[2].Consumers = append(m.Streams[0].Copies[2].Consumers, report.Consumer{Name: "G"})
		},
		"its raft group on one server": func(m *model.Model) {
			m.RaftRecords = append(m.RaftRecords, &model.RaftRecord{Server: "cm-0", Group: "C-R3F-g"})
		},
		"in a capture": func(m *model.Model) {
			m.Streams[0].ConsumerCaptures = append(m.Streams[0].ConsumerCaptures, model.ConsumerCapture{Server: "cm-0", Name: "G"})
		},
		"one meta state without it": func(m *model.Model) {
			delete(m.Servers[1].Meta.Streams[model.AssetKey{Account: "$G", Stream: "TASKS"}].Consumers, "G")
		},
	} {
		if fs := runCheck(consumers.CheckConsumerMissing, ghostModel(alter)); len(fs) != 0 {
			t.Errorf("%s: findings %+v", name, fs)
		}
	}
	// None of its servers' stores or captures in the bundle: not judged.
	m := ghostModel(func(m *model.Model) { m.Streams[0].Copies = nil })
	findings, outcomes := runChecks(m, []check.Check{consumers.CheckConsumerMissing}, defaultSettings(), nil)
	if len(findings) != 0 || len(outcomes[0].Skipped) != 1 || !strings.Contains(outcomes[0].Skipped[0], "G") {
		t.Errorf("without stores: %+v %+v", findings, outcomes)
	}
	// No meta state: skipped, and why.
	m = ghostModel(func(m *model.Model) {
		for _, s := range m.Servers {
			s.Meta = nil
		}
	})
	_, outcomes = runChecks(m, []check.Check{consumers.CheckConsumerMissing}, defaultSettings(), nil)
	if o := outcomes[0]; o.Outcome != check.OutcomeSkipped || !strings.Contains(o.Reason, "no meta state") {
		t.Errorf("%+v, want skipped for want of a meta state", o)
	}
}

// ghostWant is what consumermissing-<version>'s want.json records.
type ghostWant struct {
	Account  string            `json:"account"`
	Stream   string            `json:"stream"`
	Missing  []string          `json:"missing"`
	Health   map[string]string `json:"health"`
	Findings []struct {
		Code, Consumer string
	} `json:"findings"`
}

func readGhostWant(t *testing.T, dir string) ghostWant {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Expect ghostWant `json:"expect"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w.Expect
}

// On the consumermissing fixtures (real 2.12.1, 2.12.15 and 2.15.3
// servers: a colliding create on a WorkQueue stream left committed, every
// /healthz failing on it): consumer-missing for exactly the consumers the
// list API reported missing, with each server's failing /healthz in its
// evidence, and no other critical finding. With the captures gone the
// stores alone still show it.
func TestConsumerMissingFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "consumermissing-v*"))
	if len(dirs) < 2 {
		t.Fatalf("consumermissing fixtures: %v", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			x := readGhostWant(t, dir)
			if len(x.Missing) == 0 {
				t.Fatal("fixture: no consumer missing")
			}
			for n, h := range x.Health {
				if !strings.Contains(h, "is not current") {
					t.Fatalf("fixture: %s /healthz %s", n, h)
				}
			}
			rep := analyze(t, filepath.Join(dir, "bundle"))
			got := map[string]report.Finding{}
			for _, f := range rep.Findings {
				switch {
				case f.Code == "consumer-missing":
					got[f.Consumer] = f
				case f.Severity == report.Critical:
					t.Errorf("critical %s: %s", f.Code, f.Message)
				case f.Code == "consumer-stuck":
					t.Errorf("consumer-stuck: %s", f.Message)
				}
			}
			if len(got) != len(x.Missing) {
				t.Fatalf("consumer-missing for %v, want %v", findingConsumers(got), x.Missing)
			}
			for _, c := range x.Missing {
				f, ok := got[c]
				if !ok {
					t.Errorf("no consumer-missing for %s", c)
					continue
				}
				if f.Stream != x.Stream || f.Account != x.Account || len(f.Servers) != len(x.Health) {
					t.Errorf("finding %+v", f)
				}
				ev := strings.Join(f.Evidence, "\n")
				for n := range x.Health {
					if !strings.Contains(ev, n+" healthz") && !strings.Contains(ev, n+" log") {
						t.Errorf("evidence names no failing health check of %s:\n%s", n, ev)
					}
				}
			}
			// The captures missing: the stores and meta states alone.
			cp := copyTree(t, filepath.Join(dir, "bundle"))
			if err := os.RemoveAll(filepath.Join(cp, "captures")); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range analyze(t, cp).Findings {
				if f.Code == "consumer-missing" {
					n++
				}
			}
			if n != len(x.Missing) {
				t.Errorf("without captures: %d consumer-missing, want %d", n, len(x.Missing))
			}
		})
	}
}

func findingConsumers(m map[string]report.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A consumer whose folder the stores hold but no server loaded (its /jsz
// lists the stream without it and its /healthz fails on it; what 2.15.3
// did to the consumer the missing one overlaps, once restarted):
// assigned-not-loaded. One server with the folder whose health check does
// not fail on it counts as running it.
func TestConsumerMissingNotLoadedOnModel(t *testing.T) {
	notLoaded := func(m *model.Model) {
		st := m.Streams[0]
		for i, s := range m.Servers {
			st.Captured = append(st.Captured, model.OnDisk{Server: s.ID, Source: "jsz", Path: "captures/" + s.Name + "/jsz.json"})
			// G is now held and loaded; W is on disk but loaded nowhere.
			st.ConsumerCaptures = append(st.ConsumerCaptures, model.ConsumerCapture{Server: s.ID, Name: "G"})
			m.Timeline = append(m.Timeline, model.TimelineEvent{Time: time.Date(2026, 12, 7, 5, 0, i, 0, time.UTC), Server: s.ID, Source: "healthz",
				Kind: "healthcheck-failed", Text: "healthz: unavailable: JetStream consumer '$G > TASKS > W' is not current: consumer assignment error: multiple non-filtered consumers not allowed on workqueue stream (10099)"})
		}
	}
	fs, _ := runChecks(ghostModel(notLoaded), []check.Check{consumers.CheckConsumerMissing}, defaultSettings(), nil)
	if len(fs) != 1 || fs[0].Consumer != "W" || fs[0].Kind != "assigned-not-loaded" || len(fs[0].Servers) != 3 {
		t.Fatalf("findings %+v, want W assigned-not-loaded on three servers", fs)
	}
	if ev := strings.Join(fs[0].Evidence, "\n"); !strings.Contains(ev, "did not load it") || !strings.Contains(ev, "10099") {
		t.Errorf("evidence:\n%s", ev)
	}
	// Its state is on disk: no delete.
	if fs[0].RemedyID != "consumer-not-loaded" {
		t.Errorf("remedy %s", fs[0].RemedyID)
	}
	for _, st := range fs[0].RemedySteps {
		if st.Destructive {
			t.Errorf("destructive step %+v", st)
		}
	}
	fs, _ = runChecks(ghostModel(func(m *model.Model) {
		notLoaded(m)
		m.Timeline = m.Timeline[:len(m.Timeline)-1] // cm-2's health check does not fail
	}), []check.Check{consumers.CheckConsumerMissing}, defaultSettings(), nil)
	if len(fs) != 0 {
		t.Errorf("with cm-2 healthy: %+v", fs)
	}
}

// One step later (consumermissing-restarted-<version>: the same servers
// started on the bundle's stores and restarted one at a time): on 2.12.x
// both consumers run and every /healthz is ok, so nothing is missing; on
// 2.15.3 the servers loaded the refused consumer and refused the other,
// whose folder they hold: assigned-not-loaded for exactly the consumers the
// list API reported missing, never a delete.
func TestConsumerMissingRestartedFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "consumermissing-restarted-v*"))
	if len(dirs) < 2 {
		t.Fatalf("consumermissing-restarted fixtures: %v", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			x := readGhostWant(t, dir)
			var got []report.Finding
			for _, f := range analyze(t, filepath.Join(dir, "bundle")).Findings {
				if f.Code == "consumer-missing" {
					got = append(got, f)
				} else if f.Severity == report.Critical {
					t.Errorf("critical %s: %s", f.Code, f.Message)
				}
			}
			if len(got) != len(x.Missing) {
				t.Fatalf("consumer-missing %+v, want %v", got, x.Missing)
			}
			for i, f := range got {
				if f.Consumer != x.Missing[i] || f.Kind != "assigned-not-loaded" || f.RemedyID != "consumer-not-loaded" {
					t.Errorf("finding %+v, want %s not loaded", f, x.Missing[i])
				}
			}
		})
	}
}
