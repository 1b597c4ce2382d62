package raftlog

import (
	"fmt"
	"io"
	"slices"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// peers.idx / EntryPeerState / snapshot peerstate layout (raft.go
// encodePeerState, decodePeerState):
//
//	+----------------+----------------+------------------+-------------+
//	| clusterSize u32| numPeers u32   | numPeers × 8-byte| domainExt   |
//	| LE             | LE             | peer id          | u16 LE (opt)|
//	+----------------+----------------+------------------+-------------+
const (
	peerStateHeaderLen = 8
	peerStateTrailLen  = 2
	// MaxPeersIdxSize bounds a peers.idx read whole. A real file holds one
	// id per server of the cluster (10 + 8·n bytes); 1 MiB is 130k peers.
	MaxPeersIdxSize = 1 << 20
)

// Domain extension states stored in the peer state trailer (raft.go extensionState).
const (
	DomainExtUnknown     = 0
	DomainExtExtended    = 1
	DomainExtNotExtended = 2
)

// PeerState is a decoded peer state: the body of peers.idx, of an
// EntryPeerState entry and of a snapshot's peerstate.
type PeerState struct {
	ClusterSize uint32   `json:"cluster_size"`
	Peers       []string `json:"peers"` // in stored order (Go map order: arbitrary)
	// DomainExt is the leafnode domain extension state; present only when
	// HasDomainExt (the server reads it only if two more bytes remain).
	DomainExt    uint16 `json:"domain_ext"`
	HasDomainExt bool   `json:"has_domain_ext"`
	// Trailing counts bytes after the domainExt trailer. The server ignores
	// them; a real file has none.
	Trailing int `json:"trailing,omitempty"`
}

// PeerOffset is where the i-th listed id starts in the encoded state
// (i = len(Peers): the domainExt trailer).
func (ps *PeerState) PeerOffset(i int) int64 {
	return peerStateHeaderLen + int64(i)*natsfmt.PeerIDLen
}

// Quorum is the number of votes needed with this cluster size
// (clusterSize/2 + 1, raft.go).
func (ps *PeerState) Quorum() int { return natsfmt.Quorum(int(ps.ClusterSize)) }

// ReadPeerState reads and decodes a whole peers.idx.
func ReadPeerState(file string, r io.ReaderAt, size int64) (*PeerState, error) {
	b, err := binfmt.ReadFull(file, r, size, MaxPeersIdxSize)
	if err != nil {
		return nil, err
	}
	return DecodePeerState(file, b)
}

// DecodePeerState decodes peers.idx bytes. It fails, as the server does, if
// fewer than numPeers ids fit in the bytes present.
func DecodePeerState(file string, b []byte) (*PeerState, error) {
	ps, err := decodePeerState(file, 0, b)
	return ps, binfmt.Stamp(err, natsfmt.StructPeersIdx)
}

func decodePeerState(file string, base int64, b []byte) (*PeerState, error) {
	d := binfmt.NewDecbuf(file, base, b)
	if d.Len() < peerStateHeaderLen {
		d.Fail(binfmt.ErrTruncated, "peer state needs %d bytes, has %d", peerStateHeaderLen, d.Len())
		return nil, d.Err()
	}
	ps := &PeerState{ClusterSize: d.U32()}
	countOff := d.Offset()
	n := d.U32()
	// The count is bounded by the bytes that could hold the ids.
	if uint64(n) > uint64(d.Len()/natsfmt.PeerIDLen) {
		return nil, binfmt.Errorf(file, countOff, binfmt.ErrTruncated,
			"peer count %d needs %d bytes, %d left", n, uint64(n)*natsfmt.PeerIDLen, d.Len())
	}
	ps.Peers = make([]string, 0, n)
	for range n {
		ps.Peers = append(ps.Peers, string(d.Bytes(natsfmt.PeerIDLen)))
	}
	if d.Len() >= peerStateTrailLen {
		ps.DomainExt, ps.HasDomainExt = d.U16(), true
	}
	ps.Trailing = d.Len()
	return ps, d.Err()
}

// Peer state issue kinds reported by (*PeerState).Check.
const (
	IssueInvalidID     = "invalid-id"     // an id outside 8 × [0-9A-Za-z]
	IssueDuplicateID   = "duplicate-id"   // the same id listed twice
	IssueSizeZero      = "size-zero"      // clusterSize 0
	IssueSizeBelow     = "size-below"     // clusterSize smaller than the ids listed
	IssueDomainExt     = "domain-ext"     // trailer value other than 0, 1, 2
	IssueTrailingBytes = "trailing-bytes" // bytes after the trailer
	IssueNoTrailer     = "no-trailer"     // no domainExt trailer (written by every version checked)
)

// PeerIssue is one reason a decoded peer state does not look like what a
// server writes. A flipped bit gives a file that decodes; these checks are
// how it shows.
type PeerIssue struct {
	Kind   string `json:"kind"`
	Peer   string `json:"peer,omitempty"`
	Detail string `json:"detail"`
	// Offset is where in the encoded state the field at fault starts
	// (0: clusterSize).
	Offset int64 `json:"offset,omitempty"`
}

// Check lists what is implausible in ps. A clusterSize larger than the ids
// listed is normal for a bootstrapping _meta_ (formats 5.2) and not reported.
func (ps *PeerState) Check() []PeerIssue {
	var out []PeerIssue
	seen := make(map[string]bool, len(ps.Peers))
	for i, p := range ps.Peers {
		at := ps.PeerOffset(i)
		if !natsfmt.ValidPeerID(p) {
			out = append(out, PeerIssue{IssueInvalidID, p, fmt.Sprintf("peer id %q is not 8 characters of 0-9A-Za-z", p), at})
		}
		if seen[p] {
			out = append(out, PeerIssue{IssueDuplicateID, p, fmt.Sprintf("peer id %q is listed twice", p), at})
		}
		seen[p] = true
	}
	trailer := ps.PeerOffset(len(ps.Peers))
	if ps.ClusterSize == 0 {
		out = append(out, PeerIssue{Kind: IssueSizeZero, Detail: "cluster size is 0"})
	} else if int64(ps.ClusterSize) < int64(len(ps.Peers)) {
		out = append(out, PeerIssue{Kind: IssueSizeBelow, Detail: fmt.Sprintf("cluster size %d is below the %d peers listed", ps.ClusterSize, len(ps.Peers))})
	}
	if !ps.HasDomainExt {
		out = append(out, PeerIssue{Kind: IssueNoTrailer, Detail: "no domain extension trailer", Offset: trailer})
	} else if ps.DomainExt > DomainExtNotExtended {
		out = append(out, PeerIssue{Kind: IssueDomainExt, Detail: fmt.Sprintf("domain extension %d is not 0, 1 or 2", ps.DomainExt), Offset: trailer})
	}
	if ps.Trailing > 0 {
		out = append(out, PeerIssue{Kind: IssueTrailingBytes, Detail: fmt.Sprintf("%d bytes after the trailer", ps.Trailing), Offset: trailer + peerStateTrailLen})
	}
	return out
}

// PeerFlip is a listed id that is not a known peer but lies within a few
// bits of one: most likely a corrupted copy of it.
type PeerFlip struct {
	ID   string `json:"id"`
	Of   string `json:"of"`
	Bits int    `json:"bits"`
}

// Flips returns, for every listed id not in known, the nearest known id when
// it is at most maxBits bits away (natsfmt.BitDistance).
func (ps *PeerState) Flips(known []string, maxBits int) []PeerFlip {
	var out []PeerFlip
	for _, p := range ps.Peers {
		if slices.Contains(known, p) {
			continue
		}
		if k, d, ok := natsfmt.NearestPeer(p, known); ok && d <= maxBits {
			out = append(out, PeerFlip{ID: p, Of: k, Bits: d})
		}
	}
	return out
}
