package main

// Issue 31 item 7: streams deleted on purpose, then meta snapshots that
// fail their checksum. Three servers create KEEP (R3) and the streams
// EARLY_R3, EARLY_R1 and LATE (R3), are restarted (every log names each
// stream in a "Restored N messages" line), EARLY_* are deleted through the
// API, the cluster is stopped gracefully (a meta snapshot at the same index
// on every server, which no longer assigns EARLY_*), started again, LATE is
// deleted through the API (its removeStream op in every meta WAL after
// that snapshot) and every server is killed (SIGKILL: no snapshot at the
// stop). Copies of that state get the newest meta snapshot of one, two and
// all three servers flipped by one bit; each is committed under
// testdata/perturbed/perturbed-metasnapdel-<one|two|all>-<v>/ (bundle/ =
// the damaged state, oracle.json = what the real server of that version
// did when the three were started together on a further copy of it).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// metaSnapDelVersions are the versions of the committed fixtures.
var metaSnapDelVersions = []string{"v2.11.17", "v2.12.15", "v2.15.3"}

func metaSnapDelScenarios() []Scenario {
	var out []Scenario
	for _, v := range metaSnapDelVersions {
		out = append(out, Scenario{Name: "perturbed-metasnapdel-" + v,
			Doc:     "issue 31: 3 x " + v + ": streams deleted before and after a meta snapshot at the same index on every server, the snapshot of one, two and all servers flipped, restarted on a copy (testdata/perturbed)",
			Timeout: 14 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return metaSnapDel(ctx, env, v) }})
	}
	return out
}

// MetaSnapDelOracle is oracle.json of perturbed-metasnapdel-<damage>-<v>.
type MetaSnapDelOracle struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Mode    string `json:"mode"` // "metasnapdel"
	// RestartedFrom: for <name>-restarted, the fixture whose damaged state
	// the restart below ran on; this bundle is what it left (stores after
	// the stop, logs through it).
	RestartedFrom string `json:"restarted_from,omitempty"`
	Account       string `json:"account"`
	// Kept: the streams never deleted; DeletedBefore: deleted through the
	// API before the graceful stop that wrote the snapshots (no snapshot
	// assigns them); DeletedAfter: deleted after it (every snapshot
	// assigns them, every meta WAL holds the removal after it).
	Kept          []string `json:"kept"`
	DeletedBefore []string `json:"deleted_before"`
	DeletedAfter  []string `json:"deleted_after"`
	// Snapshots: per server, its newest meta snapshot as bundled ("term
	// index" and the file), before the damage.
	Snapshots map[string]MetaSnapRef `json:"snapshots"`
	// SameIndex: every server's newest snapshot has the same term and
	// index (a meta leader elected after the restart may have written a
	// newer one, still before LATE's removal).
	SameIndex bool `json:"same_index"`
	// Damaged: the servers whose snapshot was flipped, and how.
	Damaged []SnapFlip `json:"damaged"`
	// Restart: what each server did when the three were started together
	// on a copy of the damaged state (45 s past the first meta leader, or
	// the start when none came: past the orphan check).
	Restart []SnapDelRestart `json:"restart"`
	// LostInRestart: kept streams no started server held a folder of after
	// the restart; ServedDeleted: deleted streams some server served.
	LostInRestart []string `json:"lost_in_restart"`
	ServedDeleted []string `json:"served_deleted"`
}

// MetaSnapRef is one meta snapshot file.
type MetaSnapRef struct {
	File  string `json:"file"`
	Term  uint64 `json:"term"`
	Index uint64 `json:"index"`
}

// SnapDelRestart is one server of the restart.
type SnapDelRestart struct {
	Server  string   `json:"server"`
	Damaged bool     `json:"damaged"`
	Started bool     `json:"started"`
	Exit    string   `json:"exit,omitempty"`
	Streams []string `json:"streams"` // /jsz of the server
	// FoldersBefore/After: <acc>/<stream> folders of its store.
	FoldersBefore []string `json:"folders_before"`
	FoldersAfter  []string `json:"folders_after"`
	Log           []string `json:"log"`
}

