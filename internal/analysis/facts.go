package analysis

import "sort"

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
			s := f.byName[v.Server]
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
