package load

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// The small raft files of a group folder (peers.idx, tav.idx, commit.idx)
// and its newest snapshot are read once, by readRaftGroup, into a
// RaftRecord: what they hold as decoded, beside what the decoders could
// not decode. Naming a store, the raft views and the rename by content all
// take the same record. What decodes but is not what a server writes is
// judged by store-corrupt (check_raft_files.go), never here.

// raftRead is one group folder as read: the record, and per file what its
// reader or decoder could not read (stamped with the structure), which the
// raft step records as store damage where it always has.
type raftRead struct {
	rec                         model.RaftRecord
	peersErr, tavErr, commitErr error
	snapErr                     error
	snap                        *raftlog.Snapshot
	snapFound                   bool
	crash                       any // the reader panicked
}

// readRaftFile reads one small raft file whole: found is false for a file
// that is not there (a group may have none yet); any other read failure (a
// folder in its place, an oversized file) is damage at offset 0.
func readRaftFile(fsys fs.FS, file string, limit int64, s binfmt.Structure) (b []byte, found bool, err error) {
	b, err = binfmt.ReadFileFS(fsys, file, limit)
	switch {
	case err == nil:
		return b, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	}
	var ce *binfmt.CorruptError
	if !errors.As(err, &ce) {
		err = &binfmt.CorruptError{File: file, Err: fmt.Errorf("%w: unreadable: %w", binfmt.ErrFormat, err)}
	}
	return nil, true, binfmt.Stamp(err, s)
}

// readRaftGroup reads the small files and the newest snapshot of the raft
// group folder dir, with the parsers' own limits.
func readRaftGroup(fsys fs.FS, dir, name string) *raftRead {
	r := &raftRead{rec: model.RaftRecord{Group: name, Kind: natsfmt.KindOfGroup(name), Dir: dir}}
	file := path.Join(dir, "peers.idx")
	if b, found, err := readRaftFile(fsys, file, raftlog.MaxPeersIdxSize, natsfmt.StructPeersIdx); err != nil {
		r.peersErr = err
	} else if found {
		if ps, err := raftlog.DecodePeerState(file, b); err != nil {
			r.peersErr = err
		} else {
			r.rec.Peers = &model.PeersRecord{File: file, State: ps, Issues: ps.Check()}
		}
	}
	r.readSnapshot(fsys, dir, name)
	file = path.Join(dir, "tav.idx")
	if b, found, err := readRaftFile(fsys, file, raftlog.MaxTavSize, natsfmt.StructTermVote); err != nil {
		r.tavErr = err
	} else if found {
		if tv, err := raftlog.DecodeTermVote(file, b); err != nil {
			r.tavErr = err
		} else {
			r.rec.TermVote = &model.TermVoteRecord{File: file, Size: len(b), TermVote: *tv}
		}
	}
	file = path.Join(dir, "commit.idx")
	if !listed(fsys, dir, "commit.idx") {
		return r // not there (a group may have none), known from the listing
	}
	if b, found, err := readRaftFile(fsys, file, raftlog.MaxCommitSize, natsfmt.StructCommitIdx); err != nil {
		r.commitErr = err
	} else if found {
		if ci, err := raftlog.DecodeCommitIndex(file, name, b); err != nil {
			r.commitErr = err
		} else {
			r.rec.Commit = &model.CommitRecord{File: file, Size: len(b), Index: *ci}
		}
	}
	return r
}

// readSnapshot reads the newest snapshot of a group by name (the one the
// server picks).
func (r *raftRead) readSnapshot(fsys fs.FS, dir, name string) {
	entries, err := fs.ReadDir(fsys, path.Join(dir, "snapshots"))
	if err != nil {
		return
	}
	var best string
	var bt, bi uint64
	for _, e := range entries {
		t, i, ok := raftlog.ParseSnapshotName(e.Name())
		if !ok {
			continue
		}
		if best == "" || t > bt || t == bt && i > bi {
			best, bt, bi = e.Name(), t, i
		}
	}
	if best == "" {
		return
	}
	file := path.Join(dir, "snapshots", best)
	r.snapFound = true
	b, _, err := readRaftFile(fsys, file, raftlog.MaxSnapshotSize, natsfmt.StructSnapshotHeader)
	if err != nil {
		r.snapErr = err
		return
	}
	snap, err := raftlog.DecodeSnapshot(file, name, b)
	var ss *model.StreamSnapState
	var cs *model.ConsumerSnapState
	if snap != nil && err == nil {
		switch r.rec.Kind {
		case natsfmt.GroupStream:
			if st, derr := raftlog.DecodeStreamSnapshot(file, snap.DataOffset, snap.Data); derr == nil {
				ss = &model.StreamSnapState{Msgs: st.Msgs, FirstSeq: st.FirstSeq, LastSeq: st.LastSeq}
			}
		case natsfmt.GroupConsumer:
			if st, derr := raftlog.DecodeConsumerSnapshot(file, snap.DataOffset, snap.Data); derr == nil {
				cs = &model.ConsumerSnapState{DeliveredStream: st.Delivered.Stream, AckFloorStream: st.AckFloor.Stream}
			}
		}
	}
	if snap != nil && r.rec.Kind != natsfmt.GroupMeta {
		// Only a meta snapshot's payload is used: the bytes of every other
		// group's are not kept while the whole bundle is read.
		lite := *snap
		lite.Data, lite.PeerStateRaw = nil, nil
		snap = &lite
	}
	r.snap, r.snapErr = snap, err
	if snap == nil {
		return
	}
	sr := &model.SnapshotRecord{File: file, NameTerm: bt, NameIndex: bi, Term: snap.Term, Index: snap.Index, Decoded: err == nil,
		ChecksumOK: snap.ChecksumOK, PeerState: snap.PeerState, DataOffset: snap.DataOffset, Stream: ss, Consumer: cs}
	if r.rec.Kind == natsfmt.GroupMeta {
		sr.Raw, sr.Meta = b, snap
		sr.MetaAssign, sr.MetaErr = raftlog.DecodeMetaSnapshot(file, snap.DataOffset, snap.Data)
	}
	r.rec.Snapshot = sr
}

// raftReads returns the raft group folders of a store as read (Records.Raft):
// naming the store by content (storePeerIDs) and the raft step take the
// same.
func (l *loader) raftReads(st bundle.Store) []*raftRead { return l.raftRecs[st.Dir] }

// raftReadOf is the group folder name of st as read, nil if not read.
func (l *loader) raftReadOf(st bundle.Store, name string) *raftRead {
	return l.raftByGroup[st.Dir][name]
}
