package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// metaSide is one distinct view of the meta group and the servers holding it.
type metaSide struct {
	view    report.SplitView
	servers []string
	ids     map[string]bool // peer ids of the view
}

// metaViewsAll picks, per server, its freshest view of _meta_ (a live capture
// over the store's files) and groups identical ones.
func metaViewsAll(m *Model) []*metaSide {
	var meta *Group
	for _, g := range m.Groups {
		if g.Kind == "meta" {
			meta = g
		}
	}
	if meta == nil {
		return nil
	}
	best := map[string]View{}
	former := formerIDs(m)
	for _, v := range meta.Views {
		v.Peers = memberPeers(m, v, former)
		cur, ok := best[v.Server]
		if !ok || sourceRank(v.Source) < sourceRank(cur.Source) {
			best[v.Server] = v
		}
	}
	sides := map[string]*metaSide{}
	var keys []string
	// Views with a peer list first; a view without one (a leaderless /jsz)
	// joins a side of the same size, or stands for its size alone.
	servers := sortedKeys(best)
	sort.SliceStable(servers, func(i, j int) bool { return len(best[servers[i]].Peers) > 0 && len(best[servers[j]].Peers) == 0 })
	for _, srv := range servers {
		v := best[srv]
		if v.ClusterSize == 0 && len(v.Peers) == 0 {
			continue
		}
		k := viewKey(v)
		if len(v.Peers) == 0 {
			for _, kk := range keys {
				if sides[kk].view.ClusterSize == v.ClusterSize {
					k = kk
					break
				}
			}
		}
		s := sides[k]
		if s == nil {
			peers := append([]string(nil), v.Peers...)
			sort.Strings(peers)
			s = &metaSide{view: report.SplitView{ClusterSize: v.ClusterSize, Peers: peers}, ids: map[string]bool{}}
			for _, p := range peers {
				s.ids[p] = true
			}
			sides[k] = s
			keys = append(keys, k)
		}
		s.servers = append(s.servers, srv)
		s.view.Servers = append(s.view.Servers, srv)
		if v.Leader != "" {
			s.view.Leader = v.Leader
		}
		s.view.Term = max(s.view.Term, v.Term)
	}
	out := make([]*metaSide, 0, len(keys))
	for _, k := range keys {
		out = append(out, sides[k])
	}
	return out
}

// dropRemoved leaves out the views of servers removed from the group: a
// server that is no peer of the prevailing view, and whose own (older) view
// holds every prevailing peer, kept the peer set it had when it was removed.
// That is no split: the group went on without it.
func (f *Facts) dropRemoved(sides []*metaSide) []*metaSide {
	if len(sides) < 2 {
		return sides
	}
	prev := sides[0]
	for _, s := range sides[1:] {
		if len(s.servers) > len(prev.servers) || len(s.servers) == len(prev.servers) && s.view.Term > prev.view.Term {
			prev = s
		}
	}
	if len(prev.ids) == 0 {
		return sides
	}
	out := []*metaSide{prev}
	for _, s := range sides {
		if s == prev {
			continue
		}
		member := false
		for _, srv := range s.servers {
			if sv := f.Server(srv); sv != nil && prev.ids[sv.PeerID] {
				member = true
			}
		}
		superset := len(s.ids) > 0
		for id := range prev.ids {
			if !s.ids[id] {
				superset = false
			}
		}
		if !member && superset {
			continue
		}
		out = append(out, s)
	}
	return out
}

// sourceRank orders view sources by how directly they show the live state.
func sourceRank(src string) int {
	switch src {
	case "raftz":
		return 0
	case "peers.idx":
		return 1
	case "jsz":
		return 2
	case "varz":
		return 3
	case "snapshot":
		return 4
	}
	return 5
}

// foundingSplits returns pairs of meta groups founded apart: two servers'
// first meta leaders after a fresh bootstrap differ, their founders are
// disjoint, and the second was founded while the first still stood.
func foundingSplits(m *Model) [][2][]MetaFounding {
	byLeader := map[string][]MetaFounding{}
	for _, f := range m.MetaFoundings {
		byLeader[f.Leader] = append(byLeader[f.Leader], f)
	}
	leaders := sortedKeys(byLeader)
	var out [][2][]MetaFounding
	for i := 0; i < len(leaders); i++ {
		for j := i + 1; j < len(leaders); j++ {
			a, b := byLeader[leaders[i]], byLeader[leaders[j]]
			if overlapServers(a, b) || inFounders(leaders[i], b) || inFounders(leaders[j], a) {
				continue
			}
			out = append(out, [2][]MetaFounding{a, b})
		}
	}
	return out
}