func metaSnapDel(ctx context.Context, env *Env, version string) error {
	names := []string{"md-0", "md-1", "md-2"}
	c, err := NewCluster(ctx, filepath.Join(env.Scratch, "write"), version, "msdel", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	streams := []struct {
		name     string
		replicas int
		msgs     int
	}{{"KEEP", 3, 10}, {"EARLY_R3", 3, 6}, {"EARLY_R1", 1, 4}, {"LATE", 3, 5}}
	for _, s := range streams {
		if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: s.name, Subjects: []string{s.name + ".>"}, Replicas: s.replicas, Storage: jetstream.FileStorage}, s.msgs, 64); err != nil {
			return err
		}
	}
	nc.Close()
	// A restart, so that every log names every stream it holds.
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	o := MetaSnapDelOracle{Version: version, Mode: "metasnapdel", Account: "$G", Kept: []string{"KEEP"},
		DeletedBefore: []string{"EARLY_R1", "EARLY_R3"}, DeletedAfter: []string{"LATE"}, Snapshots: map[string]MetaSnapRef{}}
	del := func(names ...string) error {
		nc, js, err := connect(c.Servers...)
		if err != nil {
			return err
		}
		defer nc.Close()
		for _, sn := range names {
			if err := waitAssetLeader(ctx, js, sn, ""); err != nil {
				return err
			}
			if err := deleteOnce(ctx, "delete stream "+sn, func(ctx context.Context) error { return js.DeleteStream(ctx, sn) }, jetstream.ErrStreamNotFound); err != nil {
				return err
			}
		}
		return nil
	}
	if err := del(o.DeletedBefore...); err != nil {
		return err
	}
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	// The graceful stop snapshots _meta_ on every server at the index all
	// have applied.
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		ref, err := newestMetaSnap(s.JSRoot())
		if err != nil {
			return fmt.Errorf("%s after the stop: %w", s.Name, err)
		}
		logf("%s: meta snapshot %s (term %d index %d)", s.Name, ref.File, ref.Term, ref.Index)
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return err
	}
	// LATE deleted right away and every server killed a few seconds after,
	// before any meta compaction: its removal stays in the WALs, after the
	// snapshot.
	if err := del(o.DeletedAfter...); err != nil {
		return err
	}
	if err := pause(ctx, 3*time.Second); err != nil {
		return err
	}
	done := make(chan struct{})
	for _, s := range c.Servers {
		go func() { _ = s.Kill(); done <- struct{}{} }()
	}
	for range c.Servers {
		<-done
	}
	o.SameIndex = true
	var first *MetaSnapRef
	for _, s := range c.Servers {
		ref, err := newestMetaSnap(s.JSRoot())
		if err != nil {
			return fmt.Errorf("%s after the kill: %w", s.Name, err)
		}
		o.Snapshots[s.Name] = ref
		if first == nil {
			first = &ref
		} else if ref.Term != first.Term || ref.Index != first.Index {
			o.SameIndex = false
		}
		for _, d := range append(append([]string{}, o.DeletedBefore...), o.DeletedAfter...) {
			if _, err := os.Stat(filepath.Join(s.JSRoot(), "$G", "streams", d)); err == nil {
				return fmt.Errorf("%s still has the folder of deleted stream %s", s.Name, d)
			}
		}
	}
	// A new meta leader may snapshot again after the restart (v2.12.15:
	// snap.3.13 on the leader, before LATE's removal): the servers whose
	// snapshot shares its index with the most others are damaged first.
	order := slices.Clone(names)
	same := func(n string) int {
		k := 0
		for _, m := range names {
			if o.Snapshots[m].Index == o.Snapshots[n].Index && o.Snapshots[m].Term == o.Snapshots[n].Term {
				k++
			}
		}
		return k
	}
	sort.SliceStable(order, func(i, j int) bool { return same(order[i]) > same(order[j]) })
	for _, dmg := range []struct {
		label string
		n     int
	}{{"one", 1}, {"two", 2}, {"all", 3}} {
		x := o
		x.Name = "perturbed-metasnapdel-" + dmg.label + "-" + version
		if err := metaSnapDelCase(ctx, env, c, order[:dmg.n], &x); err != nil {
			return fmt.Errorf("%s: %w", x.Name, err)
		}
	}
	return nil
}

// newestMetaSnap reads the term and index of the newest meta snapshot
// under a JetStream root (raft.go encodeSnapshot: term u64, index u64).
func newestMetaSnap(root string) (MetaSnapRef, error) {
	f, err := metaSnapshotPayload(root)
	if err != nil {
		return MetaSnapRef{}, err
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.File)))
	if err != nil {
		return MetaSnapRef{}, err
	}
	return MetaSnapRef{File: f.File, Term: binary.LittleEndian.Uint64(b[0:]), Index: binary.LittleEndian.Uint64(b[8:])}, nil
}

