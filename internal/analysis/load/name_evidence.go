package load

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/logscan"
)

// Two more sources that can name a store no path, paired log or raft
// peer set names (a cluster whose groups all span the same peers), each
// taken from records the loader already holds: the Store Directory a
// server's log printed at boot, and the raft figures a server reported in
// its /raftz capture. Each is used only where it singles out one server
// whose peer id the store's raft state holds and which has no store yet;
// otherwise the store keeps its placeholder and a note says why.

// logStoreDir is one Store Directory a log's boots printed: the path as
// the server saw it, and the server the log belongs to.
type logStoreDir struct {
	file, dir string
	server    model.ServerID
}

// keepStoreDirs records the Store Directory lines of one log's boots
// (logscan's store-dir event, kept on each Banner), once per directory.
func (l *loader) keepStoreDirs(file string, server model.ServerID, boots []logscan.Banner) {
	seen := map[string]bool{}
	for _, b := range boots {
		if b.StoreDir == "" || seen[b.StoreDir] {
			continue
		}
		seen[b.StoreDir] = true
		l.storeDirs = append(l.storeDirs, logStoreDir{file: file, server: server, dir: b.StoreDir})
	}
}

// raftzFigure is one group as one server's /raftz answer reported it.
type raftzFigure struct {
	server model.ServerID
	group  string
	file   string
	wal    model.WALFigures
	// firstTS, lastTS: the store times of the WAL's first and last entry
	// (Unix ns, 0 when not given).
	firstTS, lastTS int64
}

