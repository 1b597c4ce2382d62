package store

import (
	"bytes"
	"errors"
	"fmt"
	"path"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// A meta snapshot that fails its checksum is never applied by the server:
// nats-server 2.14 and newer refuse to start JetStream on it (raft.go
// setupLastSnapshot returns errSnapshotCorrupt, server.go Fatalf "Can't
// start JetStream"; read in 2.14.0, 2.14.10, 2.15.2, run on 2.14.10, 2.15.2
// and 2.15.3); 2.12 and older (read and run on 2.10.22, 2.11.17, 2.12.1, 2.12.15)
// delete the file and recover from what the meta WAL holds after it. Either way its
// assignments are not the server's state, and an unreadable snapshot is not
// "no assignments": what the server recovers is said per server below.

// metaSnapFile is one server's newest meta snapshot as read
// (SnapshotRecord), beside the others for comparison.
type MetaSnapFile struct {
	Srv  *model.Server
	File string
	B    []byte
	Snap *raftlog.Snapshot
}

// bitSearchLimit bounds the single-bit search for the damage in a snapshot
// that fails its checksum: every bit flipped costs one hash of the file, so
// the work grows with the square of its size (4 KiB: 32768 hashes of 4 KiB).
const bitSearchLimit = 4 << 10

// locateSnapshotDamage says where a snapshot that fails its checksum is
// damaged and returns that offset (the checksum's when it cannot be told):
// the single bit whose flip restores the checksum, else the first byte that
// differs from another server's snapshot of the same term, index and
// length, else where its S2 payload stops decoding.
func LocateSnapshotDamage(s MetaSnapFile, all []MetaSnapFile) (string, int64) {
	hoff := len(s.B) - 8
	region := func(off int) string {
		switch {
		case off < 20:
			return "in the header"
		case int64(off) < s.Snap.DataOffset:
			return "in the peer state"
		case off < hoff:
			return fmt.Sprintf("in the meta payload (bytes %d..%d)", s.Snap.DataOffset, hoff)
		}
		return "in the checksum itself"
	}
	if hoff <= bitSearchLimit {
		if off, bit, ok := singleBitFlip(s.B, natsfmt.MetaGroup); ok {
			return fmt.Sprintf("bit %d of byte %d is flipped (the one single-bit change that restores the checksum), %s", bit, off, region(off)), int64(off)
		}
	}
	for _, o := range all {
		if o.Srv == s.Srv || !o.Snap.ChecksumOK || o.Snap.Term != s.Snap.Term || o.Snap.Index != s.Snap.Index || len(o.B) != len(s.B) {
			continue
		}
		var diff []int
		for i := 0; i < hoff; i++ {
			if s.B[i] != o.B[i] {
				diff = append(diff, i)
			}
		}
		if len(diff) > 0 && len(diff) <= 16 {
			return fmt.Sprintf("%d byte(s) differ from %s's intact snapshot of the same term and index, the first at byte %d (%08b, %s has %08b), %s", len(diff), o.Srv.Name, diff[0], s.B[diff[0]], o.Srv.Name, o.B[diff[0]], region(diff[0])), int64(diff[0])
		}
	}
	if _, err := raftlog.DecodeMetaSnapshot(s.File, s.Snap.DataOffset, s.Snap.Data); err != nil {
		var ce *binfmt.CorruptError
		if errors.As(err, &ce) && ce.Offset > s.Snap.DataOffset {
			return fmt.Sprintf("its S2 payload stops decoding at byte %d, at or after the damage (%v)", ce.Offset, err), ce.Offset
		}
	}
	return fmt.Sprintf("the damage is not located (no single-bit flip restores the checksum%s, and no other server holds this snapshot); the checksum is at byte %d",
		map[bool]string{true: "", false: ", not searched in a file this large"}[hoff <= bitSearchLimit], hoff), int64(hoff)
}

// singleBitFlip finds the one bit of b[:len(b)-8] whose flip makes the
// HighwayHash keyed by group equal the stored checksum.
func singleBitFlip(b []byte, group string) (off int, bit uint, ok bool) {
	hoff := len(b) - 8
	var sum [8]byte
	copy(sum[:], b[hoff:])
	one := make([]byte, 1)
	for i := 0; i < hoff; i++ {
		for k := uint(0); k < 8; k++ {
			one[0] = b[i] ^ 1<<k
			if binfmt.HH64(group, b[:i], one, b[i+1:hoff]) == sum {
				return i, k, true
			}
		}
	}
	// A flip in the stored checksum itself.
	want := binfmt.HH64(group, b[:hoff])
	for i := range 8 {
		if x := want[i] ^ sum[i]; x != 0 && x&(x-1) == 0 && bytes.Equal(want[:i], sum[:i]) && bytes.Equal(want[i+1:], sum[i+1:]) {
			for k := uint(0); k < 8; k++ {
				if x == 1<<k {
					return hoff + i, k, true
				}
			}
		}
	}
	return 0, 0, false
}

// metaSnapNextStart says what the server's version does with its corrupt
// meta snapshot on its next start.
func MetaSnapNextStart(srv *model.Server, damaged, members int) []string {
	var out []string
	after := 0
	if srv.Meta != nil {
		after = srv.Meta.AfterSnapshot
	}
	refuse := fmt.Sprintf("on nats-server 2.14+ (%s) the next start logs \"Snapshot corrupt, checksums did not match\" and \"[FTL] Can't start JetStream: raft: snapshot corrupt\": the server deletes nothing but stays out of the meta group", versionOrUnknown(srv))
	if members > 0 {
		left := members - damaged
		if q := members/2 + 1; left < q {
			refuse += fmt.Sprintf("; %d of the %d meta peers in the bundle have a corrupt snapshot, so %d remain running, below the quorum of %d: the meta group has no leader until one is repaired", damaged, members, left, q)
		}
	}
	drop := fmt.Sprintf("on nats-server 2.12 and older (%s) the next start logs \"Snapshot corrupt, checksums did not match\", deletes the snapshot and recovers from the meta WAL alone: ", versionOrUnknown(srv))
	if after == 0 {
		drop += "its WAL holds nothing after the snapshot, so the meta leader installs its own snapshot and the server keeps its streams (seen on 2.12.1)"
	} else {
		n := 0
		if srv.Meta != nil {
			n = len(srv.Meta.Streams)
		}
		drop += fmt.Sprintf("its WAL still holds %d entr%s after the snapshot (assigning %d streams), so it counts itself current with only that state and, 30 s after meta recovery, deletes as orphans every stream and consumer those entries do not assign (seen on 2.12.1; nats-server#7556; see orphan-risk)", after, map[bool]string{true: "y", false: "ies"}[after == 1], n)
	}
	// docs/verification.md versions table, row metasnap (refusesCorruptMetaSnapshot);
	// a version it cannot tell gets both accounts.
	switch refuses, known := releases.RefusesCorruptMetaSnapshot(srv.Version); {
	case refuses:
		out = append(out, refuse)
	case known:
		out = append(out, drop)
	default:
		out = append(out, refuse, drop)
	}
	return out
}

func versionOrUnknown(s *model.Server) string {
	if s.Version == "" {
		return "the version of " + s.Name + " is not in the bundle"
	}
	return s.Name + " runs " + s.Version
}

// isMetaSnapshot says whether file is a snapshot of the meta group.
func isMetaSnapshot(file string) bool {
	_, _, ok := raftlog.ParseSnapshotName(path.Base(file))
	return ok && path.Base(path.Dir(path.Dir(file))) == natsfmt.MetaGroup
}
