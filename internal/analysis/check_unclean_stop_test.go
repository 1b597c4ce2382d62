package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// TestUncleanStopModel: two servers whose logs end without a stop and no
// capture after raise one info finding naming both; a clean stop of one,
// or a capture of one dated after its last line (it was running), raises
// none; a WAL stamp after the last line does not count as running.
func TestUncleanStopModel(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 17, 19, 0, time.UTC)
	build := func(lastKind, laterSource string) *model.Model {
		m := &model.Model{IDs: map[string]string{}}
		for _, n := range []string{"k1", "k2"} {
			m.Servers = append(m.Servers, &model.Server{Name: n, ID: model.ServerID(n), Sources: map[string]bool{"log": true}})
		}
		m.Timeline = []model.TimelineEvent{
			{Time: t0, Server: "k1", Source: "log", Kind: string(natsfmt.EventStart), File: "k1.log", Line: 1},
			{Time: t0.Add(time.Second), Server: "k2", Source: "log", Kind: lastKind, File: "k2.log", Line: 9},
			{Time: t0.Add(2 * time.Second), Server: "k1", Source: "log", Kind: string(natsfmt.EventMetaLeader), File: "k1.log", Line: 7},
		}
		if laterSource != "" {
			m.Timeline = append(m.Timeline, model.TimelineEvent{Time: t0.Add(time.Minute), Server: "k2", Source: laterSource, Kind: "leader"})
		}
		return m
	}
	fs := runCheck(store.CheckUncleanStop, build(string(natsfmt.EventMetaLeader), "wal"))
	if len(fs) != 1 || strings.Join(fs[0].Servers, ",") != "k1,k2" || !fs[0].Since.Equal(t0.Add(time.Second)) || len(fs[0].Evidence) != 2 {
		t.Fatalf("findings %+v, want one naming k1 and k2 since k2's last line", fs)
	}
	if fs[0].Severity != "" && fs[0].Severity != report.Info {
		t.Errorf("severity %s", fs[0].Severity)
	}
	if fs := runCheck(store.CheckUncleanStop, build(string(natsfmt.EventStop), "")); len(fs) != 0 {
		t.Errorf("a clean stop of k2: %+v", fs)
	}
	if fs := runCheck(store.CheckUncleanStop, build(string(natsfmt.EventMetaLeader), "jsz")); len(fs) != 0 {
		t.Errorf("k2 captured after its last line: %+v", fs)
	}
}

// TestUncleanStopCrashFixtures: on the kill -9 fixtures (three real
// servers of 2.10.27, 2.12.15 and 2.15.3 killed together while a
// publisher ran), the finding names the three and the stream sequences the
// raft WALs hold past the blocks; the real servers, restarted on a copy
// of the same stores, served every acknowledged message (oracle.json
// "after"): the WAL was applied at the start, as the finding says.
func TestUncleanStopCrashFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(perturbedDir, "perturbed-crash-*"))
	if len(dirs) < 3 {
		t.Fatalf("%d crash fixtures", len(dirs))
	}
	for _, dir := range dirs {
		var o struct {
			Stream string         `json:"stream"`
			Acked  []report.Range `json:"acked"`
			After  map[string]struct {
				LastSeq uint64 `json:"last_seq"`
			} `json:"after"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		acked := o.Acked[len(o.Acked)-1].Last
		for srv, a := range o.After {
			if a.LastSeq != acked {
				t.Fatalf("%s: %s served up to %d after the restart, not %d: the fixture does not show the WAL applied", dir, srv, a.LastSeq, acked)
			}
		}
		rep, err := Run(filepath.Join(dir, "bundle"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []report.Finding
		for _, f := range rep.Findings {
			if f.Code == store.CheckUncleanStop.Code {
				got = append(got, f)
			}
		}
		if len(got) != 1 || strings.Join(got[0].Servers, ",") != "k1,k2,k3" || got[0].Severity != report.Info {
			t.Fatalf("%s: unclean-stop findings %+v, want one info naming k1, k2, k3", dir, got)
		}
		if want := "$G > " + o.Stream + " "; !strings.Contains(got[0].Message, want) || !strings.Contains(got[0].Message, "pending, not lost") {
			t.Errorf("%s: %s does not say what the WAL holds of %s", dir, got[0].Message, o.Stream)
		}
	}
}
