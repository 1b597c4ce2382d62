package replicas

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var CheckAckedLost = check.Check{
	Code:        string(report.CodeAckedLost),
	Severity:    report.Critical,
	Description: "sequences a publisher's ack log says the server acknowledged, or values a Jepsen history records as :ok, are held by no copy of the stream (beyond every copy's last sequence, in damage on every copy, or a value no copy holds)",
	Skip: func(p *check.Pass) string {
		if len(p.Model.AckLogs) == 0 {
			return "no ack log in the bundle"
		}
		return ""
	},
	Run: func(p *check.Pass) []report.Finding {
		var out []report.Finding
		for _, sum := range p.Model.AckLogs {
			if sum.Bad > 0 {
				p.Skipf("%s: %d line(s) unreadable, their acks not compared (first: %v)", sum.File, sum.Bad, sum.BadKept[0])
			}
			if sum.Format == model.AckFormatJepsen {
				if f, ok := ackedLostHistory(p, sum); ok {
					out = append(out, f)
				}
				continue
			}
			for _, sa := range sum.Streams {
				if f, ok := ackedLost(p, sum, sa); ok {
					out = append(out, f)
				}
			}
		}
		return out
	},
}

// ackedLost compares one stream's acks with every copy of it.
func ackedLost(p *check.Pass, sum *model.AckLog, sa *model.AckedStream) (report.Finding, bool) {
	m := p.Model
	// A PubAck names no account: the stream is found by name.
	var matches []*model.Stream
	for _, st := range m.Streams {
		if st.Name == sa.Stream {
			matches = append(matches, st)
		}
	}
	switch {
	case len(matches) == 0:
		p.Skipf("%s: stream %s (%d acks) is in no store or capture of the bundle", sum.File, sa.Stream, sa.Acks)
		return report.Finding{}, false
	case len(matches) > 1:
		var accs []string
		for _, st := range matches {
			accs = append(accs, st.Account)
		}
		p.Skipf("%s: stream %s exists in several accounts (%s); a PubAck names none", sum.File, sa.Stream, strings.Join(accs, ", "))
		return report.Finding{}, false
	}
	st := matches[0]
	if len(st.Copies) == 0 {
		p.Skipf("%s: no store of the bundle holds a copy of %s > %s", sum.File, st.Account, st.Name)
		return report.Finding{}, false
	}
	notHeld, ok := seqsNotHeld(p, sum, st, sa.Acked.Max())
	if !ok {
		return report.Finding{}, false
	}
	lost := sa.Acked.Intersect(notHeld)
	n := lost.Count()
	if len(lost) == 0 {
		return report.Finding{}, false
	}
	f := report.Finding{Account: st.Account, Stream: st.Name, Seq: lost[0].First, Ranges: lost, Messages: report.Ptr(n),
		Message: fmt.Sprintf("%d sequence(s) of %s > %s that the server acknowledged (%s, ack log %s) are held by no copy: acknowledged writes lost on every replica",
			n, st.Account, st.Name, model.RangesText(lost), sum.File)}
	f.Evidence = append(f.Evidence, walEvidence(m, st, lost)...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %d acknowledgement(s) of %s (%d duplicate), sequences %s, the last at line %d",
		sum.File, sa.Acks, st.Name, sa.Duplicates, model.RangesText(sa.Acked), sa.LastLine))
	for _, c := range st.Copies {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s's copy (%s) holds %d..%d", m.Name(c.Server), c.Path, c.FirstSeq, c.LastSeq))
	}
	// Who held them last: captures that showed the stream past the lost
	// sequences, and the servers' own lines about the stream's state.
	held := map[string]bool{}
	for _, c := range st.Captured {
		if c.LastSeq >= lost[0].First {
			held[m.Name(c.Server)] = true
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s's /jsz in %s showed %d..%d (%d messages): it held them then", m.Name(c.Server), c.Path, c.FirstSeq, c.LastSeq, c.Messages))
		}
	}
	for _, e := range streamStateEvents(m, st) {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s:%d: %s", m.Name(e.Server), e.File, e.Line, strings.TrimSpace(e.Text)))
	}
	f.Servers = model.SortedKeys(held)
	if len(f.Servers) == 0 {
		for _, c := range st.Copies {
			f.Servers = append(f.Servers, m.Name(c.Server))
		}
	}
	ackedLostRemedy(m, st, lost).Apply(&f)
	return f, true
}

