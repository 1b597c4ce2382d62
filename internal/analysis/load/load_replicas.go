package load

import (
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/jsforensics/jsforensics/internal/analysis/compare"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Replica comparison, each block read once, in memory that depends on the
// number of copies and of places where they differ, not on the number of
// messages:
//
//  1. Which folders of the clustered stores hold a copy of the same stream
//     is known before any block is read: from the inventory and each
//     folder's meta.inf (its head, read first and handed to its scan, so
//     read once). Those copies are read together
//     (copyUnit), each by its own scan, and their message records are
//     merged by sequence as the scans go (lockstep): a scan hands over each
//     block's (sequence, digest) pairs and waits while it is ahead, so one
//     block per copy is held. Every sequence where two copies' records hold
//     different content is kept, in runs (with the copies on each side).
//  2. Whether a record is live is known only when its copy's scan ends (a
//     tombstone in a later block, index.db, limits): the runs are cut to the
//     copies' final live messages afterwards (restrict). Records that agree
//     still agree among the live ones, so nothing else needs keeping.
//  3. Which sequences each copy holds is compared exactly, by a sweep over
//     the copies' live ranges side by side: every span that some copies hold
//     and others do not is kept (Coverage), and the gap check reads it.
//
// A stream whose compared copies were not read together (none in the
// committed bundles: past maxCompared copies) has its copies' live messages
// read again and merged the same way; it is said in a note.

// maxCompared bounds the copies compared at once (servers are bits of a
// mask); more copies of one stream than that is not a real cluster.
const maxCompared = 64

// compareCopy is what the replica comparison needs of one stream copy:
// which sequences it holds as messages (nil for an encrypted copy, or one
// the archive delivered in part), and the lockstep read it took part in
// (nil: read alone) with its bit there.
type compareCopy struct {
	live   *storeparse.Live
	lock   *compare.Lockstep
	member int
}

// keepForComparison keeps what the replica comparison needs from a copy's
// scan: its live map, and the lockstep read it took part in.
func (l *loader) keepForComparison(c *model.StreamCopy, rd copyRead) {
	if c.Encrypted {
		return // nothing readable to compare
	}
	if l.compare == nil {
		l.compare = map[*model.StreamCopy]*compareCopy{}
	}
	l.compare[c] = &compareCopy{live: rd.scan.Live(), lock: rd.lock, member: rd.member}
}

// live is the live map kept of c for the comparison, nil when none is.
func (l *loader) live(c *model.StreamCopy) *storeparse.Live {
	if cc := l.compare[c]; cc != nil {
		return cc.live
	}
	return nil
}

// copyUnit is one read of the stream folders of the bundle's stores: one
// folder alone, or, where several clustered stores hold a copy of the same
// stream, all of those copies together, in lockstep (see above). Which
// stream a folder holds is its head's (meta.inf's name, storeparse.ReadHead),
// read first for every folder of a clustered store and handed to its scan,
// so a folder whose meta.inf names another stream is read with that
// stream's copies.
type copyUnit struct {
	dirs  []string
	heads []*storeparse.Head // beside dirs; nil where not read ahead
	empty bool               // dirs[0] was listed ahead and holds nothing
}

// planCopyReads lists the reads of the stream folders of stores, in the
// stores' order (a group of copies at its first folder's place). It reads
// ahead the listing and head of every folder of a clustered store (when
// at least two stores are clustered), each folder once, on every core.
func planCopyReads(fsys fs.FS, stores []bundle.Store) []copyUnit {
	var dirs []string
	var accounts []string
	clustered := 0
	for _, st := range stores {
		if st.SysAccount != "" {
			clustered++
		}
	}
	readAhead := map[string]bool{}
	for _, st := range stores {
		for _, acc := range st.Accounts {
			for _, sname := range acc.Streams {
				if strings.HasPrefix(sname, ".") {
					continue // being deleted: not read (stream)
				}
				dir := path.Join(st.Dir, acc.Name, "streams", sname)
				dirs = append(dirs, dir)
				accounts = append(accounts, acc.Name)
				// A non-clustered server's stream is never a replica.
				readAhead[dir] = clustered >= 2 && st.SysAccount != ""
			}
		}
	}
	type ahead struct {
		empty bool
		head  *storeparse.Head
	}
	aheads := make([]ahead, len(dirs))
	ForEach(len(dirs), func(i int) {
		if !readAhead[dirs[i]] {
			return
		}
		// A crash here costs the read ahead only: the folder's own read
		// says it again, for that folder.
		_ = Crashed(func() {
			if ents, err := fs.ReadDir(fsys, dirs[i]); err == nil && len(ents) == 0 {
				aheads[i].empty = true
				return
			}
			if h, err := storeparse.ReadHead(fsys, dirs[i], ""); err == nil {
				aheads[i].head = h // else read alone: its scan says why it cannot be
			}
		})
	})
	byName := map[model.AssetKey][]int{}
	for i, a := range aheads {
		if a.head != nil {
			k := model.AssetKey{Account: accounts[i], Stream: a.head.Name()}
			byName[k] = append(byName[k], i)
		}
	}
	group := make([][]int, len(dirs)) // at a group's first folder: its folders
	inGroup := make([]bool, len(dirs))
	for _, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		idx = idx[:min(len(idx), maxCompared)]
		group[idx[0]] = idx
		for _, i := range idx {
			inGroup[i] = true
		}
	}
	var units []copyUnit
	for i, d := range dirs {
		switch {
		case group[i] != nil:
			u := copyUnit{}
			for _, k := range group[i] {
				u.dirs = append(u.dirs, dirs[k])
				u.heads = append(u.heads, aheads[k].head)
			}
			units = append(units, u)
		case inGroup[i]:
			// read with its group, at the group's first folder
		default:
			units = append(units, copyUnit{dirs: []string{d}, heads: []*storeparse.Head{aheads[i].head}, empty: aheads[i].empty})
		}
	}
	return units
}

