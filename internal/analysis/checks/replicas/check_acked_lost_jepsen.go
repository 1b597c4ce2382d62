package replicas

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

// maxLostDetailed bounds the lost values the evidence tells one by one
// (their lines differ only in their figures), maxLostHeadline the items of
// the finding's message that name lost values (a run folded into one), and
// maxNemesisListed the nemesis operations around them.
const (
	maxLostDetailed  = 3
	maxLostHeadline  = 8
	maxNemesisListed = 12
	// maxLostNamed bounds the items of the one evidence line naming every
	// lost value (a history of a few thousand writes loses fewer).
	maxLostNamed = 2000
	// minLostRun is the shortest run of values folded into "a".."b".
	minLostRun = 3
)

// lostPub is an acknowledged publish no copy holds.
type LostPub struct {
	P   *model.HistoryPub
	seq uint64 // its sequence: the op's :seq, or where a WAL holds it; 0 unknown
	wal []model.ValueHeld
}

// historyVerdict is the acked-lost judgement of one Jepsen history: which
// of its acknowledged publishes no copy of the stream holds. The check's
// finding and the report's plot of the history (histories.go) read it.
type HistoryVerdict struct {
	h      *model.History
	St     *model.Stream
	hs     *model.HistoryStream
	oks    []*model.HistoryPub
	Lost   []LostPub
	isLost map[*model.HistoryPub]bool
	// comparable: some copy holds a published value as its payload;
	// byReads: judged by the reads after the last nemesis op alone.
	comparable, byReads, finalReads bool
	lastNemesis                     int64
}

// judgeHistory compares a Jepsen history's acknowledged publishes with
// the stores. An :ok publish is held when some copy's blocks hold its value
// (at its :seq, when it carries one), or when a quorum's WAL holds it past
// the snapshot (applied at the next start), or when a read invoked after the
// last nemesis operation returned it (held by the cluster, perhaps on a
// server the bundle lacks). Without payloads to compare (no value found in
// any copy), a :seq is compared with the copies' sequences as an ack log's
// is. :info is an unknown outcome and :fail not applied: neither is ever
// lost. False, with the reason in p's skips, when it cannot judge.
func JudgeHistory(p *check.Pass, sum *model.AckLog) (*HistoryVerdict, bool) {
	m := p.Model
	h := sum.History
	if h == nil {
		p.Skipf("%s: a Jepsen history whose operations were not decoded: not compared", sum.File)
		return nil, false
	}
	var hm *model.HistoryMatch
	for _, x := range m.HistoryMatches {
		if x.Log == sum {
			hm = x
		}
	}
	var oks []*model.HistoryPub
	for _, pub := range h.Pubs {
		if pub.Outcome == "ok" {
			oks = append(oks, pub)
		}
	}
	if len(oks) == 0 {
		p.Skipf("%s: a Jepsen history with no acknowledged (:ok) publish", sum.File)
		return nil, false
	}
	if h.PubsCapped {
		p.Skipf("%s: more than %d published values: the values past them not compared", sum.File, model.MaxHistoryPubs)
	}
	// The stream: the one holding the history's values (a history names
	// none); without any value found, the bundle's only stream.
	var hs *model.HistoryStream
	if hm != nil && len(hm.Streams) > 0 {
		hs = hm.Streams[0]
		if len(hm.Streams) > 1 {
			p.Skipf("%s: values of the history are held by %d streams; compared with %s > %s, which holds the most (%d)",
				sum.File, len(hm.Streams), hs.Stream.Account, hs.Stream.Name, hs.Values)
		}
	}
	st := (*model.Stream)(nil)
	if hs != nil {
		st = hs.Stream
	} else {
		var with []*model.Stream
		for _, s := range m.Streams {
			if len(s.Copies) > 0 {
				with = append(with, s)
			}
		}
		if len(with) != 1 {
			p.Skipf("%s: no stream of the bundle holds any value the history published, and %d streams have copies: which one the client wrote is not known", sum.File, len(with))
			return nil, false
		}
		st = with[0]
	}
	if len(st.Copies) == 0 {
		p.Skipf("%s: no store of the bundle holds a copy of %s > %s", sum.File, st.Account, st.Name)
		return nil, false
	}
	comparable := hs != nil && hs.Values > 0
	lastNemesis := h.LastNemesis()
	finalReads := false // a read invoked after the last nemesis op returned values
	for _, pub := range h.Pubs {
		finalReads = finalReads || pub.ReadBy > lastNemesis
	}
	var bySeq seqset.Set // seq-only comparison: sequences no copy holds
	byReads := !comparable && h.SeqOps == 0 && finalReads
	if !comparable && !byReads {
		if h.SeqOps == 0 {
			p.Skipf("%s: no copy of %s > %s holds any value the history published (payloads other than the values?), its :ok publishes carry no :seq and no read after the last nemesis op returned values: nothing to compare", sum.File, st.Account, st.Name)
			return nil, false
		}
		var top uint64
		for _, pub := range oks {
			top = max(top, pub.Seq)
		}
		var ok bool
		if bySeq, ok = seqsNotHeld(p, sum, st, top); !ok {
			return nil, false
		}
	}
	pending := seqset.Set(st.PendingQuorum())
	held := func(pub *model.HistoryPub) (bool, LostPub) {
		lp := LostPub{P: pub, seq: pub.Seq}
		if pub.ReadBy > lastNemesis {
			return true, lp
		}
		switch {
		case byReads:
			return false, lp // no read after the nemesis returned it
		case !comparable:
			return !pub.HasSeq || !bySeq.Contains(pub.Seq), lp
		}
		if hs.InBlocks(pub.Value, pub.Seq) || (!pub.HasSeq && hs.InBlocks(pub.Value, 0)) {
			return true, lp
		}
		for _, w := range hs.Held[pub.Value] {
			if w.WAL {
				lp.wal = append(lp.wal, w)
				if lp.seq == 0 {
					lp.seq = w.Seq
				}
			}
		}
		if lp.seq != 0 && pending.Contains(lp.seq) {
			return true, lp
		}
		return false, lp
	}
	var lost []LostPub
	isLost := map[*model.HistoryPub]bool{}
	for _, pub := range oks {
		if ok, lp := held(pub); !ok {
			lost = append(lost, lp)
			isLost[pub] = true
		}
	}
	return &HistoryVerdict{h: h, St: st, hs: hs, oks: oks, Lost: lost, isLost: isLost,
		comparable: comparable, byReads: byReads, finalReads: finalReads, lastNemesis: lastNemesis}, true
}

