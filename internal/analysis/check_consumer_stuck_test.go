package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/consumers"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// stuckModel: stream WORK (R3, 12 messages) on three servers; consumer C's
// leader cs-1 answered /jsz at max_ack_pending 4 with 8 messages waiting,
// a follower with num_pending 0 (followers do not compute it). alter
// changes it before the run.
func stuckModel(alter func(m *model.Model)) *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	st := &model.Stream{Account: "$G", Name: "WORK", Replicas: 3}
	at := time.Date(2026, 12, 7, 4, 51, 18, 0, time.UTC)
	last := at.Add(-8 * time.Second)
	for _, n := range []string{"cs-0", "cs-1", "cs-2"} {
		s := &model.Server{ID: model.ServerID(n), Name: n, Version: "2.12.1"}
		m.Servers = append(m.Servers, s)
		st.Copies = append(st.Copies, &model.StreamCopy{Server: s.ID, LastSeq: 12, Messages: 12})
	}
	st.ConsumerCaptures = []model.ConsumerCapture{
		{Server: "cs-0", Name: "C", Leader: "cs-1", Captured: at, HasConfig: true, MaxAckPending: 4, AckWait: time.Hour, NumAckPending: 4, NumPending: 0, Delivered: 4},
		{Server: "cs-1", Name: "C", Leader: "cs-1", Captured: at, HasConfig: true, MaxAckPending: 4, AckWait: time.Hour, NumAckPending: 4, NumPending: 8, Delivered: 4, LastDelivered: &last, File: "captures/cs-1/jsz.json"},
	}
	m.Streams = []*model.Stream{st}
	if alter != nil {
		alter(m)
	}
	return m
}

