package analysis

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// TimelineOptions choose what the report's timeline holds.
type TimelineOptions struct {
	// Full keeps every log event in the report's timeline, instead of
	// collapsing routine repetition into runs. Memory and the report then
	// grow with the logs.
	Full bool
	// Events, when set, receives every log event as it is read, one JSON
	// object (a report.TimelineEvent) a line, file by file.
	Events io.Writer

	// head and tail replace timelineHead and timelineTail when set (tests).
	head, tail int
}

// Bounds of the timeline kept from one log file, whatever its size: the
// first timelineHead entries, then the last timelineTail; what falls
// between is folded into one run per kind and asset (and said in a note).
// 20,000 entries are about 6 MB of JSON.
const (
	timelineHead = 10000
	timelineTail = 10000
)

// stateKinds are the log event kinds an engineer reads one by one: stops
// and starts, elections and leader changes, membership, resets and damage.
// Every other kind is routine and collapses into runs.
var stateKinds = map[string]bool{
	"start": true, "stop": true, "shutdown": true, "signal": true, "lame-duck": true, "unclean-stop": true, "panic": true,
	"js-started": true, "js-shutdown": true, "js-disabled": true, "js-start-failed": true, "meta-start-failed": true,
	"meta-leader": true, "meta-leader-self": true, "no-meta-leader": true, "meta-contact-lost": true,
	"meta-bootstrap": true, "meta-recover": true, "meta-initial-peers": true,
	"stream-leader": true, "consumer-leader": true, "leader-update": true, "leader-switch": true, "leader-stepdown": true, "leader-transfer": true, "leader-higher-term": true,
	"peer-add": true, "peer-remove": true, "peers-evicted": true, "quorum-rescue": true,
	"quorum-paused": true, "quorum-resumed": true, "stream-no-quorum": true, "consumer-no-quorum": true,
	"stream-removed": true, "consumer-removed": true, "raft-deleted": true, "stream-reset": true, "raft-reset": true, "wal-reset": true,
	"wal-truncate": true, "stream-skipped": true, "consumer-skipped": true,
	"orphan-stream": true, "orphan-consumer": true, "orphan-nrg": true, "duplicate-name": true, "duplicate-assignment": true,
	"healthcheck-failed": true, "filestore-corrupt": true, "index-rebuilt": true, "block-missing": true, "snapshot-corrupt": true,
	"wal-corrupt": true, "commit-file-corrupt": true, "stream-assignment-corrupt": true,
}

// lifeKinds end a server's life (or start a new one): the runs of routine
// events are closed there, so each run stays within one boot.
var lifeKinds = map[string]bool{"start": true, "stop": true, "shutdown": true, "unclean-stop": true, "lame-duck": true, "panic": true}

// stateChange says whether a log event is kept in full: a state change, or a
// warning or error that names an asset.
func stateChange(e model.TimelineEvent, level string) bool {
	if stateKinds[e.Kind] || metaKinds[natsfmt.EventKind(e.Kind)] {
		return true
	}
	switch level {
	case "WRN", "ERR", "FTL":
		return e.Account != "" || e.Stream != "" || e.Group != ""
	}
	return false
}

// runKey is what the events of one run share (within one file).
type runKey struct {
	server                       model.ServerID
	kind, group, account, stream string
}

func keyOf(e *model.TimelineEvent) runKey {
	return runKey{e.Server, e.Kind, e.Group, e.Account, e.Stream}
}

// logRef ties a meta leader state read from a log to its timeline event,
// resolved once the timeline is final.
type logRef struct {
	state      int // index in Model.MetaLeaderStates
	file, kind string
	line       int
}

// headTail keeps the first head and the last tail values pushed, in
// order; push returns the value that falls out between them.
type headTail[T any] struct {
	head, tail int
	first      []T
	ring       []T
	start      int
}

func (w *headTail[T]) push(v T) (out T, dropped bool) {
	if len(w.first) < w.head {
		w.first = append(w.first, v)
		return out, false
	}
	if len(w.ring) < w.tail {
		w.ring = append(w.ring, v)
		return out, false
	}
	if w.tail == 0 {
		return v, true
	}
	out = w.ring[w.start]
	w.ring[w.start] = v
	w.start = (w.start + 1) % w.tail
	return out, true
}

// appendTo appends the kept values, oldest first, to dst.
func (w *headTail[T]) appendTo(dst []T) []T {
	dst = append(dst, w.first...)
	for i := range w.ring {
		dst = append(dst, w.ring[(w.start+i)%len(w.ring)])
	}
	return dst
}

