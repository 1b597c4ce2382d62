package load

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/analysis/timeline"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/logscan"
)

// logs scans every server log into timeline events and the facts the checks
// need: meta leader observations, meta foundings, server identity.
func (l *loader) logs() {
	ordered := orderLogs(l.b.Logs)
	var paths []string
	for _, lg := range ordered {
		paths = append(paths, lg.Path)
	}
	plan := l.meter.Begin(progress.StageLogs, l.b.FS, paths)
	var set, carried string // the rotation set read last, and its server
	for i, lg := range ordered {
		// A rotated set is one log: a file goes on under the name the one
		// before it ended with, so a rename across a rotation is seen.
		if s := rotationSet(lg.Path); s != set {
			set, carried = s, ""
		}
		l.guard("reading log "+lg.Path, func() { carried = l.log(lg, carried) })
		plan.Done(i)
	}
	if l.logLines > 0 {
		l.note("logs: %d files, %d lines, %d classified into events, %d of no kind the catalogue knows (counted, not in the timeline)", len(l.b.Logs), l.logLines, l.logClassified, l.logUnknown)
	}
	if l.tl.EncErr != nil {
		l.note("writing the log events: %v (the export stops there)", l.tl.EncErr)
	}
	l.clockOffsets()
}

// rotationSet names the live log a file is, or is a rotated part of.
func rotationSet(file string) string {
	return path.Join(path.Dir(file), logscan.RotationBase(path.Base(file)))
}

// orderLogs puts each server's rotated files before its current one, so
// their events come out in order.
func orderLogs(in []bundle.Log) []bundle.Log {
	var paths []string
	by := map[string]bundle.Log{}
	for _, lg := range in {
		paths = append(paths, lg.Path)
		by[lg.Path] = lg
	}
	var out []bundle.Log
	for _, p := range logscan.RotationOrder(paths) {
		out = append(out, by[p])
	}
	return out
}

// logServerName picks the server a log belongs to before reading it.
func (l *loader) logServerName(lg bundle.Log) (string, string) {
	if lg.Name != "" {
		return lg.Name, "log"
	}
	if lg.Node != "" {
		if s := l.m.ServerByID(lg.Node); s != nil {
			return s.Name, "log"
		}
	}
	for _, c := range lg.NameCandidates {
		if l.m.Server(c) != nil {
			return c, "folder"
		}
	}
	if lg.Pod != "" {
		return lg.Pod, "log"
	}
	return "", ""
}

// scannedEvent is one event with the name of the server that logged it, as
// known when it was read (name, else the banner's so far), for "Self is new
// … leader".
type scannedEvent struct {
	ev   logscan.Event
	self string
}

// scanBatch is how many events cross from the scanning goroutine at once.
const scanBatch = 512

// scanAhead runs sc in its own goroutine, so reading and classifying lines
// (most of the work) overlaps with folding events into the model on a
// second core. The sequence yields batches in the order read; the scanner's
// Err, Stats and Banner may be read once it is done. A panic in the scanner
// is raised again in the caller, where loader.guard catches it.
func scanAhead(sc *logscan.Scanner, name string) func(yield func([]scannedEvent) bool) {
	return func(yield func([]scannedEvent) bool) {
		full := make(chan []scannedEvent, 4)
		free := make(chan []scannedEvent, 6)
		stop := make(chan struct{})
		var crash any
		go func() {
			defer close(full)
			defer func() { crash = recover() }()
			self := name
			batch := make([]scannedEvent, 0, scanBatch)
			for sc.Next() {
				if self == "" {
					self = sc.Banner().Name
				}
				batch = append(batch, scannedEvent{sc.Event(), self})
				if len(batch) < scanBatch {
					continue
				}
				select {
				case full <- batch:
				case <-stop:
					return
				}
				select {
				case batch = <-free:
					batch = batch[:0]
				default:
					batch = make([]scannedEvent, 0, scanBatch)
				}
			}
			if len(batch) > 0 {
				select {
				case full <- batch:
				case <-stop:
				}
			}
		}()
		defer func() {
			close(stop)
			for range full { // wait for the scanner to be done with sc
			}
			if crash != nil {
				panic(crash)
			}
		}()
		for batch := range full {
			if !yield(batch) {
				return
			}
			clear(batch)
			select {
			case free <- batch:
			default:
			}
		}
	}
}

// logFacts is what one log tells beyond its events.
type logFacts struct {
	bootstrapping bool // a boot logged "JetStream cluster bootstrapping" and no leader yet
	booted        bool // a boot was seen
	stopped       bool // the current boot logged a clean stop
	last          model.TimelineEvent
}