// keepRaftzFigure records what srv's /raftz said of group g.
func (l *loader) keepRaftzFigure(srv *model.Server, file, group string, rg capture.RaftzGroup) {
	l.raftzFigs = append(l.raftzFigs, raftzFigure{server: srv.ID, group: group, file: file,
		wal:     model.WALFigures{FirstSeq: rg.WAL.FirstSeq, LastSeq: rg.WAL.LastSeq, Msgs: rg.WAL.Messages, PIndex: rg.PIndex, PTerm: rg.PTerm},
		firstTS: unixNano(rg.WAL.FirstTime), lastTS: unixNano(rg.WAL.LastTime)})
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// sameEntries says how a store's WAL r and a /raftz figure f agree: the
// store holds an entry f gave with the very store time f gave (stamped),
// or the WAL's figures are the same (figures).
func sameEntries(r *model.WALSummary, f raftzFigure) (stamped, figures bool) {
	for _, at := range []struct {
		seq uint64
		ts  int64
	}{{f.wal.FirstSeq, f.firstTS}, {f.wal.LastSeq, f.lastTS}} {
		if ts, ok := r.Stamps[at.seq]; ok && f.wal.Msgs > 0 && at.ts != 0 && ts == at.ts {
			stamped = true
		}
	}
	return stamped, r.WALFigures == f.wal
}

// pathComponents splits a path as a server printed it (slashes or
// backslashes) or as the bundle holds it into its non-empty components.
func pathComponents(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
}

// tailMatch counts the trailing components two paths share above the
// "jetstream" folder the server appends to every store_dir (which tells
// no server from another): 0 when they share none.
func tailMatch(a, b []string) int {
	n := 0
	for i, j := len(a)-1, len(b)-1; i >= 0 && j >= 0 && a[i] == b[j]; i, j = i-1, j-1 {
		n++
	}
	if n > 0 && a[len(a)-1] == "jetstream" {
		n--
	}
	return n
}

// unnamedStores are the servers known only by a placeholder that hold a
// store, with their store.
func (l *loader) unnamedStores() (out []*model.Server, stores map[*model.Server]bundle.Store) {
	stores = map[*model.Server]bundle.Store{}
	for _, srv := range l.m.Servers {
		if srv.NameSource != "unknown" || srv.StoreDir == "" {
			continue
		}
		for _, st := range l.b.Stores {
			if st.Dir == srv.StoreDir {
				out, stores[srv] = append(out, srv), st
			}
		}
	}
	return out, stores
}

// hasStore says whether a server other than srv called name holds a store.
func (l *loader) hasStore(name string, srv *model.Server) bool {
	s := l.m.Server(name)
	return s != nil && s != srv && s.StoreDir != ""
}

// byStoreDir is the server without a store whose log printed a Store
// Directory ending like st's path, when one such server does so best;
// else "" and why.
func (l *loader) byStoreDir(srv *model.Server, st bundle.Store) (string, string) {
	if len(l.storeDirs) == 0 {
		return "", "no log gives a Store Directory"
	}
	own := pathComponents(st.Dir)
	best, servers := 0, map[string][]string{}
	for _, sd := range l.storeDirs {
		if l.hasStore(l.m.Name(sd.server), srv) {
			continue
		}
		n := tailMatch(own, pathComponents(sd.dir))
		if n == 0 || n < best {
			continue
		}
		if n > best {
			best, servers = n, map[string][]string{}
		}
		name := l.m.Name(sd.server)
		servers[name] = append(servers[name], fmt.Sprintf("%s (%s)", sd.dir, sd.file))
	}
	switch {
	case best == 0:
		return "", "no log's Store Directory ends like its path"
	case len(servers) > 1:
		return "", fmt.Sprintf("the Store Directory lines of %s end like its path equally", strings.Join(model.SortedKeys(servers), ", "))
	}
	for name, dirs := range servers {
		return name, fmt.Sprintf("its path ends like the Store Directory %s", strings.Join(dirs, ", "))
	}
	return "", ""
}

// byRaftz is the one server whose /raftz tied, for a group the store
// holds, its WAL to the store's where no other server without a store
// did; else "" and why. A tie is an entry the store holds with the store
// time the server reported for it (first_ts, last_ts: each server stamps
// the entries it stores with its own clock), else the same WAL figures
// (first and last sequence, entries, last index and term). Groups that
// several servers tie alike, or none does (the store moved on after the
// capture), say nothing.
func (l *loader) byRaftz(srv *model.Server, st bundle.Store) (string, string) {
	if len(l.raftzFigs) == 0 {
		return "", "no raftz capture"
	}
	figs := map[string][]raftzFigure{}
	for _, f := range l.raftzFigs {
		figs[f.group] = append(figs[f.group], f)
	}
	votes := map[string][]string{}
	compared := 0
	for _, r := range l.m.RaftRecords {
		if !l.m.Same(r.Server, srv.ID) || r.WAL == nil || len(figs[r.Group]) == 0 {
			continue
		}
		compared++
		// An entry stamped with the time a server reported for it is that
		// server's own; equal figures only where no stamp tells.
		stamped, alike := map[string]string{}, map[string]string{}
		for _, f := range figs[r.Group] {
			s := l.m.ServerOf(f.server)
			if s == nil || s.NameSource == "unknown" || l.hasStore(s.Name, srv) {
				continue
			}
			st, fig := sameEntries(r.WAL, f)
			if st {
				stamped[s.Name] = f.file
			}
			if fig {
				alike[s.Name] = f.file
			}
		}
		w, match, how := r.WAL, alike, "the WAL figures"
		if len(stamped) > 0 {
			match, how = stamped, "an entry stamped at the time"
		}
		if len(match) != 1 {
			continue
		}
		for name, file := range match {
			votes[name] = append(votes[name], fmt.Sprintf("%s: %s %s reported in %s (WAL %d..%d, %d entries, last index %d term %d)", r.Group, how, name, file, w.FirstSeq, w.LastSeq, w.Msgs, w.PIndex, w.PTerm))
		}
	}
	switch {
	case compared == 0:
		return "", "no raftz capture reports a group it holds"
	case len(votes) == 0:
		return "", fmt.Sprintf("no server's raftz figures for its %d groups are its own alone", compared)
	case len(votes) > 1:
		return "", fmt.Sprintf("its groups' figures are those %s reported", strings.Join(model.SortedKeys(votes), " and "))
	}
	for name, groups := range votes {
		return name, strings.Join(groups, "; ")
	}
	return "", ""
}

// nameStoresByEvidence names the stores still known by a placeholder from
// the logs' Store Directory lines, then from the raftz captures, round by
// round until neither names another (a store named leaves its server out
// of the others' candidates): each round's names (evidenceNames) are given
// before the next round looks. A name is taken only when one store points
// at it and the store's raft state holds its peer id.
func (l *loader) nameStoresByEvidence() {
	var why map[*model.Server][]string
	for {
		var as []nameAssignment
		as, why = l.evidenceNames()
		if len(as) == 0 {
			break
		}
		l.applyNames(as)
	}
	srvs, _ := l.unnamedStores()
	sort.Slice(srvs, func(i, j int) bool { return srvs[i].StoreDir < srvs[j].StoreDir })
	for _, srv := range srvs {
		if len(why[srv]) > 0 {
			l.note("store %s: not named by the logs' Store Directory lines nor the raftz captures (%s)", srv.StoreDir, strings.Join(uniqueStrings(why[srv]), "; "))
		}
	}
}

// evidenceNames is one round of nameStoresByEvidence: the names the first
// source that names any store gives (the logs' Store Directory lines, else
// the raftz figures), and why each store still unnamed is not named.
func (l *loader) evidenceNames() ([]nameAssignment, map[*model.Server][]string) {
	type source struct {
		name, what string
		by         func(*model.Server, bundle.Store) (string, string)
	}
	sources := []source{{"log", "log's Store Directory", l.byStoreDir}, {"raftz", "raftz figures", l.byRaftz}}
	why := map[*model.Server][]string{}
	srvs, stores := l.unnamedStores()
	for _, src := range sources {
		picks := map[string][]*model.Server{}
		reason := map[*model.Server]string{}
		for _, srv := range srvs {
			st := stores[srv]
			name, because := src.by(srv, st)
			if name == "" {
				why[srv] = append(why[srv], src.name+": "+because)
				continue
			}
			if !l.holdsPeerOf(st, name) {
				why[srv] = append(why[srv], fmt.Sprintf("%s: points at %s, whose peer id %s is in none of its raft groups", src.name, name, model.PeerID(name)))
				continue
			}
			picks[name] = append(picks[name], srv)
			reason[srv] = because
		}
		var as []nameAssignment
		for _, name := range model.SortedKeys(picks) {
			if ps := picks[name]; len(ps) > 1 {
				for _, p := range ps {
					why[p] = append(why[p], fmt.Sprintf("%s: points at %s for %d stores", src.name, name, len(ps)))
				}
				continue
			}
			srv := picks[name][0]
			as = append(as, nameAssignment{srv: srv, name: name, source: "store",
				note: fmt.Sprintf("store %s: named %s by its %s: %s", srv.StoreDir, name, src.what, reason[srv])})
		}
		if len(as) > 0 {
			return as, why
		}
	}
	return nil, why
}

// holdsPeerOf says whether st's raft state (when it has any) holds the
// peer id of name or of a name its log says the server ran as before
// (server_name changed on the same store: the raft state keeps the old
// node id).
func (l *loader) holdsPeerOf(st bundle.Store, name string) bool {
	all, _ := l.storePeerIDs(st)
	if len(all) == 0 || all[model.PeerID(name)] {
		return true
	}
	for _, r := range l.m.Renames {
		if r.New == name && all[model.PeerID(r.Old)] {
			return true
		}
	}
	return false
}

// uniqueStrings keeps the first of each string, in order.
func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
