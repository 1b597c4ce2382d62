package analysis

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// incidentModel is the first incident's state as facts: five servers, and a
// meta group whose every view lists the five real ids plus five one-bit
// corruptions of them (the ids as /raftz reported them in the thread).
func incidentModel() *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	names := []string{"nats-0", "nats-1", "nats-2", "nats-3", "nats-4"}
	for _, n := range names {
		id := natsfmt.PeerID(n)
		m.IDs[id] = n
		m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: id, StoreDir: n, Version: "2.10.22", Sources: map[string]bool{"store": true}})
	}
	peers := []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW", `"kCGheKT`, "cnr4t3eg", "cnrtu3eg", "yrzKKR@u", "yrzKKRBt"}
	g := &model.Group{Name: "_meta_", Kind: "meta"}
	for _, n := range names {
		g.Views = append(g.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 10, Quorum: 6, Term: 1191202101440508490, Peers: peers, Source: "peers.idx"}})
	}
	m.Groups = []*model.Group{g}
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

func TestHealthyModelNoFindings(t *testing.T) {
	m := incidentModel()
	for i := range m.Groups[0].Views {
		m.Groups[0].Views[i].ClusterSize = 5
		m.Groups[0].Views[i].Peers = []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW"}
	}
	fs, outcomes := runChecks(m, Checks, defaultSettings(), nil)
	if broke := notRun(outcomes); len(fs) != 0 || len(broke) != 0 {
		t.Errorf("healthy model gave %+v, not run: %v", fs, broke)
	}
}

func TestPanickingCheckIsReportedNotRun(t *testing.T) {
	boom := check.Check{Code: "boom", Severity: report.Info, Run: func(*check.Pass) []report.Finding { panic("x") }}
	fs, outcomes := runChecks(incidentModel(), []check.Check{boom, peers.CheckQuorumUnreachable}, defaultSettings(), nil)
	notes := check.OutcomeNotes(outcomes)
	if len(outcomes) != 2 || outcomes[0].Outcome != check.OutcomeNotRun || outcomes[1].Outcome != check.OutcomeFailed {
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

func notRun(outcomes []report.CheckOutcome) []report.CheckOutcome {
	var out []report.CheckOutcome
	for _, o := range outcomes {
		if o.Outcome == check.OutcomeNotRun {
			out = append(out, o)
		}
	}
	return out
}

// TestSkippedChecksSayWhy: a bundle of logs only gives no store, replica or
// orphan verdict; those checks say they were skipped and why, and are not
// counted as passed.
func TestSkippedChecksSayWhy(t *testing.T) {
	m := &model.Model{IDs: map[string]string{}, MetaLeaderStates: []model.MetaLeaderState{{Server: "a", Leader: "b", Timeline: -1}}}
	_, outcomes := runChecks(m, Checks, defaultSettings(), nil)
	by := map[string]report.CheckOutcome{}
	for _, o := range outcomes {
		by[o.Code] = o
	}
	for _, code := range []string{"store-corrupt", "index-mismatch", "orphan-risk", "replica-gap", "replica-divergence", "peer-id-corrupt", "quorum-unreachable"} {
		if o := by[code]; o.Outcome != check.OutcomeSkipped || o.Reason == "" {
			t.Errorf("%s: %+v, want skipped with a reason", code, o)
		}
	}
	if o := by["meta-no-leader"]; o.Outcome != check.OutcomePassed {
		t.Errorf("meta-no-leader: %+v, want passed (a leader is logged)", o)
	}
}

// TestSettingsOverrideThresholds: a check's threshold is a setting; an
// override changes the verdict, an unknown key is refused.
func TestSettingsOverrideThresholds(t *testing.T) {
	at := func(d time.Duration) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(d) }
	m := &model.Model{IDs: map[string]string{}, MetaLeaderStates: []model.MetaLeaderState{
		{Time: at(0), Server: "a", Source: "log", Timeline: -1},
		{Time: at(20 * time.Second), Server: "a", Source: "log", Timeline: -1},
	}}
	if fs, _ := runChecks(m, []check.Check{meta.CheckMetaNoLeader}, defaultSettings(), nil); len(fs) != 0 {
		t.Fatalf("20 s leaderless is under the 30 s default: %+v", fs)
	}
	if fs, _ := runChecks(m, []check.Check{meta.CheckMetaNoLeader}, defaultSettings(), map[string]float64{"meta-no-leader.persist": 10}); len(fs) != 1 {
		t.Fatalf("with persist=10 s, 20 s leaderless counts: %+v", fs)
	}
	if err := CheckSettings(map[string]float64{"meta-no-leader.nope": 1}); err == nil {
		t.Fatal("unknown setting accepted")
	}
}
