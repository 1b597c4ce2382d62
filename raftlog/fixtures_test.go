package raftlog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

func TestPeerIDFromServers(t *testing.T) {
	n, banners := 0, 0
	for _, sc := range allServers(t) {
		if sc.peerID != "" {
			n++
			if got := natsfmt.PeerID(sc.name); got != sc.peerID {
				t.Errorf("%s: PeerID(%q) = %q, raftz says %q", sc.label, sc.name, got, sc.peerID)
			}
		}
		if name, node := sc.banner["Name"], sc.banner["Node"]; name != "" {
			banners++
			if got := natsfmt.PeerID(name); got != node {
				t.Errorf("%s: banner Name %q Node %q, PeerID gives %q", sc.label, name, node, got)
			}
		}
	}
	if n == 0 || banners == 0 {
		t.Fatalf("%d servers reported their id, %d banners read", n, banners)
	}
}

func TestBitFlippedIDs(t *testing.T) {
	// The extra ids of incident 000 (nats-server 2.10.22, 5 servers).
	known := []string{"S1Nunr6R", "yrzKKRBu", "cnrtt3eg", "bkCGheKT", "HuYMtjaW"}
	for _, c := range []struct {
		id, of string
		valid  bool // a flip can land inside the alphabet: 't' (0x74) -> '4' (0x34)
	}{{`"kCGheKT`, "bkCGheKT", false}, {"yrzKKR@u", "yrzKKRBu", false}, {"cnr4t3eg", "cnrtt3eg", true}} {
		if natsfmt.ValidPeerID(c.id) != c.valid {
			t.Errorf("ValidPeerID(%q) = %v", c.id, !c.valid)
		}
		if got, d, _ := natsfmt.NearestPeer(c.id, known); got != c.of || d != 1 {
			t.Errorf("NearestPeer(%q) = %q at %d bits, want %q at 1", c.id, got, d, c.of)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "a", 0}, {"a", "b", 2}, {"abc", "ab", 8}, {"S1Nunr6R", "S1Nunr6R", 0}} {
		if got := natsfmt.BitDistance(c.a, c.b); got != c.d {
			t.Errorf("BitDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
	for _, bad := range []string{"", "short", "toolong12", "abc-defg", "abcdefg\x00"} {
		if natsfmt.ValidPeerID(bad) {
			t.Errorf("ValidPeerID(%q) = true", bad)
		}
	}
}

// TestPeersAndTermVote: each group's peers.idx and tav.idx against what the
// server said live (raftz/jsz): same peers, same cluster size, a vote for a
// peer, a term no lower than the live one.
//
// Bundles whose scenario removed peers (want.json expect.removals) are held
// to what a real server writes instead, because the server does not persist
// its live peer set there (nats-server v2.12.1 raft.go):
//   - the group leader that proposes a removal drops the peer from its
//     in-memory set at once (ProposeRemovePeer / the proposal loop call
//     doRemovePeerAsLeader), without writePeerState; when the removal
//     commits, applyCommit's EntryRemovePeer case writes peers.idx only
//     "if _, ok := n.peers[peer]; ok", which no longer holds on the leader.
//     So the leader's peers.idx keeps the pre-removal peers and size
//     (membership-v2.12.1: n3's _meta_ lists 5, its raftz 3). The test
//     asserts that exactly: the live peers plus only removed peers, the size
//     grown by as many, and only on a server that led the group.
//   - tav.idx holds the vote of the current term; raft clears it only when
//     the term changes, never on a removal. So a follower can still record a
//     vote for a removed peer (n5 voted for n4, the stream leader before it
//     was killed), and then only in the term the server reported live.
func TestPeersAndTermVote(t *testing.T) {
	stale, staleVotes, lagging := 0, 0, 0
	for _, sc := range allServers(t) {
		removed := sc.removedPeers()
		for _, g := range groupsOf(t, sc) {
			ps, err := raftlog.DecodePeerState(g+"/peers.idx", readFS(t, sc.js, path.Join(g, "peers.idx")))
			if err != nil {
				t.Errorf("%s %s: %v", sc.label, g, err)
				continue
			}
			if !sc.strict() {
				continue // damaged on purpose: see TestPhantomPeers
			}
			if issues := ps.Check(); len(issues) > 0 {
				t.Errorf("%s %s: peer state issues %+v", sc.label, g, issues)
			}
			peers := slices.Sorted(slices.Values(ps.Peers))
			want, ok := sc.groups[g]
			if g == "_meta_" && sc.meta != nil {
				want, ok = *sc.meta, true
			}
			switch {
			case ok && len(removed) > 0 && !slices.Equal(peers, want.Peers):
				// Stale after a removal: see the comment above.
				stale++
				var extra []string
				for _, p := range peers {
					if !slices.Contains(want.Peers, p) {
						extra = append(extra, p)
					}
				}
				for _, p := range want.Peers {
					if !slices.Contains(peers, p) {
						t.Errorf("%s %s: live peer %s missing from peers.idx %v", sc.label, g, p, peers)
					}
				}
				for _, p := range extra {
					if !slices.Contains(removed, p) {
						t.Errorf("%s %s: peers.idx lists %s, neither a live peer %v nor a removed one %v", sc.label, g, p, want.Peers, removed)
					}
				}
				if int(ps.ClusterSize) != want.Size+len(extra) {
					t.Errorf("%s %s: peers.idx cluster size %d, want the live %d plus %d removed peers still listed", sc.label, g, ps.ClusterSize, want.Size, len(extra))
				}
				if !want.Leader {
					t.Errorf("%s %s: peers.idx %v differs from the live peers %v on a server that did not lead the group", sc.label, g, peers, want.Peers)
				}
				t.Logf("%s %s: peers.idx still lists removed %v (size %d, live %d): the leader did not rewrite it", sc.label, g, extra, ps.ClusterSize, want.Size)
			case ok:
				if !slices.Equal(peers, want.Peers) {
					t.Errorf("%s %s: peers.idx peers %v, server said %v", sc.label, g, peers, want.Peers)
				}
				if int(ps.ClusterSize) != want.Size {
					t.Errorf("%s %s: peers.idx cluster size %d, server said %d", sc.label, g, ps.ClusterSize, want.Size)
				}
			case g == "_meta_" && !sc.disabled:
				t.Errorf("%s: no _meta_ view to compare", sc.label)
			}
			tv, err := raftlog.DecodeTermVote(g+"/tav.idx", readFS(t, sc.js, path.Join(g, "tav.idx")))
			if err != nil {
				t.Errorf("%s %s: tav: %v", sc.label, g, err)
				continue
			}
			if tv.Vote != "" && !slices.Contains(ps.Peers, tv.Vote) {
				switch {
				case !slices.Contains(removed, tv.Vote):
					t.Errorf("%s %s: voted for %q, not a peer %v", sc.label, g, tv.Vote, ps.Peers)
				case !ok || tv.Term != want.Term:
					t.Errorf("%s %s: vote for removed peer %q in term %d, but the server's live term is %d: a new term clears the vote", sc.label, g, tv.Vote, tv.Term, want.Term)
				default:
					staleVotes++
					t.Logf("%s %s: tav.idx votes for removed peer %s in live term %d", sc.label, g, tv.Vote, tv.Term)
				}
			}
			if ok && tv.Term < want.Term {
				// A server takes a term from entries it catches up on
				// without writing tav.idx; a v2.10.22 server that campaigned
				// while joining late wrote term 0 and its own vote
				// (tavlag-v2.10.22).
				lagging++
				t.Logf("%s %s: tav term %d (vote %q) below the term %d the server reported", sc.label, g, tv.Term, tv.Vote, want.Term)
			}
			if b, err := readOpt(sc, path.Join(g, "commit.idx")); err == nil {
				ci, err := raftlog.DecodeCommitIndex(g+"/commit.idx", g, b)
				if err != nil || !ci.ChecksumOK || ci.Commit == 0 {
					t.Errorf("%s %s: commit.idx %+v %v", sc.label, g, ci, err)
				}
				if _, err := raftlog.DecodeCommitIndex("commit.idx", "other", b); !errors.Is(err, binfmt.ErrChecksum) {
					t.Errorf("%s %s: commit.idx with the wrong key: %v, want ErrChecksum", sc.label, g, err)
				}
			}
		}
	}
	t.Logf("after removals: %d stale peers.idx, %d votes for a removed peer; %d tav.idx below the live term", stale, staleVotes, lagging)
}

// Corruptions of a real peers.idx, each a small function on a copy. The
// file is a fixed, named one (v2.15.2-flat, n1's _meta_), so a bundle added
// later cannot change what is tested: flip-id-bit needs the first id's first
// byte to leave the id alphabet when bit 0x40 flips ('t' -> '4' would not).
func TestPeerStateCorrupt(t *testing.T) {
	sc := bundleServer(t, "v2.15.2-flat", "n1")
	orig := readFS(t, sc.js, "_meta_/peers.idx")
	known, err := raftlog.DecodePeerState("peers.idx", orig)
	if err != nil {
		t.Fatal(err)
	}
	if len(known.Peers) < 2 || len(known.Peers[0]) == 0 {
		t.Fatalf("%s _meta_/peers.idx: peers %v, want at least 2", sc.label, known.Peers)
	}
	if flipped := string(known.Peers[0][0]^0x40) + known.Peers[0][1:]; natsfmt.ValidPeerID(flipped) {
		t.Fatalf("%s _meta_/peers.idx: first id %s flipped at bit 0x40 gives the valid id %s: pick another file", sc.label, known.Peers[0], flipped)
	}
	for _, c := range []struct {
		name    string
		corrupt func([]byte) []byte
		err     error
		off     int64
		issue   string
	}{
		{"truncated-id", func(b []byte) []byte { return b[:len(b)-5] }, binfmt.ErrTruncated, 4, ""},
		{"short-header", func(b []byte) []byte { return b[:7] }, binfmt.ErrTruncated, 0, ""},
		{"count-huge", func(b []byte) []byte { b[7] = 0x7f; return b }, binfmt.ErrTruncated, 4, ""},
		{"flip-id-bit", func(b []byte) []byte { b[8] ^= 0x40; return b }, nil, 0, raftlog.IssueInvalidID},
		{"size-zero", func(b []byte) []byte { copy(b, []byte{0, 0, 0, 0}); return b }, nil, 0, raftlog.IssueSizeZero},
		{"no-trailer", func(b []byte) []byte { return b[:len(b)-2] }, nil, 0, raftlog.IssueNoTrailer},
		{"dup-id", func(b []byte) []byte { copy(b[16:24], b[8:16]); return b }, nil, 0, raftlog.IssueDuplicateID},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := raftlog.DecodePeerState("peers.idx", c.corrupt(slices.Clone(orig)))
			if c.err != nil {
				var ce *binfmt.CorruptError
				if !errors.Is(err, c.err) || !errors.As(err, &ce) || ce.Offset != c.off {
					t.Fatalf("err = %v, want %v at offset %d", err, c.err, c.off)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, is := range ps.Check() {
				kinds = append(kinds, is.Kind)
			}
			if !slices.Contains(kinds, c.issue) {
				t.Fatalf("issues %v, want %s", kinds, c.issue)
			}
			if c.issue == raftlog.IssueInvalidID {
				fl := ps.Flips(known.Peers, 1)
				if len(fl) != 1 || fl[0].Of != known.Peers[0] || fl[0].Bits != 1 {
					t.Fatalf("Flips = %+v, want one flip of %s", fl, known.Peers[0])
				}
			}
		})
	}
}

func TestSnapshots(t *testing.T) {
	nsnap := 0
	for _, sc := range allServers(t) {
		for _, g := range groupsOf(t, sc) {
			file, term, index := snapshotOf(sc.js, g)
			if file == "" {
				continue
			}
			nsnap++
			b := readFS(t, sc.js, file)
			sn, err := raftlog.DecodeSnapshot(file, g, b)
			if off, bit, flipped := sc.metaSnapFlip(); flipped && g == "_meta_" {
				// Damaged on purpose: the checksum fails, and flipping the
				// recorded bit back restores it.
				b[off] ^= 1 << bit
				fixed, ferr := raftlog.DecodeSnapshot(file, g, b)
				if !errors.Is(err, binfmt.ErrChecksum) || sn == nil || sn.ChecksumOK || ferr != nil || !fixed.ChecksumOK {
					t.Errorf("%s %s: flipped snapshot decodes with %v, repaired with %v", sc.label, file, err, ferr)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if !sn.ChecksumOK || sn.Term != term || sn.Index != index || sn.PeerState == nil {
				t.Errorf("%s %s: snapshot %+v, name says %d.%d", sc.label, file, sn, term, index)
			}
			switch {
			case g == "_meta_":
				// A meta snapshot of zero streams has empty data (formats.md
				// 6.3; membership-v2.12.1's killed servers), no S2 block.
				if sas, err := raftlog.DecodeMetaSnapshot(file, sn.DataOffset, sn.Data); err != nil {
					t.Errorf("%s %s: %v", sc.label, file, err)
				} else if len(sn.Data) == 0 && len(sas) != 0 {
					t.Errorf("%s %s: empty data gives %d streams", sc.label, file, len(sas))
				}
			case strings.HasPrefix(g, "S-"):
				ss, err := raftlog.DecodeStreamSnapshot(file, sn.DataOffset, sn.Data)
				if err != nil {
					t.Errorf("%s %s: %v", sc.label, file, err)
				} else if ss.DeletedCount() != ss.NumDeleted {
					t.Errorf("%s %s: %d deletes listed, header says %d", sc.label, file, ss.DeletedCount(), ss.NumDeleted)
				}
			case strings.HasPrefix(g, "C-"):
				cs, err := raftlog.DecodeConsumerSnapshot(file, sn.DataOffset, sn.Data)
				if err != nil {
					t.Errorf("%s %s: %v", sc.label, file, err)
				} else if cs.AckFloor.Stream > cs.Delivered.Stream {
					t.Errorf("%s %s: ack floor %d above delivered %d", sc.label, file, cs.AckFloor.Stream, cs.Delivered.Stream)
				}
			}
			// Broken copies.
			for _, pos := range []int{0, 9, 20, len(b) / 2, len(b) - 9} {
				bad := slices.Clone(b)
				bad[pos] ^= 0x01
				_, err := raftlog.DecodeSnapshot(file, g, bad)
				var ce *binfmt.CorruptError
				if !errors.Is(err, binfmt.ErrChecksum) || !errors.As(err, &ce) || ce.Offset != int64(len(b)-8) {
					t.Errorf("%s %s: byte %d flipped: %v, want ErrChecksum at %d", sc.label, file, pos, err, len(b)-8)
				}
			}
			if _, err := raftlog.DecodeSnapshot(file, g+"x", b); !errors.Is(err, binfmt.ErrChecksum) {
				t.Errorf("%s %s: wrong group key: %v", sc.label, file, err)
			}
			if _, err := raftlog.DecodeSnapshot(file, g, b[:27]); !errors.Is(err, binfmt.ErrTruncated) {
				t.Errorf("%s %s: 27 bytes: %v", sc.label, file, err)
			}
		}
	}
	if nsnap == 0 {
		t.Fatal("no snapshot in any fixture")
	}
}

func TestParseSnapshotName(t *testing.T) {
	for name, ok := range map[string]bool{
		"snap.1.10": true, "snap.18446744073709551615.1": true,
		"snap.01.10": false, "snap.+1.10": false, "snap.1": false, "snap.1.10.tmp": false, "snp.1.10": false, "snap.a.b": false,
	} {
		if _, _, got := raftlog.ParseSnapshotName(name); got != ok {
			t.Errorf("ParseSnapshotName(%q) ok = %v", name, got)
		}
	}
}

// TestWAL: every WAL record is an append entry at index = seq, of known
// entry types, whose ops decode and belong to the group's kind.
func TestWAL(t *testing.T) {
	seen := map[raftlog.OpCode]int{}
	types := map[raftlog.EntryType]int{}
	ltermBy := map[string]int{} // "<version>/<lterm present>" -> records
	for _, sc := range allServers(t) {
		for _, g := range groupsOf(t, sc) {
			recs, _ := readWAL(t, sc.js, g)
			for _, r := range recs {
				if r.err != nil {
					t.Errorf("%s %s seq %d: %v", sc.label, r.file, r.rec.Seq, r.err)
					continue
				}
				if r.ae.Index() != r.rec.Seq {
					t.Errorf("%s %s: record seq %d holds index %d", sc.label, r.file, r.rec.Seq, r.ae.Index())
				}
				if !natsfmt.ValidPeerID(r.ae.Leader) || r.ae.Term == 0 || r.ae.Trailing != 0 {
					t.Errorf("%s %s seq %d: leader %q term %d trailing %d", sc.label, r.file, r.rec.Seq, r.ae.Leader, r.ae.Term, r.ae.Trailing)
				}
				// The lterm trailer came with v2.12 (formats.md 5.5).
				if wantLTerm := !strings.HasPrefix(sc.version, "2.10."); r.ae.HasLTerm != wantLTerm {
					t.Errorf("%s (v%s) %s seq %d: lterm present %v", sc.label, sc.version, r.file, r.rec.Seq, r.ae.HasLTerm)
				}
				ltermBy[sc.version+"/"+fmt.Sprint(r.ae.HasLTerm)]++
				for _, e := range r.ae.Entries {
					types[e.Type]++
					switch e.Type {
					case raftlog.EntryNormal:
						op, err := raftlog.DecodeOp(r.file, e.DataOffset, e.Data)
						if err != nil {
							t.Errorf("%s %s seq %d: %v", sc.label, r.file, r.rec.Seq, err)
							continue
						}
						seen[op.Code]++
						if g == "_meta_" && !op.Code.IsMeta() || strings.HasPrefix(g, "S-") && !op.Code.IsStream() || strings.HasPrefix(g, "C-") && !op.Code.IsConsumer() {
							t.Errorf("%s %s seq %d: op %v in group %s", sc.label, r.file, r.rec.Seq, op.Code, g)
						}
						if op.Stream != nil && (op.Stream.Config.Name == "" || op.Stream.Group == nil || op.Stream.Account() == "") {
							t.Errorf("%s %s seq %d: incomplete stream assignment %+v", sc.label, r.file, r.rec.Seq, op.Stream)
						}
						if op.Consumer != nil && (op.Consumer.Name == "" || op.Consumer.Stream == "" || op.Consumer.Account() == "") {
							t.Errorf("%s %s seq %d: incomplete consumer assignment %+v", sc.label, r.file, r.rec.Seq, op.Consumer)
						}
					case raftlog.EntryPeerState:
						ps, err := e.PeerState(r.file)
						// A renamed v2.12.1 server adds its new id to a peer set of the old size.
						if err != nil || len(ps.Check()) > 0 && sc.strict() {
							t.Errorf("%s %s seq %d: peer state %+v %v", sc.label, r.file, r.rec.Seq, ps, err)
						}
					case raftlog.EntryAddPeer, raftlog.EntryRemovePeer, raftlog.EntryLeaderTransfer:
						if p, err := e.Peer(r.file); err != nil || !natsfmt.ValidPeerID(p) {
							t.Errorf("%s %s seq %d: %v peer %q %v", sc.label, r.file, r.rec.Seq, e.Type, p, err)
						}
					case raftlog.EntrySnapshot:
					default:
						t.Errorf("%s %s seq %d: entry type %v", sc.label, r.file, r.rec.Seq, e.Type)
					}
				}
			}
		}
	}
	t.Logf("entry types %v, ops %v, lterm by version %v", types, seen, ltermBy)
	// Each version's WALs were read: without the trailer on v2.10.22, with
	// it on v2.12.1 and v2.15.2.
	for _, k := range []string{"2.10.22/false", "2.12.1/true", "2.15.2/true"} {
		if ltermBy[k] == 0 {
			t.Errorf("no WAL record of %s (version/lterm) in any bundle", k)
		}
	}
	// The bundles' workloads write these; make sure they were read.
	for _, op := range []raftlog.OpCode{raftlog.OpAssignStream, raftlog.OpAssignConsumer, raftlog.OpStreamMsg,
		raftlog.OpCompressedStreamMsg, raftlog.OpDeleteMsg, raftlog.OpPurgeStream, raftlog.OpUpdateDelivered,
		raftlog.OpUpdateAcks, raftlog.OpUpdateSkip, raftlog.OpAddPendingRequest, raftlog.OpRemovePendingRequest} {
		if seen[op] == 0 {
			t.Errorf("no %v op in any bundle WAL", op)
		}
	}
	// These no bundle holds yet: decoded and checked above as soon as one does.
	for _, op := range []raftlog.OpCode{raftlog.OpRemoveStream, raftlog.OpRemoveConsumer, raftlog.OpUpdateStream,
		raftlog.OpBatchMsg, raftlog.OpBatchCommitMsg} {
		if seen[op] == 0 {
			t.Logf("not exercised: %v: %s", op, unexercised[op.String()])
		}
	}
	for _, et := range []raftlog.EntryType{raftlog.EntryNormal, raftlog.EntryPeerState, raftlog.EntryLeaderTransfer} {
		if types[et] == 0 {
			t.Errorf("no %v entry in any fixture WAL", et)
		}
	}
}

// unexercised names what no committed bundle holds yet (the generator's
// workloads do not produce it), so the tests above cannot check it on real
// bytes; each is logged where it would be checked.
var unexercised = map[string]string{
	"removeStream":        "no bundle deletes a stream through the meta layer",
	"removeConsumer":      "no bundle deletes a consumer through the meta layer",
	"updateStream":        "no bundle updates a stream's configuration",
	"batchMsg":            "no bundle publishes an atomic batch (allow_atomic, v2.12+)",
	"batchCommitMsg":      "no bundle publishes an atomic batch (allow_atomic, v2.12+)",
	"meta-removal-replay": "no bundle's _meta_ WAL holds a removal to replay from an empty state",
}

// metaState replays one server's _meta_: newest snapshot, then the WAL ops
// above its index (a later EntrySnapshot restarts from that snapshot).
func metaState(t *testing.T, sc *serverCase) ([]raftlog.AssignedStream, int) {
	t.Helper()
	var base []*raftlog.StreamAssignment
	var snapIndex uint64
	if file, _, _ := snapshotOf(sc.js, "_meta_"); file != "" {
		sn, err := raftlog.DecodeSnapshot(file, "_meta_", readFS(t, sc.js, file))
		if err != nil {
			t.Fatal(err)
		}
		if base, err = raftlog.DecodeMetaSnapshot(file, sn.DataOffset, sn.Data); err != nil {
			t.Fatal(err)
		}
		snapIndex = sn.Index
	}
	recs, tombs := readWAL(t, sc.js, "_meta_")
	byIndex := map[uint64]walRecord{}
	for _, r := range recs {
		if r.err == nil && r.rec.Seq > snapIndex && !tombs[r.rec.Seq] {
			byIndex[r.rec.Seq] = r // a later copy of an index replaces an earlier one
		}
	}
	idx := slices.Sorted(func(yield func(uint64) bool) {
		for k := range byIndex {
			if !yield(k) {
				return
			}
		}
	})
	var ops []*raftlog.Op
	for _, i := range idx {
		r := byIndex[i]
		for _, e := range r.ae.Entries {
			switch e.Type {
			case raftlog.EntrySnapshot:
				sas, err := raftlog.DecodeMetaSnapshot(r.file, e.DataOffset, e.Data)
				if err != nil {
					t.Fatal(err)
				}
				base, ops = sas, nil
			case raftlog.EntryNormal:
				op, err := raftlog.DecodeOp(r.file, e.DataOffset, e.Data)
				if err != nil {
					t.Fatal(err)
				}
				ops = append(ops, op)
			}
		}
	}
	return raftlog.Replay(base, ops), len(ops)
}

func TestMetaReplay(t *testing.T) {
	snapOnly, compared := 0, 0
	for _, sc := range allServers(t) {
		if _, _, flipped := sc.metaSnapFlip(); len(sc.streams) == 0 || !sc.strict() || flipped {
			continue
		}
		// A store without _meta_ has no meta state to replay: 2.11.17
		// deletes it when it disables JetStream (diskfull-v2.11.17 df-2).
		if _, err := fs.Stat(sc.js, "_meta_"); err != nil {
			continue
		}
		got, nops := metaState(t, sc)
		compared++
		if nops == 0 {
			snapOnly++ // the meta snapshot alone must give the streams
		}
		var gotW []streamWant
		for _, s := range got {
			sw := streamWant{Account: s.Account, Name: s.Name, Group: s.Group}
			for _, c := range s.Consumers {
				sw.Consumers = append(sw.Consumers, c.Name)
			}
			if s.Group == "" || (s.Replicas > 1 && len(s.Peers) != s.Replicas) {
				t.Errorf("%s: stream %s group %q peers %v replicas %d", sc.label, s.Name, s.Group, s.Peers, s.Replicas)
			}
			gotW = append(gotW, sw)
		}
		if !equalStreams(gotW, sc.streams) {
			t.Errorf("%s: meta replay (%d ops after the snapshot) gives\n%+v\nservers report\n%+v", sc.label, nops, gotW, sc.streams)
		}
	}
	t.Logf("%d servers compared, %d of them from the meta snapshot alone", compared, snapOnly)
	if compared == 0 || snapOnly == 0 {
		t.Errorf("replay compared on %d servers, snapshot-only on %d: fixtures do not exercise both", compared, snapOnly)
	}
}

func equalStreams(a, b []streamWant) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		sort.Strings(x.Consumers)
		sort.Strings(y.Consumers)
		if x.Account != y.Account || x.Name != y.Name || x.Group != y.Group || !slices.Equal(x.Consumers, y.Consumers) {
			return false
		}
	}
	return true
}

func readOpt(sc *serverCase, name string) ([]byte, error) {
	return fsReadFile(sc, name)
}

// TestMetaReplayWholeWAL replays, from an empty state, every meta op still
// stored in a _meta_ WAL, including records below the snapshot that
// compaction left in place (tombstoned). Where the WAL still holds the whole
// assignment history (its first stored index is at most 2 past the
// bootstrap entries), the result must equal what the servers report. This
// exercises the ops one by one, which snapshot-only state does not; removes
// and updates only where a bundle's workload made them (see unexercised).
func TestMetaReplayWholeWAL(t *testing.T) {
	n, withRemove := 0, 0
	for _, sc := range allServers(t) {
		recs, _ := readWAL(t, sc.js, "_meta_")
		byIndex := map[uint64]walRecord{}
		for _, r := range recs {
			if r.err == nil {
				byIndex[r.rec.Seq] = r
			}
		}
		if len(byIndex) == 0 || byIndex[4].ae == nil && byIndex[3].ae == nil && byIndex[2].ae == nil {
			continue // history not complete
		}
		var ops []*raftlog.Op
		hasRemove := false
		for _, i := range slices.Sorted(mapKeys(byIndex)) {
			for _, e := range byIndex[i].ae.Entries {
				if e.Type != raftlog.EntryNormal {
					continue
				}
				op, err := raftlog.DecodeOp(byIndex[i].file, e.DataOffset, e.Data)
				if err != nil {
					t.Fatal(err)
				}
				hasRemove = hasRemove || op.Code == raftlog.OpRemoveStream || op.Code == raftlog.OpRemoveConsumer
				ops = append(ops, op)
			}
		}
		if !sc.strict() {
			continue
		}
		n++
		if hasRemove {
			withRemove++
		}
		var got []streamWant
		for _, s := range raftlog.Replay(nil, ops) {
			sw := streamWant{Account: s.Account, Name: s.Name, Group: s.Group}
			for _, c := range s.Consumers {
				sw.Consumers = append(sw.Consumers, c.Name)
			}
			got = append(got, sw)
		}
		if !equalStreams(got, sc.streams) {
			t.Errorf("%s: whole-WAL replay of %d ops gives\n%+v\nservers report\n%+v", sc.label, len(ops), got, sc.streams)
		}
	}
	t.Logf("%d servers with the whole meta history in their WAL, %d of them with removals", n, withRemove)
	if n == 0 {
		t.Error("no bundle WAL holds a whole meta history")
	}
	if withRemove == 0 {
		t.Logf("not exercised: %s", unexercised["meta-removal-replay"])
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestPhantomPeers: in the phantom-peers bundle (real v2.10.22 servers whose
// _meta_/peers.idx were bit-flipped before restart), the decoded peer states
// list every phantom id, Check flags those outside the alphabet, and Flips
// traces each to its origin at the expected bit distance.
func TestPhantomPeers(t *testing.T) {
	type phantom struct {
		Peer       string `json:"peer"`
		OriginPeer string `json:"origin_peer"`
		Bits       int    `json:"bits"`
	}
	n := 0
	for _, sc := range allServers(t) {
		raw, ok := expectKeys(sc.expect)["phantom_peers"]
		if !ok {
			continue
		}
		var want []phantom
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		var size, quorum int
		_ = json.Unmarshal(expectKeys(sc.expect)["meta_cluster_size"], &size)
		_ = json.Unmarshal(expectKeys(sc.expect)["quorum"], &quorum)
		ps, err := raftlog.DecodePeerState("peers.idx", readFS(t, sc.js, "_meta_/peers.idx"))
		if err != nil {
			t.Fatalf("%s: %v", sc.label, err)
		}
		n++
		// Stores copied before the restart (stores_before_restart): peers.idx
		// holds the edit (size 10) whatever the restarted servers reported.
		if _, before := expectKeys(sc.expect)["stores_before_restart"]; before {
			size, quorum = 10, 6
		}
		if int(ps.ClusterSize) != size || ps.Quorum() != quorum {
			t.Errorf("%s: cluster size %d quorum %d, scenario says %d/%d", sc.label, ps.ClusterSize, ps.Quorum(), size, quorum)
		}
		flips := ps.Flips(sc.clusterIDs, 2)
		invalid := map[string]bool{}
		for _, is := range ps.Check() {
			if is.Kind == raftlog.IssueInvalidID {
				invalid[is.Peer] = true
			}
		}
		for _, w := range want {
			if !slices.Contains(ps.Peers, w.Peer) {
				t.Errorf("%s: phantom %q not in peers.idx %q", sc.label, w.Peer, ps.Peers)
				continue
			}
			if !slices.Contains(flips, raftlog.PeerFlip{ID: w.Peer, Of: w.OriginPeer, Bits: w.Bits}) {
				t.Errorf("%s: Flips %+v lacks %q -> %q (%d bits)", sc.label, flips, w.Peer, w.OriginPeer, w.Bits)
			}
			if invalid[w.Peer] == natsfmt.ValidPeerID(w.Peer) {
				t.Errorf("%s: Check invalid-id for %q = %v", sc.label, w.Peer, invalid[w.Peer])
			}
		}
		if len(flips) != len(want) {
			t.Errorf("%s: %d flips found, scenario has %d phantoms: %+v", sc.label, len(flips), len(want), flips)
		}
	}
	if n == 0 {
		t.Skip("no phantom-peers bundle")
	}
}

// TestOrphanMeta: in the orphan bundles the meta layer assigns exactly the
// "A" streams (with their replica counts); the "B" streams exist only as
// local folders, never in any server's meta state.
func TestOrphanMeta(t *testing.T) {
	n := 0
	for _, sc := range allServers(t) {
		raw, ok := expectKeys(sc.expect)["streams_a"]
		if !ok {
			continue
		}
		var want map[string]int
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, _ := metaState(t, sc)
		gotm := map[string]int{}
		for _, s := range got {
			gotm[s.Account+" > "+s.Name] = s.Replicas
		}
		n++
		if !maps.Equal(gotm, want) {
			t.Errorf("%s: meta assigns %v, scenario's meta streams are %v", sc.label, gotm, want)
		}
	}
	if n == 0 {
		t.Skip("no orphan bundle")
	}
}