func (w *headTail[T]) reset() {
	clear(w.first)
	clear(w.ring)
	w.first, w.ring, w.start = w.first[:0], w.ring[:0], 0
}

// timelineSink receives the log events in the order read and places in
// Model.Timeline what the report shows: state changes in full, routine
// repetition within one boot as one run per kind and asset, and, past the
// bounds of one file, its head and tail with the middle folded into runs.
// Memory depends on the bounds and the number of kinds and assets, not on
// the number of lines.
type timelineSink struct {
	m    *model.Model
	opts TimelineOptions
	enc  *json.Encoder
	// encErr is the first error writing Events; later events are not written.
	encErr error

	// Per file, reset by startFile.
	open      map[runKey]*model.TimelineEvent
	openOrder []runKey
	kept      headTail[model.TimelineEvent]
	folded    map[runKey]*model.TimelineEvent
	foldOrder []runKey
	// Counts of the current file for its note.
	events, entries, foldedEntries, foldedEvents int

	refs []logRef
}

func newTimelineSink(m *model.Model, opts TimelineOptions) *timelineSink {
	t := &timelineSink{m: m, opts: opts, open: map[runKey]*model.TimelineEvent{}, folded: map[runKey]*model.TimelineEvent{},
		kept: headTail[model.TimelineEvent]{head: timelineHead, tail: timelineTail}}
	if opts.head > 0 || opts.tail > 0 {
		t.kept.head, t.kept.tail = opts.head, opts.tail
	}
	if opts.Events != nil {
		t.enc = json.NewEncoder(opts.Events)
		t.enc.SetEscapeHTML(false)
	}
	return t
}

// startFile resets the per-file state.
func (t *timelineSink) startFile() {
	clear(t.open)
	clear(t.folded)
	t.openOrder, t.foldOrder = t.openOrder[:0], t.foldOrder[:0]
	t.kept.reset()
	t.events, t.entries, t.foldedEntries, t.foldedEvents = 0, 0, 0, 0
}

// add takes one event of the current file.
func (t *timelineSink) add(e model.TimelineEvent, level string) {
	t.events++
	if t.enc != nil && t.encErr == nil {
		// The report's field names (time, server, …) and the server's
		// name as known when the line is read, not the model's fields.
		t.encErr = t.enc.Encode(report.TimelineEvent{Time: e.Time, Server: t.m.Name(e.Server), Source: e.Source, Kind: e.Kind,
			Group: e.Group, Account: e.Account, Stream: e.Stream, Text: e.Text, File: e.File, Line: e.Line, Count: e.Count, Until: e.Until})
	}
	if t.opts.Full {
		t.m.Timeline = append(t.m.Timeline, e)
		return
	}
	if lifeKinds[e.Kind] {
		t.closeRuns()
	}
	if stateChange(e, level) {
		t.place(e)
		return
	}
	k := keyOf(&e)
	if r := t.open[k]; r != nil {
		if e.Time.Sub(r.Time) < maxRunSpan {
			r.Count++
			until := e.Time
			r.Until = &until
			return
		}
		// A long quiet boot: its noise is shown hour by hour.
		t.place(oneOrRun(*r))
		*r = e
		r.Count = 1
		return
	}
	r := e
	r.Count = 1
	t.open[k] = &r
	t.openOrder = append(t.openOrder, k)
}

// maxRunSpan is the longest time one run covers, so a server that runs for
// weeks without a restart still shows when its routine noise came and went.
const maxRunSpan = time.Hour

// closeRuns places the runs open in the current boot, by their first event.
func (t *timelineSink) closeRuns() {
	for _, k := range t.openOrder {
		t.place(oneOrRun(*t.open[k]))
	}
	clear(t.open)
	t.openOrder = t.openOrder[:0]
}

// oneOrRun turns a run of one event back into that event.
func oneOrRun(r model.TimelineEvent) model.TimelineEvent {
	if r.Count <= 1 {
		r.Count, r.Until = 0, nil
	}
	return r
}

// place keeps one entry, folding the one that falls out of the bounds.
func (t *timelineSink) place(e model.TimelineEvent) {
	t.entries++
	if out, dropped := t.kept.push(e); dropped {
		t.fold(out)
	}
}

// fold adds an entry dropped from the middle of a long file to the run of
// its kind and asset.
func (t *timelineSink) fold(e model.TimelineEvent) {
	n := max(e.Count, 1)
	t.foldedEntries++
	t.foldedEvents += n
	last := e.Time
	if e.Until != nil {
		last = *e.Until
	}
	k := keyOf(&e)
	r := t.folded[k]
	if r == nil {
		e.Count = n
		e.Until = &last
		t.folded[k] = &e
		t.foldOrder = append(t.foldOrder, k)
		return
	}
	r.Count += n
	if last.After(*r.Until) {
		r.Until = &last
	}
}