// ackedLostHistory is the acked-lost finding of one Jepsen history, false
// when it cannot be judged or loses nothing.
func ackedLostHistory(p *check.Pass, sum *model.AckLog) (report.Finding, bool) {
	v, ok := JudgeHistory(p, sum)
	if !ok || len(v.Lost) == 0 {
		return report.Finding{}, false
	}
	m, h, st, hs, oks, lost, isLost := p.Model, v.h, v.St, v.hs, v.oks, v.Lost, v.isLost
	comparable, byReads, lastNemesis, finalReads := v.comparable, v.byReads, v.lastNemesis, v.finalReads
	sort.SliceStable(lost, func(i, j int) bool {
		a, b := lost[i], lost[j]
		if (a.seq == 0) != (b.seq == 0) {
			return a.seq != 0
		}
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		return a.P.Done < b.P.Done
	})
	var seqs seqset.Set
	for _, lp := range lost {
		if lp.seq != 0 {
			seqs.Add(lp.seq)
		}
	}
	inferred := ""
	if len(seqs) == 0 && comparable {
		seqs, inferred = inferLostSeqs(h, st, hs, lost)
	}
	folded, counts := foldLost(lost)
	n := uint64(len(lost))
	from, to := window(lost)
	at := ""
	if len(seqs) > 0 {
		at = " (seq " + model.RangesText(seqs) + ")"
	}
	f := report.Finding{Account: st.Account, Stream: st.Name, Messages: report.Ptr(n), Ranges: seqs,
		Message: fmt.Sprintf("%d publish(es) that the Jepsen history %s records as acknowledged (:ok) are held by no copy of %s > %s%s: %s; acknowledged between %s and %s of the test: acknowledged writes lost",
			n, sum.File, st.Account, st.Name, at, lostHeadline(folded, counts), nanos(from), nanos(to))}
	if len(seqs) > 0 {
		f.Seq = seqs[0].First
	}
	// What decides the remedy first: whether the stream's raft WAL still
	// holds the lost writes.
	f.Evidence = append(f.Evidence, walEvidence(m, st, seqs)...)
	how := "by value (the payloads the copies' blocks and the stream's raft WAL hold)"
	switch {
	case byReads:
		how = "by the reads invoked after the last nemesis op (no copy holds any published value as its payload, no :seq)"
	case !comparable:
		how = "by :seq (no copy holds any published value as its payload)"
	case h.SeqOps > 0:
		how = "by :seq and value (the payload each copy holds at that sequence)"
	}
	info, infoHeld, fail := 0, 0, 0
	for _, pub := range h.Pubs {
		switch pub.Outcome {
		case "info", "":
			info++
			if comparable && len(hs.Held[pub.Value]) > 0 {
				infoHeld++
			}
		case "fail":
			fail++
		}
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %d operations; %d :ok publishes (%d with :seq) matched %s; %d with an unknown outcome (:info or never completed: %d of them held, none counted lost); %d :fail (not applied, never expected); %d :ok reads",
		sum.File, h.Ops, len(oks), h.SeqOps, how, info, infoHeld, fail, h.Reads))
	if inferred != "" {
		f.Evidence = append(f.Evidence, inferred)
	}
	f.Evidence = append(f.Evidence, "lost values: "+strings.Join(report.FirstOf(folded, maxLostNamed), ", "))
	okOrder := append([]*model.HistoryPub(nil), oks...)
	sort.SliceStable(okOrder, func(i, j int) bool { return okOrder[i].Done < okOrder[j].Done })
	for i, lp := range lost {
		if i == maxLostDetailed {
			f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more lost values, each told as these are", len(lost)-maxLostDetailed))
			break
		}
		f.Evidence = append(f.Evidence, lostEvidence(p, lp, okOrder, isLost, hs, lastNemesis, finalReads))
	}
	f.Evidence = append(f.Evidence, nemesisAround(h, from, to)...)
	for _, c := range st.Copies {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s's copy (%s) holds %d..%d", m.Name(c.Server), c.Path, c.FirstSeq, c.LastSeq))
	}
	for _, e := range streamStateEvents(m, st) {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s:%d: %s", m.Name(e.Server), e.File, e.Line, strings.TrimSpace(e.Text)))
	}
	for _, c := range st.Copies {
		f.Servers = append(f.Servers, m.Name(c.Server))
	}
	sort.Strings(f.Servers)
	ackedLostRemedy(m, st, seqs).Apply(&f)
	return f, true
}