// read reads u's folders; share is how many units are read at once beside
// it. A reader that panics costs the folder it read: when the read of a
// group panics, its first folder's record holds the panic and the others
// are read alone.
func (u copyUnit) read(fsys fs.FS, payloads map[string]bool, share int) []copyRead {
	one := func(dir string, head *storeparse.Head) (rd copyRead) {
		if crash := Crashed(func() { rd = readCopy(fsys, dir, payloads, &readOpts{head: head, share: share}) }); crash != nil {
			rd = copyRead{dir: dir, crash: crash}
		}
		return rd
	}
	switch {
	case u.empty:
		return []copyRead{{dir: u.dirs[0], empty: true}}
	case len(u.dirs) == 1:
		return []copyRead{one(u.dirs[0], u.heads[0])}
	}
	var out []copyRead
	if crash := Crashed(func() { out = readTogether(fsys, u.dirs, u.heads, payloads, share) }); crash != nil {
		out = []copyRead{{dir: u.dirs[0], crash: crash}}
		for _, d := range u.dirs[1:] {
			out = append(out, one(d, nil))
		}
	}
	return out
}

// readTogether reads the folders dirs, copies of one stream, at once, their
// message records merged by sequence while they are read.
// share is how many reads run at once beside this one.
func readTogether(fsys fs.FS, dirs []string, heads []*storeparse.Head, payloads map[string]bool, share int) []copyRead {
	lk := &compare.Lockstep{Late: make([]int, len(dirs))}
	out := make([]copyRead, len(dirs))
	feeds := make([]chan compare.Batch, len(dirs))
	// Batches the merger is done with go back to their copy's scan, whose
	// next blocks append to them: a 2,000,000-message R3 stream allocated
	// 96 MB of them, a fresh page fault every 4 KiB.
	free := make([]chan compare.Batch, len(dirs))
	// The copies' scans share the cores one scan of a stream takes.
	workers := max(1, runtime.GOMAXPROCS(0)/(len(dirs)*max(1, share)))
	var wg sync.WaitGroup
	for i, d := range dirs {
		feeds[i] = make(chan compare.Batch, 1) // a block waits while the merger takes the one before
		free[i] = make(chan compare.Batch, freeBatches)
		wg.Go(func() {
			defer close(feeds[i])
			defer func() {
				if p := recover(); p != nil {
					out[i] = copyRead{dir: d, crash: p}
				}
			}()
			send := func(seqs, digests []uint64) { feeds[i] <- compare.Batch{Seqs: seqs, Digests: digests} }
			reuse := func() ([]uint64, []uint64) {
				select {
				case b := <-free[i]:
					return b.Seqs, b.Digests
				default:
					return nil, nil
				}
			}
			out[i] = readCopy(fsys, d, payloads, &readOpts{messages: send, buffers: reuse, workers: workers, share: len(dirs) * max(1, share), head: heads[i]})
			out[i].lock, out[i].member = lk, i
		})
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				for _, f := range feeds { // let the scans end
					go func() {
						for range f {
						}
					}()
				}
				panic(p)
			}
		}()
		lk.Merge(feeds, free)
	}()
	wg.Wait()
	return out
}

