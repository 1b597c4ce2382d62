package load

import (
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"strings"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/storecrypt"
	"github.com/jsforensics/jsforensics/report"
)

// Loading has two phases. readRecords does the reading: each ack log,
// stream folder, raft group folder, audit archive and config is read by one
// function that returns what it parsed as a record, with the errors naming
// file, offset and structure; it has no Model. The loader's steps
// (LoadWith) then assemble the Model from those records; where one reader
// needs what another read (the store scan looks for the values the ack
// logs' Jepsen histories published), that is an argument of the reader.

// Records is everything the read phase took from a bundle. Nothing in it is
// changed once it is read.
type Records struct {
	// AckLogs: one per b.AckLogs, in its order.
	AckLogs []ackLogRead
	// Copies: one read per stream folder, by the folder's path.
	Copies map[string]copyRead
	// Raft: the raft group folders of each clustered store (small files
	// and newest snapshot), by store folder, in the order of Store.Groups.
	Raft map[string][]*raftRead
	// WALs: the WAL of each of those group folders, by the folder's path.
	WALs map[string]*walRead
	// Audits: the `nats audit gather` archives, in the order of b.Captures.
	Audits []auditRead
	// Configs: one per b.Configs, in its order, includes read.
	Configs []serverConfig
	// JWTs: one per b.JWTs, in its order, decoded.
	JWTs []jwtRead
	// KeyFiles: per store folder, the key files of a store encrypted at
	// rest as the keys given open them (nil without keys).
	KeyFiles map[string][]storecrypt.KeyFile
	// crashes: what a reader panicked with, by the assembling step that
	// takes its records (the step says so; the rest was read).
	crashes map[string]any
}

// ackLogRead is one ack log as read: its summary and why reading stopped.
type ackLogRead struct {
	path string
	sum  *model.AckLog
	err  error // opening or reading it (sum holds what was read before)
	open bool  // err is the open's: nothing was read
	// reopened says why it was opened again rather than taken from the
	// sniff (bundle.LogFile.Reopened), "" when it was not.
	reopened string
}

// auditRead is one `nats audit gather` archive, assembled by its manifest.
type auditRead struct {
	dir   string // the archive's capture/ folder (bundle.AuditCaptureDir)
	audit *capture.Audit
}

// readRecords reads every file of b that loading takes, each once. meter
// is told how far it got. It touches no Model.
func readRecords(b *bundle.Bundle, mt *progress.Meter) *Records {
	r := &Records{crashes: map[string]any{}}
	try := func(step string, f func()) {
		if crash := Crashed(f); crash != nil {
			r.crashes[step] = crash
		}
	}
	try("reading ack logs", func() { r.AckLogs = readAckLogs(b.OpenLog, b.AckLogs) })
	try("reading stores", func() { r.Raft, r.Copies = readStores(b.FS, b.Stores, historyValues(r.AckLogs), mt) })
	try("reading captures", func() { r.Audits = readAudits(b, mt) })
	try("reading raft state", func() {
		r.WALs = readWALs(b.FS, b.Stores, r.Raft, raftzWant(b.Captures, r.Audits), historyValues(r.AckLogs), mt)
	})
	try("measuring the writes exposed by unclean stops", func() { r.Configs = readConfigs(b.FS, b.Configs) })
	try("reading account JWTs", func() { r.JWTs = readJWTs(b.JWTs) })
	if c, ok := b.FS.(*storecrypt.FS); ok {
		try("opening encrypted stores", func() {
			r.KeyFiles = map[string][]storecrypt.KeyFile{}
			for _, st := range b.Stores {
				r.KeyFiles[st.Dir] = c.KeyFiles(st.Dir)
			}
		})
	}
	return r
}

// crashed runs f and returns what it panicked with (nil when it did not):
// a bug that panics on one file costs that file's record.
func Crashed(f func()) (crash any) {
	defer func() { crash = recover() }()
	f()
	return nil
}

// readStores reads, per store, its raft group folders' small files and
// snapshots (a clustered store's), then every stream folder, each once, on
// every core (forEach). values are the payloads the scans look for
// (historyValues).
func readStores(fsys fs.FS, stores []bundle.Store, values map[string]bool, mt *progress.Meter) (map[string][]*raftRead, map[string]copyRead) {
	var folders []string
	at := map[string]int{} // folder → its place in folders, for the meter
	for _, st := range stores {
		for _, acc := range st.Accounts {
			for _, sname := range acc.Streams {
				at[path.Join(st.Dir, acc.Name, "streams", sname)] = len(folders)
				folders = append(folders, path.Join(st.Dir, acc.Name, "streams", sname))
			}
		}
	}
	plan := mt.Begin(progress.StageStores, fsys, folders)
	raft := readRaftGroups(fsys, stores)
	for _, f := range folders {
		if strings.HasPrefix(path.Base(f), ".") {
			plan.Done(at[f]) // being deleted: not read (stream)
		}
	}
	// The copies of a stream several clustered stores hold are read
	// together, to compare them in the same read (load_replicas.go).
	units := planCopyReads(fsys, stores)
	reads := make([][]copyRead, len(units))
	share := min(runtime.GOMAXPROCS(0), len(units))
	ForEach(len(units), func(i int) {
		reads[i] = units[i].read(fsys, values, share)
		for _, d := range units[i].dirs {
			plan.Done(at[d])
		}
	})
	copies := map[string]copyRead{}
	for _, rds := range reads {
		for _, rd := range rds {
			copies[rd.dir] = rd
		}
	}
	return raft, copies
}