func LostName(lp LostPub) string {
	if lp.seq != 0 {
		return fmt.Sprintf("%q (seq %d)", lp.P.Value, lp.seq)
	}
	return fmt.Sprintf("%q", lp.P.Value)
}

// foldLost names the lost values in their order, a run of at least
// minLostRun values that count up by one (the same text before a number
// that goes up by one: "1-25", "1-26", …, or 3350, 3351, …), stored at
// sequences that count up by one too (or all unknown), folded into
// `"1-25".."1-48" (24 values, seq 216-239)`; counts says how many values
// each name stands for.
func foldLost(lost []LostPub) (names []string, counts []int) {
	for i := 0; i < len(lost); {
		j := i + 1
		for j < len(lost) && nextInRun(lost[j-1], lost[j]) {
			j++
		}
		if j-i < minLostRun {
			for _, lp := range lost[i:j] {
				names, counts = append(names, LostName(lp)), append(counts, 1)
			}
		} else {
			a, b := lost[i], lost[j-1]
			s := fmt.Sprintf("%q..%q (%d values", a.P.Value, b.P.Value, j-i)
			if a.seq != 0 {
				s += fmt.Sprintf(", seq %d-%d", a.seq, b.seq)
			}
			names, counts = append(names, s+")"), append(counts, j-i)
		}
		i = j
	}
	return names, counts
}

