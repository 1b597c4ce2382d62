package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// Facts are what several checks need, computed once from the loaded model
// before any check runs (as golang.org/x/tools/go/analysis hands one
// analyzer's result to every analyzer that requires it). Checks read them
// and never recompute them; computing them does no I/O.
type Facts struct {
	// MetaSidesAll is each distinct view of the meta group (one per set of
	// servers that agree), every server's freshest view taken.
	MetaSidesAll []*metaSide
	// MetaSides is MetaSidesAll without the stale views of servers removed
	// from the group: more than one side is a split.
	MetaSides []*metaSide
	// Removed lists the servers whose stale meta view MetaSides leaves out.
	Removed []string
	// FoundingSplits are pairs of meta groups founded apart.
	FoundingSplits [][2][]MetaFounding
	// UnknownPeers lists, per group, the peer ids no known server has.
	UnknownPeers []peerSighting
	// SplitWinner is, where the meta views disagree or groups were founded
	// apart, the server whose meta state carries the highest term: the one a
	// merge keeps. Nil otherwise.
	SplitWinner *Server
	// KnownIDs are the peer ids of every name known in the bundle, sorted.
	KnownIDs []string
	// LostAssets are the streams and consumers that existed and are in no
	// store now, with no API delete recorded (asset-lost, meta-split).
	LostAssets []*lostAsset
	// Former maps renamed servers' old ids to the rename (formerIDs);
	// Departed holds the ids of servers gone but still peers (departedPeers).
	Former   map[string]Rename
	Departed map[string]bool

	byName map[string]*Server
	byID   map[string]*Server
}

// ComputeFacts derives the facts from a loaded model.
func ComputeFacts(m *Model) *Facts {
	f := &Facts{byName: map[string]*Server{}, byID: map[string]*Server{}}
	for _, s := range m.Servers {
		if f.byName[s.Name] == nil {
			f.byName[s.Name] = s
		}
		if s.PeerID != "" && f.byID[s.PeerID] == nil {
			f.byID[s.PeerID] = s
		}
	}
	f.KnownIDs = sortedKeys(m.IDs)
	f.Former, f.Departed = formerIDs(m), departedPeers(m)
	f.MetaSidesAll = metaViewsAll(m)
	f.MetaSides = f.dropRemoved(f.MetaSidesAll)
	kept := map[*metaSide]bool{}
	for _, s := range f.MetaSides {
		kept[s] = true
	}
	for _, s := range f.MetaSidesAll {
		if !kept[s] {
			f.Removed = append(f.Removed, s.servers...)
		}
	}
	sort.Strings(f.Removed)
	f.FoundingSplits = foundingSplits(m)
	f.UnknownPeers = unknownPeers(m)
	if len(f.MetaSides) > 1 || len(f.FoundingSplits) > 0 {
		f.SplitWinner = f.highestMetaTerm(m)
	}
	f.LostAssets = lostAssets(m, f)
	return f
}

// Server returns the server named name, or nil.
func (f *Facts) Server(name string) *Server { return f.byName[name] }

// ServerByID returns the server whose peer id is id, or nil.
func (f *Facts) ServerByID(id string) *Server { return f.byID[id] }

// Exists says whether a peer id belongs to a server present in the bundle
// (its store) or seen alive (a log or capture).
func (f *Facts) Exists(id string) bool {
	s := f.byID[id]
	return s != nil && (s.StoreDir != "" || s.Alive)
}

// highestMetaTerm is the server with a readable meta state whose view of
// the meta group carries the highest term.
func (f *Facts) highestMetaTerm(m *Model) *Server {
	var best *Server
	var bestTerm uint64
	for _, g := range m.Groups {
		if g.Kind != "meta" {
			continue
		}
		for _, v := range g.Views {
			s := m.serverOf(v.Server)
			if s == nil || s.Meta == nil || s.Meta.SnapshotCorrupt {
				continue
			}
			if best == nil || v.Term > bestTerm {
				best, bestTerm = s, v.Term
			}
		}
	}
	return best
}

// peerSighting is every place one peer id of one group was seen.
type peerSighting struct {
	group   string
	g       *Group // the group itself, for its views
	peer    string
	servers []string // servers whose view lists it
	sources []string
	// file and offset: the first peers.idx or tav.idx that holds it.
	server, file string
	offset       int64
}

// unknownPeers lists, per group, the peer ids that map to no known server.
func unknownPeers(m *Model) []peerSighting {
	var out []peerSighting
	for _, g := range m.Groups {
		seen := map[string]*peerSighting{}
		var order []string
		sight := func(v View, p, source, file string, off int64) {
			if _, ok := m.IDs[p]; ok {
				return
			}
			s := seen[p]
			if s == nil {
				s = &peerSighting{group: g.Name, g: g, peer: p}
				seen[p] = s
				order = append(order, p)
			}
			if s.file == "" && file != "" {
				s.server, s.file, s.offset = m.Name(v.Server), file, off
			}
			s.servers = appendUnique(s.servers, m.Name(v.Server))
			s.sources = appendUnique(s.sources, m.Name(v.Server)+" "+source)
		}
		for _, v := range g.Views {
			for _, p := range v.Peers {
				sight(v, p, v.Source, v.File, v.PeerOffsets[p])
			}
			// The vote tav.idx keeps is a peer id too: a flipped or zeroed
			// one is no more a server's than one in peers.idx.
			if v.VoteFile != "" && v.VotedFor != "" {
				sight(v, v.VotedFor, "tav.idx vote", v.VoteFile, 8)
			}
		}
		sort.Strings(order)
		for _, p := range order {
			out = append(out, *seen[p])
		}
	}
	return out
}

// viewKey groups identical views of a group.
func viewKey(v View) string {
	p := append([]string(nil), v.Peers...)
	sort.Strings(p)
	return fmt.Sprintf("%d|%s", v.ClusterSize, strings.Join(p, ","))
}

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
	damaged := sizeDamaged(m) // peer_size.go
	for _, v := range meta.Views {
		if v.Source == "peers.idx" && damaged[v.File] {
			v.ClusterSize = len(v.Peers)
		}
		v.Peers = memberPeers(m, v, former)
		cur, ok := best[m.Name(v.Server)]
		if !ok || sourceRank(v.Source) < sourceRank(cur.Source) {
			best[m.Name(v.Server)] = v
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
			if overlapServers(m, a, b) || inFounders(m, leaders[i], b) || inFounders(m, leaders[j], a) {
				continue
			}
			out = append(out, [2][]MetaFounding{a, b})
		}
	}
	return out
}

func overlapServers(m *Model, a, b []MetaFounding) bool {
	for _, x := range a {
		for _, y := range b {
			if m.same(x.Server, y.Server) {
				return true
			}
		}
	}
	return false
}

func inFounders(m *Model, leader string, fs []MetaFounding) bool {
	for _, f := range fs {
		if m.Name(f.Server) == leader {
			return true
		}
	}
	return false
}
