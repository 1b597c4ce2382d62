package acklog

import (
	"io"
	"sort"
)

// MaxHistoryPubs bounds the published values a History keeps (about 150
// bytes each): a Jepsen test of 300 s at 100 ops/s publishes some 30,000;
// past the bound further publishes are counted, not kept (PubsCapped).
const MaxHistoryPubs = 1 << 20

// MaxNemesisKept bounds the nemesis operations kept; the rest are counted.
const MaxNemesisKept = 4096

// Pub is one published value: its :invoke and its completion.
type Pub struct {
	Value   string
	Process string
	// Outcome is the completion's :type: "ok" (acknowledged), "fail" (not
	// applied), "info" (unknown), "" (never completed).
	Outcome string
	// Invoke and Done are the history indexes of the :invoke and the
	// completion (-1 when absent); InvokeTime and DoneTime their :time
	// (nanoseconds since the test began, -1 when absent); Line the
	// completion's line.
	Invoke, Done         int64
	InvokeTime, DoneTime int64
	Line                 int64
	// Seq is the :seq of the :ok completion, when it carries one.
	Seq    uint64
	HasSeq bool
	// ReadBy is the history index of the latest :invoke of a read (:fetch,
	// :read, :poll) whose :ok result returned the value, -1 if none;
	// ReadTime that read's completion :time.
	ReadBy   int64
	ReadTime int64
}

// NemesisOp is an operation of the nemesis (:process :nemesis).
type NemesisOp struct {
	Index, Time, Line int64
	Type, F, Value    string
}

// History is what a Jepsen history says of the publishes, the reads and
// the nemesis, in memory bounded by the values published.
type History struct {
	Ops int64
	// Pubs in the order of their :invoke (a completion without an invoke
	// is added where it comes).
	Pubs    []*Pub
	byValue map[string]*Pub
	// SeqOps: :ok publishes carrying :seq.
	SeqOps int64
	// DupValues: publishes of a value already published (the first is
	// kept); Orphans: completions without an earlier :invoke.
	DupValues, Orphans int64
	PubsCapped         bool
	// Reads: :ok reads; ReadValues: the values they returned (with
	// repeats); ReadUnknown: returned values no publish in the history has.
	Reads, ReadValues, ReadUnknown int64
	ReadsCut                       bool // a read returned more than MaxOpValues
	Nemesis                        []NemesisOp
	NemesisDropped                 int64
	// FirstTime and LastTime bound the operations' :time (-1 if none).
	FirstTime, LastTime int64
}

// Pub returns the publish of value, or nil.
func (h *History) Pub(value string) *Pub { return h.byValue[value] }

// LastNemesis is the index of the last nemesis operation, -1 if none.
func (h *History) LastNemesis() int64 {
	if n := len(h.Nemesis); n > 0 {
		return h.Nemesis[n-1].Index
	}
	return -1
}

// readFs are the :f of operations reading the stream.
var readFs = map[string]bool{"fetch": true, "read": true, "poll": true, "consume": true}

// readHistory reads a whole history into sum (Format FormatEDN).
func readHistory(sum *Summary, r io.Reader) error {
	h := &History{byValue: map[string]*Pub{}, FirstTime: -1, LastTime: -1}
	sum.History, sum.Format = h, FormatEDN
	rd := NewHistoryReader(sum.File, r)
	type pending struct {
		f           string
		index, time int64
	}
	open := map[string]pending{} // process -> its outstanding :invoke
	var seq int64
	for {
		op, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if le, ok := err.(*LineError); ok {
				sum.bad(le)
				continue
			}
			sum.Lines = h.Ops + sum.Bad
			return err
		}
		h.Ops++
		index := op.Index
		if index < 0 {
			index = seq // histories without :index are in order
		}
		seq = index + 1
		if op.Time >= 0 {
			if h.FirstTime < 0 || op.Time < h.FirstTime {
				h.FirstTime = op.Time
			}
			h.LastTime = max(h.LastTime, op.Time)
		}
		if op.Process == "nemesis" {
			if len(h.Nemesis) < MaxNemesisKept {
				h.Nemesis = append(h.Nemesis, NemesisOp{Index: index, Time: op.Time, Line: op.Line, Type: op.Type, F: op.F, Value: op.Value})
			} else {
				h.NemesisDropped++
			}
			continue
		}
		switch {
		case op.F == "publish" && op.Type == "invoke":
			open[op.Process] = pending{op.F, index, op.Time}
			if h.byValue[op.Value] != nil {
				h.DupValues++
				continue
			}
			if len(h.Pubs) >= MaxHistoryPubs {
				h.PubsCapped = true
				continue
			}
			p := &Pub{Value: op.Value, Process: op.Process, Invoke: index, InvokeTime: op.Time, Done: -1, DoneTime: -1, ReadBy: -1, ReadTime: -1}
			h.Pubs = append(h.Pubs, p)
			h.byValue[op.Value] = p
		case op.F == "publish":
			inv, ok := open[op.Process]
			delete(open, op.Process)
			p := h.byValue[op.Value]
			if !ok || inv.f != "publish" || p == nil {
				h.Orphans++
				if p != nil || len(h.Pubs) >= MaxHistoryPubs {
					continue
				}
				p = &Pub{Value: op.Value, Process: op.Process, Invoke: -1, InvokeTime: -1, ReadBy: -1, ReadTime: -1}
				h.Pubs = append(h.Pubs, p)
				h.byValue[op.Value] = p
			}
			if p.Outcome == "ok" {
				continue // a duplicate publish's completion does not undo the ack
			}
			p.Outcome, p.Done, p.DoneTime, p.Line = op.Type, index, op.Time, op.Line
			if op.Type == "ok" {
				sum.EDNPublishes++
				if op.HasSeq {
					p.Seq, p.HasSeq = op.Seq, true
					h.SeqOps++
				}
			}
		case readFs[op.F] && op.Type == "invoke":
			open[op.Process] = pending{op.F, index, op.Time}
		case readFs[op.F]:
			inv, ok := open[op.Process]
			delete(open, op.Process)
			if op.Type != "ok" {
				continue
			}
			h.Reads++
			h.ReadsCut = h.ReadsCut || op.ValuesCut
			by := index
			if ok {
				by = inv.index
			}
			for _, v := range op.Values {
				h.ReadValues++
				p := h.byValue[v]
				if p == nil {
					h.ReadUnknown++
					continue
				}
				if by > p.ReadBy {
					p.ReadBy, p.ReadTime = by, op.Time
				}
			}
		case op.Type == "invoke":
			open[op.Process] = pending{op.F, index, op.Time}
		default:
			delete(open, op.Process)
		}
	}
	sum.Lines = h.Ops + sum.Bad
	sort.SliceStable(h.Nemesis, func(a, b int) bool { return h.Nemesis[a].Index < h.Nemesis[b].Index })
	return nil
}