// readRaftGroups reads the raft group folders of the clustered stores, by
// store folder, in the order of Store.Groups (none for another store).
func readRaftGroups(fsys fs.FS, stores []bundle.Store) map[string][]*raftRead {
	type groupDir struct{ store, dir, group string }
	var todo []groupDir
	for _, st := range stores {
		if st.SysAccount == "" {
			continue
		}
		for _, g := range st.Groups {
			todo = append(todo, groupDir{st.Dir, path.Join(st.Dir, st.SysAccount, "_js_", g), g})
		}
	}
	reads := make([]*raftRead, len(todo))
	ForEach(len(todo), func(i int) {
		g := todo[i]
		if crash := Crashed(func() { reads[i] = readRaftGroup(fsys, g.dir, g.group) }); crash != nil {
			reads[i] = &raftRead{rec: model.RaftRecord{Group: g.group, Dir: g.dir}, crash: crash}
		}
	})
	raft := map[string][]*raftRead{}
	for _, st := range stores {
		raft[st.Dir] = nil
	}
	for i, g := range todo {
		raft[g.store] = append(raft[g.store], reads[i])
	}
	return raft
}

// readAudits assembles every `nats audit gather` archive of b's captures by
// its manifest, from the answers the sniff decoded of its entries (its
// files are not read again where the sniff decoded them).
func readAudits(b *bundle.Bundle, mt *progress.Meter) []auditRead {
	captures := b.Captures
	var paths []string
	for _, bc := range captures {
		paths = append(paths, bc.Path)
	}
	// Captures are small: counted done together, at the end.
	plan := mt.Begin(progress.StageCaptures, b.FS, paths)
	defer func() {
		for i := range paths {
			plan.Done(i)
		}
	}()
	var out []auditRead
	for _, bc := range captures {
		if dir, ok := bundle.AuditCaptureDir(bc); ok && bc.Manifest != nil {
			out = append(out, auditRead{dir: dir, audit: capture.AuditOf(b.FS, dir, bc.Manifest, SniffedIn(b))})
		}
	}
	return out
}

// raftzWant are, by group, the WAL sequences whose store time a /raftz
// answer gave (its WAL's first and last), for the WAL pass to keep
// (WALSummary.Stamps): of every answer of the bundle, whichever server
// the loader attributes it to.
func raftzWant(captures []bundle.Capture, audits []auditRead) map[string]map[uint64]bool {
	want := map[string]map[uint64]bool{}
	add := func(c capture.Capture) {
		if c.Raftz == nil {
			return
		}
		rz := *c.Raftz
		for _, acc := range rz.Accounts() {
			for _, g := range rz.Groups(acc) {
				w := rz[acc][g].WAL
				if w.Messages == 0 {
					continue
				}
				if want[g] == nil {
					want[g] = map[uint64]bool{}
				}
				want[g][w.FirstSeq], want[g][w.LastSeq] = true, true
			}
		}
	}
	for _, bc := range captures {
		for _, c := range bc.Decoded {
			add(c)
		}
	}
	for _, a := range audits {
		for _, c := range a.audit.Captures() {
			add(c)
		}
	}
	return want
}

// readConfigs parses every config the bundle reader found, includes read
// through fsys once each (readServerConfig).
func readConfigs(fsys fs.FS, configs []bundle.Config) []serverConfig {
	held := make(map[string][]byte, len(configs))
	for _, c := range configs {
		held[c.Path] = c.Data
	}
	out := make([]serverConfig, 0, len(configs))
	for _, c := range configs {
		out = append(out, readServerConfig(fsys, c, held))
	}
	return out
}

// crashNote is the note of a reader that panicked on what.
func crashNote(what string, crash any) string {
	return fmt.Sprintf("%s stopped by an internal error, the rest of the analysis went on: %v", what, crash)
}

// readOf takes what b recognized and could not read. Call it after
// loading: a zip read in place learns its damage while it is read.
func readOf(b *bundle.Bundle) model.Read {
	r := model.Read{Stores: len(b.Stores), Logs: len(b.Logs), Captures: len(b.Captures), AckLogs: len(b.AckLogs)}
	seen := map[string]bool{}
	for _, p := range append(append([]bundle.Problem(nil), b.Problems...), b.ReadDamage()...) {
		r.Unread = append(r.Unread, report.UnreadFile{Path: p.Path, Reason: p.Reason})
		seen[p.Path] = true
	}
	if strings.HasPrefix(b.Archive, "tar") && len(b.Undelivered) > 0 {
		r.CutAt = b.Undelivered[len(b.Undelivered)-1]
	}
	for _, p := range b.NotDelivered() {
		if !seen[p] {
			r.Unread = append(r.Unread, report.UnreadFile{Path: p, Reason: "the archive did not deliver it intact"})
			seen[p] = true
		}
	}
	return r
}
