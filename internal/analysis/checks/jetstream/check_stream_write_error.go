package jetstream

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

// A stream whose store write fails stops taking writes on that server while
// its JetStream stays enabled: stream.go setWriteErrLocked logs "JetStream
// stream '<account> > <stream>' critical write error: <err>" and keeps the
// error (mset.werr) until the stream is reset or the server restarts; every
// later message is refused with "JetStream failed to store a msg on stream"
// and no reply, and /healthz answers "JetStream stream '…' is not current:
// stream write error". On 2.15.3 a full filesystem takes this path for a
// stream with no raft group (R1): only the replicated apply path and raft's
// own writes call handleOutOfSpace, which disables JetStream
// (jetstream-disabled).

var CheckStreamWriteError = check.Check{
	Code:        string(report.CodeStreamWriteError),
	Severity:    report.Critical,
	Description: "a stream stopped taking writes on a server whose JetStream stayed enabled (its log: \"JetStream stream '<account> > <stream>' critical write error\"): every publish to it is refused until the server restarts; which stream, on which server, since when, the write that failed, and what to do",
	Skip: func(p *check.Pass) string {
		for _, s := range p.Model.Servers {
			if s.Sources["log"] {
				return ""
			}
		}
		return "no server log in the bundle: the stream write errors are only in the log"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		events := jsLogEvents(m)
		type key struct{ server, account, stream string }
		first := map[key]int{}
		later := map[key]int{}
		// The log events it reads, by server, in timeline order: one pass.
		byServer := map[string][]int{}
		for i := range m.Timeline {
			e := &m.Timeline[i]
			if e.Source == "log" && (e.Kind == string(natsfmt.EventStart) || (e.Kind == "store-failed" && e.Stream != "")) {
				n := m.Name(e.Server)
				byServer[n] = append(byServer[n], i)
			}
		}
		var out []report.Finding
		for _, s := range m.Servers {
			name := m.Name(s.Ref())
			// A server that turned JetStream off: jetstream-disabled says it.
			if jetStreamOff(m, s, events[name]) != nil {
				continue
			}
			lastStart := -1
			var keys []key // this server's streams, in the order their errors came
			for _, i := range byServer[name] {
				e := &m.Timeline[i]
				if e.Kind == string(natsfmt.EventStart) {
					lastStart = i
					continue
				}
				k := key{name, e.Account, e.Stream}
				if strings.HasPrefix(e.Text, "JetStream stream '") && strings.Contains(e.Text, "critical write error") {
					if j, ok := first[k]; !ok || lastStart > j {
						if !ok {
							keys = append(keys, k)
						}
						first[k], later[k] = i, 0
					}
				} else if _, ok := first[k]; ok && lastStart < first[k] {
					later[k]++
				}
			}
			for _, k := range keys {
				i := first[k]
				restarted := lastStart > i
				out = append(out, streamWriteErrorFinding(m, k.server, k.account, k.stream, i, later[k], restarted))
			}
		}
		sort.SliceStable(out, func(a, b int) bool { return out[a].Server < out[b].Server })
		return out
	},
}

func streamWriteErrorFinding(m *model.Model, server, account, stream string, i, refused int, restarted bool) report.Finding {
	e := m.Timeline[i]
	t := e.Time.UTC()
	f := report.Finding{Server: server, Servers: []string{server}, Account: account, Stream: stream, Since: &t, TimelineRefs: []int{i}, Kind: "write-error"}
	cause := "a write to its store failed"
	if strings.Contains(e.Text, NoSpace) {
		f.Kind, cause = "disk-full", "the filesystem holding its store is full ("+NoSpace+")"
	}
	f.Evidence = append(f.Evidence, "the stream's write error: "+eventLine(e))
	if p := failedWrite(e.Text); p != "" {
		f.Evidence = append(f.Evidence, "the write that failed: "+p)
	}
	if refused > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%d later message(s) refused on it, logged \"JetStream failed to store a msg on stream\"", refused))
	}
	f.Evidence = append(f.Evidence, "JetStream on "+server+" stayed enabled (no \"will be DISABLED\" line, no /jsz disabled: true): its other streams and groups go on")
	f.Message = fmt.Sprintf("stream %s > %s on %s has refused writes since %s: %s; JetStream there stayed enabled, every publish to the stream is refused (no reply) until the server restarts", account, stream, server, t.Format(time.RFC3339), cause)
	f.Severity = report.Critical
	if restarted {
		f.Severity = report.Warning
		f.Message = fmt.Sprintf("stream %s > %s on %s stopped taking writes at %s (%s); the server started again after it", account, stream, server, t.Format(time.RFC3339), cause)
	}
	remedy.Prescribe(remedy.StreamWriteError, remedy.Args{"server": server, "stream": stream, "account": account, "diskfull": f.Kind == "disk-full", "other": f.Kind != "disk-full", "restarted": restarted}).Apply(&f)
	return f
}