func overlapServers(a, b []MetaFounding) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Server == y.Server {
				return true
			}
		}
	}
	return false
}

func inFounders(leader string, fs []MetaFounding) bool {
	for _, f := range fs {
		if f.Server == leader {
			return true
		}
	}
	return false
}

var checkMetaSplit = Check{
	Code:        "meta-split",
	Severity:    report.Critical,
	Description: "servers disagree on the meta group, or two meta groups were founded apart and met",
	Skip: func(p *Pass) string {
		if len(p.Facts.MetaSidesAll) == 0 && len(p.Model.MetaFoundings) == 0 {
			return "no server's view of the meta group and no meta group founding is in the bundle"
		}
		return ""
	},
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		sides := p.Facts.MetaSides
		if len(sides) > 1 {
			f := report.Finding{Group: "_meta_"}
			var desc []string
			for _, s := range sides {
				f.Views = append(f.Views, s.view)
				desc = append(desc, fmt.Sprintf("%s: cluster_size %d, peers %s, leader %s, term %d",
					strings.Join(s.servers, ","), s.view.ClusterSize, strings.Join(s.view.Peers, " "), dashIfEmpty(s.view.Leader), s.view.Term))
			}
			f.Message = fmt.Sprintf("the servers hold %d different views of the meta group", len(sides))
			f.Evidence = desc
			f.Remedy = metaSplitRemedy(m, sides)
			out = append(out, f)
		}
		for _, pair := range p.Facts.FoundingSplits {
			a, b := pair[0], pair[1]
			f := report.Finding{Group: "_meta_",
				Message: fmt.Sprintf("two meta groups were founded apart: %s elected %s, %s elected %s; when they meet the higher term wins and the other side's streams are dropped without a warning",
					foundersOf(a), a[0].Leader, foundersOf(b), b[0].Leader),
			}
			for _, side := range [][]MetaFounding{a, b} {
				var srv []string
				for _, x := range side {
					srv = append(srv, x.Server)
					f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s: first meta leader %s (%s)", x.Time.UTC().Format(time.RFC3339Nano), x.Server, x.Leader, x.Source))
				}
				f.Views = append(f.Views, report.SplitView{Servers: srv, Leader: side[0].Leader, Peers: side[0].Peers, ClusterSize: len(side[0].Peers)})
			}
			for _, side := range [][]MetaFounding{a, b} {
				f.Evidence = append(f.Evidence, vanishedStreams(p.Facts, side)...)
			}
			f.Remedy = metaSplitRemedy(m, nil)
			out = append(out, f)
		}
		return out
	},
}

func foundersOf(fs []MetaFounding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Server)
	}
	return strings.Join(s, ",")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func metaSplitRemedy(m *Model, sides []*metaSide) string {
	var b strings.Builder
	b.WriteString("Do not let both sides keep running together: the meta state with the higher term replaces the other, and the streams only the other side assigns are removed (see the orphan-risk findings).\n")
	b.WriteString("1. Decide which side's meta state to keep (the one that assigns the streams that matter) and back up every store (copy each server's jetstream folder out).\n")
	b.WriteString("2. Moving a side's meta state aside discards its assignments: the kept meta state then deletes every stream and consumer only that side held. Before step 3, copy those stream folders out (or nats stream backup them).\n")
	b.WriteString("3. Stop the servers of the other side, move (do not delete) their $SYS/_js_/_meta_ folder aside, and start them again so they join the kept meta group as new peers.\n")
	b.WriteString("4. Recreate the streams that only the other side held from what step 2 saved (nats stream restore, or republish what `jsforensics dump blk` reads).\n")
	if versionAtLeast(minVersion(m), 2, 15) {
		b.WriteString("On 2.15+ a JetStream domain per cluster (or joining the supercluster before enabling JetStream) keeps a new cluster from founding its own meta group.")
	} else {
		b.WriteString("Join a new cluster to the supercluster before enabling JetStream on it, or give it its own JetStream domain.")
	}
	return b.String()
}