// endFile places what the current file holds in the timeline and returns a
// note on what was folded ("" when nothing was).
func (t *timelineSink) endFile(file string) string {
	t.closeRuns()
	t.m.Timeline = t.kept.appendTo(t.m.Timeline)
	for _, k := range t.foldOrder {
		t.m.Timeline = append(t.m.Timeline, oneOrRun(*t.folded[k]))
	}
	if t.foldedEntries == 0 {
		return ""
	}
	return fmt.Sprintf("log %s: %d events make %d timeline entries; the first %d and the last %d are kept, the %d between (%d events) are folded into %d runs, one per kind and asset (--timeline full or --events FILE gives every event)",
		file, t.events, t.entries, t.kept.head, t.kept.tail, t.foldedEntries, t.foldedEvents, len(t.foldOrder))
}

// ref records that MetaLeaderStates[state] came from the log line file:line.
func (t *timelineSink) ref(state int, file, kind string, line int) {
	t.refs = append(t.refs, logRef{state, file, kind, line})
}

// resolveRefs points the meta leader states read from logs at their entries
// in the final timeline (-1 when the entry was folded or merged away).
func (t *timelineSink) resolveRefs() {
	if len(t.refs) == 0 {
		return
	}
	type at struct {
		file, kind string
		line       int
	}
	index := map[at]int{}
	for i, e := range t.m.Timeline {
		if e.Source == "log" {
			if _, ok := index[at{e.File, e.Kind, e.Line}]; !ok {
				index[at{e.File, e.Kind, e.Line}] = i
			}
		}
	}
	for _, r := range t.refs {
		i, ok := index[at{r.file, r.kind, r.line}]
		if !ok {
			i = -1
		}
		t.m.MetaLeaderStates[r.state].Timeline = i
	}
}

// mergeWindow is how close in time two copies of one line must be to be
// taken for the same line (a file and its kubectl capture).
const mergeWindow = time.Second

// dedupeTimeline drops events that another file of the same server already
// gave: the same log copied in two forms (a file and its kubectl capture).
// The timeline is sorted, so only the events of the last mergeWindow are
// compared: linear in the number of events.
func (l *loader) dedupeTimeline() {
	type seen struct {
		t    time.Time
		file string
	}
	recent := map[string][]seen{}
	keep := make([]bool, len(l.m.Timeline))
	for i, e := range l.m.Timeline {
		k := l.m.Name(e.Server) + "\x00" + e.Kind + "\x00" + e.Text
		win := recent[k]
		for len(win) > 0 && e.Time.Sub(win[0].t) >= mergeWindow {
			win = win[1:]
		}
		dup := false
		for _, s := range win {
			if s.file != e.File && rotationSet(s.file) != rotationSet(e.File) { // a rotated set's files hold no copies of each other
				dup = true
				break
			}
		}
		keep[i] = !dup
		if !dup {
			win = append(win, seen{e.Time, e.File})
		}
		recent[k] = win
	}
	newIndex := make([]int, len(l.m.Timeline))
	out := l.m.Timeline[:0]
	for i, e := range l.m.Timeline {
		newIndex[i] = -1
		if keep[i] {
			newIndex[i] = len(out)
			out = append(out, e)
		}
	}
	clear(l.m.Timeline[len(out):])
	l.m.Timeline = out
	l.remapStates(newIndex)
}

// sortTimeline orders the timeline oldest first (stable, so one file's lines
// keep their order) and remaps the indexes the model holds into it.
func (l *loader) sortTimeline() {
	m := l.m
	order := make([]int, len(m.Timeline))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return m.Timeline[order[i]].Time.Before(m.Timeline[order[j]].Time) })
	newIndex := make([]int, len(order))
	sorted := make([]model.TimelineEvent, len(order))
	for n, old := range order {
		sorted[n] = m.Timeline[old]
		newIndex[old] = n
	}
	m.Timeline = sorted
	l.remapStates(newIndex)
}

// remapStates moves the timeline indexes of the meta leader states.
func (l *loader) remapStates(newIndex []int) {
	for i := range l.m.MetaLeaderStates {
		if t := l.m.MetaLeaderStates[i].Timeline; t >= 0 && t < len(newIndex) {
			l.m.MetaLeaderStates[i].Timeline = newIndex[t]
		}
	}
}
