package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// TestAssetLostModel: of the streams a model shows existing, only the one
// no store holds and no API delete removed is lost; a stream whose only
// holder has no store in the bundle is undecided, not lost.
func TestAssetLostModel(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := &model.Model{IDs: map[string]string{}}
	for _, n := range []string{"a", "b"} {
		m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: natsfmt.PeerID(n), StoreDir: n, Sources: map[string]bool{"store": true}})
	}
	m.Servers = append(m.Servers, &model.Server{Name: "c", PeerID: natsfmt.PeerID("c"), Alive: true, Sources: map[string]bool{"log": true}})
	restored := func(srv, stream string, n, line int) model.LogStream {
		c := uint64(n)
		return model.LogStream{TimelineEvent: model.TimelineEvent{Time: t0.Add(time.Duration(line) * time.Second), Server: model.ServerID(srv), Kind: "restored-stream", Account: "APP", Stream: stream,
			Text: fmt.Sprintf("  Restored %d messages for stream 'APP > %s' in 1ms", n, stream), File: srv + ".log", Line: line}, Restored: &c}
	}
	m.LogStreams = map[model.ServerID]map[model.AssetKey]model.LogStream{
		"a": {{Account: "APP", Stream: "GONE"}: restored("a", "GONE", 7, 10), {Account: "APP", Stream: "DELETED"}: restored("a", "DELETED", 3, 11)},
		"b": {{Account: "APP", Stream: "KEPT"}: restored("b", "KEPT", 5, 12)},
		"c": {{Account: "APP", Stream: "ELSEWHERE"}: restored("c", "ELSEWHERE", 2, 13)},
	}
	m.Streams = []*model.Stream{{Account: "APP", Name: "KEPT", Copies: []*model.StreamCopy{{Server: "b", Messages: 5}}}}
	m.MetaRemovals = []model.MetaRemoval{{Server: "a", Account: "APP", Stream: "DELETED", Index: 40}}
	m.Timeline = []model.TimelineEvent{{Time: t0.Add(time.Minute), Server: "a", Kind: "orphan-stream", Account: "APP", Stream: "GONE",
		Text: "Detected orphaned stream 'APP > GONE', will cleanup", File: "a.log", Line: 30}}
	fs := runCheck(meta.CheckAssetLost, m)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Stream != "GONE" || !slices.Equal(f.Servers, []string{"a"}) || f.Messages == nil || *f.Messages != 7 {
		t.Errorf("finding %+v", f)
	}
	if !strings.Contains(f.Message, "orphan cleanup") || !slices.Equal(f.TimelineRefs, []int{0}) {
		t.Errorf("cause not the orphan cleanup: %s (refs %v)", f.Message, f.TimelineRefs)
	}
	if !strings.HasPrefix(f.Remedy, "Nothing in the bundle's stores holds it") {
		t.Errorf("remedy does not say first what is left to destroy: %s", f.Remedy)
	}
}
