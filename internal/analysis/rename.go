package analysis

import (
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// nameUnnamedStores gives a name to stores whose folder, paired log and
// raft groups did not: once the meta state is read, the streams a store
// holds and the groups it is a member of leave, together, one peer id that
// can be its own; a log banner or capture elsewhere in the bundle names it.
func (l *loader) nameUnnamedStores() {
	for _, srv := range append([]*Server(nil), l.m.Servers...) {
		if srv.NameSource != "unknown" || srv.StoreDir == "" || srv.Meta == nil {
			continue
		}
		var st *bundle.Store
		for i := range l.b.Stores {
			if l.b.Stores[i].Dir == srv.StoreDir {
				st = &l.b.Stores[i]
			}
		}
		if st == nil {
			continue
		}
		_, self := l.storePeerIDs(*st)
		for _, s := range l.m.Streams {
			for _, c := range s.Copies {
				if c.Server != srv.Name {
					continue
				}
				a := srv.Meta.Streams[AssetKey{s.Account, s.Name}]
				if a == nil || len(a.Peers) == 0 {
					continue
				}
				set := map[string]bool{}
				for _, p := range a.Peers {
					set[p] = true
				}
				if self == nil {
					self = set
					continue
				}
				for id := range self {
					if !set[id] {
						delete(self, id)
					}
				}
			}
		}
		if len(self) != 1 {
			continue
		}
		var id string
		for k := range self {
			id = k
		}
		name, ok := l.m.IDs[id]
		if !ok {
			continue
		}
		if other := l.m.server(name); other != nil && other.StoreDir != "" {
			continue
		}
		l.note("store %s: named %s by content: its streams and raft groups leave peer id %s, which is %s's", srv.StoreDir, name, id, name)
		l.renameServer(srv, name)
	}
}

// renameServer renames a server everywhere in the model, merging it into a
// server of that name seen in logs or captures.
func (l *loader) renameServer(srv *Server, name string) {
	old := srv.Name
	// The note that called it a placeholder no longer holds.
	var notes []string
	for _, n := range l.m.Notes {
		if !strings.HasSuffix(n, "called "+old+" here") {
			notes = append(notes, n)
		}
	}
	l.m.Notes = notes
	if other := l.m.server(name); other != nil && other != srv {
		other.StoreDir = srv.StoreDir
		other.Meta = srv.Meta
		for k := range srv.Sources {
			other.Sources[k] = true
		}
		var keep []*Server
		for _, s := range l.m.Servers {
			if s != srv {
				keep = append(keep, s)
			}
		}
		l.m.Servers = keep
	} else {
		srv.Name, srv.NameSource, srv.PeerID = name, "store", peerID(name)
	}
	if s := l.m.server(name); s != nil {
		s.NameSource = "store"
	}
	for _, st := range l.m.Streams {
		for _, c := range st.Copies {
			if c.Server == old {
				c.Server = name
			}
		}
		for i, a := range st.AssignedTo {
			if a == old {
				st.AssignedTo[i] = name
			}
		}
		sort.Strings(st.AssignedTo)
	}
	for i := range l.m.Corruptions {
		if l.m.Corruptions[i].Server == old {
			l.m.Corruptions[i].Server = name
		}
	}
	for i := range l.m.IndexMismatches {
		if l.m.IndexMismatches[i].Server == old {
			l.m.IndexMismatches[i].Server = name
		}
	}
	for _, g := range l.m.Groups {
		for i := range g.Views {
			if g.Views[i].Server == old {
				g.Views[i].Server = name
			}
		}
		for i := range g.History {
			if g.History[i].Server == old {
				g.History[i].Server = name
			}
		}
	}
	for i := range l.m.Timeline {
		if l.m.Timeline[i].Server == old {
			l.m.Timeline[i].Server = name
		}
	}
}
