package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

func TestReplicaDivergenceAndGap(t *testing.T) {
	a := &model.StreamCopy{Server: "a", FirstSeq: 1, LastSeq: 10, Messages: 10}
	b := &model.StreamCopy{Server: "b", FirstSeq: 1, LastSeq: 10, Messages: 10}
	c := &model.StreamCopy{Server: "c", FirstSeq: 1, LastSeq: 10, Messages: 8}
	span := func(first, last uint64, holders uint64) model.CoverageSpan {
		return model.CoverageSpan{Range: report.Range{First: first, Last: last}, Holders: holders}
	}
	// c holds other messages under 3-4 and lacks 7-8.
	cmp := &model.ReplicaComparison{Copies: []*model.StreamCopy{a, b, c},
		Coverage: []model.CoverageSpan{span(7, 8, 0b011)},
		Diverged: []model.DivergedSpan{{Range: report.Range{First: 3, Last: 4}, Sides: []uint64{0b011, 0b100}}}}
	st := &model.Stream{Account: "$G", Name: "S", Copies: cmp.Copies, AssignedTo: []model.ServerID{"a", "b", "c"}, Comparison: cmp}
	m := &model.Model{Streams: []*model.Stream{st}}

	div := runCheck(replicas.CheckReplicaDivergence, m)
	if len(div) != 1 || len(div[0].Ranges) != 1 || div[0].Ranges[0] != (report.Range{First: 3, Last: 4}) || div[0].Seq != 3 {
		t.Fatalf("divergence: %+v", div)
	}
	if !strings.Contains(div[0].Evidence[0], "a,b | c") {
		t.Errorf("sides: %v", div[0].Evidence)
	}
	gap := runCheck(replicas.CheckReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "c" || gap[0].Kind != "hole" || gap[0].Ranges[0] != (report.Range{First: 7, Last: 8}) {
		t.Fatalf("gap: %+v", gap)
	}
	// A replica that is behind (its last seq is lower) lacks a tail: a gap
	// of kind behind, with the copies that exist.
	c.LastSeq, c.Messages = 6, 6
	cmp.Coverage = []model.CoverageSpan{span(7, 10, 0b011)}
	gap = runCheck(replicas.CheckReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "c" || gap[0].Kind != "behind" || gap[0].Ranges[0] != (report.Range{First: 7, Last: 10}) ||
		!strings.Contains(gap[0].Message, "2 full copies") || !strings.Contains(gap[0].Message, "no log or capture shows c running") {
		t.Fatalf("behind: %+v", gap)
	}
	// A removed server's copy is not a current replica: it may lack
	// anything, and what only it holds is no current replica's gap.
	st.AssignedTo = []model.ServerID{"a", "b"}
	cmp.Coverage = []model.CoverageSpan{span(5, 5, 0b110), span(7, 10, 0b011)}
	gap = runCheck(replicas.CheckReplicaGap, m)
	if len(gap) != 1 || gap[0].Server != "a" || gap[0].Ranges[0] != (report.Range{First: 5, Last: 5}) ||
		!reflect.DeepEqual(gap[0].Servers, []string{"b"}) || !strings.Contains(gap[0].Message, "1 full copy ") {
		t.Errorf("gap among current replicas: %+v", gap)
	}
	// Below a replica's first sequence nothing is claimed.
	a.FirstSeq = 6
	if gap := runCheck(replicas.CheckReplicaGap, m); len(gap) != 0 {
		t.Errorf("below first: %+v", gap)
	}
}
