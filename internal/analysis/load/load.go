package load

import (
	"fmt"
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/analysis/timeline"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/internal/storecrypt"
	"github.com/jsforensics/jsforensics/report"
)

// Options tunes a load: the timeline's options, the progress to tell,
// and the keys of stores encrypted at rest.
type Options struct {
	Timeline timeline.Options
	Progress progress.Progress
	Keys     []string
	// LooseAudit makes the loose captures of a bundle without a gather
	// archive a model.Gather (Loose) for natscli's checks.
	LooseAudit bool
}

// loadModel builds the model from an opened bundle: the read phase
// (readRecords) reads the bundle into records, then the steps of assemble
// build the model from them. It never fails: what cannot be read becomes a
// corruption or a note.
func Model(b *bundle.Bundle, opts Options) *model.Model {
	return ModelPhased(b, opts, nil)
}

// loadModelPhased is loadModel calling between, when not nil, once the read
// phase is over and before assembling: what assembling reads of the bundle
// after that is the logs alone (TestAssembleDoesNoIO closes the rest).
func ModelPhased(b *bundle.Bundle, opts Options, between func()) *model.Model {
	l, restore := newLoader(b, opts)
	defer restore()
	recs := readRecords(b, l.meter)
	if between != nil {
		between()
	}
	l.assemble(recs)
	return l.m
}

// newLoader starts the load of b: a model holding the bundle reader's
// problems and notes, and, with keys, the bundle's stores behind the
// storecrypt view until restore.
func newLoader(b *bundle.Bundle, opts Options) (l *loader, restore func()) {
	m := &model.Model{Bundle: b.Path, IDs: map[string]string{}}
	for _, p := range b.Problems {
		m.Notes = append(m.Notes, "bundle: "+p.String())
	}
	for _, n := range b.Notes {
		m.Notes = append(m.Notes, "bundle: "+n)
	}
	l = &loader{b: b, m: m, tl: timeline.NewSink(m, opts.Timeline), meter: &progress.Meter{P: opts.Progress}, looseAudit: opts.LooseAudit}
	restore = func() {}
	if len(opts.Keys) > 0 {
		restore = l.unseal(opts.Keys)
	}
	return l, restore
}

// assemble builds the model from the records of the read phase; it opens
// nothing through the bundle FS (TestAssembleDoesNoIO) and reads only the
// logs, scanned as a stream into the timeline from the files the sniff
// holds (Bundle.OpenLog), and, for a stream whose copies were not read
// together, their blocks again (readAgain). Each
// step takes its records as arguments; the naming steps return the names
// they give, applied once (applyNames). What a step takes of the model
// that earlier steps built is still what orders them: stores name the
// servers every later step attributes to; the comparison takes the
// copies; captures and logs name by the servers known so far; raft needs
// the stores' servers and names peers by the ids captures and logs gave;
// naming needs the meta state, the logs' Store Directory lines and the
// raftz figures; setting aside needs every corruption and the archive
// damage known once the logs are read; walSeqs and matchHistories need
// the streams' groups; durability needs the servers named and the model
// finished.
func (l *loader) assemble(recs *Records) {
	l.step(recs, "reading ack logs", func() { l.ackLogs(recs.AckLogs) })
	l.step(recs, "reading stores", func() { l.stores(recs.Copies, recs.Raft) })
	l.step(recs, "setting aside stream copies the archive delivered in part", l.setAsidePartialCopies)
	l.step(recs, "comparing replicas", l.compareReplicas)
	l.step(recs, "reading captures", func() { l.captures(recs.Audits) })
	l.step(recs, "reading logs", l.logs)
	l.step(recs, "keeping the last sequence a stale index.db remembers", l.priorLastSeqs) // needs the versions the captures and logs give
	l.step(recs, "reading raft state", func() { l.raft(recs.WALs) })
	l.step(recs, "naming stores", func() { l.applyNames(l.unnamedStoreNames()) })
	l.step(recs, "naming servers known by node id", func() { l.applyNames(l.placeholderNames()) })
	l.step(recs, "naming stores by Store Directory lines and raftz figures", l.nameStoresByEvidence)
	l.step(recs, "opening encrypted stores", func() { l.keyNotes(recs.KeyFiles) })
	l.step(recs, "reading account JWTs", func() { l.accounts(recs.JWTs) }) // needs the servers named (folderServer)
	l.step(recs, "setting aside files the archive did not deliver", l.setAsideUndelivered)
	l.step(recs, "reading stream messages in raft WALs", l.walSeqs)
	l.step(recs, "matching Jepsen histories with the stores", l.matchHistories)
	l.step(recs, "ordering", l.finish)
	l.step(recs, "measuring the writes exposed by unclean stops", func() { l.durability(recs.Configs) })
	l.m.Read = readOf(l.b)
	l.m.Read.Unread = append(l.m.Read.Unread, l.jwtUnread...)
}

