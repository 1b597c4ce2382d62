package groups

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// A stream or consumer group makes no progress when a quorum of its peers
// runs and none leads, or when members stay behind. The case the field
// reports most: every replica of a stream lost the same tail (a power loss)
// while its raft snapshot records the longer stream. At the start each
// replica restores its blocks, then the snapshot, finds it past what it
// holds and waits for a catch-up from a leader; no replica can lead while
// it catches up, so none ever does: every 5 s "Error applying (stream)
// entries to '<a> > <s>': catchup aborted, no leader for stream '<a> >
// <s>'" (jetstream_cluster.go errCatchupAbortedNoLeader, then
// DrainAndReplaySnapshot), /healthz "stream catching up", publishes get no
// responders. Seen on 2.12.15, 2.14.10 and 2.15.3 (the ahead family) and
// 2.11.17 and 2.15.2 (acked-lost). Moving the group's raft folder aside on
// every server let the group start from the blocks and elect a leader on
// those three releases (remedy group-stalled-move-aside).
//
// Members not current with a leader present: "Falling behind in health
// check, commit N != applied M" (raft.go) with no "Health check OK" after
// it, "Catchup for stream '<a> > <s>' stalled", or "Resetting stream
// cluster state" again and again in one run.

// resetLoop is how many stream resets in one run of a server make a loop.
const resetLoop = 3

var CheckGroupStalled = check.Check{
	Code:        string(report.CodeGroupStalled),
	Severity:    report.Critical,
	Description: "a stream or consumer group with a quorum of its peers present and still no leader (its servers' /raftz, their logs: \"catchup aborted, no leader for stream\"), or whose members are not current (\"Falling behind in health check, commit N != applied M\", a catch-up stalled, reset loops); why (every replica's blocks behind its own raft snapshot: none can serve the catch-up the others wait for) and what brings it back",
	Skip: func(p *check.Pass) string {
		for _, g := range p.Model.Groups {
			if g.Kind == natsfmt.GroupStream || g.Kind == natsfmt.GroupConsumer {
				return ""
			}
		}
		for _, s := range p.Model.Servers {
			if s.Sources["log"] {
				return ""
			}
		}
		return "no stream or consumer raft group and no server log in the bundle"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		logs := lastRunEvents(m)
		var out []report.Finding
		for _, g := range m.Groups {
			if g.Kind != natsfmt.GroupStream && g.Kind != natsfmt.GroupConsumer {
				continue
			}
			if f, ok := stalled(m, g, logs); ok {
				out = append(out, f)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Group < out[j].Group })
		return out
	},
}

// runEvents are the log events since each server's last start that name
// a group, or a stream (a health check line by the stream it quotes), as
// timeline indexes in order: by "g:<group>" or "s:<account> > <stream>",
// then server name. One pass over the timeline for every group.
type runEvents map[string]map[string][]int

func lastRunEvents(m *model.Model) runEvents {
	out := runEvents{}
	started := map[string]int{} // server -> index of its last start
	for i, e := range m.Timeline {
		if e.Source == "log" && e.Kind == string(natsfmt.EventStart) {
			started[m.Name(e.Server)] = i
		}
	}
	add := func(key, server string, i int) {
		if out[key] == nil {
			out[key] = map[string][]int{}
		}
		out[key][server] = append(out[key][server], i)
	}
	for i, e := range m.Timeline {
		if e.Source != "log" {
			continue
		}
		n := m.Name(e.Server)
		if s, ok := started[n]; ok && i < s {
			continue
		}
		if e.Group != "" {
			add("g:"+e.Group, n, i)
		}
		if e.Stream != "" {
			add("s:"+e.Account+" > "+e.Stream, n, i)
		} else if e.Kind == "healthcheck-failed" {
			if a, _, ok := strings.Cut(strings.TrimPrefix(e.Text, `Healthcheck failed: "JetStream stream '`), "' is not current"); ok && a != e.Text {
				add("s:"+a, n, i)
			}
		}
	}
	return out
}

