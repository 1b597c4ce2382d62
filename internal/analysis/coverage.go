package analysis

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// bundleCoverage says what the run read and judged, and what it could not: a
// bundle in which nothing was recognized, stores that stayed sealed, and
// files that were not read make the report no verdict on them.
func bundleCoverage(m *model.Model, streams []report.Stream, outcomes []report.CheckOutcome) *report.Coverage {
	c := &report.Coverage{Stores: m.Read.Stores, Logs: m.Read.Logs, Captures: m.Read.Captures, AckLogs: m.Read.AckLogs,
		Unread: m.Read.Unread, ChecksJudged: []string{}}
	for _, st := range streams {
		for _, d := range st.OnDisk {
			c.StreamCopies++
			if d.Source == report.SourceSealed {
				c.SealedCopies++
			}
		}
	}
	for _, o := range outcomes {
		if o.Outcome == check.OutcomePassed || o.Outcome == check.OutcomeFailed {
			c.ChecksJudged = append(c.ChecksJudged, o.Code)
		}
	}
	if m.Read.Stores+m.Read.Logs+m.Read.Captures+m.Read.AckLogs == 0 {
		c.Unjudged = append(c.Unjudged, report.Unjudged{Kind: report.UnjudgedNothingRecognized,
			Reason: "nothing in the bundle was recognized as a store, a server log, a monitoring capture or an ack log: nothing was judged (is it the right folder or archive?)"})
	}
	sealed := map[model.ServerID]int{}
	var order []model.ServerID
	for _, cr := range m.Corruptions {
		if cr.Kind == natsfmt.CorruptEncrypted {
			if sealed[cr.Server] == 0 {
				order = append(order, cr.Server)
			}
			sealed[cr.Server]++
		}
	}
	why := "no key was given (--key or JSF_KEY)"
	if m.KeysGiven {
		why = "the key given does not open them"
	}
	for _, id := range order {
		c.Unjudged = append(c.Unjudged, report.Unjudged{Kind: report.UnjudgedSealed, Server: m.Name(id),
			Reason: fmt.Sprintf("%s of %s's store stayed sealed, encrypted at rest, and %s: what they hold was not judged", fmt.Sprintf("%d %s", sealed[id], model.Plural(sealed[id], "file", "files")), m.Name(id), why)})
	}
	if m.Read.CutAt != "" {
		c.Unjudged = append(c.Unjudged, report.Unjudged{Kind: report.UnjudgedUnread,
			Reason: fmt.Sprintf("the archive is cut short: it ends inside %s, so the entries after it (stores, logs, captures) were never read and no list says what they were; ask for the bundle again", m.Read.CutAt)})
	}
	if n := len(m.Read.Unread); n > 0 {
		paths := make([]string, 0, n)
		for _, u := range m.Read.Unread {
			paths = append(paths, u.Path)
		}
		c.Unjudged = append(c.Unjudged, report.Unjudged{Kind: report.UnjudgedUnread,
			Reason: fmt.Sprintf("%s of the bundle could not be read (%s; coverage.unread says why): what they hold was not judged, and a file the archive lost is not in the bundle, which says nothing of the server's disk", fmt.Sprintf("%d %s", n, model.Plural(n, "file", "files")), report.JoinFirst(paths, 3))})
	}
	return c
}
