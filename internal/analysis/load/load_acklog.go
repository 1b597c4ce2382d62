package load

import (
	"sort"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/storeparse"
)

// readAckLogs reads every ack log the bundle holds (found by content),
// each from the file the sniff opened (open: Bundle.OpenLog).
func readAckLogs(open func(string) (*bundle.LogFile, error), paths []string) []ackLogRead {
	out := make([]ackLogRead, 0, len(paths))
	for _, p := range paths {
		f, err := open(p)
		if err != nil {
			out = append(out, ackLogRead{path: p, err: err, open: true})
			continue
		}
		sum, err := acklog.Read(p, f)
		f.Close()
		out = append(out, ackLogRead{path: p, sum: sum, err: err, reopened: f.Reopened})
	}
	return out
}

// historyValues are the values the Jepsen histories of the ack logs
// published: the payloads the store scan and the WAL pass look for (nil:
// no history).
func historyValues(logs []ackLogRead) map[string]bool {
	var values map[string]bool
	for _, rd := range logs {
		if rd.sum == nil || rd.sum.History == nil {
			continue
		}
		if values == nil {
			values = map[string]bool{}
		}
		for _, pub := range rd.sum.History.Pubs {
			values[pub.Value] = true
		}
	}
	return values
}

// ackLogs puts the ack logs as read in the model.
func (l *loader) ackLogs(logs []ackLogRead) {
	for _, rd := range logs {
		if rd.open {
			l.note("ack log %s: %v", rd.path, rd.err)
			continue
		}
		if rd.reopened != "" {
			l.note("ack log %s: %s", rd.path, rd.reopened)
		}
		if rd.err != nil {
			l.note("ack log %s: read up to line %d: %v", rd.path, rd.sum.Lines, rd.err)
		}
		l.m.AckLogs = append(l.m.AckLogs, rd.sum)
	}
	l.histValues = historyValues(logs)
}

// payloadHits is what the scan of one stream copy found of histValues.
type payloadHits struct {
	hits   []storeparse.PayloadHit
	capped bool
}

// keepPayloads keeps what the scan of copy c found of histValues.
func (l *loader) keepPayloads(c *model.StreamCopy, scan *storeparse.StreamScan) {
	if l.histValues == nil {
		return
	}
	if l.payloadHits == nil {
		l.payloadHits = map[*model.StreamCopy]payloadHits{}
	}
	l.payloadHits[c] = payloadHits{hits: scan.Payloads, capped: scan.PayloadsCapped}
}

// matchHistories says, for each Jepsen history, where its values are held.
func (l *loader) matchHistories() {
	for _, sum := range l.m.AckLogs {
		if sum.History != nil {
			l.m.HistoryMatches = append(l.m.HistoryMatches, l.matchHistory(sum))
		}
	}
}

// matchHistory collects where the values sum's history published (all
// outcomes: an :info value found is told apart from one not found) are
// held: in the copies' blocks, from the one store scan (keepPayloads), and
// in the stream groups' raft WALs. The set is the histories', so the memory
// is bounded by them, never by the stores.
func (l *loader) matchHistory(sum *model.AckLog) *model.HistoryMatch {
	hm := &model.HistoryMatch{Log: sum}
	mine := make(map[string]bool, len(sum.History.Pubs))
	for _, p := range sum.History.Pubs {
		mine[p.Value] = true
	}
	if len(mine) == 0 {
		return hm
	}
	for _, st := range l.m.Streams {
		hs := &model.HistoryStream{Stream: st, Held: map[string][]model.ValueHeld{}}
		for _, c := range st.Copies {
			ph, ok := l.payloadHits[c]
			if !ok {
				continue
			}
			hm.Copies++
			hm.Capped = hm.Capped || ph.capped
			for _, h := range ph.hits {
				if mine[h.Payload] {
					hs.Held[h.Payload] = append(hs.Held[h.Payload], model.ValueHeld{Server: c.Server, Seq: h.Seq})
				}
			}
		}
		hs.Values = len(hs.Held)
		if by := l.walValues[st.Group]; st.Group != "" {
			for _, srv := range l.m.Servers {
				for _, w := range by[srv.ID] {
					if mine[w.value] && len(hs.Held[w.value]) < 2*len(l.m.Servers)+2 {
						hs.Held[w.value] = append(hs.Held[w.value], model.ValueHeld{Server: srv.ID, Seq: w.seq, WAL: true})
					}
				}
			}
		}
		if len(hs.Held) > 0 {
			hm.Streams = append(hm.Streams, hs)
		}
	}
	sort.SliceStable(hm.Streams, func(i, j int) bool { return hm.Streams[i].Values > hm.Streams[j].Values })
	return hm
}
