package load

import (
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

// setAsideUndelivered keeps archive damage from reading as store damage: a
// corruption found in a file the archive did not deliver intact (a torn or
// unreadable entry, bundle.NotDelivered), or in a folder that lost such a
// file (a meta.inf the cut archive never reached), is not a store-corrupt
// finding, and
// an index.db disagreeing with blocks of a folder that lost a file to the
// archive is not an index-mismatch. Each is said in a note instead; the
// archive damage itself is in the bundle's notes.
func (l *loader) setAsideUndelivered() {
	// Damage met while reading a zip in place is known only now.
	for _, p := range l.b.ReadDamage() {
		l.note("bundle: %s", p)
	}
	notDelivered := l.b.NotDelivered()
	if len(notDelivered) == 0 {
		return
	}
	if strings.HasPrefix(l.b.Archive, "tar") {
		l.note("bundle: the %s archive did not deliver an entry intact, and a tar stream that breaks off loses every entry after it, unlisted: a server, log or capture missing here may be one it lost (peer-unknown ids among them)", l.b.Archive)
	}
	// Folders (a stream or raft group: the folder holding msgs/) that lost a
	// file.
	lost := map[string]bool{}
	for _, p := range notDelivered {
		lost[model.StoreFolder(p)] = true
	}
	kept := l.m.Corruptions[:0]
	for _, c := range l.m.Corruptions {
		switch {
		case !l.b.Delivered(c.File):
			l.note("%s: %s not readable: the archive did not deliver it intact (see the bundle's archive damage note); not taken for store damage (%s: %s)", l.m.Name(c.Server), c.File, c.Kind, c.Message)
		case lost[model.StoreFolder(c.File)]:
			// A file missing or short beside one the archive tore: a tar
			// stream that breaks off loses every entry after the torn one,
			// unlisted, so what the folder lacks is not in the bundle, not
			// missing on the server.
			l.note("%s: %s: not in the bundle as the server wrote it: its folder lost a file to the archive (see the bundle's archive damage note); not taken for store damage (%s: %s)", l.m.Name(c.Server), c.File, c.Kind, c.Message)
		default:
			kept = append(kept, c)
		}
	}
	l.m.Corruptions = kept
	// What checks judge from such files (an index.db against the blocks
	// of such a folder, a raft group's files) they leave out, and say so
	// among what they skipped (Model.notAsWritten).
	l.m.TornFolders = lost
	l.m.Undelivered = map[string]bool{}
	for _, p := range notDelivered {
		l.m.Undelivered[p] = true
	}
	// A meta state read from a _meta_ folder the archive tore is a part
	// of the server's: what it lacks is no missing assignment (orphan-risk
	// and asset-lost must not judge from it).
	for _, srv := range l.m.Servers {
		if srv.Meta == nil || srv.StoreDir == "" {
			continue
		}
		for folder := range lost {
			if strings.HasPrefix(folder, srv.StoreDir+"/") && strings.HasSuffix(folder, "/_js_/_meta_") {
				l.note("%s: its meta state is left out: the archive did not deliver all of %s (see the bundle's archive damage note), so the assignments read from it are a part of the server's", srv.Name, folder)
				srv.Meta = nil
				break
			}
		}
	}
}

// setAsidePartialCopies leaves out of the replica comparison the stream
// copies whose folder lost a file to the archive (bundle.NotDelivered): the
// blocks, index.db and meta.inf the bundle holds of them are a part of
// what the server wrote, so compared with the other replicas they would
// read as a replica behind or ahead (replica-gap). The copy stays in the
// model with what was read of it; each is said in a note. It runs before
// the replica comparison.
func (l *loader) setAsidePartialCopies() {
	lost := map[string]bool{}
	for _, p := range l.b.NotDelivered() {
		lost[model.StoreFolder(p)] = true
	}
	if len(lost) == 0 {
		return
	}
	for _, st := range l.m.Streams {
		for _, c := range st.Copies {
			if cc := l.compare[c]; lost[c.Path] && cc != nil && cc.live != nil {
				cc.live = nil
				l.note("%s: its copy of %s > %s (%s) is left out of the replica comparison: the archive did not deliver all of that folder (see the bundle's archive damage note), so the bundle holds only a part of what the server stored", l.m.Name(c.Server), st.Account, st.Name, c.Path)
			}
		}
	}
}
