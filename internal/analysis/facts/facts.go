package facts

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/natsfmt"

	"github.com/jsforensics/jsforensics/report"
)

// Fact names one result that several checks read, computed once per
// analysis before any check runs (golang.org/x/tools/go/analysis: an
// Analyzer whose Result others Require). A check lists the facts it reads in
// Check.Requires; only those, and the facts they require in turn, are
// computed, so `--only CODE` computes what that one check needs. A check
// that reads a fact it did not require panics (runOne reports it not run):
// a missing declaration cannot pass unseen.
type Fact int

// The facts.
const (
	// FactKnownIDs: the peer ids of every name known in the bundle, sorted.
	FactKnownIDs Fact = iota
	// FactFormerIDs: renamed servers' old ids to the rename (formerIDs).
	FactFormerIDs
	// FactDeparted: the ids of servers gone but still peers (departedPeers).
	FactDeparted
	// FactMetaSides: the distinct views of the meta group, with and without
	// the stale views of removed servers, and those servers.
	FactMetaSides
	// FactFoundingSplits: pairs of meta groups founded apart.
	FactFoundingSplits
	// FactUnknownPeers: per group, the peer ids no known server has.
	FactUnknownPeers
	// FactSplitWinner: the server whose meta state a merge keeps.
	FactSplitWinner
	// FactLostAssets: streams and consumers that existed and are in no store.
	FactLostAssets
	// FactExposures: the unclean stops and the streams written in the sync
	// interval before each.
	FactExposures
	// FactUnresolvedAccounts: the accounts (operator mode) a server could
	// not look up, so it loads none of their streams (accounts.go).
	FactUnresolvedAccounts
	NumFacts
)

// factNames are the facts' names, for messages and tests.
var FactNames = [NumFacts]string{"known-ids", "former-ids", "departed-peers", "meta-sides", "founding-splits", "unknown-peers", "split-winner", "lost-assets", "exposures", "unresolved-accounts"}

func (k Fact) String() string {
	if k < 0 || k >= NumFacts {
		return fmt.Sprintf("fact(%d)", int(k))
	}
	return FactNames[k]
}

// factDef is how one fact is computed, from the model and the facts it
// requires (computed before it).
type factDef struct {
	Requires []Fact
	Compute  func(m *model.Model, f *Facts)
}

// factDefs is the one table of facts.
var FactDefs = [NumFacts]factDef{
	FactKnownIDs:  {Compute: func(m *model.Model, f *Facts) { f.knownIDs = model.SortedKeys(m.IDs) }},
	FactFormerIDs: {Compute: func(m *model.Model, f *Facts) { f.former = FormerIDs(m) }},
	FactDeparted: {Requires: []Fact{FactFormerIDs}, Compute: func(m *model.Model, f *Facts) {
		f.departed = DepartedPeers(m, f.FormerIDs())
	}},
	FactMetaSides: {Requires: []Fact{FactFormerIDs}, Compute: func(m *model.Model, f *Facts) {
		f.metaSidesAll = metaViewsAll(m, f.FormerIDs())
		f.metaSides = f.dropRemoved(f.metaSidesAll)
		kept := map[*MetaSide]bool{}
		for _, s := range f.metaSides {
			kept[s] = true
		}
		for _, s := range f.metaSidesAll {
			if !kept[s] {
				f.removed = append(f.removed, s.Servers...)
			}
		}
		sort.Strings(f.removed)
	}},
	FactFoundingSplits: {Compute: func(m *model.Model, f *Facts) { f.foundingSplits = foundingSplits(m) }},
	FactUnknownPeers:   {Compute: func(m *model.Model, f *Facts) { f.unknownPeers = unknownPeers(m) }},
	FactSplitWinner: {Requires: []Fact{FactMetaSides, FactFoundingSplits, FactLostAssets}, Compute: func(m *model.Model, f *Facts) {
		if Split(f.MetaSides()) || len(f.FoundingSplits()) > 0 {
			f.splitWinner, f.splitWinnerBy = splitWinner(m, f)
		}
	}},
	FactLostAssets: {Requires: []Fact{FactFoundingSplits, FactFormerIDs}, Compute: func(m *model.Model, f *Facts) {
		f.lostAssets = lostAssets(m, f)
	}},
	FactExposures:          {Compute: func(m *model.Model, f *Facts) { f.exposures = exposures(m) }},
	FactUnresolvedAccounts: {Compute: func(m *model.Model, f *Facts) { f.unresolvedAccounts = unresolvedAccounts(m) }},
}

// allFacts is every fact, in the order of the table.
func allFacts() []Fact {
	out := make([]Fact, NumFacts)
	for i := range out {
		out[i] = Fact(i)
	}
	return out
}