// lostHeadline is the first maxLostHeadline of the folded names for the
// finding's message, the rest counted in values (a name may be a run).
func lostHeadline(names []string, counts []int) string {
	if len(names) <= maxLostHeadline {
		return strings.Join(names, ", ")
	}
	rest := 0
	for _, c := range counts[maxLostHeadline:] {
		rest += c
	}
	return fmt.Sprintf("%s and %d more values", strings.Join(names[:maxLostHeadline], ", "), rest)
}

// nextInRun says b's value and sequence follow a's by one.
func nextInRun(a, b LostPub) bool {
	pa, na, ok := splitNumber(a.P.Value)
	if !ok {
		return false
	}
	pb, nb, ok := splitNumber(b.P.Value)
	if !ok || pa != pb || nb != na+1 {
		return false
	}
	if a.seq == 0 || b.seq == 0 {
		return a.seq == b.seq
	}
	return b.seq == a.seq+1
}

// splitNumber splits v into the text before its trailing number and that
// number, written without leading zeros (so that it reads back the same).
func splitNumber(v string) (string, uint64, bool) {
	i := len(v)
	for i > 0 && v[i-1] >= '0' && v[i-1] <= '9' {
		i--
	}
	digits := v[i:]
	if digits == "" || len(digits) > 18 || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return v[:i], n, err == nil
}

// lostEvidence says when a lost value was acknowledged, where it was (its
// sequence, the WAL that holds it) or between which held values it was
// acknowledged, and whether a read saw it.
func lostEvidence(p *check.Pass, lp LostPub, okOrder []*model.HistoryPub, isLost map[*model.HistoryPub]bool, hs *model.HistoryStream, lastNemesis int64, finalRead bool) string {
	pub := lp.P
	var b strings.Builder
	fmt.Fprintf(&b, "%q (process %s): invoked at index %d (%s), acknowledged at index %d (%s, line %d)", pub.Value, pub.Process, pub.Invoke, nanos(pub.InvokeTime), pub.Done, nanos(pub.DoneTime), pub.Line)
	switch {
	case pub.HasSeq:
		fmt.Fprintf(&b, " with seq %d, which no copy holds with this value", pub.Seq)
	case lp.seq != 0:
		fmt.Fprintf(&b, ", stored at seq %d (the WAL says), held by no copy's blocks", lp.seq)
	default:
		b.WriteString(", held by no copy")
	}
	if pub.ReadBy <= lastNemesis && finalRead {
		b.WriteString(" and returned by no read after the last nemesis op")
	}
	if len(lp.wal) > 0 {
		var w []string
		for _, x := range lp.wal {
			w = append(w, fmt.Sprintf("%s at seq %d", p.Model.Name(x.Server), x.Seq))
		}
		fmt.Fprintf(&b, "; in the raft WAL of %s", strings.Join(w, ", "))
	}
	// The neighbours: the nearest acknowledged values, in the order of
	// their acknowledgements, that a copy holds or a final read returned.
	heldPub := func(q *model.HistoryPub) bool {
		return !isLost[q] && (q.ReadBy > lastNemesis || (hs != nil && len(hs.Held[q.Value]) > 0))
	}
	i := sort.Search(len(okOrder), func(i int) bool { return okOrder[i].Done >= pub.Done })
	prev, next := "the start", "the end"
	for k := i - 1; k >= 0; k-- {
		if q := okOrder[k]; heldPub(q) {
			prev = "the held " + heldName(q, hs)
			break
		}
	}
	for k := i + 1; k < len(okOrder); k++ {
		if q := okOrder[k]; heldPub(q) {
			next = heldName(q, hs)
			break
		}
	}
	fmt.Fprintf(&b, "; acknowledged between %s and %s", prev, next)
	if pub.ReadBy >= 0 && pub.ReadBy <= lastNemesis {
		fmt.Fprintf(&b, "; a read invoked at index %d, before the last nemesis operation, returned it (%s): the stream held it then", pub.ReadBy, nanos(pub.ReadTime))
	}
	return b.String()
}

func heldName(q *model.HistoryPub, hs *model.HistoryStream) string {
	if hs == nil {
		return fmt.Sprintf("%q", q.Value)
	}
	for _, h := range hs.Held[q.Value] {
		if !h.WAL {
			return fmt.Sprintf("%q (seq %d)", q.Value, h.Seq)
		}
	}
	return fmt.Sprintf("%q", q.Value)
}