var checkMetaNoLeader = Check{
	Code:        "meta-no-leader",
	Severity:    report.Critical,
	Description: "logs or captured JSON show the meta group without a leader, persistently",
	Settings:    []Setting{noLeaderPersist},
	Skip: func(p *Pass) string {
		if len(p.Model.MetaLeaderStates) == 0 {
			return "no log line or capture says who leads the meta group"
		}
		return ""
	},
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var servers []string
		var since *time.Time
		var evidence []string
		var refs []int
		for _, srv := range stuckServers(m, time.Duration(p.Setting(noLeaderPersist.Key)*float64(time.Second))) {
			servers = append(servers, srv.server)
			if !srv.since.IsZero() && (since == nil || srv.since.Before(*since)) {
				t := srv.since
				since = &t
			}
			evidence = append(evidence, srv.evidence...)
			refs = append(refs, srv.refs...)
		}
		if len(servers) == 0 {
			return nil
		}
		sort.Ints(refs)
		f := report.Finding{
			Group: "_meta_", Servers: servers, Since: since, Evidence: evidence, TimelineRefs: refs,
			Message: fmt.Sprintf("the meta group has no leader on %s", strings.Join(servers, ", ")),
			Remedy:  "JetStream API calls fail until a meta leader is elected: see quorum-unreachable, peer-id-corrupt, server-renamed and peer-offline for why no leader can be elected; check routes between the servers (nats server report jetstream, /routez)",
		}
		if since != nil && !since.IsZero() {
			f.Message += " since " + since.UTC().Format(time.RFC3339)
		}
		return []report.Finding{f}
	},
}

// noLeaderPersist is how long a no-leader state must last to count: a healthy
// cluster's first seconds log "no meta leader" too, and elections settle in
// well under this.
var noLeaderPersist = Setting{Key: "persist", Default: 30, Unit: "seconds",
	Description: "how long logs must show the meta group leaderless before it counts (a capture showing it counts at once)"}

type stuckServer struct {
	server   string
	since    time.Time
	evidence []string
	refs     []int
}

// stuckServers finds servers whose last known meta-leader state is "none"
// and stayed so for persist, or whose capture shows no leader.
func stuckServers(m *Model, persist time.Duration) []stuckServer {
	by := map[string][]MetaLeaderState{}
	for _, s := range m.MetaLeaderStates {
		by[s.Server] = append(by[s.Server], s)
	}
	var out []stuckServer
	for _, srv := range sortedKeys(by) {
		states := by[srv]
		sort.SliceStable(states, func(i, j int) bool { return states[i].Time.Before(states[j].Time) })
		last := states[len(states)-1]
		if last.Leader != "" {
			continue
		}
		// Walk back to where this leaderless stretch began.
		start := len(states) - 1
		for start > 0 && states[start-1].Leader == "" {
			start--
		}
		first := states[start]
		captured := false
		var st stuckServer
		st.server = srv
		// A capture without a time (a bare /raftz) is evidence but no date.
		for _, s := range states[start:] {
			if !s.Time.IsZero() {
				st.since = s.Time
				break
			}
		}
		for _, s := range states[start:] {
			if s.Source != "log" {
				captured = true
			}
			if s.Timeline >= 0 {
				st.refs = append(st.refs, s.Timeline)
			}
		}
		span := last.Time.Sub(first.Time)
		if !captured && span < persist {
			continue
		}
		if st.since.IsZero() {
			st.evidence = append(st.evidence, fmt.Sprintf("%s: no meta leader in an undated capture (%s)", srv, sourcesOf(states[start:])))
		} else {
			st.evidence = append(st.evidence, fmt.Sprintf("%s: no meta leader from %s to %s (%d observations: %s)", srv,
				st.since.UTC().Format(time.RFC3339Nano), last.Time.UTC().Format(time.RFC3339Nano), len(states)-start, sourcesOf(states[start:])))
		}
		out = append(out, st)
	}
	return out
}

func sourcesOf(states []MetaLeaderState) string {
	var out []string
	for _, s := range states {
		out = appendUnique(out, s.Source)
	}
	return strings.Join(out, ",")
}

// vanishedStreams names the lost assets (asset-lost) that the founders of
// one side held: what a merge of meta groups dropped.
func vanishedStreams(f *Facts, side []MetaFounding) []string {
	var out []string
	for _, a := range f.LostAssets {
		for _, x := range side {
			if slices.Contains(a.Holders, x.Server) {
				out = append(out, fmt.Sprintf("stream %s > %s, held on this side (%s), is in no store of the bundle now: dropped when the groups met (asset-lost)", a.Account, a.Stream, strings.Join(a.Holders, ",")))
				break
			}
		}
	}
	return out
}
