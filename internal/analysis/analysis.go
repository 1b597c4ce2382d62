// Package analysis builds the model of a bundle once (servers, stores,
// streams, raft groups, log events, captures), runs the registered checks
// over it, and assembles the report. It is the one place where the parsers
// (storeparse, raftlog, logscan, capture) and the bundle reader meet.
package analysis

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/jetstream"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/diagnosis"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/internal/storecrypt"
	"github.com/jsforensics/jsforensics/report"
)

// Options tunes a run.
type Options struct {
	ToolVersion string
	Limits      bundle.Limits
	Timeline    TimelineOptions
	// Settings override checks' thresholds, by "code.key" (see Check.Settings).
	Settings map[string]float64
	// Only, when set, runs just these checks; Skip leaves these out. Codes
	// are validated against the registered checks.
	Only, Skip []string
	// Progress, when set, is told how far the run has got.
	Progress Progress
	// Keys open stores encrypted at rest: the servers' jetstream `key`,
	// then any `prev_encryption_key`. Never printed nor reported.
	Keys []string
}

// SelectChecks returns the registered checks that only and skip leave,
// in registration order; an unknown code is an error.
func SelectChecks(only, skip []string) ([]check.Check, error) {
	known := map[string]bool{}
	for _, c := range Checks {
		known[c.Code] = true
	}
	for _, code := range append(append([]string(nil), only...), skip...) {
		if !known[code] {
			return nil, fmt.Errorf("no check %q (jsforensics checks lists them)", code)
		}
	}
	var out []check.Check
	for _, c := range Checks {
		if (len(only) == 0 || slices.Contains(only, c.Code)) && !slices.Contains(skip, c.Code) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CheckSettings validates settings against the registered checks.
func CheckSettings(settings map[string]float64) error {
	for k := range settings {
		if _, ok := defaultSettings()[k]; !ok {
			return fmt.Errorf("no check setting %q (jsforensics checks lists them)", k)
		}
	}
	return nil
}

// Run opens the bundle at path read-only, analyzes it and returns the report.
// Problems inside the bundle become findings or notes; an error means the
// bundle could not be read at all.
func Run(path string, opts Options) (*report.Report, error) {
	if err := CheckSettings(opts.Settings); err != nil {
		return nil, err
	}
	checks, err := SelectChecks(opts.Only, opts.Skip)
	if err != nil {
		return nil, err
	}
	var unpacked func(read, size int64)
	if opts.Progress != nil {
		staged := false
		unpacked = func(read, size int64) {
			if !staged {
				opts.Progress.Stage(StageUnpacking, 0, size)
				staged = true
			}
			opts.Progress.Advance(0, read)
		}
	}
	b, err := bundle.OpenWatched(path, opts.Limits, unpacked)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	m := LoadWith(b, opts)
	rep := Build(m, checks, opts.Settings)
	rep.ToolVersion = opts.ToolVersion
	rep.Bundle = path
	return rep, nil
}

// Build runs checks over m and assembles the report.
func Build(m *model.Model, checks []check.Check, settings map[string]float64) *report.Report {
	rep := &report.Report{Schema: report.Schema, Bundle: m.Bundle}
	for _, s := range m.Servers {
		srv := report.Server{Name: s.Name, PeerID: s.PeerID, Cluster: s.Cluster, Version: s.Version, NameSource: s.NameSource}
		srv.Sources = model.SortedKeys(s.Sources)
		rep.Servers = append(rep.Servers, srv)
	}
	for _, g := range m.Groups {
		rg := report.Group{Name: g.Name, Kind: string(g.Kind), Account: g.Account, Asset: g.Asset}
		for _, h := range g.History {
			rg.History = append(rg.History, report.HistoryEvent{Time: h.Time, Term: h.Term, Index: h.Index, Event: h.Event,
				Peer: h.Peer, Peers: h.Peers, Server: m.Name(h.Server), Source: h.Source})
		}
		for _, v := range g.Views {
			rg.Views = append(rg.Views, m.ReportView(v.GroupView))
		}
		rep.Groups = append(rep.Groups, rg)
	}
	for _, st := range m.Streams {
		rs := report.Stream{Account: st.Account, Name: st.Name, Replicas: st.Replicas, Group: st.Group}
		if st.AssignedTo != nil {
			rs.AssignedTo = m.Names(st.AssignedTo)
			sort.Strings(rs.AssignedTo)
		}
		for _, d := range st.Captured {
			rs.Captured = append(rs.Captured, m.ReportOnDisk(d))
		}
		for _, c := range st.Copies {
			rs.OnDisk = append(rs.OnDisk, report.OnDisk{Server: m.Name(c.Server), FirstSeq: c.FirstSeq, LastSeq: c.LastSeq,
				Messages: c.Messages, Bytes: c.Bytes, Deleted: c.Deleted, Path: c.Path, Source: "blocks", Consumers: c.Consumers, Unreadable: c.Unreadable})
			if c.Encrypted {
				rs.OnDisk[len(rs.OnDisk)-1].Source = report.SourceSealed
			}
		}
		rep.Streams = append(rep.Streams, rs)
	}
	rep.Timeline = m.ReportTimeline()
	findings, outcomes := check.Run(m, checks, defaultSettings(), settings)
	remedy.GuardRemedies(m, findings)
	remedy.GuardServerRemovals(m, findings)
	remedy.GuardPartialBundle(m, findings)
	remedy.ResolveRefs(findings)
	for i := range findings {
		if findings[i].Severity == report.Critical && len(findings[i].TimelineRefs) == 0 {
			findings[i].TimelineRefs = relatedEvents(rep.Timeline, findings[i])
		}
	}
	rep.Findings = findings
	rep.Diagnosis = diagnosis.Diagnose(findings)
	rep.Checks = outcomes
	rep.Coverage = bundleCoverage(m, rep.Streams, outcomes)
	rep.Histories = clientHistories(m, outcomes)
	rep.Notes = append(append([]string(nil), m.Notes...), check.OutcomeNotes(outcomes)...)
	rep.Normalize()
	return rep
}

// Load builds the model from an opened bundle. It never fails: what cannot
// be read becomes a corruption or a note.
func Load(b *bundle.Bundle) *model.Model { return LoadWith(b, Options{}) }

// LoadWith is Load with the timeline options of opts: the read phase
// (readRecords) reads the bundle into records, then the steps of assemble
// build the model from them.
func LoadWith(b *bundle.Bundle, opts Options) *model.Model {
	l, restore := newLoader(b, opts)
	defer restore()
	recs := readRecords(b, l.meter)
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
	l = &loader{b: b, m: m, tl: newTimelineSink(m, opts.Timeline), meter: &meter{p: opts.Progress}}
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
	l.step(recs, "setting aside files the archive did not deliver", l.setAsideUndelivered)
	l.step(recs, "reading stream messages in raft WALs", l.walSeqs)
	l.step(recs, "matching Jepsen histories with the stores", l.matchHistories)
	l.step(recs, "ordering", l.finish)
	l.step(recs, "measuring the writes exposed by unclean stops", func() { l.durability(recs.Configs) })
	l.m.Read = readOf(l.b)
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
	b     *bundle.Bundle
	m     *model.Model
	tl    *timelineSink
	meter *meter
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
	l.tl.resolveRefs()
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

// metaKinds are the timeline kinds that tell the meta group's story.
var metaKinds = map[natsfmt.EventKind]bool{
	natsfmt.EventMetaLeader: true, natsfmt.EventMetaLeaderSelf: true, natsfmt.EventNoMetaLeader: true, natsfmt.EventMetaContactLost: true,
	natsfmt.EventMetaBootstrap: true, natsfmt.EventMetaRecover: true, natsfmt.EventPeerAdd: true, natsfmt.EventPeerRemove: true, natsfmt.EventPeersEvicted: true,
	natsfmt.EventQuorumRescue: true, natsfmt.EventHealthcheckFailed: true, natsfmt.EventUncleanStop: true, natsfmt.EventStart: true, natsfmt.EventSnapshotCorrupt: true,
}

// relatedEvents picks the timeline events behind a finding: the meta group's
// elections and membership for meta findings, the stream's own events for
// stream findings, the server's filestore lines for store damage.
func relatedEvents(tl []report.TimelineEvent, f report.Finding) []int {
	var refs []int
	for i, e := range tl {
		match, kind := false, natsfmt.EventKind(e.Kind)
		switch {
		case f.Stream != "":
			match = e.Stream == f.Stream && (f.Account == "" || e.Account == "" || e.Account == f.Account) &&
				(f.Server == "" || e.Server == f.Server || kind == natsfmt.EventStreamLeader)
		case f.Group == natsfmt.MetaGroup:
			match = metaKinds[kind] && (e.Group == "" || e.Group == natsfmt.MetaGroup) && e.Source != "varz"
		case f.Group != "":
			match = e.Group == f.Group
		case f.Server != "":
			match = e.Server == f.Server && (kind == natsfmt.EventFilestoreCorrupt || kind == natsfmt.EventIndexRebuilt || kind == natsfmt.EventBlockMissing || kind == natsfmt.EventUncleanStop)
		}
		if match {
			refs = append(refs, i)
		}
	}
	return refs
}

// Checks is the one registered list. README.md's table of finding codes is
// kept in step with it by TestREADMEListsEveryCheck.
var Checks = []check.Check{
	store.CheckStoreCorrupt,
	store.CheckIndexMismatch,
	peers.CheckPeerIDCorrupt,
	peers.CheckPeerUnknown,
	peers.CheckQuorumUnreachable,
	meta.CheckMetaSplit,
	meta.CheckOrphanRisk,
	replicas.CheckReplicaGap,
	replicas.CheckReplicaDivergence,
	replicas.CheckAckedLost,
	peers.CheckUnsafeMembershipChange,
	meta.CheckMetaNoLeader,
	peers.CheckServerRenamed,
	peers.CheckPeerOffline,
	meta.CheckAssetLost,
	store.CheckDurabilityExposure,
	jetstream.CheckJetStreamDisabled,
	jetstream.CheckStreamWriteError,
}

// defaultSettings are every registered check's settings by "code.key".
func defaultSettings() map[string]float64 { return check.Defaults(Checks) }