// Facts are the facts of one model. Each is read through its method, which
// panics when the fact was not computed for the running check (it did not
// require it); computing them does no I/O.
type Facts struct {
	knownIDs           []string
	former             map[string]model.Rename
	departed           map[string]bool
	metaSidesAll       []*MetaSide
	metaSides          []*MetaSide
	removed            []string
	foundingSplits     [][2][]model.MetaFounding
	unknownPeers       []PeerSighting
	splitWinner        *model.Server
	splitWinnerBy      string
	lostAssets         []*LostAsset
	exposures          []model.Exposure
	unresolvedAccounts []*UnresolvedAccount

	// have are the facts a reader may read: those computed, or for one
	// check's view (only) those it requires.
	have [NumFacts]bool
	// computed lists the facts in the order they were computed.
	Computed []Fact

	byName map[string]*model.Server
	byID   map[string]*model.Server
}

// need panics unless fact k may be read.
func (f *Facts) need(k Fact) {
	if !f.have[k] {
		panic(fmt.Sprintf("fact %s read but not computed: the check does not list it in Requires", k))
	}
}

// KnownIDs are the peer ids of every name known in the bundle, sorted.
func (f *Facts) KnownIDs() []string { f.need(FactKnownIDs); return f.knownIDs }

// FormerIDs maps renamed servers' old ids to the rename (formerIDs).
func (f *Facts) FormerIDs() map[string]model.Rename { f.need(FactFormerIDs); return f.former }

// Departed holds the ids of servers gone but still peers (departedPeers).
func (f *Facts) Departed() map[string]bool { f.need(FactDeparted); return f.departed }

// MetaSidesAll is each distinct view of the meta group (one per set of
// servers that agree), every server's freshest view taken.
func (f *Facts) MetaSidesAll() []*MetaSide { f.need(FactMetaSides); return f.metaSidesAll }

// MetaSides is MetaSidesAll without the stale views of servers removed
// from the group: more than one side is a split.
func (f *Facts) MetaSides() []*MetaSide { f.need(FactMetaSides); return f.metaSides }

// Removed lists the servers whose stale meta view MetaSides leaves out.
func (f *Facts) Removed() []string { f.need(FactMetaSides); return f.removed }

// FoundingSplits are pairs of meta groups founded apart.
func (f *Facts) FoundingSplits() [][2][]model.MetaFounding {
	f.need(FactFoundingSplits)
	return f.foundingSplits
}

// UnknownPeers lists, per group, the peer ids no known server has.
func (f *Facts) UnknownPeers() []PeerSighting { f.need(FactUnknownPeers); return f.unknownPeers }

// SplitWinner is, where the meta views disagree or groups were founded
// apart, the server whose meta state a merge keeps (splitWinner). Nil
// otherwise.
func (f *Facts) SplitWinner() *model.Server { f.need(FactSplitWinner); return f.splitWinner }

// SplitWinnerBy says how SplitWinner was told: "lost assets" (groups
// founded apart met, and only one side's streams are gone) or "term" (the
// highest term of a readable meta state); "" when there is no winner.
func (f *Facts) SplitWinnerBy() string { f.need(FactSplitWinner); return f.splitWinnerBy }

// Exposures are the unclean stops and the streams written in the sync
// interval before each (durability-exposure).
func (f *Facts) Exposures() []model.Exposure { f.need(FactExposures); return f.exposures }

// UnresolvedAccounts are the accounts (operator mode) a server could not
// look up, by server then account: it loads none of their streams and
// consumers, which stay on disk (account-unresolved).
func (f *Facts) UnresolvedAccounts() []*UnresolvedAccount {
	f.need(FactUnresolvedAccounts)
	return f.unresolvedAccounts
}

// LostAssets are the streams and consumers that existed and are in no
// store now, with no API delete recorded (asset-lost, meta-split).
func (f *Facts) LostAssets() []*LostAsset { f.need(FactLostAssets); return f.lostAssets }

// ComputeAll derives every fact from a loaded model (what a test of one
// check over a small model wants).
func ComputeAll(m *model.Model) *Facts { return Compute(m, allFacts()) }

// Compute derives the facts needs names, and those they require,
// each once, a fact after those it requires.
func Compute(m *model.Model, needs []Fact) *Facts {
	f := &Facts{byName: map[string]*model.Server{}, byID: map[string]*model.Server{}}
	for _, s := range m.Servers {
		if f.byName[s.Name] == nil {
			f.byName[s.Name] = s
		}
		if s.PeerID != "" && f.byID[s.PeerID] == nil {
			f.byID[s.PeerID] = s
		}
	}
	var visit func(k Fact)
	visit = func(k Fact) {
		if f.have[k] {
			return
		}
		for _, r := range FactDefs[k].Requires {
			visit(r)
		}
		FactDefs[k].Compute(m, f)
		f.have[k] = true
		f.Computed = append(f.Computed, k)
	}
	for _, k := range needs {
		visit(k)
	}
	return f
}

// closure is needs with every fact they require, in table order.
func Closure(needs []Fact) []Fact {
	var in [NumFacts]bool
	var visit func(k Fact)
	visit = func(k Fact) {
		if in[k] {
			return
		}
		in[k] = true
		for _, r := range FactDefs[k].Requires {
			visit(r)
		}
	}
	for _, k := range needs {
		visit(k)
	}
	var out []Fact
	for k, ok := range in {
		if ok {
			out = append(out, Fact(k))
		}
	}
	return out
}