// of are the events of g or its stream st since each server's last start,
// by server, in timeline order.
func (r runEvents) of(g *model.Group, st *model.Stream) map[string][]int {
	out := map[string][]int{}
	for n, idx := range r["g:"+g.Name] {
		out[n] = append(out[n], idx...)
	}
	if st != nil {
		for n, idx := range r["s:"+st.Account+" > "+st.Name] {
			out[n] = append(out[n], idx...)
			sort.Ints(out[n])
			out[n] = slicesCompact(out[n])
		}
	}
	return out
}

func slicesCompact(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// groupStream is the stream of a stream group, nil for another group.
func groupStream(m *model.Model, g *model.Group) *model.Stream {
	if g.Kind != natsfmt.GroupStream {
		return nil
	}
	for _, st := range m.Streams {
		if st.Group == g.Name {
			return st
		}
	}
	if g.Asset != "" {
		return m.Stream(g.Account, g.Asset)
	}
	return nil
}

// raftzViews are the newest /raftz view of g per server.
func raftzViews(g *model.Group) map[model.ServerID]model.View {
	out := map[model.ServerID]model.View{}
	for _, v := range g.Views {
		if v.Source != "raftz" {
			continue
		}
		if o, ok := out[v.Server]; ok && o.Time != nil && v.Time != nil && o.Time.After(*v.Time) {
			continue
		}
		out[v.Server] = v
	}
	return out
}

// behindSnapshot is the stores' why: per replica, what its blocks (and
// WAL) hold against what its own snapshot of the group records.
type behindSnapshot struct {
	lines      []string
	held, snap uint64 // the most any replica holds, the most a snapshot records
	all        bool   // every replica with a snapshot is behind it, and none holds what any records
	replicas   int
}

func snapshotsAhead(m *model.Model, g *model.Group, st *model.Stream) behindSnapshot {
	var b behindSnapshot
	if st == nil {
		return b
	}
	copyOf := map[string]*model.StreamCopy{}
	for _, c := range st.Copies {
		copyOf[m.Name(c.Server)] = c
	}
	behind := 0
	for _, r := range m.RaftRecords {
		if r.Group != g.Name || r.Snapshot == nil || r.Snapshot.Stream == nil {
			continue
		}
		n := m.Name(r.Server)
		c := copyOf[n]
		if c == nil {
			continue
		}
		b.replicas++
		held, from := c.LastSeq, "its blocks"
		// A current index.db is trusted; a stale one's last sequence is
		// kept by the releases that keep it (2.11.4+: acked-lost-v2.11.17
		// elected a leader at 240 over blocks ending at 210).
		keeps, _ := releases.KeepsPriorLastSeqOf(model.ServerVersion(m, c.Server), max(st.Replicas, 1))
		if c.Index != nil && (!c.Index.Stale || keeps) && c.Index.LastSeq > held {
			held, from = c.Index.LastSeq, "its index.db"
		}
		for _, rg := range st.WALPending[c.Server] {
			if rg.Last > held {
				held, from = rg.Last, "its raft WAL past the snapshot"
			}
		}
		b.held, b.snap = max(b.held, held), max(b.snap, r.Snapshot.Stream.LastSeq)
		if r.Snapshot.Stream.LastSeq > held {
			behind++
			b.lines = append(b.lines, fmt.Sprintf("%s: its copy holds up to sequence %d (%s), its snapshot of the group %s records the stream up to %d (%d messages)",
				n, held, from, r.Snapshot.File, r.Snapshot.Stream.LastSeq, r.Snapshot.Stream.Msgs))
		}
	}
	b.all = b.replicas > 0 && behind == b.replicas && b.held < b.snap
	return b
}

func stalled(m *model.Model, g *model.Group, logs runEvents) (report.Finding, bool) {
	st := groupStream(m, g)
	f := report.Finding{Group: g.Name, Account: g.Account}
	asset := g.Asset
	if st != nil {
		f.Account, f.Stream, asset = st.Account, st.Name, st.Name
	} else if s, c, ok := strings.Cut(g.Asset, " > "); ok {
		f.Stream, f.Consumer = s, c
	}
	what := "stream"
	if g.Kind == natsfmt.GroupConsumer {
		what = "consumer"
	}
	size := 0
	if st != nil {
		size = max(st.Replicas, len(st.AssignedTo))
	}
	// The captures: who answered for the group, and whether any names a leader.
	views := raftzViews(g)
	noLeader, answered := true, 0
	var capLines []string
	for _, id := range model.ServersOf(m, views) {
		v := views[id]
		answered++
		size = max(size, v.ClusterSize)
		if v.Leader != "" {
			noLeader = false
		}
		leader := "no leader"
		if v.Leader != "" {
			leader = "leader " + v.Leader
			if n, ok := m.IDs[v.Leader]; ok {
				leader = "leader " + n
			}
		}
		capLines = append(capLines, fmt.Sprintf("/raftz of %s: group %s size %d, %s, term %d, applied %d of %d committed", m.Name(id), g.Name, v.ClusterSize, leader, v.Term, v.Applied, v.Commit))
	}
	quorum := natsfmt.Quorum(size)
	// The logs: since each server's last start.
	type runFacts struct {
		aborted, notCurrent, resets, stalledCatchup []int
		fallingBehind                               int // index of the last "Falling behind" with no "Health check OK" after it, -1 none
		led                                         bool
	}
	byServer := map[string]*runFacts{}
	for n, idx := range logs.of(g, st) {
		rf := &runFacts{fallingBehind: -1}
		for _, i := range idx {
			e := m.Timeline[i]
			switch {
			case e.Kind == "stream-apply-error" && strings.Contains(e.Text, "catchup aborted, no leader"):
				rf.aborted = append(rf.aborted, i)
			case e.Kind == "healthcheck-failed":
				rf.notCurrent = append(rf.notCurrent, i)
			case e.Kind == "stream-reset" && g.Kind == natsfmt.GroupStream:
				rf.resets = append(rf.resets, i)
			case e.Kind == "catchup-stalled":
				rf.stalledCatchup = append(rf.stalledCatchup, i)
			case e.Kind == "catchup":
				rf.stalledCatchup = nil
			case e.Kind == "raft-falling-behind":
				rf.fallingBehind = i
			case e.Kind == "raft-caught-up":
				rf.fallingBehind = -1
			case e.Kind == "stream-leader" || e.Kind == "consumer-leader":
				rf.led = true
				rf.aborted = nil
			}
		}
		byServer[n] = rf
	}
	abortedOn, behindOn := []string{}, []string{}
	var refs []int
	var logLines []string
	line := func(i int, n int) string {
		e := m.Timeline[i]
		s := fmt.Sprintf("%s line %d (%s): %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), e.Text)
		if n > 1 {
			s += fmt.Sprintf(" (%d such lines since its last start)", n)
		}
		return s
	}
	for _, n := range model.SortedKeys(byServer) {
		rf := byServer[n]
		if len(rf.aborted) >= 2 {
			abortedOn = append(abortedOn, n)
			refs = append(refs, rf.aborted[len(rf.aborted)-1])
			logLines = append(logLines, line(rf.aborted[len(rf.aborted)-1], len(rf.aborted)))
			if len(rf.notCurrent) > 0 {
				logLines = append(logLines, line(rf.notCurrent[len(rf.notCurrent)-1], len(rf.notCurrent)))
			}
		}
		if rf.fallingBehind >= 0 || len(rf.stalledCatchup) > 0 || len(rf.resets) >= resetLoop {
			behindOn = append(behindOn, n)
			for _, i := range []int{rf.fallingBehind} {
				if i >= 0 {
					refs = append(refs, i)
					logLines = append(logLines, line(i, 1))
				}
			}
			if k := len(rf.stalledCatchup); k > 0 {
				refs = append(refs, rf.stalledCatchup[k-1])
				logLines = append(logLines, line(rf.stalledCatchup[k-1], k))
			}
			if k := len(rf.resets); k >= resetLoop {
				refs = append(refs, rf.resets[k-1])
				logLines = append(logLines, line(rf.resets[k-1], k))
			}
		}
	}
	why := snapshotsAhead(m, g, st)
	byCaptures := answered > 0 && answered >= quorum && noLeader
	byLogs := size > 0 && len(abortedOn) >= quorum
	// The stores predict the next start, unless a capture shows the group
	// led (the live answer wins over stores from another moment).
	byStores := why.all && why.replicas >= quorum && size > 1 && (answered == 0 || noLeader)
	sort.Ints(refs)
	f.TimelineRefs = refs
	f.ClusterSize, f.Quorum = size, quorum
	servers := []string{}
	for _, id := range model.ServersOf(m, views) {
		servers = append(servers, m.Name(id))
	}
	for _, n := range append(abortedOn, behindOn...) {
		servers = model.AppendUnique(servers, n)
	}
	sort.Strings(servers)
	f.Servers = servers
	switch {
	case byCaptures || byLogs || byStores:
		f.Kind, f.Severity = "no-leader", report.Critical
		reach := answered
		if !byCaptures {
			reach = max(len(abortedOn), why.replicas)
		}
		f.Reachable = &reach
		f.Evidence = append(append(f.Evidence, capLines...), logLines...)
		f.Message = fmt.Sprintf("%s group %s (%s %s > %s) has no leader while %d of its %d peers are there (quorum %d): it takes no writes",
			what, g.Name, what, f.Account, asset, reach, size, quorum)
		if !byCaptures && !byLogs {
			f.Message = fmt.Sprintf("%s group %s (%s %s > %s) cannot elect a leader at its next start: every replica's blocks are behind its own raft snapshot, and each waits to catch up from a leader none can become",
				what, g.Name, what, f.Account, asset)
		}
		if why.all {
			f.Evidence = append(f.Evidence, why.lines...)
			f.Evidence = append(f.Evidence, fmt.Sprintf("why: every replica's copy ends before its own snapshot of the group (the most any holds: %d; the snapshots record up to %d): each waits for a catch-up only a leader can serve, and none can lead while it catches up", why.held, why.snap))
			f.Ranges = []report.Range{{First: why.held + 1, Last: why.snap}}
			remedy.Prescribe(remedy.GroupStalledMoveAside, remedy.Args{"group": g.Name, "account": f.Account, "stream": f.Stream,
				"servers": strings.Join(servers, ", "), "held": strconv.FormatUint(why.held, 10),
				"lost": fmt.Sprintf("%d-%d", why.held+1, why.snap)}).Apply(&f)
		} else {
			remedy.Prescribe(remedy.GroupNotCurrent, remedy.Args{"group": g.Name, "servers": strings.Join(servers, ", ")}).Apply(&f)
		}
		return f, true
	case len(behindOn) > 0:
		f.Kind, f.Severity = "not-current", report.Warning
		f.Servers = behindOn
		f.Evidence = append(append(f.Evidence, logLines...), capLines...)
		f.Message = fmt.Sprintf("%s group %s (%s %s > %s): %s not current since its last start (applied trailing commit, a catch-up stalled or its state reset again and again)",
			what, g.Name, what, f.Account, asset, strings.Join(behindOn, ", "))
		remedy.Prescribe(remedy.GroupNotCurrent, remedy.Args{"group": g.Name, "servers": strings.Join(behindOn, ", ")}).Apply(&f)
		return f, true
	}
	return f, false
}