// freeBatches is how many batches a copy's scan may have back at a time:
// one a worker, and the one the feed holds.
const freeBatches = 4

// compareReplicas compares every stream held by more than one server, then
// drops what it kept of the copies: the comparison is all the checks need.
func (l *loader) compareReplicas() {
	l.meter.Stage(progress.StageReplicas, len(l.m.Streams), 0)
	for _, st := range l.m.Streams {
		l.compareStream(st)
		l.meter.Add(1, 0)
		for _, c := range st.Copies {
			delete(l.compare, c)
		}
	}
}

func (l *loader) compareStream(st *model.Stream) {
	var copies []*model.StreamCopy
	for _, c := range st.Copies {
		if l.live(c) != nil && c.Clustered {
			copies = append(copies, c)
		}
	}
	// Replicas live on a cluster's servers only: a non-clustered server's
	// stream of the same name is another stream (another environment or a
	// standalone server in the same bundle), never compared with them.
	for _, c := range st.Copies {
		if l.live(c) != nil && !c.Clustered && len(st.Copies) > 1 {
			l.note("%s > %s on %s: a non-clustered server's stream (its store holds no raft groups); not compared with the other copies, which it is no replica of", st.Account, st.Name, l.m.Name(c.Server))
		}
	}
	if len(copies) < 2 {
		return
	}
	if len(copies) > maxCompared {
		l.note("%s > %s: %d copies; the first %d are compared", st.Account, st.Name, len(copies), maxCompared)
		copies = copies[:maxCompared]
	}
	lk, member := l.compare[copies[0]].lock, make([]int, len(copies))
	for i, c := range copies {
		if l.compare[c].lock != lk || lk == nil {
			lk = nil
			break
		}
		member[i] = l.compare[c].member
	}
	if lk == nil {
		// Not read together: their live messages are read again.
		var paths []string
		for i, c := range copies {
			paths = append(paths, c.Path)
			member[i] = i
		}
		l.note("%s > %s: copies %s were not read together: their messages are read again to compare them", st.Account, st.Name, strings.Join(paths, ", "))
		lk = l.readAgain(st, copies)
	}
	for i, c := range copies {
		if n := lk.Late[member[i]]; n > 0 {
			l.note("%s > %s on %s: %d message records in blocks whose sequences overlap earlier blocks' are not compared with the other copies", st.Account, st.Name, l.m.Name(c.Server), n)
		}
	}
	st.Comparison = &model.ReplicaComparison{Copies: copies, Coverage: compare.Coverage(copies, l.lives(copies)), Diverged: compare.Restrict(lk.Runs, l.lives(copies), member)}
}

// readAgain merges the live messages of copies read at different times,
// reading their blocks again.
func (l *loader) readAgain(st *model.Stream, copies []*model.StreamCopy) *compare.Lockstep {
	lk := &compare.Lockstep{Late: make([]int, len(copies))}
	feeds := make([]chan compare.Batch, len(copies))
	errs := make([]error, len(copies))
	var wg sync.WaitGroup
	for i, c := range copies {
		feeds[i] = make(chan compare.Batch, 1)
		wg.Go(func() {
			defer close(feeds[i])
			var b compare.Batch
			err := l.live(c).Messages(l.b.FS, 0, ^uint64(0), func(seq, d uint64) {
				b.Seqs, b.Digests = append(b.Seqs, seq), append(b.Digests, d)
				if len(b.Seqs) == 4096 {
					feeds[i] <- b
					b = compare.Batch{}
				}
			})
			if len(b.Seqs) > 0 {
				feeds[i] <- b
			}
			errs[i] = err
		})
	}
	lk.Merge(feeds, nil)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			l.note("%s > %s on %s: not compared past a block it cannot read: %v", st.Account, st.Name, l.m.Name(copies[i].Server), err)
		}
	}
	return lk
}

// lives are the live maps kept of copies, in their order.
func (l *loader) lives(copies []*model.StreamCopy) []*storeparse.Live {
	out := make([]*storeparse.Live, len(copies))
	for i, c := range copies {
		out[i] = l.live(c)
	}
	return out
}