// only is f as one check sees it: only the facts it requires (and what
// they require) may be read.
func (f *Facts) Only(needs []Fact) *Facts {
	v := *f
	v.have = [NumFacts]bool{}
	for _, k := range Closure(needs) {
		v.have[k] = f.have[k]
	}
	return &v
}

// Server returns the server named name, or nil.
func (f *Facts) Server(name string) *model.Server { return f.byName[name] }

// ServerByID returns the server whose peer id is id, or nil.
func (f *Facts) ServerByID(id string) *model.Server { return f.byID[id] }

// Exists says whether a peer id belongs to a server present in the bundle
// (its store) or seen alive (a log or capture).
func (f *Facts) Exists(id string) bool {
	s := f.byID[id]
	return s != nil && (s.StoreDir != "" || s.Alive)
}

// splitWinner is the server whose meta state a merge of meta groups keeps.
// Where two groups founded apart have met, their servers all hold the
// merged state, and the terms they carry since (peers.idx and tav.idx are
// rewritten after the merge) no longer tell the sides apart: what does is
// what was lost. When the streams gone from every store (lost assets)
// were held by the founders of one side alone, the other side's state is
// the one kept: its founder of the highest term wins
// (v2.15.2-supercluster-split: NEW_EVENTS, the new side's, is gone; the
// new side's peers.idx carry term 4, the old side's 3). Otherwise the
// server whose meta view carries the highest term.
func splitWinner(m *model.Model, f *Facts) (*model.Server, string) {
	for _, pair := range f.FoundingSplits() {
		var lost [2]bool
		for i, side := range pair {
			for _, a := range f.LostAssets() {
				lost[i] = lost[i] || a.Consumer == "" && slices.ContainsFunc(side, func(x model.MetaFounding) bool { return slices.Contains(a.Holders, m.Name(x.Server)) })
			}
		}
		if lost[0] == lost[1] {
			continue
		}
		won := pair[0]
		if lost[0] {
			won = pair[1]
		}
		if s := highestMetaTerm(m, func(s *model.Server) bool {
			return slices.ContainsFunc(won, func(x model.MetaFounding) bool { return m.Name(x.Server) == s.Name })
		}); s != nil {
			return s, "lost assets"
		}
	}
	in := func(*model.Server) bool { return true }
	for _, d := range SidesByDomain(f.MetaSides()) {
		if len(d) > 1 {
			dom := d[0].Domain
			in = func(s *model.Server) bool { return model.MetaDomain(m, s) == dom }
			break
		}
	}
	if s := highestMetaTerm(m, in); s != nil {
		return s, "term"
	}
	return nil, ""
}

// highestMetaTerm is the server with a readable meta state whose view of
// the meta group carries the highest term.
func (f *Facts) HighestMetaTerm(m *model.Model) *model.Server {
	return highestMetaTerm(m, func(*model.Server) bool { return true })
}

// HighestMetaTermIn is HighestMetaTerm among the servers of one JetStream
// domain (a meta leader installs its state only in its own domain).
func (f *Facts) HighestMetaTermIn(m *model.Model, domain string) *model.Server {
	return highestMetaTerm(m, func(s *model.Server) bool { return model.MetaDomain(m, s) == domain })
}

