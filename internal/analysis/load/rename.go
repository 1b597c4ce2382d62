package load

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/logscan"
)

// nameAssignment is one name a naming step gives: srv takes name (merged
// into the server already called that), said in note.
type nameAssignment struct {
	srv          *model.Server
	name, source string
	note         string
}

// applyNames gives each server its assigned name, in order: the one place
// a naming step changes the model.
func (l *loader) applyNames(as []nameAssignment) {
	for _, a := range as {
		l.note("%s", a.note)
		l.renameServer(a.srv, a.name, a.source)
	}
}

// unnamedStoreNames names the stores whose folder, paired log and raft
// groups did not: once the meta state is read, the streams a store holds
// and the groups it is a member of leave, together, one peer id that can
// be its own; a log banner or capture elsewhere in the bundle names it. A
// name is given once (to the first such store).
func (l *loader) unnamedStoreNames() []nameAssignment {
	var out []nameAssignment
	given := map[string]bool{}
	for _, srv := range l.m.Servers {
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
				if !l.m.Same(c.Server, srv.ID) {
					continue
				}
				a := srv.Meta.Streams[model.AssetKey{Account: s.Account, Stream: s.Name}]
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
		if other := l.m.Server(name); other != nil && other.StoreDir != "" || given[name] {
			continue
		}
		given[name] = true
		out = append(out, nameAssignment{srv: srv, name: name, source: "store",
			note: fmt.Sprintf("store %s: named %s by content: its streams and raft groups leave peer id %s, which is %s's", srv.StoreDir, name, id, name)})
	}
	return out
}

// placeholderNames names each server known only by its raft node id (a
// capture that named nobody, seen before the source that names it was
// read) by the server whose name hashes to that id, once the whole bundle
// is read: one server, never an invented second one.
func (l *loader) placeholderNames() []nameAssignment {
	var out []nameAssignment
	for _, srv := range l.m.Servers {
		node, ok := strings.CutPrefix(srv.Name, nodePlaceholder)
		if !ok || srv.NameSource != "unknown" || srv.StoreDir != "" {
			continue
		}
		name := ""
		if s := l.m.ServerByID(node); s != nil && s != srv {
			name = s.Name
		} else if n, ok := l.m.IDs[node]; ok {
			name = n
		}
		if name == "" {
			continue
		}
		out = append(out, nameAssignment{srv: srv, name: name, source: "capture",
			note: fmt.Sprintf("server with raft node id %s is %s (its name hashes to that id)", node, name)})
	}
	return out
}

// renamedInLog handles a log whose boots name the server differently
// (server_name changed on the same store and log): the server is the one it
// runs as now (the last boot's name), the earlier names are recorded as
// Renames and everything said under them is merged into it. The old names
// stay known, so their peer ids map to them, not to "unknown".
func (l *loader) renamedInLog(file, first string, boots []logscan.Banner) {
	latest := boots[len(boots)-1]
	newLine := latest.Line
	for i := len(boots) - 1; i >= 0 && boots[i].Name == latest.Name; i-- {
		newLine = boots[i].Line
	}
	names := []string{first}
	lastLine := map[string]int{}
	for _, b := range boots {
		if b.Name != "" && b.Name != latest.Name {
			names = model.AppendUnique(names, b.Name)
			lastLine[b.Name] = b.Line
		}
	}
	for _, old := range names {
		if old == latest.Name {
			continue
		}
		l.m.Renames = append(l.m.Renames, model.Rename{Old: old, New: latest.Name, File: file, Line: newLine, OldLine: lastLine[old], Time: latest.Time})
		l.note("log %s: the server ran as %s and runs as %s since line %d (server_name changed on the same log): one server, two names", file, old, latest.Name, newLine)
		l.renameServer(l.addServer(old, "log"), latest.Name, "log")
	}
}

// RenameServer renames s in m as a naming step of the load does: one
// assignment to its record, or a merge into the server already named so.
func RenameServer(m *model.Model, s *model.Server, name, source string) {
	(&loader{m: m}).renameServer(s, name, source)
}

// renameServer gives srv the name name, or merges it into the server
// record already called that. Every model record refers to a server by id
// (ServerID) and the report names it through Model.Name, so a rename is
// the one assignment to srv.Name and a merge the one entry of
// Model.merged beside folding srv's own fields into the other record: no
// collection of the model is rewritten.
func (l *loader) renameServer(srv *model.Server, name, source string) {
	old := srv.Name
	// The note that called it a placeholder no longer holds.
	var notes []string
	for _, n := range l.m.Notes {
		if !strings.HasSuffix(n, "called "+old+" here") {
			notes = append(notes, n)
		}
	}
	l.m.Notes = notes
	if other := l.m.Server(name); other != nil && other != srv {
		l.m.Merge(srv, other)
	} else {
		srv.Name, srv.NameSource, srv.PeerID = name, source, model.PeerID(name)
	}
	if s := l.m.Server(name); s != nil && source == "store" {
		s.NameSource = source
	}
}
