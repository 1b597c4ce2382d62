package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

func TestOrphanRisk(t *testing.T) {
	m := &model.Model{IDs: map[string]string{}}
	a := &model.Server{Name: "a", PeerID: natsfmt.PeerID("a"), StoreDir: "a"}
	b := &model.Server{Name: "b", PeerID: natsfmt.PeerID("b"), StoreDir: "b"}
	m.Servers = []*model.Server{a, b}
	a.Meta = &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{
		{Account: "$G", Stream: "KEEP"}:  {Account: "$G", Stream: "KEEP", Peers: []string{a.PeerID}, Consumers: map[string][]string{"C1": nil}},
		{Account: "$G", Stream: "OTHER"}: {Account: "$G", Stream: "OTHER", Peers: []string{b.PeerID}},
	}}
	m.Streams = []*model.Stream{
		{Account: "$G", Name: "KEEP", Copies: []*model.StreamCopy{{Server: "a", Path: "a/$G/streams/KEEP", Messages: 3, Consumers: []report.Consumer{{Name: "C1"}, {Name: "GONE"}}}}},
		{Account: "$G", Name: "LOST", Replicas: 1, Copies: []*model.StreamCopy{{Server: "a", Path: "a/$G/streams/LOST", Messages: 7, Bytes: 700, Replicas: 1}}},
		{Account: "$G", Name: "OTHER", Replicas: 1, Copies: []*model.StreamCopy{{Server: "a", Path: "a/$G/streams/OTHER", Messages: 1, Replicas: 1}}},
	}
	fs := runCheck(meta.CheckOrphanRisk, m)
	got := map[string]report.Finding{}
	for _, f := range fs {
		got[f.Stream+"/"+f.Consumer] = f
	}
	if len(fs) != 3 {
		t.Fatalf("want LOST, OTHER and consumer GONE: %+v", fs)
	}
	lost := got["LOST/"]
	if *lost.Messages != 7 || *lost.Bytes != 700 || !strings.Contains(lost.Message, "R1") {
		t.Errorf("LOST: %+v", lost)
	}
	if _, ok := got["OTHER/"]; !ok {
		t.Error("non-member copy not flagged")
	}
	if _, ok := got["KEEP/GONE"]; !ok {
		t.Error("orphan consumer not flagged")
	}
}

// TestOrphanRiskSkipsServerWithoutMeta: a server whose copy cannot be judged
// (no readable meta state) is named in the outcome, not passed over.
func TestOrphanRiskSkipsServerWithoutMeta(t *testing.T) {
	m := &model.Model{IDs: map[string]string{},
		Servers: []*model.Server{{Name: "n1", StoreDir: "s1"}},
		Streams: []*model.Stream{{Account: "A", Name: "S", Copies: []*model.StreamCopy{{Server: "n1"}}}}}
	_, outcomes := runChecks(m, []check.Check{meta.CheckOrphanRisk}, defaultSettings(), nil)
	if len(outcomes) != 1 || outcomes[0].Outcome != check.OutcomePassed || len(outcomes[0].Skipped) != 1 || !strings.Contains(outcomes[0].Skipped[0], "n1") {
		t.Fatalf("outcomes %+v", outcomes)
	}
}