// step runs one step of assembling, after saying that the read of its
// records was stopped by an internal error, if it was.
func (l *loader) step(recs *Records, what string, f func()) {
	if crash := recs.crashes[what]; crash != nil {
		l.note("%s", crashNote(what, crash))
	}
	l.guard(what, f)
}

// guard runs one step of loading; a bug that panics on some input costs
// that step (said in the notes), not the whole report.
func (l *loader) guard(what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			l.note("%s stopped by an internal error, the rest of the analysis went on: %v", what, r)
		}
	}()
	f()
}

// loader carries the state of one Load.
type loader struct {
	b *bundle.Bundle
	m *model.Model
	// compare is what the replica comparison needs of each stream copy
	// until it has run (keepForComparison): kept here, not in the model.
	compare map[*model.StreamCopy]*compareCopy
	// owners indexes folders by the servers whose store or log they hold,
	// for captures that name no server (folderOwners); ownersOf is how many
	// servers were known when it was made.
	owners   map[string]map[string]bool
	ownersOf int
	// jwtUnread are the files that look like a JWT and do not decode.
	jwtUnread []report.UnreadFile
	tl        *timeline.Sink
	meter     *progress.Meter
	// looseAudit is Options.LooseAudit.
	looseAudit bool
	// history holds the group history of the log being read.
	history      map[string]*logGroupHistory
	historyOrder []string
	// serverIDs maps server ids (NKeys) to names, from named captures.
	serverIDs map[string]string
	// nodeNameIndex maps raft node ids to server names (nodeNames).
	nodeNameIndex map[string]string
	// streamIndex and groupIndex find the model's streams and groups (all
	// made by streamEntry and group).
	streamIndex map[model.AssetKey]*model.Stream
	groupIndex  map[string]*model.Group
	// copiesRead counts the stream copies read (StreamCopy.read).
	copiesRead int
	// Log line counts over all logs.
	logLines, logClassified, logUnknown int
	// raftRecs are the raft group folders of each store as read, by store
	// folder (raftReads).
	raftRecs map[string][]*raftRead
	// raftByGroup indexes raftRecs: store folder, then group name, the
	// first read of that name (raftReadOf).
	raftByGroup map[string]map[string]*raftRead
	// crypt is the view opening encrypted stores (Options.Keys), nil without keys.
	crypt *storecrypt.FS
	// walMessages: per stream group and server, the sequences of the
	// stream messages its WAL still holds (keepWALMessages).
	walMessages map[string]map[model.ServerID][]report.Range
	walPending  map[string]map[model.ServerID][]report.Range // past the snapshot (keepWALMessages)
	// histValues: the values the Jepsen histories published, looked for
	// by the store scan; payloadHits what it found per copy (load_acklog.go).
	histValues map[string]bool
	// walValues: per stream group and server, the WAL messages holding one
	// of histValues, kept by the raft loader's one pass (keepWALMessages).
	walValues   map[string]map[model.ServerID][]walValue
	payloadHits map[*model.StreamCopy]payloadHits
	// storeDirs and raftzFigs: the logs' Store Directory lines and the
	// raftz captures' group figures, kept to name stores (name_evidence.go).
	storeDirs []logStoreDir
	raftzFigs []raftzFigure
}

// addServer returns the server named name, creating it.
func (l *loader) addServer(name, nameSource string) *model.Server {
	if s := l.m.Server(name); s != nil {
		if s.NameSource == "unknown" || s.NameSource == "" {
			s.NameSource = nameSource
		}
		return s
	}
	s := &model.Server{ID: l.m.NewID(name), Name: name, NameSource: nameSource, Sources: map[string]bool{}}
	if nameSource != "unknown" {
		s.PeerID = model.PeerID(name)
		l.knowName(name)
	}
	l.m.Servers = append(l.m.Servers, s)
	return s
}