// metaSnapDelCase flips the snapshot of the damaged servers on a copy of
// the killed state, starts the three on a further copy (the oracle) and
// writes the fixture.
func metaSnapDelCase(ctx context.Context, env *Env, c *Cluster, damaged []string, o *MetaSnapDelOracle) error {
	dir := filepath.Join(env.Scratch, o.Name)
	roots := map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(dir, "damaged", s.Name)
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}
	o.Damaged = nil
	for _, n := range damaged {
		f, err := flipMetaSnapshot(roots[n])
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		f.Server = n
		o.Damaged = append(o.Damaged, f)
	}
	names := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		names[i] = s.Name
	}
	r, err := NewCluster(ctx, filepath.Join(dir, "restart"), o.Version, "msdel", names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return err
		}
		// The restart's log goes on from the bundled one: the restarted
		// fixture's logs hold both.
		if err := copyFile(c.Servers[i].LogFile, s.LogFile); err != nil {
			return err
		}
	}
	o.Restart = nil
	before := map[string]*SnapDelRestart{}
	for _, s := range r.Servers {
		sr := &SnapDelRestart{Server: s.Name, Damaged: slices.Contains(damaged, s.Name), Streams: []string{}}
		if sr.FoldersBefore, err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
		before[s.Name] = sr
	}
	logSize := map[string]int64{}
	for _, s := range r.Servers {
		if fi, err := os.Stat(s.LogFile); err == nil {
			logSize[s.Name] = fi.Size()
		}
	}
	errs := make(chan error, len(r.Servers))
	for _, s := range r.Servers {
		go func() { errs <- s.Start(ctx) }()
	}
	for range r.Servers {
		if err := <-errs; err != nil {
			logf("%s restart: %v", o.Name, err)
		}
	}
	_ = waitFor(ctx, 30*time.Second, "a meta leader", func() (bool, error) { return r.MetaLeader(ctx) != "", nil })
	// Past the orphan check, 30 s after meta recovery.
	if err := pause(ctx, 45*time.Second); err != nil {
		return err
	}
	served := map[string]bool{}
	for _, s := range r.Servers {
		sr := before[s.Name]
		if !s.Running() {
			continue
		}
		sr.Started = true
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			continue
		}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				sr.Streams = append(sr.Streams, sd.Name)
				served[sd.Name] = true
			}
		}
		sort.Strings(sr.Streams)
	}
	if err := r.Stop(); err != nil {
		return err
	}
	held := map[string]bool{}
	for _, s := range r.Servers {
		sr := before[s.Name]
		if !sr.Started {
			sr.Exit = "exited during start (see log)"
		}
		if sr.FoldersAfter, err = streamFolders(s.JSRoot()); err != nil {
			return err
		}
		for _, f := range sr.FoldersAfter {
			held[f] = true
		}
		if sr.Log, err = logLinesSince(s.LogFile, logSize[s.Name], metaSnapInterestRE); err != nil {
			return err
		}
		o.Restart = append(o.Restart, *sr)
		logf("%s: %s damaged %v started %v streams %v folders %v -> %v", o.Name, s.Name, sr.Damaged, sr.Started, sr.Streams, sr.FoldersBefore, sr.FoldersAfter)
	}
	o.LostInRestart, o.ServedDeleted = []string{}, []string{}
	for _, k := range o.Kept {
		if !held[o.Account+"/"+k] {
			o.LostInRestart = append(o.LostInRestart, k)
		}
	}
	for _, d := range append(append([]string{}, o.DeletedBefore...), o.DeletedAfter...) {
		if served[d] {
			o.ServedDeleted = append(o.ServedDeleted, d)
		}
	}
	// The damaged state as bundled, and the state the restart left (its
	// stores and the logs going on past it): the next step.
	if err := writeMetaSnapDel(env, o.Name, o, func(n string) (string, string) { return roots[n], c.Server(n).LogFile }, names); err != nil {
		return err
	}
	restarted := *o
	restarted.Name = o.Name + "-restarted"
	restarted.RestartedFrom = o.Name
	return writeMetaSnapDel(env, restarted.Name, &restarted, func(n string) (string, string) { return r.Server(n).JSRoot(), r.Server(n).LogFile }, names)
}

// writeMetaSnapDel writes one fixture: bundle/store-<server> and
// bundle/<server>.log from the store and log src names, and oracle.json.
func writeMetaSnapDel(env *Env, name string, o *MetaSnapDelOracle, src func(string) (store, log string), names []string) error {
	out := filepath.Join(perturbedOut(env), name)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for _, n := range names {
		store, log := src(n)
		if err := copyTree(store, filepath.Join(out, "bundle", "store-"+n)); err != nil {
			return err
		}
		if err := copyFile(log, filepath.Join(out, "bundle", n+".log")); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "oracle.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	size, _ := dirSize(out)
	logf("perturbed %s written to %s (%d bytes)", name, out, size)
	if size > 2<<20 {
		return fmt.Errorf("%s is %d bytes, over the 2 MB budget", name, size)
	}
	return nil
}