// highestMetaTerm is HighestMetaTerm among the servers in says yes to.
func highestMetaTerm(m *model.Model, in func(*model.Server) bool) *model.Server {
	var best *model.Server
	var bestTerm uint64
	for _, g := range m.Groups {
		if g.Kind != natsfmt.GroupMeta {
			continue
		}
		for _, v := range g.Views {
			s := m.ServerOf(v.Server)
			if s == nil || s.Meta == nil || s.Meta.SnapshotCorrupt || !in(s) {
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
type PeerSighting struct {
	Group   string
	G       *model.Group // the group itself, for its views
	Peer    string
	servers []string // servers whose view lists it
	Sources []string
	// file and offset: the first peers.idx or tav.idx that holds it.
	Server, File string
	Offset       int64
}

// unknownPeers lists, per group, the peer ids that map to no known server.
func unknownPeers(m *model.Model) []PeerSighting {
	var out []PeerSighting
	for _, g := range m.Groups {
		seen := map[string]*PeerSighting{}
		var order []string
		sight := func(v model.View, p, source, file string, off int64) {
			if _, ok := m.IDs[p]; ok {
				return
			}
			s := seen[p]
			if s == nil {
				s = &PeerSighting{Group: g.Name, G: g, Peer: p}
				seen[p] = s
				order = append(order, p)
			}
			if s.File == "" && file != "" {
				s.Server, s.File, s.Offset = m.Name(v.Server), file, off
			}
			s.servers = model.AppendUnique(s.servers, m.Name(v.Server))
			s.Sources = model.AppendUnique(s.Sources, m.Name(v.Server)+" "+source)
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
func ViewKey(v model.View) string {
	p := append([]string(nil), v.Peers...)
	sort.Strings(p)
	return fmt.Sprintf("%d|%s", v.ClusterSize, strings.Join(p, ","))
}

// metaSide is one distinct view of the meta group and the servers holding it.
type MetaSide struct {
	View    report.SplitView
	Servers []string
	// Domain is the JetStream domain of its servers (model.MetaDomain):
	// each domain runs a meta group of its own, so views of different
	// domains are never sides of one split.
	Domain string
	ids    map[string]bool // peer ids of the view
}

// SidesByDomain splits sides into the sides of each JetStream domain, in
// the order of the domains' first side.
func SidesByDomain(sides []*MetaSide) [][]*MetaSide {
	idx := map[string]int{}
	var out [][]*MetaSide
	for _, s := range sides {
		i, ok := idx[s.Domain]
		if !ok {
			i = len(out)
			idx[s.Domain] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	return out
}

// Split says whether the views disagree within one domain's meta group.
func Split(sides []*MetaSide) bool {
	for _, d := range SidesByDomain(sides) {
		if len(d) > 1 {
			return true
		}
	}
	return false
}

// metaViewsAll picks, per server, its freshest view of _meta_ (a live capture
// over the store's files) and groups identical ones.
func metaViewsAll(m *model.Model, former map[string]model.Rename) []*MetaSide {
	var meta *model.Group
	for _, g := range m.Groups {
		if g.Kind == natsfmt.GroupMeta {
			meta = g
		}
	}
	if meta == nil {
		return nil
	}
	best := map[string]model.View{}
	damaged := SizeDamaged(m) // peer_size.go
	for _, v := range meta.Views {
		// A server whose JetStream is off runs no meta group: the size its
		// /varz or /jsz still gives is no side (diskfull-v2.11.17, run
		// 2026-12-02: df-2's /varz said cluster_size 2 with no leader, and
		// 2.11.17's DisableJetStream had deleted its _meta_ folder,
		// jetstream.go:677 meta.Delete; 2.12+ only stop the group).
		if (v.Source == "varz" || v.Source == "jsz") && JetStreamOffAtEnd(m.ServerOf(v.Server)) {
			continue
		}
		if v.Source == "peers.idx" && damaged[v.File] {
			v.ClusterSize = len(v.Peers) - len(v.Tracked)
		}
		v.Peers = MemberPeers(m, v, former)
		cur, ok := best[m.Name(v.Server)]
		if !ok || sourceRank(v.Source) < sourceRank(cur.Source) {
			best[m.Name(v.Server)] = v
		}
	}
	sides := map[string]*MetaSide{}
	var keys []string
	// Views with a peer list first; a view without one (a leaderless /jsz)
	// joins a side of the same size, or stands for its size alone.
	servers := model.SortedKeys(best)
	sort.SliceStable(servers, func(i, j int) bool { return len(best[servers[i]].Peers) > 0 && len(best[servers[j]].Peers) == 0 })
	for _, srv := range servers {
		v := best[srv]
		if v.ClusterSize == 0 && len(v.Peers) == 0 {
			continue
		}
		dom := model.MetaDomain(m, m.Server(srv))
		k := dom + "\x00" + ViewKey(v)
		if len(v.Peers) == 0 {
			for _, kk := range keys {
				if sides[kk].Domain == dom && sides[kk].View.ClusterSize == v.ClusterSize {
					k = kk
					break
				}
			}
		}
		s := sides[k]
		if s == nil {
			peers := append([]string(nil), v.Peers...)
			sort.Strings(peers)
			s = &MetaSide{View: report.SplitView{ClusterSize: v.ClusterSize, Peers: peers}, Domain: dom, ids: map[string]bool{}}
			for _, p := range peers {
				s.ids[p] = true
			}
			sides[k] = s
			keys = append(keys, k)
		}
		s.Servers = append(s.Servers, srv)
		s.View.Servers = append(s.View.Servers, srv)
		if v.Leader != "" {
			s.View.Leader = v.Leader
		}
		s.View.Term = max(s.View.Term, v.Term)
	}
	out := make([]*MetaSide, 0, len(keys))
	for _, k := range keys {
		out = append(out, sides[k])
	}
	return out
}

// dropRemoved leaves out the views of servers removed from the group: a
// server that is no peer of the prevailing view, and whose own (older) view
// holds every prevailing peer, kept the peer set it had when it was removed.
// That is no split: the group went on without it.
func (f *Facts) dropRemoved(all []*MetaSide) []*MetaSide {
	var out []*MetaSide
	for _, sides := range SidesByDomain(all) {
		out = append(out, f.dropRemovedIn(sides)...)
	}
	return out
}

// dropRemovedIn is dropRemoved over the sides of one domain.
func (f *Facts) dropRemovedIn(sides []*MetaSide) []*MetaSide {
	if len(sides) < 2 {
		return sides
	}
	prev := sides[0]
	for _, s := range sides[1:] {
		if len(s.Servers) > len(prev.Servers) || len(s.Servers) == len(prev.Servers) && s.View.Term > prev.View.Term {
			prev = s
		}
	}
	if len(prev.ids) == 0 {
		return sides
	}
	out := []*MetaSide{prev}
	for _, s := range sides {
		if s == prev {
			continue
		}
		member := false
		for _, srv := range s.Servers {
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
func foundingSplits(m *model.Model) [][2][]model.MetaFounding {
	byLeader := map[string][]model.MetaFounding{}
	for _, f := range m.MetaFoundings {
		byLeader[f.Leader] = append(byLeader[f.Leader], f)
	}
	leaders := model.SortedKeys(byLeader)
	var out [][2][]model.MetaFounding
	for i := 0; i < len(leaders); i++ {
		for j := i + 1; j < len(leaders); j++ {
			a, b := byLeader[leaders[i]], byLeader[leaders[j]]
			if overlapServers(m, a, b) || inFounders(m, leaders[i], b) || inFounders(m, leaders[j], a) || !sameDomain(m, a, b) {
				continue
			}
			out = append(out, [2][]model.MetaFounding{a, b})
		}
	}
	return out
}

// sameDomain says whether two foundings' servers share a JetStream domain:
// a domain's servers found its own meta group by design (a hub and a leaf
// cluster over leafnodes, "JetStream not extended, domains differ").
func sameDomain(m *model.Model, a, b []model.MetaFounding) bool {
	for _, x := range a {
		for _, y := range b {
			if model.MetaDomain(m, m.ServerOf(x.Server)) == model.MetaDomain(m, m.ServerOf(y.Server)) {
				return true
			}
		}
	}
	return false
}

func overlapServers(m *model.Model, a, b []model.MetaFounding) bool {
	for _, x := range a {
		for _, y := range b {
			if m.Same(x.Server, y.Server) {
				return true
			}
		}
	}
	return false
}

func inFounders(m *model.Model, leader string, fs []model.MetaFounding) bool {
	for _, f := range fs {
		if m.Name(f.Server) == leader {
			return true
		}
	}
	return false
}

// formerIDs maps the peer id of every name a server of the bundle ran under
// before, and that no server runs under now, to that rename. Such an id
// is one server's old identity, never a server of its own.
func FormerIDs(m *model.Model) map[string]model.Rename {
	out := map[string]model.Rename{}
	for _, r := range m.Renames {
		id := model.PeerID(r.Old)
		if m.Server(r.Old) != nil || m.ServerByID(id) != nil {
			continue // a server runs under that name (again)
		}
		if _, ok := out[id]; !ok {
			out[id] = r
		}
	}
	return out
}

// departedPeers are the peers that the servers answering the captures
// still count in their groups, that no view saw recently (/raftz last_seen
// older than recentlySeen, or never), and that nothing shows running:
// valid ids of servers known by name that answered no capture themselves,
// whose own log does not run on to the capture, and no renamed server's
// old id. A leader's view that misses a peer is enough; any other view is
// only when the peer's own log ends in a stop before that capture.
//
// Only a leader's view tells of every peer: nats-server stamps a peer's
// last_seen when it answers the leader's append entries (raft.go trackPeer
// from processAppendEntryResponse), on a follower only the leader's
// (processAppendEntry), and updateLeader clears every other peer's stamp
// on a follower; a candidate stamps only the peers that grant its vote. A
// follower's view is silent on the other followers.
// A departed server may still have its store and log in the bundle (a
// StatefulSet keeps its volumes); what matters is that it is not running.
func DepartedPeers(m *model.Model, former map[string]model.Rename) map[string]bool {
	heard := map[string]bool{}
	type miss struct {
		at     *time.Time // the earliest capture that missed it
		leader bool       // a leader's view missed it
	}
	missed := map[string]*miss{}
	for _, g := range m.Groups {
		for _, v := range g.Views {
			if v.Source != "raftz" {
				continue
			}
			for _, p := range v.Alive {
				heard[p] = true
			}
			self := ""
			if s := m.ServerOf(v.Server); s != nil {
				self = s.PeerID
			}
			leader := self != "" && v.Leader == self
			at := v.Time
			if at == nil {
				at = capturedAt(m, v.Server)
			}
			for _, p := range v.Peers {
				if p == self || slices.Contains(v.Alive, p) {
					continue
				}
				ms := missed[p]
				if ms == nil {
					ms = &miss{at: at}
					missed[p] = ms
				} else if ms.at != nil && (at == nil || at.Before(*ms.at)) {
					ms.at = at
				}
				ms.leader = ms.leader || leader || v.Leader == p
			}
		}
	}
	out := map[string]bool{}
	for p, ms := range missed {
		if heard[p] || !natsfmt.ValidPeerID(p) {
			continue
		}
		if _, renamed := former[p]; renamed {
			continue
		}
		if _, known := m.IDs[p]; !known {
			continue // peer-unknown's business
		}
		s := m.ServerByID(p)
		if s != nil && model.AnsweredCapture(s) {
			continue
		}
		running, stopped := logEnd(m, s, ms.at)
		if running || !ms.leader && !stopped {
			continue
		}
		out[p] = true
	}
	return out
}

// capturedAt is when srv answered the captures, from the dated ones
// (/varz and /jsz carry "now"; /raftz does not), nil when none is dated.
func capturedAt(m *model.Model, srv model.ServerID) *time.Time {
	for _, e := range m.Timeline {
		if e.Server == srv && captureSources[e.Source] && !e.Time.IsZero() {
			t := e.Time
			return &t
		}
	}
	return nil
}

// captureSources are the timeline sources that are monitoring captures.
var captureSources = map[string]bool{"varz": true, "jsz": true, "healthz": true, "raftz": true}

// logEnd reads s's own log against the capture that missed it (at):
// running when it has a line from within recentlySeen before at or later
// (a leader would have heard it), or, with no date on the capture, when it
// does not end in a stop; stopped when it ends in a stop before that.
func logEnd(m *model.Model, s *model.Server, at *time.Time) (running, stopped bool) {
	if s == nil {
		return false, false
	}
	for i := len(m.Timeline) - 1; i >= 0; i-- {
		e := m.Timeline[i]
		if e.Source != "log" || m.Name(e.Server) != s.Name {
			continue
		}
		stop := e.Kind == string(natsfmt.EventStop) || e.Kind == string(natsfmt.EventUncleanStop)
		if at == nil {
			return !stop, stop
		}
		running = !e.Time.Before(at.Add(-model.RecentlySeen))
		return running, stop && !running
	}
	return false, false
}

// lostAsset is a stream (or a consumer of a stream that survives) that the
// bundle shows existing and that no store holds.
type LostAsset struct {
	Account, Stream, Consumer string
	// Holders are the servers seen holding it, sorted.
	Holders []string
	// Seen are where it was seen, one line each, oldest first.
	Seen []sighting
	// Messages and Bytes are its last known size (0 when unknown), from
	// SizeFrom.
	Messages, Bytes uint64
	SizeFrom        string
	// Consumers are the consumers of a lost stream known to the bundle.
	Consumers []string
	// Assigned lists "server: peers" where a meta state still assigns it.
	Assigned []string
	// Cause says what removed it, as far as the bundle tells; CauseRefs
	// are the timeline events behind it.
	Cause     string
	CauseRefs []int
	// Time is the last time it was seen, if dated.
	Time *time.Time
}

type sighting struct {
	Time   time.Time
	server string
	Text   string
}

// lostAssets finds the streams the bundle shows existing (log lines of a
// server holding or restoring it, captured /jsz, any server's meta state, a
// stream group's WAL) that no store holds, whose deletion no meta WAL
// records, and whose removal the bundle shows a cause for (lostCause). A
// holder whose store is not in the bundle leaves it undecided.
func lostAssets(m *model.Model, f *Facts) []*LostAsset {
	hasStore := map[string]bool{}
	for _, s := range m.Servers {
		if s.StoreDir != "" {
			hasStore[s.Name] = true
		}
	}
	if len(hasStore) == 0 {
		return nil
	}
	held := map[model.AssetKey]bool{}
	heldConsumer := map[[3]string]bool{}
	for _, st := range m.Streams {
		for _, c := range st.Copies {
			held[model.AssetKey{Account: st.Account, Stream: st.Name}] = true
			for _, con := range c.Consumers {
				heldConsumer[[3]string{st.Account, st.Name, con.Name}] = true
			}
		}
	}
	deleted := map[[3]string]bool{}
	for _, r := range m.MetaRemovals {
		deleted[[3]string{r.Account, r.Stream, r.Consumer}] = true
	}
	assets := map[[3]string]*LostAsset{}
	get := func(acc, stream, consumer string) *LostAsset {
		k := [3]string{acc, stream, consumer}
		if held[model.AssetKey{Account: acc, Stream: stream}] && consumer == "" || deleted[k] || deleted[[3]string{acc, stream, ""}] || consumer != "" && heldConsumer[k] {
			return nil
		}
		if consumer != "" && !held[model.AssetKey{Account: acc, Stream: stream}] {
			return nil // goes with its stream, listed there
		}
		a := assets[k]
		if a == nil {
			a = &LostAsset{Account: acc, Stream: stream, Consumer: consumer}
			assets[k] = a
		}
		return a
	}
	seenOn := func(a *LostAsset, srv string, t time.Time, text string) {
		a.Holders = model.AppendUnique(a.Holders, srv)
		a.Seen = append(a.Seen, sighting{t, srv, text})
		if !t.IsZero() && (a.Time == nil || t.After(*a.Time)) {
			tt := t
			a.Time = &tt
		}
	}
	for _, id := range model.ServersOf(m, m.LogStreams) {
		srv := m.Name(id)
		for k, e := range m.LogStreams[id] {
			a := get(k.Account, k.Stream, "")
			if a == nil {
				continue
			}
			seenOn(a, srv, e.Time, fmt.Sprintf("%s log %s line %d: %q", srv, e.File, e.Line, e.Text))
			if e.Restored != nil && a.SizeFrom == "" {
				a.Messages, a.SizeFrom = *e.Restored, fmt.Sprintf("%s log line %d", srv, e.Line)
			}
		}
	}
	for _, st := range m.Streams {
		for _, c := range st.Captured {
			srv := m.Name(c.Server)
			if a := get(st.Account, st.Name, ""); a != nil {
				seenOn(a, srv, time.Time{}, fmt.Sprintf("%s captured /jsz: %d messages, %d bytes, last seq %d", srv, c.Messages, c.Bytes, c.LastSeq))
				if c.Messages >= a.Messages {
					a.Messages, a.Bytes, a.SizeFrom = c.Messages, c.Bytes, srv+"'s captured /jsz"
				}
			}
			for _, con := range c.Consumers {
				if a := get(st.Account, st.Name, con.Name); a != nil {
					seenOn(a, srv, time.Time{}, fmt.Sprintf("%s captured /jsz lists consumer %s", srv, con.Name))
				}
			}
		}
	}
	for _, srv := range m.Servers {
		if srv.Meta == nil {
			continue
		}
		for k, as := range srv.Meta.Streams {
			peers := model.NamesFor(m, as.Peers)
			if a := get(k.Account, k.Stream, ""); a != nil {
				a.Assigned = append(a.Assigned, fmt.Sprintf("the meta state of %s (%s) assigns it to %s (group %s)", srv.Name, srv.Meta.Source, strings.Join(peers, ", "), as.Group))
			}
			for cn := range as.Consumers {
				if a := get(k.Account, k.Stream, cn); a != nil {
					a.Assigned = append(a.Assigned, fmt.Sprintf("the meta state of %s assigns consumer %s", srv.Name, cn))
				}
			}
		}
	}
	for _, g := range m.Groups {
		if g.Kind != natsfmt.GroupStream || g.Asset == "" {
			continue
		}
		if a := get(g.Account, g.Asset, ""); a != nil {
			for _, v := range g.Views {
				seenOn(a, m.Name(v.Server), time.Time{}, fmt.Sprintf("%s still has the raft group %s of the stream (its WAL may hold messages)", m.Name(v.Server), g.Name))
			}
		}
	}
	var out []*LostAsset
	for _, a := range assets {
		// An assignment alone (a stream assigned and never created on its
		// peers) is no sign it held data; a sighting is.
		if len(a.Seen) == 0 {
			continue
		}
		undecided := false
		for _, h := range a.Holders {
			if !hasStore[h] {
				undecided = true
			}
		}
		if undecided {
			continue
		}
		sort.SliceStable(a.Seen, func(i, j int) bool { return a.Seen[i].Time.Before(a.Seen[j].Time) })
		sort.Strings(a.Assigned)
		if a.Consumer == "" {
			for _, st := range m.Streams {
				if st.Account == a.Account && st.Name == a.Stream {
					for _, c := range st.Captured {
						for _, con := range c.Consumers {
							a.Consumers = model.AppendUnique(a.Consumers, con.Name)
						}
					}
				}
			}
			for _, srv := range m.Servers {
				if srv.Meta != nil {
					if as := srv.Meta.Streams[model.AssetKey{Account: a.Account, Stream: a.Stream}]; as != nil {
						for cn := range as.Consumers {
							a.Consumers = model.AppendUnique(a.Consumers, cn)
						}
					}
				}
			}
			sort.Strings(a.Consumers)
		}
		a.Cause, a.CauseRefs = lostCause(m, f, a)
		if a.Cause == "" {
			continue // the lack of a delete record alone is no loss
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		return x.Account+"\x00"+x.Stream+"\x00"+x.Consumer < y.Account+"\x00"+y.Stream+"\x00"+y.Consumer
	})
	return out
}

// snapshotMayHold says whether the meta snapshot of holder h, which
// fails its checksum, can have assigned the stream: not when another
// server's intact meta snapshot of the same term and index (the same
// state) does not assign it: it was gone before that index, deleted on
// purpose (perturbed-metasnapdel-*: streams deleted through the API, then
// a snapshot at one index on every server, some of them flipped later).
// A holder whose snapshot file is no longer there (2.12 and older delete
// it at the start that logs it corrupt) cannot be compared: it may.
func snapshotMayHold(m *model.Model, f *Facts, h string, key model.AssetKey) bool {
	srv := f.Server(h)
	if srv == nil || srv.Meta == nil || !srv.Meta.SnapshotCorrupt || srv.Meta.SnapshotIndex == 0 {
		return true
	}
	// 2.14 and newer refuse to start JetStream on it ("Could not start
	// metadata controller: raft: snapshot corrupt"; perturbed-metasnapdel-
	// *-v2.15.3-restarted): the file stays, and nothing was dropped.
	if refuses, known := releases.RefusesCorruptMetaSnapshot(srv.Version); refuses && known {
		return false
	}
	for _, o := range m.Servers {
		if o == srv || o.Meta == nil || o.Meta.SnapshotAssigns == nil {
			continue
		}
		if o.Meta.SnapshotIndex == srv.Meta.SnapshotIndex && o.Meta.SnapshotTerm == srv.Meta.SnapshotTerm && !o.Meta.SnapshotAssigns[key] {
			return false
		}
	}
	return true
}

// seenInRunOf says whether the asset was seen in the run in which a server
// logged its meta snapshot corrupt (drop): at or after the first start of
// that run, the earliest of each server's last start before the drop that
// comes after the dropper's own previous start. A drop removes only what
// the cluster still held when it started: a stream every sighting of which
// is older (a compacted API delete before that run: perturbed-metasnapdel-
// *-restarted, on 2.12.15 and 2.11.17) was gone already. Where no start of
// the dropper is logged, it cannot be told: it may.
func seenInRunOf(m *model.Model, a *LostAsset, drop model.TimelineEvent) bool {
	last := map[model.ServerID]time.Time{}
	var prev time.Time // the dropper's start before its last one
	for _, e := range m.Timeline {
		if e.Kind != string(natsfmt.EventStart) || e.Time.After(drop.Time) {
			continue
		}
		if e.Time.After(last[e.Server]) {
			if e.Server == drop.Server {
				prev = last[e.Server]
			}
			last[e.Server] = e.Time
		} else if e.Server == drop.Server && e.Time.After(prev) && e.Time.Before(last[e.Server]) {
			prev = e.Time
		}
	}
	run, ok := last[drop.Server]
	if !ok {
		return true
	}
	for _, t := range last {
		if t.After(prev) && t.Before(run) {
			run = t
		}
	}
	for _, s := range a.Seen {
		if !s.Time.IsZero() && !s.Time.Before(run) {
			return true
		}
	}
	return false
}

// lostCause says what removed an asset: the orphan cleanup a log shows, a
// join of meta groups founded apart, a rename or a meta state that places
// the stream on other peers, a meta snapshot a holder dropped; "" when
// the bundle shows none.
func lostCause(m *model.Model, f *Facts, a *LostAsset) (string, []int) {
	var refs []int
	var lines []string
	for i, e := range m.Timeline {
		if (e.Kind == "orphan-stream" || e.Kind == "orphan-consumer") && e.Account == a.Account && e.Stream == a.Stream && slices.Contains(a.Holders, m.Name(e.Server)) {
			refs = append(refs, i)
			lines = append(lines, fmt.Sprintf("%s at %s (%s line %d)", m.Name(e.Server), e.Time.UTC().Format(time.RFC3339), e.File, e.Line))
		}
	}
	if len(refs) > 0 {
		return "the orphan cleanup: " + strings.Join(lines, "; ") + " logged \"Detected orphaned stream\" and deleted it", refs
	}
	for _, pair := range f.FoundingSplits() {
		for si, side := range pair {
			for _, x := range side {
				if slices.Contains(a.Holders, m.Name(x.Server)) {
					other := pair[1-si]
					return fmt.Sprintf("a lineage join: the meta group founded by %s (leader %s) met the one founded by %s (leader %s), and the state with the higher term replaced this side's, which alone assigned it", FoundersOf(m, side), side[0].Leader, FoundersOf(m, other), other[0].Leader), nil
				}
			}
		}
	}
	key := model.AssetKey{Account: a.Account, Stream: a.Stream}
	for i, e := range m.Timeline {
		if e.Kind == string(natsfmt.EventSnapshotCorrupt) && slices.Contains(a.Holders, m.Name(e.Server)) && snapshotMayHold(m, f, m.Name(e.Server), key) && seenInRunOf(m, a, e) {
			return fmt.Sprintf("a meta snapshot dropped: %s logged its snapshot corrupt at %s (%s line %d) and started without the state it held", m.Name(e.Server), e.Time.UTC().Format(time.RFC3339), e.File, e.Line), []int{i}
		}
	}
	for _, h := range a.Holders {
		srv := f.Server(h)
		if srv == nil || srv.Meta == nil || !srv.Meta.SnapshotCorrupt || !snapshotMayHold(m, f, h, key) {
			continue
		}
		// A snapshot that fails its checksum is dropped when the server
		// starts on it, which its log says (above): a log without that
		// line shows a server that has not started on it since, so the
		// drop removed nothing yet (perturbed-metasnapdel-*: the snapshots
		// flipped after the last stop).
		if srv.Sources["log"] {
			continue
		}
		return fmt.Sprintf("a meta snapshot dropped: the meta snapshot of %s fails its checksum, which the server drops with every assignment it held", h), nil
	}
	for _, h := range a.Holders {
		srv := f.Server(h)
		if srv == nil || srv.Meta == nil {
			continue
		}
		as := srv.Meta.Streams[model.AssetKey{Account: a.Account, Stream: a.Stream}]
		switch {
		case as != nil && srv.PeerID != "" && len(as.Peers) > 0 && !slices.Contains(as.Peers, srv.PeerID):
			for _, p := range as.Peers {
				if r, ok := f.FormerIDs()[p]; ok && r.New == h {
					return fmt.Sprintf("a rename: %s ran as %s before (%s line %d), the stream's group still lists that old id %s, so as %s it is no member of the group and removed its copy at its first start (\"JetStream removing stream\", a debug line only)", h, r.Old, r.File, r.Line, p, h), nil
				}
			}
			return fmt.Sprintf("%s is no member of the stream's group in its own meta state (peers %s): the server removed its copy (\"JetStream removing stream\", a debug line only)", h, strings.Join(model.NamesFor(m, as.Peers), ", ")), nil
		}
	}
	// An intact meta state without the asset is what an API delete leaves
	// once the meta layer compacts the removeStream op into its snapshot
	// (every minute on 2.12+, and at a clean stop: deleted-v2.12.15,
	// deleted-v2.15.3): no cause, so no loss.
	return "", nil
}
