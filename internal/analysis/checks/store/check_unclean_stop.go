package store

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// CheckUncleanStop: no server of the bundle logged a clean shutdown at
// the end of its log, and no capture shows one answering after its last
// line: the servers were stopped without one (kill -9, a crash of the
// hosts, a power loss), or were still running when the logs were copied,
// which nothing in the bundle shows. The stores are then as the processes
// left them; what a start does with them is said per stream: the stream
// messages a quorum's raft WALs hold past what the blocks hold are applied
// at the next start (pending, not lost).
var CheckUncleanStop = check.Check{
	Code:        string(report.CodeUncleanStop),
	Severity:    report.Info,
	Description: "no server's log ends in a clean shutdown and no capture shows one running after its last line (killed, crashed, power loss); says per stream what the raft WALs hold past the blocks, which the servers apply at their next start",
	Skip: func(p *check.Pass) string {
		if len(logEnds(p.Model)) == 0 {
			return "no server log in the bundle: how the servers stopped cannot be seen"
		}
		return ""
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		ends := logEnds(m)
		if len(ends) == 0 {
			return nil
		}
		first := ends[0].at
		for _, e := range ends {
			if e.stopped || ranAfter(e) {
				return nil
			}
			first = minTime(first, e.at)
		}
		f := report.Finding{Since: report.Ptr(first)}
		var names []string
		for _, e := range ends {
			names = append(names, m.Name(e.server))
			f.Servers = append(f.Servers, m.Name(e.server))
			f.TimelineRefs = append(f.TimelineRefs, e.index)
			te := m.Timeline[e.index]
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: its log ends at %s (%s line %d: %s) with no shutdown logged, and no capture of it is dated later", m.Name(e.server), e.at.UTC().Format(time.RFC3339Nano), te.File, te.Line, te.Text))
		}
		sort.Strings(f.Servers)
		var pending, pendingStreams []string
		for _, st := range m.Streams {
			if rs := st.PendingBeyondBlocks(m); len(rs) > 0 {
				pending = append(pending, fmt.Sprintf("%s > %s %s", st.Account, st.Name, model.RangesText(rs)))
				pendingStreams = append(pendingStreams, st.Name)
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s > %s: sequences %s are in the raft WAL of group %s past its snapshot on a quorum of its servers, and not in every copy's blocks: each server applies them at its next start", st.Account, st.Name, model.RangesText(rs), st.Group))
			}
		}
		f.Message = fmt.Sprintf("no server logged a clean shutdown (%s): they were stopped without one (killed, crashed, or a power loss), or still running when the logs were copied, which no capture shows; the stores are as the processes left them", strings.Join(names, ", "))
		if len(pending) > 0 {
			f.Message += fmt.Sprintf("; the raft WALs hold stream messages the blocks lack (%s), which the servers apply at their next start: pending, not lost", strings.Join(pending, "; "))
		} else {
			f.Message += "; no raft WAL holds stream messages past what the blocks hold"
		}
		remedy.Prescribe(remedy.UncleanStopStart, remedy.Args{"pending": strings.Join(pendingStreams, ", ")}).Apply(&f)
		return []report.Finding{f}
	},
}

// logEnd is where one server's log ends: its last dated log event, and
// the last monitoring capture of it.
type logEnd struct {
	server   model.ServerID
	at       time.Time
	index    int  // in the timeline
	stopped  bool // the event is a clean stop
	captured time.Time
}

// logEnds are the servers' log ends, in the model's order of servers: one
// pass over the timeline, each distinct server id resolved once.
func logEnds(m *model.Model) []logEnd {
	canon := map[model.ServerID]model.ServerID{}
	ref := func(id model.ServerID) (model.ServerID, bool) {
		c, ok := canon[id]
		if !ok {
			if s := m.ServerOf(id); s != nil {
				c = s.Ref()
			}
			canon[id] = c
		}
		return c, c != ""
	}
	last := map[model.ServerID]int{}
	captured := map[model.ServerID]time.Time{}
	for i, e := range m.Timeline {
		if e.Time.IsZero() {
			continue
		}
		id, ok := ref(e.Server)
		switch {
		case !ok:
		case e.Source == "log":
			last[id] = i
		case captureSources[e.Source] && e.Time.After(captured[id]):
			captured[id] = e.Time
		}
	}
	var out []logEnd
	for _, s := range m.Servers {
		i, ok := last[s.Ref()]
		if !ok {
			continue
		}
		e := m.Timeline[i]
		out = append(out, logEnd{server: s.Ref(), at: e.Time, index: i, stopped: e.Kind == string(natsfmt.EventStop), captured: captured[s.Ref()]})
	}
	return out
}

// ranAfter says whether a monitoring capture shows e's server answering
// after its log's end (it was running: its log was copied live, or quiet).
// Raft WAL and block stamps do not: a server writes without logging.
func ranAfter(e logEnd) bool { return e.captured.After(e.at) }

// captureSources are the timeline sources that are monitoring captures.
var captureSources = map[string]bool{"varz": true, "jsz": true, "healthz": true, "raftz": true}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