func TestConsumerStuckOnModel(t *testing.T) {
	fs, _ := runChecks(stuckModel(nil), []check.Check{consumers.CheckConsumerStuck}, defaultSettings(), nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	f := fs[0]
	if f.Code != "consumer-stuck" || f.Kind != "max-ack-pending" || f.Server != "cs-1" || f.Consumer != "C" || f.Severity != report.Warning || f.Since == nil {
		t.Errorf("finding %+v", f)
	}
	if !strings.Contains(f.Message, "8 message(s) waiting") || !strings.Contains(f.Message, "1h0m0s") {
		t.Errorf("message %q", f.Message)
	}
	if f.RemedyID != "consumer-stuck-acks" {
		t.Errorf("remedy %q", f.RemedyID)
	}
	// The states next to it.
	for name, alter := range map[string]func(m *model.Model){
		"nothing waiting": func(m *model.Model) { m.Streams[0].ConsumerCaptures[1].NumPending = 0 },
		"below the limit": func(m *model.Model) { m.Streams[0].ConsumerCaptures[1].NumAckPending = 3 },
		"no limit":        func(m *model.Model) { m.Streams[0].ConsumerCaptures[1].MaxAckPending = 0 },
		// Only a follower answered: its num_pending is 0 by design.
		"the follower only": func(m *model.Model) { m.Streams[0].ConsumerCaptures = m.Streams[0].ConsumerCaptures[:1] },
	} {
		if fs := runCheck(consumers.CheckConsumerStuck, stuckModel(alter)); len(fs) != 0 {
			t.Errorf("%s: findings %+v", name, fs)
		}
	}
}

// From the stores alone (no captures): o.dat at max_ack_pending with the
// stream holding more; a filtered consumer's waiting messages are not
// known from the blocks. Pending messages the copy no longer holds are
// pending-deleted whatever the limit.
func TestConsumerStuckFromStoreOnModel(t *testing.T) {
	atLimit := func(m *model.Model) {
		m.Streams[0].ConsumerCaptures = nil
		for _, c := range m.Streams[0].Copies {
			c.ConsumerStates = []model.ConsumerOnDisk{{Name: "C", State: true, MaxAckPending: 4, Pending: 4, Delivered: 4, File: "o.dat"}}
		}
	}
	fs := runCheck(consumers.CheckConsumerStuck, stuckModel(atLimit))
	if len(fs) != 1 || fs[0].Kind != "max-ack-pending" || len(fs[0].Servers) != 3 {
		t.Fatalf("from o.dat: %+v", fs)
	}
	fs = runCheck(consumers.CheckConsumerStuck, stuckModel(func(m *model.Model) {
		atLimit(m)
		for _, c := range m.Streams[0].Copies {
			c.ConsumerStates[0].Filtered = true
		}
	}))
	if len(fs) != 0 {
		t.Errorf("filtered: %+v", fs)
	}
	fs = runCheck(consumers.CheckConsumerStuck, stuckModel(func(m *model.Model) {
		m.Streams[0].ConsumerCaptures = nil
		c := m.Streams[0].Copies[0]
		c.ConsumerStates = []model.ConsumerOnDisk{{Name: "C", State: true, MaxAckPending: 1000, Pending: 3, Delivered: 6,
			PendingGone: []uint64{4, 5, 6}, PendingGoneCount: 3, File: "cs-0/o.dat"}}
	}))
	if len(fs) != 1 || fs[0].Kind != "pending-deleted" || !strings.Contains(strings.Join(fs[0].Evidence, "\n"), "4, 5, 6") ||
		!strings.Contains(fs[0].Message, "#7984") || strings.Contains(fs[0].Message, "delivers nothing") {
		t.Errorf("pending deleted: %+v", fs)
	}
}

// On the consumerstuck fixtures (real servers): STALLED (at
// max_ack_pending, its client gone) on every release; LOST (its pending
// messages deleted while it had no leader) where the release kept them,
// its evidence naming exactly the deleted sequences from o.dat. With the
// captures gone, o.dat still shows both.
func TestConsumerStuckFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "consumerstuck-v*"))
	if len(dirs) < 2 {
		t.Fatalf("consumerstuck fixtures: %v", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Expect struct {
					DeletedSeqs  []uint64 `json:"deleted_seqs"`
					KeepsDeleted bool     `json:"keeps_deleted"`
					Probe        map[string]int
					Findings     []struct{ Consumer string }
				} `json:"expect"`
			}
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatal(err)
			}
			x := w.Expect
			if x.Probe["STALLED"] != 0 {
				t.Fatalf("fixture: STALLED delivered %d on a restarted copy", x.Probe["STALLED"])
			}
			judge := func(rep *report.Report, form string) {
				got := map[string]report.Finding{}
				for _, f := range rep.Findings {
					if f.Code == "consumer-stuck" {
						got[f.Consumer] = f
					}
					if f.Code == "consumer-missing" {
						t.Errorf("%s: consumer-missing %s", form, f.Message)
					}
				}
				if len(got) != len(x.Findings) {
					t.Errorf("%s: consumer-stuck for %v, want %+v", form, findingConsumers(got), x.Findings)
				}
				if f, ok := got["STALLED"]; !ok || f.Kind != "max-ack-pending" {
					t.Errorf("%s: STALLED %+v", form, f)
				}
				f, ok := got["LOST"]
				if ok != x.KeepsDeleted {
					t.Errorf("%s: LOST finding %v, the servers kept the deleted messages: %v", form, ok, x.KeepsDeleted)
				}
				if ok {
					var parts []string
					for _, s := range x.DeletedSeqs {
						parts = append(parts, strconv.FormatUint(s, 10))
					}
					want := strings.Join(parts, ", ")
					if f.Kind != "pending-deleted" || !strings.Contains(strings.Join(f.Evidence, "\n"), "sequence(s) "+want) {
						t.Errorf("%s: LOST %+v, want pending-deleted naming %s", form, f, want)
					}
				}
			}
			judge(analyze(t, filepath.Join(dir, "bundle")), "bundle")
			cp := copyTree(t, filepath.Join(dir, "bundle"))
			if err := os.RemoveAll(filepath.Join(cp, "captures")); err != nil {
				t.Fatal(err)
			}
			judge(analyze(t, cp), "without captures")
		})
	}
}
