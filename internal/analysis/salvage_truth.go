package analysis

// What the servers would serve of a salvaged stream (issue 31): a message
// some record of the bundle says was deleted is never written for
// republishing, whichever copy still holds it (a replica whose block lost
// its tombstones holds deleted messages as live ones; the cluster deletes
// them again once its leader catches it up: perturbed-tombstones-* on
// 2.10.27, 2.12.15 and 2.15.3), and a message of a raft WAL past what the
// group's servers agreed on is written flagged uncommitted.

import (
	"fmt"
	"io/fs"
	"slices"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/seqset"
	"github.com/jsforensics/jsforensics/storeparse"
)

// removal is one record in the bundle of messages removed from the stream.
type removal struct {
	// Why: the record, as the summary names it ("t1's index.db").
	Why string
	// Seqs are the sequences it removes; below, every sequence under it (a
	// copy's first sequence: purged or removed by a limit); wal, the
	// removals a raft WAL holds, for its purges by subject (the rest are
	// in seqs).
	seqs  seqset.Set
	below uint64
	wal   *load.WALReplay
}

func (r *removal) takes(seq uint64, subject string) bool {
	switch {
	case seq < r.below:
		return true
	case r.seqs.Contains(seq):
		return true
	}
	return r.wal != nil && r.wal.RemovesFiltered(seq, subject)
}

// SalvageLeftOut is what Salvage left out for one reason: the sequences a
// copy or WAL held that a record of the bundle says were removed.
type SalvageLeftOut struct {
	Why  string
	Seqs seqset.Set
}

// copyTruth is one copy's live sequences and what its records remove.
type copyTruth struct {
	live     seqset.Set
	removals []removal
}

// readCopyTruth reads a copy's blocks once: its live messages (tombstones,
// index.db deletes and limits applied, as blockMessages gives them) and
// what it records as removed: its tombstones, and a verifying index.db's
// deletes and first sequence.
func readCopyTruth(fsys fs.FS, dir, name, server string) (*copyTruth, error) {
	var tombs seqset.Set
	scan, err := storeparse.ScanStream(fsys, dir, storeparse.ScanOptions{Name: name, SkipConsumers: true,
		Visit: func(_ storeparse.BlockInfo, r *storeparse.Record) error {
			if r.Tombstone || r.Erased {
				tombs.Add(r.Seq)
			}
			return nil
		}})
	if err != nil {
		return nil, err
	}
	ct := &copyTruth{}
	for r := range scan.Live().Ranges() {
		ct.live = append(ct.live, r) // ascending, apart: a Set as it is
	}
	if len(tombs) > 0 {
		ct.removals = append(ct.removals, removal{Why: fmt.Sprintf("a tombstone in %s's blocks records it deleted", server), seqs: tombs})
	}
	if ix := scan.Index; ix != nil && ix.ChecksumOK {
		var del seqset.Set
		for _, b := range ix.Blocks {
			if b.Deleted != nil {
				del = del.Union(b.Deleted.Ranges())
			}
		}
		if len(del) > 0 {
			ct.removals = append(ct.removals, removal{Why: fmt.Sprintf("%s's index.db records it deleted", server), seqs: del})
		}
		if ix.FirstSeq > 1 {
			ct.removals = append(ct.removals, removal{Why: fmt.Sprintf("below the first sequence %s's index.db records (%d: purged or removed by a limit)", server, ix.FirstSeq), below: ix.FirstSeq})
		}
	}
	return ct, nil
}

// groupTruth is what the stream group's raft state on every server records
// as removed (each snapshot's deletes and first sequence, each WAL's
// deletes and purges), and the highest raft index the group agreed on.
type groupTruth struct {
	removals []removal
	agreed   uint64
	notes    []string
	// wals are the removals read of each WAL folder, for its messages.
	wals map[string]*load.WALReplay
}

func readGroupTruth(b *bundle.Bundle, m *model.Model, st *model.Stream, group string) *groupTruth {
	gt := &groupTruth{wals: map[string]*load.WALReplay{}}
	if group == "" {
		return gt
	}
	var walLast []uint64
	for _, r := range m.RaftRecords {
		if r.Group != group {
			continue
		}
		server := m.Name(r.Server)
		if sr := r.Snapshot; sr != nil && sr.Decoded && sr.ChecksumOK {
			gt.agreed = max(gt.agreed, sr.Index)
			if ss := streamSnapshot(b.FS, sr.File, group); ss != nil {
				var del seqset.Set
				for i := range ss.Deleted {
					for _, x := range ss.Deleted[i].Ranges() {
						del.AddRange(x.First, x.Last)
					}
				}
				if len(del) > 0 {
					gt.removals = append(gt.removals, removal{Why: fmt.Sprintf("the stream's raft snapshot on %s records it deleted", server), seqs: del})
				}
				if ss.FirstSeq > 1 {
					gt.removals = append(gt.removals, removal{Why: fmt.Sprintf("below the first sequence the stream's raft snapshot on %s records (%d: purged or removed by a limit)", server, ss.FirstSeq), below: ss.FirstSeq})
				}
			}
		}
		if r.Commit != nil {
			gt.agreed = max(gt.agreed, r.Commit.Index.Commit)
		}
		if r.WAL != nil {
			walLast = append(walLast, r.WAL.PIndex)
			rp, err := load.WALRemovals(b.FS, r.Dir, group)
			if err != nil {
				gt.notes = append(gt.notes, fmt.Sprintf("%s: the raft WAL of %s could not be read for its deletes: %v", server, group, err))
				continue
			}
			gt.wals[r.Dir] = rp
			if rp.Removals() > 0 {
				gt.removals = append(gt.removals, removal{Why: fmt.Sprintf("a delete or purge in the raft WAL on %s removes it", server), seqs: rp.RemovedSeqs(), wal: rp})
			}
		}
	}
	// An entry a quorum of the group's servers' WALs reach is agreed on
	// (what the servers elect a leader from); so is one under a snapshot
	// or a commit index.
	replicas := len(walLast)
	if st != nil && st.Replicas > replicas {
		replicas = st.Replicas
	}
	if q := replicas/2 + 1; len(walLast) >= q {
		slices.Sort(walLast)
		slices.Reverse(walLast)
		gt.agreed = max(gt.agreed, walLast[q-1])
	}
	return gt
}

// streamSnapshot decodes a stream group's snapshot file, nil if it does not.
func streamSnapshot(fsys fs.FS, file, group string) *raftlog.StreamSnapshot {
	fi, err := fs.Stat(fsys, file)
	if err != nil || fi.Size() > raftlog.MaxSnapshotSize {
		return nil
	}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil
	}
	snap, err := raftlog.DecodeSnapshot(file, group, data)
	if err != nil || snap == nil || !snap.ChecksumOK {
		return nil
	}
	ss, err := raftlog.DecodeStreamSnapshot(file, snap.DataOffset, snap.Data)
	if err != nil {
		return nil
	}
	return ss
}
