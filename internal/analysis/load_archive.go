package analysis

import (
	"path"
	"strings"
)

// setAsideUndelivered keeps archive damage from reading as store damage: a
// corruption found in a file the archive did not deliver intact (a torn or
// unreadable entry, bundle.NotDelivered) is not a store-corrupt finding, and
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
	// Folders (a stream or raft group: the folder holding msgs/) that lost a
	// file.
	lost := map[string]bool{}
	for _, p := range notDelivered {
		lost[storeFolder(p)] = true
	}
	kept := l.m.Corruptions[:0]
	for _, c := range l.m.Corruptions {
		if l.b.Delivered(c.File) {
			kept = append(kept, c)
			continue
		}
		l.note("%s: %s not readable: the archive did not deliver it intact (see the bundle's archive damage note); not taken for store damage (%s: %s)", l.m.Name(c.Server), c.File, c.Kind, c.Message)
	}
	l.m.Corruptions = kept
	keptIM := l.m.IndexMismatches[:0]
	for _, im := range l.m.IndexMismatches {
		if !lost[storeFolder(im.File)] {
			keptIM = append(keptIM, im)
			continue
		}
		l.note("%s: %s compared with blocks the archive did not deliver intact (see the bundle's archive damage note); not taken for an index mismatch (%s)", l.m.Name(im.Server), im.File, im.Detail)
	}
	l.m.IndexMismatches = keptIM
}

// storeFolder is the stream or raft group folder a store file belongs to:
// the folder above msgs/ or obs/, else the file's own folder.
func storeFolder(p string) string {
	dir := path.Dir(p)
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		switch path.Base(d) {
		case "msgs", "obs", "snapshots":
			return path.Dir(d)
		}
		if strings.HasSuffix(path.Dir(d), "/streams") || strings.HasSuffix(path.Dir(d), "/_js_") {
			return d
		}
	}
	return dir
}