// log reads one log file; carried is the server the previous file of its
// rotation set ended as ("" for none). It returns the server the file ends as.
func (l *loader) log(lg bundle.Log, carried string) string {
	f, err := l.b.OpenLog(lg.Path) // the file the sniff opened
	if err != nil {
		l.note("log %s: %v", lg.Path, err)
		return ""
	}
	defer f.Close()
	if f.Reopened != "" {
		l.note("log %s: %s", lg.Path, f.Reopened)
	}
	var r io.Reader = f
	if lg.Compressed {
		if r, err = logscan.Decompress(f); err != nil {
			l.note("log %s: %v", lg.Path, err)
			return ""
		}
	}
	name, source := l.logServerName(lg)
	if carried != "" {
		name, source = carried, "log"
	}
	sc := logscan.NewScanner(r, logscan.Options{File: lg.Path, Server: name})
	l.tl.StartFile()
	first := len(l.m.Timeline)
	firstState := len(l.m.MetaLeaderStates)
	var facts logFacts
	for batch := range scanAhead(sc, name) {
		for _, se := range batch {
			l.logEvent(se.ev, se.self, &facts)
		}
	}
	if err := sc.Err(); err != nil {
		l.note("log %s: %v", lg.Path, err)
	}
	if n := l.tl.EndFile(lg.Path); n != "" {
		l.note("%s", n)
	}
	st := sc.Stats()
	l.logLines += st.Lines
	l.logClassified += st.Classified
	l.logUnknown += st.Unknown
	if st.TooLong > 0 || st.Binary > 0 || st.BadUTF8 > 0 {
		l.note("log %s: %d lines too long, %d binary, %d not UTF-8 (counted, skipped)", lg.Path, st.TooLong, st.Binary, st.BadUTF8)
	}
	bn := sc.Banner()
	if name == "" {
		name, source = bn.Name, "log"
	}
	if name == "" {
		n := 1
		for l.m.Server(fmt.Sprintf("unnamed-%d", n)) != nil {
			n++
		}
		name, source = fmt.Sprintf("unnamed-%d", n), "unknown"
		l.note("log %s: server name not established (no banner, no matching folder); called %s here", lg.Path, name)
	}
	// Events scanned before the name was known get it now.
	id := l.m.IDOf(name)
	for i := first; i < len(l.m.Timeline); i++ {
		if l.m.Timeline[i].Server == "" {
			l.m.Timeline[i].Server = id
		}
	}
	for i := firstState; i < len(l.m.MetaLeaderStates); i++ {
		if l.m.MetaLeaderStates[i].Server == "" {
			l.m.MetaLeaderStates[i].Server = id
		}
	}
	for i := range l.m.MetaFoundings {
		if l.m.MetaFoundings[i].Server == "" {
			l.m.MetaFoundings[i].Server = id
		}
	}
	l.endLogHistory(lg.Path, name)
	renamed := bn.Name != "" && bn.Name != name && source != "unknown"
	if renamed {
		l.renamedInLog(lg.Path, name, sc.Boots())
		name = bn.Name
	}
	srv := l.addServer(name, source)
	srv.Sources["log"] = true
	if source != "unknown" {
		l.keepStoreDirs(lg.Path, srv.ID, sc.Boots())
	}
	if st.Lines > 0 {
		srv.Alive = true
	}
	for _, b := range sc.Boots() {
		if b.Version != "" {
			srv.Version = b.Version
		}
		if b.Cluster != "" {
			srv.Cluster = b.Cluster
		}
		// A JetStream start prints "Domain:" only when one is set
		// (server.go logJetStreamConfig); the newest boot tells.
		if b.StoreDir != "" && (srv.DomainFrom == "" || srv.DomainFrom == "log") {
			srv.Domain, srv.DomainFrom = b.Domain, "log"
		}
		if b.Name != "" && b.Name != name && !renamed {
			l.note("log %s: a boot at line %d names the server %q, not %q (renamed server?)", lg.Path, b.Line, b.Name, name)
		}
		if b.Node != "" && b.Name != "" && b.Node != model.PeerID(b.Name) {
			l.note("log %s line %d: node id %s does not match name %q", lg.Path, b.Line, b.Node, b.Name)
		}
	}
	if source == "unknown" {
		return ""
	}
	return name
}

