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
		if len(p.Facts.MetaSidesAll) == 0 && len(p.Model.MetaFoundings) == 0 {
			return "no server's view of the meta group and no meta group founding is in the bundle"
		}
		return ""
	},
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		sides := p.Facts.MetaSides
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
			f.Remedy = metaSplitRemedy(m, sides)
			out = append(out, f)
		}
		for _, pair := range p.Facts.FoundingSplits {
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
			f.Remedy = metaSplitRemedy(m, nil)
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

func metaSplitRemedy(m *Model, sides []*metaSide) string {
	var b strings.Builder
	b.WriteString("Do not let both sides keep running together: the meta state with the higher term replaces the other, and the streams only the other side assigns are removed (see the orphan-risk findings).\n")
	b.WriteString("1. Decide which side's meta state to keep (the one that assigns the streams that matter) and back up every store (copy each server's jetstream folder out).\n")
	b.WriteString("2. Moving a side's meta state aside discards its assignments: the kept meta state then deletes every stream and consumer only that side held. Before step 3, copy those stream folders out (or nats stream backup them).\n")
	b.WriteString("3. Stop the servers of the other side, move (do not delete) their $SYS/_js_/_meta_ folder aside, and start them again so they join the kept meta group as new peers.\n")
	b.WriteString("4. Recreate the streams that only the other side held from what step 2 saved (nats stream restore, or republish what `jsforensics dump blk` reads).\n")
	if versionAtLeast(minVersion(m), 2, 15) {
		b.WriteString("On 2.15+ a JetStream domain per cluster (or joining the supercluster before enabling JetStream) keeps a new cluster from founding its own meta group.")
	} else {
		b.WriteString("Join a new cluster to the supercluster before enabling JetStream on it, or give it its own JetStream domain.")
	}
	return b.String()
}

// vanishedStreams names the lost assets (asset-lost) that the founders of
// one side held: what a merge of meta groups dropped.
func vanishedStreams(m *Model, f *Facts, side []MetaFounding) []string {
	var out []string
	for _, a := range f.LostAssets {
		for _, x := range side {
			if slices.Contains(a.Holders, m.Name(x.Server)) {
				out = append(out, fmt.Sprintf("stream %s > %s, held on this side (%s), is in no store of the bundle now: dropped when the groups met (asset-lost)", a.Account, a.Stream, strings.Join(a.Holders, ",")))
				break
			}
		}
	}
	return out
}
