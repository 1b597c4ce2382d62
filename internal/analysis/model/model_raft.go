package model

import (
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// RaftRecord is one raft group folder of one store as read. It is not
// changed once the raft step puts it in the model.
type RaftRecord struct {
	Server ServerID
	Group  string
	Kind   natsfmt.GroupKind
	Dir    string
	// Peers is peers.idx, nil when there is none or it does not decode.
	Peers *PeersRecord
	// TermVote is tav.idx, Commit commit.idx (v2.15 _meta_), nil likewise.
	TermVote *TermVoteRecord
	Commit   *CommitRecord
	// Snapshot is the newest snapshot by name, nil when there is none or
	// it does not decode at all.
	Snapshot *SnapshotRecord
	// What the WAL pass found that judging these files needs: the highest
	// term of the snapshot and WAL entries, and whether entries past the
	// snapshot change the peer set.
	MaxTerm        uint64
	PeersAfterSnap bool
	// WAL is the WAL's state as the same pass read it, nil when the group
	// has no WAL folder or it could not be scanned.
	WAL *WALSummary
}

// WALSummary is a group WAL as a server's /raftz reports it: the WAL
// filestore's first and last sequence and message count, and the index
// and term of the last entry (the snapshot's when the WAL holds none).
type WALSummary struct {
	WALFigures
	// Stamps: the store time (Unix ns) of the entries at the sequences a
	// /raftz capture gave as its WAL's first or last (each server stamps
	// the entries it stores with its own clock).
	Stamps map[uint64]int64
}

// WALFigures are the counts of a WAL, as a store holds them or a /raftz
// answer reports them.
type WALFigures struct {
	FirstSeq, LastSeq, Msgs uint64
	PIndex, PTerm           uint64
}

// PeersRecord is a decoded peers.idx and what PeerState.Check finds in it.
type PeersRecord struct {
	File   string
	State  *raftlog.PeerState
	Issues []raftlog.PeerIssue
}

// TermVoteRecord is a decoded tav.idx of Size bytes.
type TermVoteRecord struct {
	File     string
	Size     int
	TermVote raftlog.TermVote
}

// CommitRecord is a decoded commit.idx of Size bytes.
type CommitRecord struct {
	File  string
	Size  int
	Index raftlog.CommitIndex
}

// SnapshotRecord is the newest snapshot of a group: the term and index its
// name gives and those its header holds, its peer state and checksum.
type SnapshotRecord struct {
	File                string
	NameTerm, NameIndex uint64
	Term, Index         uint64
	// Decoded: DecodeSnapshot returned no error (the header holds and the
	// checksum verifies).
	Decoded    bool
	ChecksumOK bool
	PeerState  *raftlog.PeerState
	DataOffset int64
	// A meta snapshot's bytes and the snapshot decoded from them, kept to
	// locate damage against another server's copy, and what its payload
	// decodes to (MetaErr when not).
	Raw        []byte
	Meta       *raftlog.Snapshot
	MetaAssign []*raftlog.StreamAssignment
	MetaErr    error
	// Stream is a stream group's snapshot payload as decoded (the stream
	// state the group last recorded), Consumer a consumer group's (its
	// delivered and ack floor); nil for other groups or when it does not
	// decode.
	Stream   *StreamSnapState
	Consumer *ConsumerSnapState
}

// StreamSnapState is the stream state a stream group's snapshot records.
type StreamSnapState struct {
	Msgs, FirstSeq, LastSeq uint64
}

// ConsumerSnapState is the consumer state a consumer group's snapshot
// records: the stream sequences of its delivered and ack floor.
type ConsumerSnapState struct {
	DeliveredStream, AckFloorStream uint64
}

// files are the files the record was read from.
func (r *RaftRecord) Files() []string {
	var out []string
	if r.Peers != nil {
		out = append(out, r.Peers.File)
	}
	if r.TermVote != nil {
		out = append(out, r.TermVote.File)
	}
	if r.Commit != nil {
		out = append(out, r.Commit.File)
	}
	if r.Snapshot != nil {
		out = append(out, r.Snapshot.File)
	}
	return out
}