// window is the history time from the first lost value's invoke to the
// last one's acknowledgement.
func window(lost []LostPub) (from, to int64) {
	from, to = -1, -1
	for _, lp := range lost {
		if t := lp.P.InvokeTime; t >= 0 && (from < 0 || t < from) {
			from = t
		}
		if t := lp.P.DoneTime; t > to {
			to = t
		}
	}
	return from, to
}

// nemesisAround lists the nemesis operations around the window: the last
// ones before it began, every one inside, and the first after it ended
// (kills, partitions, member removals: what made the writes unsafe).
func nemesisAround(h *model.History, from, to int64) []string {
	ops := h.Nemesis
	if len(ops) == 0 {
		return []string{"the history holds no nemesis operation"}
	}
	lo := sort.Search(len(ops), func(i int) bool { return ops[i].Time >= from })
	hi := sort.Search(len(ops), func(i int) bool { return ops[i].Time > to })
	lo = max(0, lo-4)
	hi = min(len(ops), hi+4)
	if hi-lo > maxNemesisListed {
		hi = lo + maxNemesisListed
	}
	var out []string
	for _, op := range ops[lo:hi] {
		where := "during"
		switch {
		case op.Time < from:
			where = "before"
		case op.Time > to:
			where = "after"
		}
		out = append(out, fmt.Sprintf("nemesis at index %d (%s, %s the lost writes): :%s :%s %s", op.Index, nanos(op.Time), where, op.Type, op.F, op.Value))
	}
	if n := len(ops) - (hi - lo); n > 0 || h.NemesisDropped > 0 {
		out = append(out, fmt.Sprintf("%d other nemesis operation(s) in the history", int64(n)+h.NemesisDropped))
	}
	return out
}

// nanos says a history :time (nanoseconds since the test began).
func nanos(t int64) string {
	if t < 0 {
		return "time unknown"
	}
	return fmt.Sprintf("%.3f s", float64(t)/1e9)
}

// inferLostSeqs works out the sequences the lost values were stored at when
// the history gives none (no :seq) and no WAL holds them. Each acknowledged
// publish took a sequence of its own. When a copy holds 1..H whole and
// every one of those H messages is a value of the history (no other
// writer), the lost values were stored above H; a publish invoked after the
// last lost value was acknowledged was stored after it. So when no publish
// of unknown outcome missing from the copies was invoked before then, the L
// lost values are exactly H+1..H+L; otherwise they lie within
// H+1..H+L+U, U those publishes (said, not claimed as ranges).
func inferLostSeqs(h *model.History, st *model.Stream, hs *model.HistoryStream, lost []LostPub) ([]report.Range, string) {
	var top *model.StreamCopy
	for _, c := range st.Copies {
		if top == nil || c.LastSeq > top.LastSeq {
			top = c
		}
	}
	H := top.LastSeq
	if top.FirstSeq != 1 || top.Messages != H || uint64(hs.Values) != H {
		return nil, ""
	}
	var lastAck int64
	for _, lp := range lost {
		lastAck = max(lastAck, lp.P.Done)
	}
	var unknown uint64
	for _, pub := range h.Pubs {
		if (pub.Outcome == "info" || pub.Outcome == "") && pub.Invoke < lastAck && !hs.InBlocks(pub.Value, 0) {
			unknown++
		}
	}
	L := uint64(len(lost))
	if unknown > 0 {
		return nil, fmt.Sprintf("no lost value's sequence is recorded (no :seq, no WAL holds them): %s holds 1..%d, each a value of the history, so the %d lost values were stored above %d, within %d..%d (%d publish(es) of unknown outcome, not held, may have taken sequences among them)",
			top.Path, H, L, H, H+1, H+L+unknown, unknown)
	}
	return []report.Range{{First: H + 1, Last: H + L}}, fmt.Sprintf("no lost value's sequence is recorded (no :seq, no WAL holds them): %s holds 1..%d, each a value of the history, and every publish of unknown outcome not held was invoked after the last lost value was acknowledged, so the %d lost values were stored at exactly %d..%d",
		top.Path, H, L, H+1, H+L)
}
