package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

var checkMetaSplit = Check{
	Code:        "meta-split",
	Severity:    report.Critical,
	Description: "servers disagree on the meta group, or two meta groups were founded apart and met",
	Skip: func(p *Pass) string {
		if len(p.Facts.MetaSidesAll()) == 0 && len(p.Model.MetaFoundings) == 0 {
			return "no server's view of the meta group and no meta group founding is in the bundle"
		}
		return ""
	},
	Requires: []Fact{FactMetaSides, FactFoundingSplits, FactLostAssets},
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		sides := p.Facts.MetaSides()
		if len(sides) > 1 {
			f := report.Finding{Group: "_meta_"}
			var desc []string
			for _, s := range sides {
				f.Views = append(f.Views, s.view)
				desc = append(desc, fmt.Sprintf("%s: cluster_size %d, peers %s, leader %s, term %d",
					strings.Join(s.servers, ","), s.view.ClusterSize, strings.Join(s.view.Peers, " "), dashIfEmpty(s.view.Leader), s.view.Term))
			}
			f.Message = fmt.Sprintf("the servers hold %d different views of the meta group", len(sides))
			f.Evidence = desc
			metaSplitRemedy(m, sides).apply(&f)
			out = append(out, f)
		}
		for _, pair := range p.Facts.FoundingSplits() {
			a, b := pair[0], pair[1]
			f := report.Finding{Group: "_meta_",
				Message: fmt.Sprintf("two meta groups were founded apart: %s elected %s, %s elected %s; when they meet the higher term wins and the other side's streams are dropped without a warning",
					foundersOf(m, a), a[0].Leader, foundersOf(m, b), b[0].Leader),
			}
			for _, side := range [][]MetaFounding{a, b} {
				var srv []string
				for _, x := range side {
					srv = append(srv, m.Name(x.Server))
					f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s: first meta leader %s (%s)", x.Time.UTC().Format(time.RFC3339Nano), m.Name(x.Server), x.Leader, x.Source))
				}
				f.Views = append(f.Views, report.SplitView{Servers: srv, Leader: side[0].Leader, Peers: side[0].Peers, ClusterSize: len(side[0].Peers)})
			}
			for _, side := range [][]MetaFounding{a, b} {
				f.Evidence = append(f.Evidence, vanishedStreams(m, p.Facts, side)...)
			}
			metaSplitRemedy(m, nil).apply(&f)
			out = append(out, f)
		}
		return out
	},
}

func foundersOf(m *Model, fs []MetaFounding) string {
	var s []string
	for _, f := range fs {
		s = append(s, m.Name(f.Server))
	}
	return strings.Join(s, ",")
}

func metaSplitRemedy(m *Model, sides []*metaSide) prescription {
	return prescribe("meta-split-keep-one-side", args{"v215": versionAtLeast(minVersion(m), 2, 15)})
}

// vanishedStreams names the lost assets (asset-lost) that the founders of
// one side held: what a merge of meta groups dropped.
func vanishedStreams(m *Model, f *Facts, side []MetaFounding) []string {
	var out []string
	for _, a := range f.LostAssets() {
		for _, x := range side {
			if slices.Contains(a.Holders, m.Name(x.Server)) {
				out = append(out, fmt.Sprintf("stream %s > %s, held on this side (%s), is in no store of the bundle now: dropped when the groups met (asset-lost)", a.Account, a.Stream, strings.Join(a.Holders, ",")))
				break
			}
		}
	}
	return out
}
