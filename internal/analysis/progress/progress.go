package progress

import (
	"io/fs"
	"sync"
)

// Progress is told how far a run has got, for a display its caller owns
// (the CLI draws one on a terminal; the analysis draws nothing). A run goes
// through stages one after another; within a stage Advance's figures only
// grow and end at the totals Stage gave. Calls are made one at a time, from
// the goroutines of the analysis.
type Progress interface {
	// Stage starts a stage: what it does and the files and bytes it goes
	// through (0 files when it counts bytes only).
	Stage(name string, files int, bytes int64)
	// Advance gives the files and bytes of the current stage done so far.
	Advance(files int, bytes int64)
}

// Stage names, in the order a run goes through them.
const (
	StageUnpacking = "unpacking"
	StageStores    = "reading stores"
	StageReplicas  = "comparing replicas"
	StageCaptures  = "reading captures"
	StageLogs      = "reading logs"
	StageRaft      = "reading raft state"
)

// meter keeps the figures of the current stage; with no Progress it does
// nothing, and nothing is sized.
type Meter struct {
	P     Progress
	files int
	bytes int64
}

func (m *Meter) on() bool { return m != nil && m.P != nil }

func (m *Meter) Stage(name string, files int, bytes int64) {
	if !m.on() {
		return
	}
	m.files, m.bytes = 0, 0
	m.P.Stage(name, files, bytes)
}

func (m *Meter) Add(files int, bytes int64) {
	if !m.on() {
		return
	}
	m.files += files
	m.bytes += bytes
	m.P.Advance(m.files, m.bytes)
}

// size is what one unit of work (a folder or a file) holds.
type size struct {
	files int
	bytes int64
}

// treeSize counts the regular files under p (p itself when it is a file)
// and their bytes. What cannot be listed counts as nothing.
func treeSize(fsys fs.FS, p string) size {
	var s size
	_ = fs.WalkDir(fsys, p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			s.files++
			s.bytes += fi.Size()
		}
		return nil
	})
	return s
}

// sizes gives treeSize of every path, and their sum; nothing when no one
// watches.
func (m *Meter) sizes(fsys fs.FS, paths []string) ([]size, size) {
	if !m.on() {
		return nil, size{}
	}
	out := make([]size, len(paths))
	var total size
	for i, p := range paths {
		out[i] = treeSize(fsys, p)
		total.files += out[i].files
		total.bytes += out[i].bytes
	}
	return out, total
}

// begin starts a stage over units (folders or files of fsys), sized first
// when someone watches. Each unit is then counted done once, by done(i).
func (m *Meter) Begin(name string, fsys fs.FS, units []string) *stagePlan {
	sizes, total := m.sizes(fsys, units)
	m.Stage(name, total.files, total.bytes)
	return &stagePlan{m: m, sizes: sizes}
}

// stagePlan is a stage's units and their sizes.
type stagePlan struct {
	m     *Meter
	sizes []size
	mu    sync.Mutex // units are done by the readers at once (forEach)
}

// done counts unit i done.
func (s *stagePlan) Done(i int) {
	if s.sizes != nil && i < len(s.sizes) {
		s.mu.Lock()
		s.m.Add(s.sizes[i].files, s.sizes[i].bytes)
		s.mu.Unlock()
	}
}
