package timeline

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// Options choose what the report's timeline holds.
type Options struct {
	// Full keeps every log event in the report's timeline, instead of
	// collapsing routine repetition into runs. Memory and the report then
	// grow with the logs.
	Full bool
	// Events, when set, receives every log event as it is read, one JSON
	// object (a report.TimelineEvent) a line, file by file.
	Events io.Writer

	// head and tail replace timelineHead and timelineTail when set (tests).
	Head, Tail int
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
var StateKinds = map[string]bool{
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
	if StateKinds[e.Kind] || MetaKinds[natsfmt.EventKind(e.Kind)] {
		return true
	}
	switch level {
	case "WRN", "ERR", "FTL":
		return e.Account != "" || e.Stream != "" || e.Group != ""
	}
	return false
}

// runKey is what the events of one run share (within one file).
type RunKey struct {
	server                       model.ServerID
	kind, group, account, stream string
}

func KeyOf(e *model.TimelineEvent) RunKey {
	return RunKey{e.Server, e.Kind, e.Group, e.Account, e.Stream}
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
type HeadTail[T any] struct {
	Head, Tail int
	first      []T
	ring       []T
	start      int
}

func (w *HeadTail[T]) Push(v T) (out T, dropped bool) {
	if len(w.first) < w.Head {
		w.first = append(w.first, v)
		return out, false
	}
	if len(w.ring) < w.Tail {
		w.ring = append(w.ring, v)
		return out, false
	}
	if w.Tail == 0 {
		return v, true
	}
	out = w.ring[w.start]
	w.ring[w.start] = v
	w.start = (w.start + 1) % w.Tail
	return out, true
}

// appendTo appends the kept values, oldest first, to dst.
func (w *HeadTail[T]) AppendTo(dst []T) []T {
	dst = append(dst, w.first...)
	for i := range w.ring {
		dst = append(dst, w.ring[(w.start+i)%len(w.ring)])
	}
	return dst
}

func (w *HeadTail[T]) reset() {
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
type Sink struct {
	m    *model.Model
	opts Options
	enc  *json.Encoder
	// encErr is the first error writing Events; later events are not written.
	EncErr error

	// Per file, reset by startFile.
	open      map[RunKey]*model.TimelineEvent
	openOrder []RunKey
	kept      HeadTail[model.TimelineEvent]
	folded    map[RunKey]*model.TimelineEvent
	foldOrder []RunKey
	// Counts of the current file for its note.
	events, entries, foldedEntries, foldedEvents int

	refs []logRef
}

func NewSink(m *model.Model, opts Options) *Sink {
	t := &Sink{m: m, opts: opts, open: map[RunKey]*model.TimelineEvent{}, folded: map[RunKey]*model.TimelineEvent{},
		kept: HeadTail[model.TimelineEvent]{Head: timelineHead, Tail: timelineTail}}
	if opts.Head > 0 || opts.Tail > 0 {
		t.kept.Head, t.kept.Tail = opts.Head, opts.Tail
	}
	if opts.Events != nil {
		t.enc = json.NewEncoder(opts.Events)
		t.enc.SetEscapeHTML(false)
	}
	return t
}

// startFile resets the per-file state.
func (t *Sink) StartFile() {
	clear(t.open)
	clear(t.folded)
	t.openOrder, t.foldOrder = t.openOrder[:0], t.foldOrder[:0]
	t.kept.reset()
	t.events, t.entries, t.foldedEntries, t.foldedEvents = 0, 0, 0, 0
}

// add takes one event of the current file.
func (t *Sink) Add(e model.TimelineEvent, level string) {
	t.events++
	if t.enc != nil && t.EncErr == nil {
		// The report's field names (time, server, …) and the server's
		// name as known when the line is read, not the model's fields.
		t.EncErr = t.enc.Encode(report.TimelineEvent{Time: e.Time, Server: t.m.Name(e.Server), Source: e.Source, Kind: e.Kind,
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
	k := KeyOf(&e)
	if r := t.open[k]; r != nil {
		if e.Time.Sub(r.Time) < MaxRunSpan {
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
const MaxRunSpan = time.Hour

// closeRuns places the runs open in the current boot, by their first event.
func (t *Sink) closeRuns() {
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
func (t *Sink) place(e model.TimelineEvent) {
	t.entries++
	if out, dropped := t.kept.Push(e); dropped {
		t.fold(out)
	}
}

// fold adds an entry dropped from the middle of a long file to the run of
// its kind and asset.
func (t *Sink) fold(e model.TimelineEvent) {
	n := max(e.Count, 1)
	t.foldedEntries++
	t.foldedEvents += n
	last := e.Time
	if e.Until != nil {
		last = *e.Until
	}
	k := KeyOf(&e)
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
func (t *Sink) EndFile(file string) string {
	t.closeRuns()
	t.m.Timeline = t.kept.AppendTo(t.m.Timeline)
	for _, k := range t.foldOrder {
		t.m.Timeline = append(t.m.Timeline, oneOrRun(*t.folded[k]))
	}
	if t.foldedEntries == 0 {
		return ""
	}
	return fmt.Sprintf("log %s: %d events make %d timeline entries; the first %d and the last %d are kept, the %d between (%d events) are folded into %d runs, one per kind and asset (--timeline full or --events FILE gives every event)",
		file, t.events, t.entries, t.kept.Head, t.kept.Tail, t.foldedEntries, t.foldedEvents, len(t.foldOrder))
}

// ref records that MetaLeaderStates[state] came from the log line file:line.
func (t *Sink) Ref(state int, file, kind string, line int) {
	t.refs = append(t.refs, logRef{state, file, kind, line})
}

// resolveRefs points the meta leader states read from logs at their entries
// in the final timeline (-1 when the entry was folded or merged away).
func (t *Sink) ResolveRefs() {
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
const MergeWindow = time.Second

// metaKinds are the timeline kinds that tell the meta group's story.
var MetaKinds = map[natsfmt.EventKind]bool{
	natsfmt.EventMetaLeader: true, natsfmt.EventMetaLeaderSelf: true, natsfmt.EventNoMetaLeader: true, natsfmt.EventMetaContactLost: true,
	natsfmt.EventMetaBootstrap: true, natsfmt.EventMetaRecover: true, natsfmt.EventPeerAdd: true, natsfmt.EventPeerRemove: true, natsfmt.EventPeersEvicted: true,
	natsfmt.EventQuorumRescue: true, natsfmt.EventHealthcheckFailed: true, natsfmt.EventUncleanStop: true, natsfmt.EventStart: true, natsfmt.EventSnapshotCorrupt: true,
}
