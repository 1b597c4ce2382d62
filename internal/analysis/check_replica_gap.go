package analysis

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var checkReplicaGap = Check{
	Code:        "replica-gap",
	Severity:    report.Critical,
	Description: "a replica lacks sequences that another replica of the same stream holds and no deletion explains",
	Skip:        noReplicas,
	Run: func(p *Pass) []report.Finding {
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
				if len(st.AssignedTo) == 0 || slices.ContainsFunc(st.AssignedTo, func(a ServerID) bool { return m.same(a, c.Server) }) {
					assigned |= 1 << i
				}
			}
			// What a quorum's WAL holds past the snapshot every replica
			// applies once the group has a leader again (the leader holds
			// it and replicates it): pending, no gap.
			pend := st.pendingQuorum()
			for i, c := range cmp.Copies {
				if assigned&(1<<i) == 0 {
					continue
				}
				holes, behind := cmp.lacks(i, assigned)
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

// lacks returns the spans copy i does not hold that another copy in
// assigned holds: holes inside its own first..last range, and the part after
// its last sequence (behind). Below its first sequence the server may have
// removed messages by age or purge without a record, so nothing is claimed.
func (cmp *ReplicaComparison) lacks(i int, assigned uint64) (holes, behind []CoverageSpan) {
	c := cmp.Copies[i]
	for _, sp := range cmp.Coverage {
		sp.Holders &= assigned
		if sp.Holders&(1<<i) != 0 || sp.Holders == 0 || sp.Last < c.FirstSeq {
			continue
		}
		sp.First = max(sp.First, c.FirstSeq)
		if c.Messages > 0 && sp.First <= c.LastSeq {
			h := sp
			h.Last = min(h.Last, c.LastSeq)
			holes = append(holes, h)
			sp.First = c.LastSeq + 1
		}
		if sp.First <= sp.Last {
			behind = append(behind, sp)
		}
	}
	return holes, behind
}

// withoutPending cuts the sequences pend (sorted, disjoint) out of spans.
func withoutPending(spans []CoverageSpan, pend []report.Range) []CoverageSpan {
	var out []CoverageSpan
	for _, sp := range spans {
		for _, r := range (seqset.Set{sp.Range}).Subtract(pend) {
			out = append(out, CoverageSpan{Range: r, Holders: sp.Holders})
		}
	}
	return out
}

// servers names the copies in mask, sorted.
func (cmp *ReplicaComparison) servers(m *Model, mask uint64) []string {
	var out []string
	for i, c := range cmp.Copies {
		if mask&(1<<i) != 0 {
			out = append(out, m.Name(c.Server))
		}
	}
	sort.Strings(out)
	return out
}

func gapFinding(m *Model, st *Stream, cmp *ReplicaComparison, c *StreamCopy, kind string, spans []CoverageSpan, assigned uint64) report.Finding {
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
	names := cmp.servers(m, holders)
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
		m.Name(c.Server), st.Account, st.Name, count, rangesText(ranges), strings.Join(names, ", "), where, state.text, fewest, plural(fewest, "y", "ies"), nAssigned)
	for _, sp := range spans {
		if len(f.Evidence) == maxRangesShown {
			f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more ranges", len(spans)-maxRangesShown))
			break
		}
		hs := cmp.servers(m, sp.Holders)
		f.Evidence = append(f.Evidence, fmt.Sprintf("sequences %s: held by %s (%d of %d current replicas)", rangesText([]report.Range{sp.Range}), strings.Join(hs, ", "), len(hs), nAssigned))
	}
	a := args{"copies": fmt.Sprintf("%d cop%s", fewest, plural(fewest, "y", "ies")), "holders": strings.Join(names, ", "),
		"server": m.Name(c.Server), "stream": st.Name, "removal": streamPeerRemoveCommand(st.Name, m.Name(c.Server))}
	switch {
	case kind == "behind" && state.down:
		prescribe("replica-gap-start", a).apply(&f)
	case kind == "behind":
		prescribe("replica-gap-catch-up", a).apply(&f)
	default:
		prescribe("replica-gap-rebuild", a).apply(&f)
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
func serverState(m *Model, id ServerID) liveness {
	var last *TimelineEvent
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if !m.same(e.Server, id) {
			continue
		}
		switch e.Kind {
		case "start", "shutdown", "stop", "js-shutdown", "unclean-stop":
			last = e
		}
	}
	srv, name := m.serverOf(id), m.Name(id)
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