// seqsNotHeld are the sequences up to top that no copy of st holds,
// narrowed copy by copy. A copy holds its first..last range except damage;
// below its first sequence the messages were removed (limits, purge), which
// explains them. False (said) when a copy is encrypted.
func seqsNotHeld(p *check.Pass, sum *model.AckLog, st *model.Stream, top uint64) (seqset.Set, bool) {
	m := p.Model
	notHeld := seqset.Set{{First: 1, Last: top}}
	for _, c := range st.Copies {
		if c.Encrypted {
			p.Skipf("%s: %s's copy of %s > %s is encrypted, its sequences are not known", sum.File, m.Name(c.Server), st.Account, st.Name)
			return nil, false
		}
		missing := model.CopyMissing(m, st, c)
		if c.LastSeq < top {
			missing = append(missing, report.Range{First: c.LastSeq + 1, Last: top})
		}
		notHeld = notHeld.Intersect(seqset.Of(missing...))
	}
	// What a quorum's WAL holds past the snapshot is applied at the next
	// start: pending, not lost (the loader notes it).
	return notHeld.Subtract(st.PendingQuorum()), true
}

// streamStateEvents are the first line of each kind per server in which a
// server says what it recovered of the stream (rebuilt, restored, stalled).
func streamStateEvents(m *model.Model, st *model.Stream) []model.TimelineEvent {
	kinds := map[string]bool{"index-rebuilt": true, "restored-stream": true, "stream-apply-error": true}
	seen := map[string]bool{}
	var out []model.TimelineEvent
	for _, e := range m.Timeline {
		if !kinds[e.Kind] || e.Stream != st.Name || (e.Account != "" && e.Account != st.Account) {
			continue
		}
		if k := string(e.Server) + "|" + e.Kind; !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

func ackedLostRemedy(m *model.Model, st *model.Stream, lost []report.Range) remedy.Prescription {
	where := walHolding(m, st, lost)
	return remedy.Prescribe(remedy.AckedLostRepublish, remedy.Args{"group": groupOrUnknown(st), "wal": where, "count": countOf(walCount(st, lost), lost),
		"account": st.Account, "stream": st.Name})
}

// walHolding says which servers' copies of the stream's raft WAL hold any
// of the lost sequences, "" if none.
func walHolding(m *model.Model, st *model.Stream, lost []report.Range) string {
	var parts []string
	for _, srv := range model.ServersOf(m, st.WALSeqs) {
		if in := seqset.Set(st.WALSeqs[srv]).Intersect(lost); len(in) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", m.Name(srv), model.RangesText(in)))
		}
	}
	return strings.Join(parts, "; ")
}

// walEvidence says, first in a finding's evidence, whose copies of the
// stream's raft WAL still hold the lost sequences: what decides whether
// they can still be written out (nothing when no WAL is known to).
func walEvidence(m *model.Model, st *model.Stream, lost []report.Range) []string {
	where := walHolding(m, st, lost)
	if where == "" {
		return nil
	}
	n, total := walCount(st, lost), seqset.Set(lost).Count()
	held := fmt.Sprintf("%d of the %d lost sequences", n, total)
	if n == total {
		held = fmt.Sprintf("all %d lost sequences", n)
	}
	return []string{fmt.Sprintf("the raft WAL of %s still holds %s (%s): they are not gone yet", groupOrUnknown(st), held, where)}
}

// walCount is how many of the lost sequences some server's WAL holds.
func walCount(st *model.Stream, lost []report.Range) uint64 {
	var all seqset.Set
	for _, rs := range st.WALSeqs {
		all = all.Union(seqset.Set(rs).Intersect(lost))
	}
	return all.Count()
}

// countOf says "all 30" or "12".
func countOf(n uint64, of []report.Range) string {
	if n == seqset.Set(of).Count() {
		return fmt.Sprintf("all %d", n)
	}
	return fmt.Sprint(n)
}

func groupOrUnknown(st *model.Stream) string {
	if st.Group == "" {
		return "its S- folder under _js_"
	}
	return st.Group
}