// knowName records that a server name exists, so its peer id maps to it.
func (l *loader) knowName(name string) {
	if name == "" {
		return
	}
	id := model.PeerID(name)
	if _, ok := l.m.IDs[id]; !ok {
		l.m.IDs[id] = name
	}
}

func (l *loader) note(format string, args ...any) {
	l.m.Notes = append(l.m.Notes, fmt.Sprintf(format, args...))
}

// finish sorts everything into a stable order.
func (l *loader) finish() {
	m := l.m
	if b := l.b; len(b.Stores) == 0 && len(b.Logs) == 0 && len(b.Captures) == 0 && len(b.AckLogs) == 0 {
		// Silence would read as a healthy bundle (coverage makes it unknown).
		l.note("bundle %s: no store, log, capture or ack log found in it by content: nothing to analyze (is it the right folder or archive?)", b.Path)
	}
	for _, s := range m.Servers {
		if s.NameSource != "unknown" {
			l.knowName(s.Name)
		}
	}
	sort.SliceStable(m.Servers, func(i, j int) bool { return m.Servers[i].Name < m.Servers[j].Name })
	sort.SliceStable(m.Streams, func(i, j int) bool {
		a, b := m.Streams[i], m.Streams[j]
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		return a.Name < b.Name
	})
	for _, st := range m.Streams {
		sort.SliceStable(st.Copies, func(i, j int) bool { return m.Name(st.Copies[i].Server) < m.Name(st.Copies[j].Server) })
		sort.SliceStable(st.Captured, func(i, j int) bool { return m.Name(st.Captured[i].Server) < m.Name(st.Captured[j].Server) })
	}
	sort.SliceStable(m.Groups, func(i, j int) bool {
		a, b := m.Groups[i], m.Groups[j]
		if (a.Kind == natsfmt.GroupMeta) != (b.Kind == natsfmt.GroupMeta) {
			return a.Kind == natsfmt.GroupMeta
		}
		return a.Name < b.Name
	})
	for _, g := range m.Groups {
		g.History = orderHistory(g.History)
	}
	l.sortTimeline()
	l.dedupeTimeline()
	l.tl.ResolveRefs()
	m.StreamsByKey = make(map[model.AssetKey]*model.Stream, len(m.Streams))
	for _, st := range m.Streams {
		if _, dup := m.StreamsByKey[model.AssetKey{Account: st.Account, Stream: st.Name}]; !dup {
			m.StreamsByKey[model.AssetKey{Account: st.Account, Stream: st.Name}] = st
		}
	}
}

// orderHistory sorts a group's history oldest first and keeps one copy of an
// entry that several servers' WALs hold (the first server's). Undated events
// (a snapshot's peer state) take the time of the first dated event at or
// after their raft index, so they sit where the log puts them.
func orderHistory(in []model.HistoryEvent) []model.HistoryEvent {
	type keyed struct {
		e model.HistoryEvent
		t time.Time
	}
	seen := map[string]bool{}
	var ks []keyed
	for _, e := range in {
		if e.Index > 0 {
			k := fmt.Sprintf("%s|%d|%d|%s|%s|%v", e.Event, e.Term, e.Index, e.Peer, e.Source, e.Peers)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		var t time.Time
		if e.Time != nil {
			t = *e.Time
		}
		ks = append(ks, keyed{e, t})
	}
	for i := range ks {
		if !ks[i].t.IsZero() || ks[i].e.Index == 0 {
			continue
		}
		for _, o := range ks {
			if !o.t.IsZero() && o.e.Index >= ks[i].e.Index && (ks[i].t.IsZero() || o.t.Before(ks[i].t)) {
				ks[i].t = o.t
			}
		}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if !ks[i].t.Equal(ks[j].t) {
			return ks[i].t.Before(ks[j].t)
		}
		return ks[i].e.Index < ks[j].e.Index
	})
	out := make([]model.HistoryEvent, len(ks))
	for i, k := range ks {
		out[i] = k.e
	}
	return out
}

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
		for len(win) > 0 && e.Time.Sub(win[0].t) >= timeline.MergeWindow {
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