// logEvent folds one classified line into the timeline and the facts.
func (l *loader) logEvent(ev logscan.Event, self string, facts *logFacts) {
	if !ev.HasTime {
		return
	}
	server := ev.Server
	if server == "" {
		server = self
	}
	te := model.TimelineEvent{Time: ev.Time, Server: l.m.IDOf(server), Source: "log", Kind: ev.Kind, Group: ev.Group,
		Account: ev.Account, Stream: ev.Stream, Text: ev.Text, File: ev.File, Line: ev.Line}
	l.tl.Add(te, ev.Level)

	switch natsfmt.EventKind(ev.Kind) {
	case natsfmt.EventRestoredStream, natsfmt.EventRestoringStream, natsfmt.EventStreamLeader:
		if ev.Stream != "" {
			if l.m.LogStreams == nil {
				l.m.LogStreams = map[model.ServerID]map[model.AssetKey]model.LogStream{}
			}
			if l.m.LogStreams[te.Server] == nil {
				l.m.LogStreams[te.Server] = map[model.AssetKey]model.LogStream{}
			}
			ls := model.LogStream{TimelineEvent: te}
			if n, ok := ev.Count("msgs"); ok && ev.Kind == string(natsfmt.EventRestoredStream) {
				ls.Restored = &n
			}
			l.m.LogStreams[te.Server][model.AssetKey{Account: ev.Account, Stream: ev.Stream}] = ls
		}
	}
	leader, isLeaderEvent := "", false
	defer func() { facts.last = te }()
	switch natsfmt.EventKind(ev.Kind) {
	case natsfmt.EventStart:
		// A boot with no clean stop logged before it: the previous process
		// was killed or crashed after its last line.
		if facts.booted && !facts.stopped && !facts.last.Time.IsZero() {
			l.tl.Add(model.TimelineEvent{Time: facts.last.Time, Server: l.m.IDOf(server), Source: "log", Kind: string(natsfmt.EventUncleanStop),
				Text: fmt.Sprintf("no clean shutdown logged before the restart at line %d: the process was killed or crashed after this time (last line %d)", ev.Line, facts.last.Line),
				File: ev.File, Line: facts.last.Line}, "")
		}
		facts.booted, facts.stopped = true, false
		facts.bootstrapping = false
	case natsfmt.EventStop:
		facts.stopped = true
	case natsfmt.EventMetaBootstrap:
		facts.bootstrapping = true
	case natsfmt.EventMetaLeaderSelf:
		leader, isLeaderEvent = server, true
	case natsfmt.EventMetaLeader:
		leader, isLeaderEvent = ev.Leader, true
		if i := strings.IndexByte(leader, '/'); i >= 0 {
			leader = leader[:i]
		}
		if leader == "" {
			leader = "(remote)"
		}
	case natsfmt.EventNoMetaLeader, natsfmt.EventMetaContactLost:
		isLeaderEvent = true
	case natsfmt.EventHealthcheckFailed:
		isLeaderEvent = strings.Contains(ev.Text, "meta leader")
	case natsfmt.EventPeerAdd, natsfmt.EventPeerRemove:
		if ev.Group != "" && ev.Peer != "" {
			t := ev.Time
			kind := "add-peer"
			if ev.Kind == string(natsfmt.EventPeerRemove) {
				kind = "remove-peer"
			}
			l.logHistory(ev.Group, model.HistoryEvent{Time: &t, Event: kind, Peer: ev.Peer, Server: l.m.IDOf(server), Source: "log"})
		}
	case natsfmt.EventLeaderSwitch, natsfmt.EventTerm, natsfmt.EventVote:
		if ev.Group != "" && ev.Term > 0 {
			t := ev.Time
			l.logHistory(ev.Group, model.HistoryEvent{Time: &t, Term: ev.Term, Event: "term", Peer: ev.Peer, Server: l.m.IDOf(server), Source: "log"})
		}
	}
	if !isLeaderEvent {
		return
	}
	l.m.MetaLeaderStates = append(l.m.MetaLeaderStates, model.MetaLeaderState{Time: ev.Time, Server: l.m.IDOf(server), Leader: leader, Source: "log", Timeline: -1})
	l.tl.Ref(len(l.m.MetaLeaderStates)-1, ev.File, ev.Kind, ev.Line)
	if leader != "" {
		t := ev.Time
		l.logHistory(natsfmt.MetaGroup, model.HistoryEvent{Time: &t, Event: "leader", Peer: leaderID(leader), Server: l.m.IDOf(server), Source: "log"})
		if facts.bootstrapping {
			l.m.MetaFoundings = append(l.m.MetaFoundings, model.MetaFounding{Time: ev.Time, Server: l.m.IDOf(server), Leader: leader, Source: "log"})
			facts.bootstrapping = false
		}
	}
}

