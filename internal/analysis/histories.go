package analysis

import (
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// clientHistories are the report's plots of the Jepsen histories the model
// decoded (report.ClientHistory): each publish's outcome bucketed over the
// history's time, ok publishes split into held and lost by the acked-lost
// judgement (judgeHistory, the one the finding comes from), and the nemesis
// operations as windows. Nothing is read again: the history is the one
// acklog decoded while loading. Publishes are not judged when acked-lost
// did not run (not selected, or broken).
func clientHistories(m *model.Model, outcomes []report.CheckOutcome) []report.ClientHistory {
	judge := false
	for _, o := range outcomes {
		judge = judge || (o.Code == replicas.CheckAckedLost.Code && o.Outcome != check.OutcomeNotRun)
	}
	var out []report.ClientHistory
	for _, sum := range m.AckLogs {
		if sum.History != nil {
			out = append(out, clientHistory(m, sum, judge))
		}
	}
	return out
}

func clientHistory(m *model.Model, sum *model.AckLog, judge bool) report.ClientHistory {
	h := sum.History
	ch := report.ClientHistory{File: sum.File, Capped: h.PubsCapped, Buckets: []report.HistoryBucket{}}
	var v *replicas.HistoryVerdict
	if judge {
		p := &check.Pass{Model: m}
		ok := false
		if v, ok = replicas.JudgeHistory(p, sum); ok {
			ch.Judged, ch.Account, ch.Stream = true, v.St.Account, v.St.Name
		} else if n := len(p.Skipped); n > 0 {
			ch.Reason = p.Skipped[n-1]
		}
	} else {
		ch.Reason = "the acked-lost check did not run"
	}
	lost := map[*model.HistoryPub]replicas.LostPub{}
	if v != nil {
		for _, lp := range v.Lost {
			lost[lp.P] = lp
		}
	}
	// Buckets: at most report.MaxHistoryBuckets over the history's span,
	// each a whole number of milliseconds wide.
	if h.FirstTime >= 0 {
		span := h.LastTime - h.FirstTime + 1
		w := (span + report.MaxHistoryBuckets - 1) / report.MaxHistoryBuckets
		w = max(1, (w+999_999)/1_000_000) * 1_000_000
		ch.StartNs, ch.BucketNs = h.FirstTime, w
		ch.Buckets = make([]report.HistoryBucket, (span+w-1)/w)
	}
	for _, pub := range h.Pubs {
		t := pub.DoneTime
		if t < 0 {
			t = pub.InvokeTime
		}
		var b *report.HistoryBucket
		if t >= ch.StartNs && ch.BucketNs > 0 {
			if i := (t - ch.StartNs) / ch.BucketNs; i < int64(len(ch.Buckets)) {
				b = &ch.Buckets[i]
			}
		}
		if b == nil {
			ch.Untimed++
			b = &report.HistoryBucket{} // counted in the totals only
		}
		switch pub.Outcome {
		case "ok":
			if lp, ok := lost[pub]; ok {
				b.Lost++
				ch.Totals.Lost++
				if len(b.LostValues) < report.MaxBucketValues {
					b.LostValues = append(b.LostValues, replicas.LostName(lp))
				} else {
					b.LostOmitted++
				}
			} else {
				b.OK++
				ch.Totals.OK++
			}
		case "fail":
			b.Fail++
			ch.Totals.Fail++
		default: // :info or never completed
			b.Unknown++
			ch.Totals.Unknown++
		}
	}
	ch.Nemesis, ch.NemesisOmitted = nemesisWindows(h)
	return ch
}

// nemesisWindows pairs a history's nemesis operations into faults and their
// heals. Jepsen logs each nemesis operation twice, its request and its
// completion, with the same :f: consecutive operations of one :f are one
// operation (the first's index and time, the completion's value). A fault
// lasts until the next operation that heals it (healer), through that
// operation's completion; an operation that neither begins nor heals a
// fault is an instant.
func nemesisWindows(h *model.History) ([]report.NemesisWindow, int64) {
	type op struct {
		f, value          string
		index, time       int64
		lastIndex, lastNs int64
		n                 int // operations merged: the request, its completion
	}
	var ops []op
	for _, n := range h.Nemesis {
		if k := len(ops) - 1; k >= 0 && ops[k].f == n.F && ops[k].n == 1 {
			ops[k].lastIndex, ops[k].lastNs, ops[k].n = n.Index, n.Time, 2
			if n.Value != "" {
				ops[k].value = n.Value
			}
			continue
		}
		ops = append(ops, op{f: n.F, value: n.Value, index: n.Index, time: n.Time, lastIndex: n.Index, lastNs: n.Time, n: 1})
	}
	omitted := h.NemesisDropped
	var out []report.NemesisWindow
	healed := make([]bool, len(ops))
	for i, o := range ops {
		if healed[i] {
			continue
		}
		w := report.NemesisWindow{Kind: "instant", F: o.f, Value: o.value, StartIndex: o.index, StartNs: o.time}
		if heals := healers(o.f); heals != nil {
			w.Kind = "open"
			for j := i + 1; j < len(ops); j++ {
				if !healed[j] && heals[ops[j].f] {
					healed[j] = true
					s := ops[j]
					w.Kind, w.StopF, w.StopValue = "window", s.f, s.value
					w.StopIndex, w.StopNs = report.Ptr(s.lastIndex), report.Ptr(s.lastNs)
					break
				}
			}
		}
		if len(out) == report.MaxNemesisWindows {
			omitted++
			continue
		}
		out = append(out, w)
	}
	return out, omitted
}

// healers are the :f that end the fault f begins, nil when f begins none:
// start-X ends at stop-X (start-partition, stop-partition), a kill or stop
// at a start or restart, a pause at a resume, a leave (a member removed) at
// a join. A "start" alone heals, it begins nothing.
func healers(f string) map[string]bool {
	switch f {
	case "kill", "stop":
		return map[string]bool{"start": true, "restart": true}
	case "pause":
		return map[string]bool{"resume": true}
	case "leave", "remove", "remove-node":
		return map[string]bool{"join": true, "add": true, "add-node": true}
	}
	if rest, ok := strings.CutPrefix(f, "start-"); ok && rest != "" {
		return map[string]bool{"stop-" + rest: true}
	}
	return nil
}
