package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// TestDurabilityExposureModel: an unclean stop with the default sync
// interval exposes the stream whose block was written in the two minutes
// before it, not the one written earlier; sync_always exposes nothing; a
// server that stopped cleanly raises nothing; every replica ending at the
// same sequence below a capture's is said.
func TestDurabilityExposureModel(t *testing.T) {
	stop := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ns := func(d time.Duration) int64 { return stop.Add(d).UnixNano() }
	m := &model.Model{IDs: map[string]string{}}
	for _, n := range []string{"a", "b", "c"} {
		m.Servers = append(m.Servers, &model.Server{Name: n, StoreDir: n, Sources: map[string]bool{"store": true}})
	}
	m.Servers[1].Sync = &model.SyncSetting{Always: true, Source: "test"}
	recent := []model.BlockSpan{{FirstSeq: 1, LastSeq: 50, FirstTS: ns(-10 * time.Minute), LastTS: ns(-9 * time.Minute), Msgs: 50}, {FirstSeq: 51, LastSeq: 60, FirstTS: ns(-30 * time.Second), LastTS: ns(-time.Second), Msgs: 10}}
	old := []model.BlockSpan{{FirstSeq: 1, LastSeq: 9, FirstTS: ns(-time.Hour), LastTS: ns(-50 * time.Minute), Msgs: 9}}
	m.Streams = []*model.Stream{
		{Account: "APP", Name: "HOT", Replicas: 3, Captured: []model.OnDisk{{Server: "c", LastSeq: 70}},
			Copies: []*model.StreamCopy{{Server: "a", Path: "a/HOT", LastSeq: 60, Blocks: recent}, {Server: "b", Path: "b/HOT", LastSeq: 60, Blocks: recent}, {Server: "c", Path: "c/HOT", LastSeq: 60, Blocks: recent}}},
		{Account: "APP", Name: "COLD", Replicas: 1, Copies: []*model.StreamCopy{{Server: "a", Path: "a/COLD", LastSeq: 9, Blocks: old}}},
	}
	m.Timeline = []model.TimelineEvent{
		{Time: stop, Server: "a", Source: "log", Kind: string(natsfmt.EventUncleanStop), Text: "no clean shutdown logged"},
		{Time: stop, Server: "b", Source: "log", Kind: string(natsfmt.EventUncleanStop), Text: "no clean shutdown logged"},
	}
	fs := runCheck(store.CheckDurabilityExposure, m)
	if len(fs) != 1 || fs[0].Server != "a" {
		t.Fatalf("findings %+v, want one for a", fs)
	}
	f := fs[0]
	if !strings.Contains(f.Message, "APP > HOT") || strings.Contains(f.Message, "COLD") || !strings.Contains(f.Message, "seq 51..60") {
		t.Errorf("message: %s", f.Message)
	}
	if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, "every replica lost the same tail (61..70)") }) {
		t.Errorf("same tail not said: %v", f.Evidence)
	}
	if f.Severity != "" && f.Severity != report.Warning {
		t.Errorf("severity %s", f.Severity)
	}
	// Without the unclean stops the same lost tail is still said, once,
	// for the stream.
	m.Timeline = m.Timeline[:0]
	fs = runCheck(store.CheckDurabilityExposure, m)
	if len(fs) != 1 || fs[0].Stream != "HOT" || fs[0].Server != "" || !strings.Contains(fs[0].Message, "same tail (61..70)") {
		t.Errorf("without unclean stops: %+v", fs)
	}
}
