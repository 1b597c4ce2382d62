package releases

import (
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"strconv"
	"strings"
)

// parseVersion reads "2.10.22" (or "v2.10.22-beta") into its numbers.
func ParseVersion(v string) (major, minor, patch int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+ "); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return 0, 0, 0, false
	}
	n := make([]int, 3)
	for i := 0; i < len(parts) && i < 3; i++ {
		x, err := strconv.Atoi(parts[i])
		if err != nil {
			return 0, 0, 0, false
		}
		n[i] = x
	}
	return n[0], n[1], n[2], true
}

// versionAtLeast says whether v is at least major.minor; an unknown version
// is treated as old, so remedies stay on what every version supports.
func VersionAtLeast(v string, major, minor int) bool {
	ma, mi, _, ok := ParseVersion(v)
	if !ok {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// startsFromSnapshotPeers says whether nats-server v starts a raft group
// with the peer state of its newest snapshot, reading peers.idx only when
// the snapshot gave none (raft.go initRaftNode: restorePeerState after
// setupLastSnapshot, from 2.12.5 and in 2.14+; read in 2.12.5-2.12.15,
// 2.14.0, 2.15.2-2.15.3), rather than with peers.idx (2.10.x, 2.11.x to
// 2.11.17, 2.12.0-2.12.4: readPeerState first, the snapshot's peer state not
// applied at start). known is false when v does not parse, and where no
// source was read: 2.13 (never released), past the newest release read of
// a line (2.10.27, 2.11.17, 2.12.15, 2.14.10, 2.15.3), and 2.16+. README
// versions table, row phantom: 2.10.22, 2.11.17 and 2.12.4 stayed at size
// 10 with no leader after the incident-000 edit of peers.idx, 2.12.15,
// 2.14.10 and 2.15.3 ran at 5 with a leader.
func StartsFromSnapshotPeers(v string) (yes, known bool) {
	mi, pa, ok := SourceRead(v)
	if !ok {
		return false, false
	}
	switch mi {
	case 10, 11:
		return false, true
	case 12:
		return pa >= 5, true
	}
	return true, true
}

// newestSourceRead is, per 2.x release line, the newest patch release whose
// nats-server source the version rules were read in; 2.13 was never
// released.
var newestSourceRead = map[int]int{10: 27, 11: 17, 12: 15, 14: 10, 15: 3}

// sourceRead parses v into its 2.x minor and patch, ok only when the source
// of that release line was read up to that patch: a version rule answers
// "cannot tell" for any other.
func SourceRead(v string) (minor, patch int, ok bool) {
	ma, mi, pa, parsed := ParseVersion(v)
	newest, line := newestSourceRead[mi]
	if !parsed || ma != 2 || !line || pa > newest {
		return 0, 0, false
	}
	return mi, pa, true
}

// hasMetaRescue says whether nats-server v answers $JS.API.META.RESCUE
// (jetstream_api.go jsMetaRescueRequest, raft.go RescueQuorum: in 2.15.0,
// 2.15.2 and 2.15.3, run on the last two, testdata/remedies/lostquorum-v2.15.2.json and
// testdata/bundles/lostquorum-v2.15.3; absent from the 2.11.17, 2.12.15
// and 2.14.10 source, and 2.11.17, 2.12.1 and 2.12.15 answered it 10039,
// docs/verification.md versions table, row rename). yes with known false: 2.15 past
// 2.15.3 and 2.16+, where it is likely kept but was not read; known false
// also for 2.13 and past the newest release read of an older line (a patch
// could add it).
func HasMetaRescue(v string) (yes, known bool) {
	ma, mi, _, ok := ParseVersion(v)
	if !ok || ma != 2 || mi == 13 {
		return false, false
	}
	_, _, read := SourceRead(v)
	return mi >= 15, read
}

// countsMemberVotesOnly says whether a candidate of nats-server v counts
// only the votes of its group's peers once it knows as many peers as the
// group's size (raft.go shouldCountVoteFromPeer: in 2.12.15, 2.14.10,
// 2.15.2 and 2.15.3; absent in 2.10.22, 2.10.27, 2.11.0-2.11.8, 2.11.17,
// 2.12.1 and 2.12.4), so that a new server's vote does not count in a
// group that lost its leader. Run (testdata/remedies/lostquorum-v2.1*.json):
// two temporary servers beside the two survivors of five elected no meta
// leader in 2 min on 2.12.15 and 2.14.10. known is false for 2.12.5-2.12.14
// and where sourceRead cannot tell.
func CountsMemberVotesOnly(v string) (yes, known bool) {
	mi, pa, ok := SourceRead(v)
	switch {
	case !ok:
		return false, false
	case mi == 10 || mi == 11 || mi == 12 && pa <= 4:
		return false, true
	case mi == 12 && pa < 15:
		return false, false
	}
	return true, true
}

// minVersion is the oldest server version in the bundle, "" if none is known.
func MinVersion(m *model.Model) string {
	best := ""
	for _, s := range m.Servers {
		if _, _, _, ok := ParseVersion(s.Version); !ok {
			continue
		}
		if best == "" || versionLess(s.Version, best) {
			best = s.Version
		}
	}
	return best
}

func versionLess(a, b string) bool {
	a1, a2, a3, _ := ParseVersion(a)
	b1, b2, b3, _ := ParseVersion(b)
	if a1 != b1 {
		return a1 < b1
	}
	if a2 != b2 {
		return a2 < b2
	}
	return a3 < b3
}

// disableDeletesMeta says whether nats-server v, when it runs out of
// resources, deletes its meta group state ($SYS/_js_/_meta_) as it turns
// JetStream off, rather than only stopping the group. handleOutOfSpace
// calls DisableJetStream, whose meta.Delete() removes the folder, in
// 2.10.22, 2.10.27, 2.11.17 and 2.12.4 (v2.11.17 jetstream.go:626, :677),
// and ShutdownJetStream (meta.Stop) in 2.12.15, 2.14.10, 2.15.2 and 2.15.3.
// docs/verification.md versions table, row `diskfull`: run on 2.11.17 (fixture
// diskfull-v2.11.17: the full server's store has no _meta_ folder, a start
// on the still-full volume keeps running with JetStream disabled again),
// 2.12.15, 2.14.10 and 2.15.3 (_meta_ kept, a start on the full volume
// exits). known is false for 2.12.5-2.12.14 (the change lies there, not
// read), and where sourceRead cannot tell (2.13, past a line's newest
// release read, 2.16+).
func DisableDeletesMeta(v string) (yes, known bool) {
	mi, pa, ok := SourceRead(v)
	switch {
	case !ok:
		return false, false
	case mi == 10 || mi == 11 || mi == 12 && pa <= 4:
		return true, true
	case mi == 12 && pa < 15:
		return false, false
	}
	return false, true
}

// refusesCorruptMetaSnapshot says whether nats-server v refuses to start
// JetStream on a corrupt meta snapshot ("[FTL] Can't start JetStream: raft:
// snapshot corrupt"), rather than dropping it and recovering from the meta
// WAL (load_metasnap.go). docs/verification.md versions table, row `metasnap`: 2.14.10,
// 2.15.2 and 2.15.3 refuse (fixtures metasnap-v2.14.10, metasnap-v2.15.2);
// 2.10.22, 2.11.17, 2.12.1 and 2.12.15 drop it (metasnap-v2.12.1; the
// 2.11.17 and 2.12.15 runs were not committed). A release line is one side
// or the other; known is false for 2.13 (never released, no side proven)
// and where v does not parse as 2.x.
func RefusesCorruptMetaSnapshot(v string) (yes, known bool) {
	ma, mi, _, ok := ParseVersion(v)
	switch {
	case !ok || ma != 2 || mi == 13:
		return false, false
	case mi >= 14:
		return true, true
	}
	return false, true
}

// keepsPriorLastSeq says whether nats-server v, rebuilding a stream's state
// from its blocks because index.db is stale, keeps the last sequence
// index.db remembers when the blocks end before it, counting the sequences
// between as deleted (filestore.go newFileStoreWithCreated, "Check if our
// prior state remembers a last sequence past where we can see"). 2.11.17
// does so always (filestore.go:499, no tombstone unless the rebuild found
// lost data); 2.10.22 and 2.10.27 only when the rebuild found lost data;
// 2.12.1 to 2.15.3 only when the store does not flush asynchronously, which
// a replicated stream does unless sync_always (stream.go: v2.12.1:890,
// v2.12.15:908, v2.15.3:1116), 2.12.1 with a tombstone only for lost data,
// 2.12.15, 2.14.10 and 2.15.x always with one. docs/verification.md versions table, row acked-lost:
// 2.11.17's R3 copies cut after seq 210 reported last_seq 240, 210
// messages, 30 deleted. 2.11.0 to 2.11.3 keep it only when the rebuild
// found lost data, as 2.10 (`if fs.ld != nil && prior.LastSeq > ...`);
// 2.11.4 to 2.11.17 always (the same line without fs.ld). Only 2.11.4+ is
// applied: the others' conditions are not in the bundle.
func KeepsPriorLastSeq(v string) (yes, known bool) {
	mi, pa, ok := SourceRead(v)
	if !ok || mi != 11 || pa < 4 {
		return false, false
	}
	return true, true
}

// RestartCreatesMissingConsumer says whether servers of v, started again on
// a meta state that assigns a consumer the stream layer refused when it was
// made (nats-server #8123: a WorkQueue consumer whose filter overlaps
// another's), create it: a server recovering a consumer it holds on disk
// skips the overlap check and logs "Consumer … has a filter subject that
// overlaps with other consumers, which is not allowed for a stream with
// WorkQueue policy, it should be administratively deleted" (consumer.go
// addConsumerWithAssignment, isRecovering). Runs: consumermissing-v2.12.1
// and -v2.12.15, servers started on the bundle's stores went on failing
// /healthz on it and created it when restarted again one at a time;
// consumermissing-v2.15.3 created it at the first start (first is true).
// known is false for lines not run (2.10, 2.11, 2.14).
func RestartCreatesMissingConsumer(v string) (yes, first, known bool) {
	mi, _, ok := SourceRead(v)
	if !ok || (mi != 12 && mi != 15) {
		return false, false, false
	}
	return true, mi == 15, true
}

// RestartRefusesOtherConsumer says whether servers of v that created such a
// consumer at a start then refuse, at the next, the consumer it overlaps
// (consumermissing-v2.15.3: restarted one at a time, every server answered
// /healthz "consumer assignment error: multiple non-filtered consumers not
// allowed on workqueue stream" for the stream's first consumer, which the
// list API then reported missing; 2.12.1 and 2.12.15 kept both). known as
// RestartCreatesMissingConsumer.
func RestartRefusesOtherConsumer(v string) (yes, known bool) {
	_, first, known := RestartCreatesMissingConsumer(v)
	return first, known
}

// KeepsDeletedPending says whether a consumer leader of v keeps counting
// as pending the messages its stream deleted while the consumer had no
// leader (nats-server #7984, "Consumer's MaxAckPending is stuck after
// message delete", merged for 2.12.7 and 2.14.0, drops such a message when
// the consumer comes to it again). Runs (consumerstuck-v2.12.1, -v2.12.15,
// -v2.15.3): three messages deleted right after their consumer's leader
// was killed stayed pending on the new leader, through a restart of the
// old one and of the whole cluster, the consumer at max_ack_pending
// delivering nothing; the fix notwithstanding on 2.12.15 and 2.15.3 (its
// ack wait, 1 h, had not ended). known is false for lines not run.
func KeepsDeletedPending(v string) (yes, known bool) {
	mi, _, ok := SourceRead(v)
	if !ok || (mi != 12 && mi != 15) {
		return false, false
	}
	return true, true
}
