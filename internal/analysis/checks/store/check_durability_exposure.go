package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

var CheckDurabilityExposure = check.Check{
	Code:        string(report.CodeDurabilityExposure),
	Requires:    []facts.Fact{facts.FactExposures},
	Severity:    report.Warning,
	Description: "a server stopped uncleanly while writes of the last sync interval (sync_interval, default 2 min) were not yet on disk; when every replica lost the same tail, it says so",
	Skip: func(p *check.Pass) string {
		for _, e := range p.Model.Timeline {
			if e.Source == "log" {
				return ""
			}
		}
		return "no server log in the bundle: an unclean stop cannot be seen"
	},
	Run: func(p *check.Pass) []report.Finding {
		var out []report.Finding
		covered := map[model.AssetKey]bool{}
		for _, e := range p.Facts.Exposures() {
			if e.Sync.Always || len(e.Streams) == 0 {
				continue
			}
			f := report.Finding{Server: p.Model.Name(e.Server), Since: report.Ptr(e.Stop.Add(-e.Sync.Interval)), TimelineRefs: []int{e.Timeline}}
			var names []string
			for _, s := range e.Streams {
				names = append(names, fmt.Sprintf("%s > %s (%d messages, seq %d..%d, R%d)", s.Account, s.Stream, s.Messages, s.FirstSeq, s.LastSeq, max(s.Replicas, 1)))
			}
			f.Message = fmt.Sprintf("%s stopped uncleanly after %s with sync_interval %s (%s): writes acknowledged from %s on may not have reached its disk; streams whose blocks hold messages written in that window: %s",
				p.Model.Name(e.Server), e.Stop.UTC().Format(time.RFC3339), e.Sync.Interval, e.Sync.Source, e.Stop.Add(-e.Sync.Interval).UTC().Format(time.RFC3339), strings.Join(names, "; "))
			f.Evidence = append(f.Evidence, fmt.Sprintf("the unclean stop: %s", p.Model.Timeline[e.Timeline].Text))
			for _, s := range e.Streams {
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s: the blocks holding messages timestamped in the window hold seq %d..%d (%d messages)", s.Path, s.FirstSeq, s.LastSeq, s.Messages))
				if line := sameTailLost(p.Model, p.Model.Stream(s.Account, s.Stream)); line != "" {
					f.Evidence = append(f.Evidence, line)
				}
			}
			remedy.Prescribe(remedy.DurabilityCompare, nil).Apply(&f)
			out = append(out, f)
			for _, s := range e.Streams {
				covered[model.AssetKey{Account: s.Account, Stream: s.Stream}] = true
			}
		}
		// A tail lost on every replica without an unclean stop in the logs
		// (the logs may not reach the power loss): said on its own.
		for _, st := range p.Model.Streams {
			if covered[model.AssetKey{Account: st.Account, Stream: st.Name}] {
				continue
			}
			if line := sameTailLost(p.Model, st); line != "" {
				out = append(out, remedy.WithRemedy(report.Finding{Account: st.Account, Stream: st.Name, Message: line,
					Evidence: []string{"no unclean stop of these servers is in the logs of the bundle; the sync interval bounds what an unflushed power loss costs: " + syncSummary(p.Model)},
				}, remedy.Prescribe(remedy.DurabilityTailLost, nil)))
			}
		}
		return out
	},
}

// syncSummary lists the servers' sync settings as the bundle gives them.
func syncSummary(m *model.Model) string {
	var parts []string
	for _, s := range m.Servers {
		switch {
		case s.Sync == nil && s.SyncUnknown != "":
			parts = append(parts, s.Name+": unknown ("+s.SyncUnknown+")")
		case s.Sync == nil:
			parts = append(parts, s.Name+": not in the bundle (default 2m0s)")
		case s.Sync.Always:
			parts = append(parts, s.Name+": sync_always")
		default:
			parts = append(parts, fmt.Sprintf("%s: %s (%s)", s.Name, s.Sync.Interval, s.Sync.Source))
		}
	}
	return strings.Join(parts, "; ")
}

// sameTailLost says, for a replicated stream, when every stored replica
// ends at the same sequence while a capture saw more: every replica lost
// the same tail, as a coordinated power loss inside the sync interval does
// (nats-server#7564).
func sameTailLost(m *model.Model, st *model.Stream) string {
	if st == nil || len(st.Copies) < 2 {
		return ""
	}
	last := st.Copies[0].LastSeq
	for _, c := range st.Copies {
		// An encrypted copy read without its key holds nothing known.
		if c.LastSeq != last || c.Encrypted {
			return ""
		}
	}
	var seen uint64
	from := ""
	for _, c := range st.Captured {
		if c.LastSeq > seen {
			seen, from = c.LastSeq, m.Name(c.Server)
		}
	}
	if seen > last {
		return fmt.Sprintf("every replica of %s > %s ends at seq %d while %s's captured /jsz saw seq %d: every replica lost the same tail (%d..%d); this is what a coordinated power loss inside the sync interval looks like (nats-server#7564), and no server logs that acknowledged writes are gone", st.Account, st.Name, last, from, seen, last+1, seen)
	}
	return ""
}