// Bounds of the group history one log file gives each group: the first
// historyHead and the last historyTail events (elections and membership),
// so a long log's history stays readable and its memory bounded.
const (
	historyHead = 1000
	historyTail = 1000
)

// logHistory adds a group history event read from the current log.
func (l *loader) logHistory(group string, e model.HistoryEvent) {
	if l.history == nil {
		l.history = map[string]*logGroupHistory{}
	}
	h := l.history[group]
	if h == nil {
		h = &logGroupHistory{kept: timeline.HeadTail[model.HistoryEvent]{Head: historyHead, Tail: historyTail}}
		l.history[group] = h
		l.historyOrder = append(l.historyOrder, group)
	}
	if _, dropped := h.kept.Push(e); dropped {
		h.dropped++
	}
}

// logGroupHistory is what one log file gives one group's history.
type logGroupHistory struct {
	kept    timeline.HeadTail[model.HistoryEvent]
	dropped int
}

// endLogHistory adds the current log's group history to the groups, naming
// the server in events read before its name was known.
func (l *loader) endLogHistory(file, server string) {
	var left []string
	for _, name := range l.historyOrder {
		h := l.history[name]
		g := l.group(name)
		from := len(g.History)
		g.History = h.kept.AppendTo(g.History)
		for i := from; i < len(g.History); i++ {
			if g.History[i].Server == "" {
				g.History[i].Server = l.m.IDOf(server)
			}
		}
		if h.dropped > 0 {
			left = append(left, fmt.Sprintf("%s %d", name, h.dropped))
		}
	}
	if len(left) > 0 {
		l.note("log %s: group history keeps the first %d and the last %d events per group; left out between them: %s (--events FILE gives every log event)", file, historyHead, historyTail, strings.Join(left, ", "))
	}
	clear(l.history)
	l.historyOrder = l.historyOrder[:0]
}

// leaderID is the peer id of a leader named in a log line.
func leaderID(name string) string {
	if name == "" || strings.HasPrefix(name, "(") {
		return ""
	}
	return model.PeerID(name)
}

// maxElectionSpread is how far apart two servers' lines about one election
// can be and still be taken for the same election: well under the 4 s minimum
// election timeout, so a later election is not mistaken for it.
const maxElectionSpread = 2 * time.Second

// clockOffsets estimates each server's clock offset against the first
// server, from the meta leader elections that several servers log: every
// server logs the same election within milliseconds.
func (l *loader) clockOffsets() {
	type obs struct {
		t      time.Time
		leader string
	}
	by := map[string][]obs{}
	for _, s := range l.m.MetaLeaderStates {
		if s.Source == "log" && s.Leader != "" {
			by[l.m.Name(s.Server)] = append(by[l.m.Name(s.Server)], obs{s.Time, s.Leader})
		}
	}
	servers := model.SortedKeys(by)
	if len(servers) < 2 {
		return
	}
	for _, s := range servers {
		o := by[s]
		sort.SliceStable(o, func(i, j int) bool { return o[i].t.Before(o[j].t) })
	}
	ref := servers[0]
	var parts []string
	for _, s := range servers[1:] {
		var diffs []time.Duration
		other := by[s]
		for _, a := range by[ref] {
			// Only the other server's elections within maxElectionSpread
			// can match: a binary search finds the first of them.
			best := time.Duration(-1)
			var bd time.Duration
			from := a.t.Add(-maxElectionSpread)
			for _, b := range other[sort.Search(len(other), func(i int) bool { return !other[i].t.Before(from) }):] {
				d := b.t.Sub(a.t)
				if d > maxElectionSpread {
					break
				}
				if b.leader != a.leader {
					continue
				}
				ad := d
				if ad < 0 {
					ad = -ad
				}
				if best < 0 || ad < best {
					best, bd = ad, d
				}
			}
			if best >= 0 {
				diffs = append(diffs, bd)
			}
		}
		if len(diffs) == 0 {
			continue
		}
		sort.Slice(diffs, func(i, j int) bool { return diffs[i] < diffs[j] })
		parts = append(parts, fmt.Sprintf("%s %+.3fs (%d shared elections)", s, diffs[len(diffs)/2].Seconds(), len(diffs)))
	}
	if len(parts) > 0 {
		l.note("clock offsets estimated from meta leader elections logged by several servers, relative to %s: %s; log times are read as UTC unless the line carries a zone", ref, strings.Join(parts, ", "))
	}
}
