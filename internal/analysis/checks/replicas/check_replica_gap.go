package replicas

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var CheckReplicaGap = check.Check{
	Code:        string(report.CodeReplicaGap),
	Severity:    report.Critical,
	Description: "a replica lacks sequences that another replica of the same stream holds and no deletion explains",
	Skip:        noReplicas,
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, st := range m.Streams {
			cmp := st.Comparison
			if cmp == nil {
				continue
			}
			// Only current replicas must hold everything; a removed
			// server's copy stops where it left.
			var assigned uint64
			for i, c := range cmp.Copies {
				if len(st.AssignedTo) == 0 || slices.ContainsFunc(st.AssignedTo, func(a model.ServerID) bool { return m.Same(a, c.Server) }) {
					assigned |= 1 << i
				}
			}
			// What a quorum's WAL holds past the snapshot every replica
			// applies once the group has a leader again (the leader holds
			// it and replicates it): pending, no gap.
			pend := st.PendingQuorum()
			for i, c := range cmp.Copies {
				if assigned&(1<<i) == 0 {
					continue
				}
				holes, behind := cmp.Lacks(i, assigned)
				if len(pend) > 0 {
					holes, behind = withoutPending(holes, pend), withoutPending(behind, pend)
				}
				if len(holes) > 0 {
					out = append(out, gapFinding(m, st, cmp, c, "hole", holes, assigned))
				}
				if len(behind) > 0 {
					out = append(out, gapFinding(m, st, cmp, c, "behind", behind, assigned))
				}
			}
		}
		return out
	},
}

// withoutPending cuts the sequences pend (sorted, disjoint) out of spans.
func withoutPending(spans []model.CoverageSpan, pend []report.Range) []model.CoverageSpan {
	var out []model.CoverageSpan
	for _, sp := range spans {
		for _, r := range (seqset.Set{sp.Range}).Subtract(pend) {
			out = append(out, model.CoverageSpan{Range: r, Holders: sp.Holders})
		}
	}
	return out
}

func gapFinding(m *model.Model, st *model.Stream, cmp *model.ReplicaComparison, c *model.StreamCopy, kind string, spans []model.CoverageSpan, assigned uint64) report.Finding {
	var ranges seqset.Set
	holders := uint64(0)
	count := uint64(0)
	fewest := len(cmp.Copies)
	for _, sp := range spans {
		ranges.AddRange(sp.First, sp.Last)
		holders |= sp.Holders
		count += sp.Last - sp.First + 1
		fewest = min(fewest, bits.OnesCount64(sp.Holders))
	}
	names := cmp.Servers(m, holders)
	nAssigned := bits.OnesCount64(assigned)
	state := serverState(m, c.Server)
	f := report.Finding{
		Account: st.Account, Stream: st.Name, Server: m.Name(c.Server), Ranges: ranges, Seq: ranges[0].First, Kind: kind,
		Servers: names,
	}
	where := "inside its own first..last range, with no deletion recorded"
	if kind == "behind" {
		where = fmt.Sprintf("after its last sequence %d: it is behind", c.LastSeq)
	}
	f.Message = fmt.Sprintf("%s's replica of %s > %s lacks %d sequence(s) (%s) that %s hold(s), %s; %s; %d full cop%s of those sequences exist among the %d current replicas",
		m.Name(c.Server), st.Account, st.Name, count, model.RangesText(ranges), strings.Join(names, ", "), where, state.text, fewest, model.Plural(fewest, "y", "ies"), nAssigned)
	for _, sp := range spans {
		if len(f.Evidence) == model.MaxRangesShown {
			f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more ranges", len(spans)-model.MaxRangesShown))
			break
		}
		hs := cmp.Servers(m, sp.Holders)
		f.Evidence = append(f.Evidence, fmt.Sprintf("sequences %s: held by %s (%d of %d current replicas)", model.RangesText([]report.Range{sp.Range}), strings.Join(hs, ", "), len(hs), nAssigned))
	}
	a := remedy.Args{"copies": fmt.Sprintf("%d cop%s", fewest, model.Plural(fewest, "y", "ies")), "holders": strings.Join(names, ", "),
		"server": m.Name(c.Server), "stream": st.Name, "removal": remedy.StreamPeerRemoveCommand(st.Name, m.Name(c.Server))}
	switch {
	case kind == "behind" && state.down:
		remedy.Prescribe(remedy.ReplicaGapStart, a).Apply(&f)
	case kind == "behind":
		remedy.Prescribe(remedy.ReplicaGapCatchUp, a).Apply(&f)
	default:
		remedy.Prescribe(remedy.ReplicaGapRebuild, a).Apply(&f)
	}
	return f
}

// liveness is what the bundle says of a server's process at its end.
type liveness struct {
	down bool
	text string
}

// serverState tells from the timeline (the last start or stop its logs
// show) and captures whether a server was up when the bundle was taken.
func serverState(m *model.Model, id model.ServerID) liveness {
	var last *model.TimelineEvent
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if !m.Same(e.Server, id) {
			continue
		}
		switch e.Kind {
		case "start", "shutdown", "stop", "js-shutdown", "unclean-stop":
			last = e
		}
	}
	srv, name := m.ServerOf(id), m.Name(id)
	switch {
	case last != nil && last.Kind != "start":
		return liveness{down: true, text: fmt.Sprintf("%s is down (the last start/stop its log shows is %s at %s)", name, last.Kind, last.Time.Format(time.RFC3339))}
	case last != nil:
		return liveness{text: fmt.Sprintf("%s is running (started at %s, no stop logged after)", name, last.Time.Format(time.RFC3339))}
	case srv != nil && srv.Alive:
		return liveness{text: fmt.Sprintf("%s was seen running (log or capture)", name)}
	}
	return liveness{down: true, text: fmt.Sprintf("no log or capture shows %s running", name)}
}
