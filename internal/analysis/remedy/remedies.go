package remedy

import (
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// The remedy catalogue: every remedy a check prints, as data, read in one
// place. A step that removes, truncates, peer-removes, scales down, moves
// aside or restarts a server on the state is marked Destroys and follows a
// save step that says what to copy out and how (TestRemedyCatalogue). Two
// requests remove peers, and each entry says which it uses:
//
//   - a server removal, $JS.API.SERVER.REMOVE (nats server cluster
//     peer-remove), takes a server out of the meta group and out of every
//     stream and consumer group it is in (jetstream_cluster.go
//     processRemovePeer: the meta leader removes it from every stream
//     assignment that lists it; the removed server, if running, disables
//     its own JetStream);
//   - a stream peer removal, $JS.API.STREAM.PEER.REMOVE.<stream> (nats
//     stream cluster peer-remove), takes one server out of one stream's
//     group and its consumers (jetstream_api.go jsStreamRemovePeerRequest;
//     it takes a server name before 2.15, a name or a peer id from 2.15).
//
// Proven lists the runs of testdata/gen that carried a remedy out on real
// servers and recorded the outcome in a committed fixture's want.json
// (expect.remedy, expect.remedies); every other entry says it is not
// proven by execution.
var RemedyCatalogue = []remedy{
	// peer-id-corrupt
	{ID: "meta-corrupt-id-remove", Steps: []remedyStep{
		{Kind: StepCost, Text: "a server removal takes the id out of the meta group and out of every stream and consumer group that lists it. A corrupt id is no server's, so no copy goes with it; remove only the ids listed here, never the id of the server they resemble."},
		{Kind: StepSave, Text: "copy every server's meta group folder out (cp -a of _js_/_meta_ under the system account's folder of each store)."},
		{Kind: StepAction, Destroys: true, Each: "ids",
			Text:     "With the system account and a meta leader present (see quorum-unreachable if there is none), remove each corrupt id with a server removal:",
			Commands: []string{"{{each|server-remove}}"}},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows the meta group at the size of its real servers, with a leader."},
		{Kind: StepNote, Text: "Then find how the id was corrupted (disk, memory, or a network path that rewrites packets) before it happens again."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/v2.10.27-incident-phantom-peers-failed.json", Outcome: "quorum-unreachable's temporary server brought no meta leader in 90 s, so no removal could be sent", Failed: true},
		{Version: "2.11.17", Fixture: "testdata/remedies/v2.11.17-incident-phantom-peers.json", Outcome: "with quorum-unreachable's temporary server a meta leader; the five ids removed one at a time: 5/3 led, all 9 streams kept with their messages and a leader, no stream folder deleted"},
	}},
	{ID: "group-corrupt-id-remove", Steps: []remedyStep{
		{Kind: StepCost, Text: "scaling the asset to R1 keeps only the leader's copy and deletes the others; a server removal takes the id out of the meta group and every group that lists it (a corrupt id is no server's, so no copy goes with it)."},
		{Kind: StepSave, Text: "copy every server's folder of group {{group}} out (cp -a of the asset's folder and of _js_/{{group}} on each store)."},
		{Kind: StepAction, Destroys: true, Each: "ids",
			Text:     "Remove the corrupt id with a server removal, as the system account:",
			Commands: []string{"{{each|server-remove}}"}},
		{Kind: StepAction, Destroys: true, Text: "If group {{group}} stays stuck, let it be rebuilt: scale the asset to R1 and back (nats stream edit STREAM --replicas 1, then --replicas N)."},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows group {{group}} with a leader and every replica current."},
		{Kind: StepNote, Text: "Then find how the id was corrupted (disk, memory, or a network path that rewrites packets) before it happens again."},
	}},
	// peer-id-corrupt, peer-unknown, store-corrupt of peers.idx: the next
	// start heals it (raft.go initRaftNode on 2.12.5+ and 2.14+).
	{ID: "peers-idx-healed-by-snapshot", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing to remove, and no peer-remove."},
		{Kind: StepSave, Text: "back up the folder of group {{group}} on each server (cp -a) before any other change, with {{snapshots}}: they are the clean copy."},
		{Kind: StepAction, Destroys: true, Text: "At their next start the servers restore group {{group}} from {{snapshots}} and write that peer state to peers.idx{{dropping}}."},
		{Kind: StepVerify, Text: "after the start, `nats server report jetstream` (or `jsforensics dump peers` on peers.idx) lists only the group's real peers."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.15", Fixture: "testdata/remedies/v2.12.15-incident-phantom-peers.json", Outcome: "restarted on the incident-000 edit of peers.idx: meta leader at the snapshot's 5 peers, all 9 streams kept with their messages and a leader, nothing deleted"},
		{Version: "2.14.10", Fixture: "testdata/remedies/v2.14.10-incident-phantom-peers.json", Outcome: "the same"},
		{Version: "2.15.3", Fixture: "testdata/bundles/v2.15.3-incident-phantom-peers", Outcome: "the same"},
	}},
	// peer-unknown
	{ID: "unknown-peer-remove", Steps: []remedyStep{
		{Kind: StepCost, Text: "a server removal drops the peer's replicas from every group (they are placed anew and copied from the leaders), and a returning server with that id loses its data."},
		{Kind: StepSave, Text: "if the server's disk may still exist, copy its store out first (cp -a of its whole JetStream folder)."},
		{Kind: StepAction, Text: "If the server still exists, do not remove it: add its store, log or captures to the bundle and analyze again."},
		{Kind: StepAction, Destroys: true, Text: "If it is gone for good, remove {{peer}} with a server removal, as the system account:",
			Commands: []string{"{{peer|server-remove}}"}},
		{Kind: StepVerify, Text: "`nats server report jetstream` no longer lists {{peer}} in group {{group}}."},
	}},
	// quorum-unreachable
	{ID: "stream-quorum-peer-remove", Steps: []remedyStep{
		{Kind: StepCost, Text: "a stream peer removal deletes the removed peer's copy, and scaling to R1 keeps only the leader's copy and deletes the others."},
		{Kind: StepSave, Text: "copy every server's folder of group {{group}} out (cp -a of the stream's folder and of _js_/{{group}} on each store) and compare the replicas (replica-gap, replica-divergence)."},
		{Kind: StepNote, When: "streamunknown", Text: "No file of the bundle says which stream consumer group {{group}} belongs to: find it (each stream's `consumer_raft_groups` in a server's /jsz?streams=true&raft=true names the consumer groups it holds) and put the stream's name where STREAM stands below."},
		{Kind: StepAction, Destroys: true, Each: "removals",
			Text:     "Then, once the meta layer has a leader, remove each missing peer ({{missing}}) from this stream's group only, with a stream peer removal (not $JS.API.SERVER.REMOVE, which removes a server from the whole cluster):",
			Commands: []string{"{{each}}"}},
		{Kind: StepNote, When: "unnamed", Text: "Before 2.15 the stream peer removal takes a server name only (jetstream_api.go jsStreamRemovePeerRequest hashes it into the peer id), so {{unnamed}}, which no server of the bundle has, can be removed this way on 2.15+ only; on older servers use the scale-down."},
		{Kind: StepAction, Destroys: true, Text: "Or scale the stream down to R1 and back up:",
			Commands: []string{"nats stream edit {{stream|shell}} --replicas 1", "nats stream edit {{stream|shell}} --replicas {{replicas}}"}},
		{Kind: StepVerify, Text: "`nats stream info {{stream|shell}}` shows a leader and every replica current."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/scaledown-v2.10.27.json", Outcome: "the two stream peer removals of the stalled stream (by server name): it was led again with all its messages, every other stream untouched, no stream folder deleted (2 runs of 2, the other scaledown-v2.10.27-failed.json)"},
		{Version: "2.11.17", Fixture: "testdata/remedies/scaledown-v2.11.17.json", Outcome: "the two stream peer removals of the stalled stream (by server name): it was led again with all its messages, every other stream untouched, no stream folder deleted"},
		{Version: "2.12.1", Fixture: "testdata/bundles/scaledown-v2.12.1", Outcome: "the same: the stalled stream led again with all its messages, nothing deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/scaledown-v2.12.15.json", Outcome: "the same"},
		{Version: "2.14.10", Fixture: "testdata/remedies/scaledown-v2.14.10.json", Outcome: "the same"},
		{Version: "2.15.3", Fixture: "testdata/remedies/scaledown-v2.15.3.json", Outcome: "the same"},
	}},
	{ID: "meta-quorum-rescue", Steps: []remedyStep{
		{Kind: StepCost, Text: "the quorum rescue makes the surviving servers' meta state the truth (what only the missing peers knew is dropped), and a server removal drops the removed peer's replicas from every group."},
		{Kind: StepSave, Text: "back up every server's store: copy each jetstream folder out (cp -a)."},
		// v2.15.2/v2.15.3 jetstream_api.go jsMetaRescueRequest (a broadcast
		// system subscription) and raft.go RescueQuorum (refusals,
		// rescueQuorumTimeout 5 min, recalcQuorum ends it).
		{Kind: StepAction, Destroys: true, Text: "{{rescue}} With the system account, send it once: every server that receives it lowers its own meta quorum and answers for itself (--replies 0 shows every answer); a server refuses it while it knows a meta leader, if it is no voting member of the meta group, or if its meta log is empty. The lowered quorum lasts 5 minutes, or until the removals below bring the group's own quorum down to it:",
			Commands: []string{"nats request '$JS.API.META.RESCUE' '{\"quorum_needed\":{{quorum}}}' --replies 0"}},
		{Kind: StepAction, Destroys: true, Each: "missing",
			Text:     "Then, once a meta leader is elected (within those 5 minutes), remove each missing peer with a server removal, one at a time:",
			Commands: []string{"{{each|server-remove}}"}},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows the meta group led, with the live servers as its peers."},
		{Kind: StepNote, When: "readd", Text: "{{readd}}"},
		{Kind: StepNote, Refers: []string{"orphan-risk"}, Text: "Before recovery completes, see the orphan-risk findings: streams the recovered meta state does not assign are deleted 30 s later."},
		{Kind: StepNote, Refers: []string{"!orphan-risk"}, Text: "Streams the recovered meta state does not assign are deleted 30 s after it recovers."},
	}, Proven: []report.RemedyProof{
		{Version: "2.15.2", Fixture: "testdata/remedies/lostquorum-v2.15.2.json", Outcome: "3 of 5 servers lost with their stores: both survivors answered the rescue (quorum 3 -> 2), a meta leader, the 3 server removals one at a time down to 2/2 led; the two R1 streams and the R3 stream (2 of its 3 copies left) kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.15.3", Fixture: "testdata/bundles/lostquorum-v2.15.3", Outcome: "the same"},
	}},
	// Where the live servers count only their group's peers' votes
	// (countsMemberVotesOnly), lost servers of known names.
	{ID: "meta-quorum-same-names", Steps: []remedyStep{
		{Kind: StepCost, Text: "servers started under the missing servers' names on empty stores take their places in every group: their copies are made anew from the survivors, and what only the lost servers held is gone for good (do not start the lost stores again afterwards)."},
		{Kind: StepSave, Text: "back up every server's store: copy each jetstream folder out (cp -a)."},
		{Kind: StepNote, Text: "Not: temporary servers with new names: nats-server {{version}} counts only the votes of the group's own peers (raft.go shouldCountVoteFromPeer), so they elect no leader (run on 2.12.15 and 2.14.10: none in 2 min)."},
		{Kind: StepAction, Destroys: true, Text: "With the surviving servers running, start {{count}} server(s) named {{names}} on EMPTY stores (same cluster and routes): a server's peer id is the hash of its server_name, so they are the missing peers, and once all {{size}} peers answer a vote a meta leader is elected."},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows the meta group led, with all {{size}} peers, and the stream groups with a leader, the new servers catching up."},
		{Kind: StepNote, Refers: []string{"orphan-risk"}, Text: "Before recovery completes, see the orphan-risk findings: streams the recovered meta state does not assign are deleted 30 s later."},
		{Kind: StepNote, Refers: []string{"!orphan-risk"}, Text: "Streams the recovered meta state does not assign are deleted 30 s after it recovers."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.15", Fixture: "testdata/remedies/lostquorum-v2.12.15.json", Outcome: "3 of 5 servers lost with their stores: n3, n4, n5 started on empty stores beside the 2 survivors: a meta leader at 5/3 within seconds, the R3 stream's new copy caught up, the two R1 streams and the R3 stream kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.14.10", Fixture: "testdata/remedies/lostquorum-v2.14.10.json", Outcome: "the same"},
	}},
	{ID: "meta-quorum-temporary-servers", Steps: []remedyStep{
		{Kind: StepCost, Text: "a server removal drops the removed peer's replicas from every group (they are placed anew on live servers); the temporary servers join the meta group and are removed again at the end."},
		{Kind: StepSave, Text: "back up every server's store: copy each jetstream folder out (cp -a)."},
		{Kind: StepAction, Text: "Add {{temporary}} temporary JetStream server(s) with new server_name(s) to the cluster so that {{live}} live peers reach a quorum of a {{size}}-peer group; a meta leader is then elected."},
		{Kind: StepNote, When: "votesunknown", Text: "Whether nats-server {{version}} counts a new server's vote in a group that lost its leader cannot be told (2.12.15 and 2.14.10 do not: raft.go shouldCountVoteFromPeer, and two temporary servers elected no leader there); if no leader comes, start servers named as the missing ones on empty stores instead (a server's peer id is the hash of its server_name)."},
		{Kind: StepNote, When: "tempstogether", Text: "On {{version}} this is not reliable: on 2.10.27 (the incident-000 state) a meta leader came in 2 of 7 runs, 2 of 4 with the temporary server started together with the live servers and 0 of 3 with it added to the group already stuck (each watched 90 s to 2 min). If none comes, stop the live servers and start them together with the temporary server(s)."},
		{Kind: StepAction, Destroys: true, Each: "missing",
			Text:     "Then, with the system account, remove each missing peer with a server removal:",
			Commands: []string{"{{each|server-remove}}"}},
		{Kind: StepAction, Destroys: true, Text: "Check `nats server report jetstream`, then stop the temporary server(s) and remove them the same way (nats server cluster peer-remove NAME)."},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows the meta group led, with the live servers as its peers."},
		{Kind: StepNote, When: "readd", Text: "{{readd}}"},
		{Kind: StepNote, Refers: []string{"orphan-risk"}, Text: "Before recovery completes, see the orphan-risk findings: streams the recovered meta state does not assign are deleted 30 s later."},
		{Kind: StepNote, Refers: []string{"!orphan-risk"}, Text: "Streams the recovered meta state does not assign are deleted 30 s after it recovers."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/v2.10.27-incident-phantom-peers.json", Outcome: "the incident-000 edit (size 10, 5 live), one temporary server started with the live ones: a meta leader, the five corrupt ids and the temporary server removed one at a time, 5/3 led, all 9 streams kept with their messages and a leader, no stream folder deleted (a leader came in 2 of 7 such runs)"},
		{Version: "2.10.27", Fixture: "testdata/remedies/v2.10.27-incident-phantom-peers-failed.json", Outcome: "the same start: no meta leader in 2 min, nothing removed", Failed: true},
		{Version: "2.11.17", Fixture: "testdata/remedies/v2.11.17-incident-phantom-peers.json", Outcome: "the temporary server added to the group stuck for 30 s: 11/6 led; the five corrupt ids and the temporary server removed one at a time: 5/3 led, all 9 streams kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/lostquorum-v2.12.15-temporary-servers.json", Outcome: "3 of 5 servers lost with their stores: 2 temporary servers added to the group stuck for 30 s: no meta leader in 2 min, the group still 5/3 (their votes are not counted)", Failed: true},
		{Version: "2.14.10", Fixture: "testdata/remedies/lostquorum-v2.14.10-temporary-servers.json", Outcome: "the same", Failed: true},
	}},
	// jetstream-disabled: what the diskfull fixtures' servers did.
	{ID: "jetstream-disabled", Steps: []remedyStep{
		{Kind: StepNote, When: "back", Text: "JetStream on {{server}} runs again; if the cause is still there it disables itself again at the next failed write."},
		{Kind: StepCost, Text: "a reload or restart destroys nothing: the store stays as it is and is the copy that catches up. Deleting files under store_dir (blocks, raft WALs, index.db) to make room destroys messages; peer-removing the other replicas destroys the only complete copies while {{server}} stores nothing."},
		{Kind: StepSave, Text: "copy {{server}}'s store_dir aside before deleting anything on that volume; delete nothing under store_dir itself, and keep the other replicas up."},
		{Kind: StepNote, When: "fullexits", Text: "Do not restart it before there is room: a start on the still-full volume exits at once (\"Can't start JetStream: write …/_meta_/peers.idx.tmp: no space left on device\")."},
		{Kind: StepNote, When: "fullagain", Text: "Do not restart it before there is room: on {{version}} a start on the still-full volume disables JetStream again at once (\"Critical write error … _meta_/msgs/1.blk: no space left on device\", \"JetStream out of resources, will be DISABLED\") and the process keeps running with it off."},
		{Kind: StepNote, When: "metaunknown", Text: "Whether {{version}} deleted its meta state ($SYS/_js_/_meta_) when it disabled JetStream cannot be told: 2.10, 2.11 and 2.12.0-2.12.4 do (and a start on the still-full volume disables JetStream again), 2.12.15, 2.14 and 2.15 do not (and such a start exits)."},
		{Kind: StepAction, When: "diskfull", Text: "Make room first: free space on the volume holding {{server}}'s store_dir or grow the volume. Set max_file_store below the volume's size, so that JetStream refuses writes (resource limits) before the filesystem fills."},
		{Kind: StepAction, When: "permission", Text: "Make the store writable by the nats-server user again (ownership, a read-only remount)."},
		{Kind: StepAction, When: "limits", Text: "Raise max_file_store (or the account's limits), or lower the streams' max_bytes, after checking the volume has the room."},
		{Kind: StepAction, When: "other", Text: "Fix what its log says failed (the evidence above) before starting it again."},
		{Kind: StepAction, Destroys: true, Text: "Then bring JetStream back on {{server}}: it does not come back by itself (the process keeps running with it off). Reload its config (`nats-server --signal reload`, SIGHUP): a reload restarts a JetStream that is configured but off (\"Reloaded: JetStream\", \"Restarting JetStream\"); or restart nats-server on it."},
		{Kind: StepVerify, When: "metadeleted", Text: "It restores the messages it holds, rejoins the meta group with an empty meta log (its _meta_ folder was deleted when JetStream was disabled; the meta leader sends it the state) and catches each stream up from its leader (\"Catchup for stream '<account> > <stream>'\"); `nats stream info <stream>` until {{server}}'s lag is 0."},
		{Kind: StepVerify, When: "!metadeleted", Text: "It rebuilds 0-byte index.db files from its blocks (\"Stream state too short (0 bytes)\"), restores the messages it holds and catches each stream up from its leader (\"Catchup for stream '<account> > <stream>' complete\"); `nats stream info <stream>` until {{server}}'s lag is 0."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.15", Fixture: "testdata/bundles/diskfull-v2.12.15", Outcome: "after freeing space a restart (and, on a grown volume, a config reload) caught the stream up from its leader within 10 s: every copy equal, nothing lost"},
		{Version: "2.11.17", Fixture: "testdata/bundles/diskfull-v2.11.17", Outcome: "after freeing space a restart (and, on a grown volume, a config reload) caught the stream up from its leader: every copy equal, nothing lost; the full server had no _meta_ folder left and rejoined the meta group with an empty log"},
		{Version: "2.15.3", Fixture: "testdata/bundles/diskfull-v2.15.3", Outcome: "after freeing space a restart caught the stream up from its leader within 11 s: every copy equal, nothing lost"},
	}},
	// stream-write-error: what 2.15.3 and 2.14.10 servers did with an R1
	// stream whose store filled (streamfull-v2.15.3, the remedies runs: with
	// the volume grown the stream still refused every publish, after a
	// restart it took them again). 2.11.17 and 2.12.15 keep no write error.
	{ID: "stream-write-error", Steps: []remedyStep{
		{Kind: StepNote, When: "restarted", Text: "{{server}} started again after the error: a start clears it; if the cause is still there the next write fails again."},
		{Kind: StepCost, Text: "a restart destroys nothing: the stream's blocks stay as written (the messages stored before the error), and every other stream on {{server}} restarts with it. Deleting files under store_dir to make room destroys messages."},
		{Kind: StepSave, Text: "copy {{server}}'s folder of stream {{account}} > {{stream}} aside (cp -a of {{account}}/streams/{{stream}} under its store_dir) before deleting anything on that volume; delete nothing under store_dir itself."},
		{Kind: StepAction, When: "diskfull", Text: "Make room first: free space on the volume holding the stream's store or grow the volume. Set max_file_store (or the stream's max_bytes) below the volume's size, so that JetStream refuses writes (resource limits) before the filesystem fills."},
		{Kind: StepAction, When: "other", Text: "Fix what its log says failed (the evidence above) first."},
		{Kind: StepAction, Destroys: true, Text: "Then restart nats-server on {{server}}: room alone does not bring the stream back, it keeps the write error until the stream is opened again."},
		{Kind: StepVerify, Text: "`nats stream info {{stream|shell}}` on {{server}}: its last sequence grows with new publishes, and /healthz no longer says \"stream write error\"."},
	}, Proven: []report.RemedyProof{
		{Version: "2.15.3", Fixture: "testdata/bundles/streamfull-v2.15.3", Outcome: "on the full 256k volume made again, a publish timed out and /healthz said \"stream write error\"; the volume grown to 64m, a publish still timed out; after a restart of sf-2 a publish was acknowledged (seq 65), /healthz ok, the stream kept its 64 messages, nothing deleted"},
		{Version: "2.14.10", Fixture: "testdata/remedies/streamfull-v2.14.10.json", Outcome: "the same (sf-0 held the stream): grown, it still refused; restarted, seq 65 acknowledged, /healthz ok, 64 messages kept"},
	}},
	// quorum-unreachable where every missing peer is a renamed server's old
	// id: the way out is server-renamed's.
	{ID: "quorum-renamed-old-ids", Steps: []remedyStep{
		{Kind: StepNote, Text: "The missing peers are the old ids of servers renamed in place: follow server-renamed's remedy, which says what each way out destroys and what to save first. Removing the old ids here as for lost servers would not bring the renamed servers into the group."},
	}},
	// peer-offline
	{ID: "departed-server-remove", Steps: []remedyStep{
		{Kind: StepCost, Text: "a server removal makes the removed server's copies of every stream and consumer stop counting; the meta leader places new replicas on live servers, which copy from the surviving replicas. A group whose every up-to-date copy sits on removed servers (none live) comes back empty."},
		{Kind: StepSave, Text: "keep the departed servers' volumes and copy their stores aside (cp -a of each JetStream folder) before removing them; do not start them again after the removal."},
		{Kind: StepNote, When: "readd", Text: "{{readd}}"},
		{Kind: StepNote, When: "metastalled", Text: "The meta group has less than a quorum of live peers and a server removal needs a meta leader: carry out quorum-unreachable's remedy first, which removes these peers too; alone, these removals are never applied."},
		{Kind: StepAction, Destroys: true, Each: "removals",
			Text:     "Then, with the system account, remove each departed server with a server removal, one at a time, waiting after each until `nats server report jetstream` shows the meta group one smaller with a leader and the stream groups re-placed (two removals in flight recompute placements from a stale peer set):",
			Commands: []string{"{{each}}"}},
		{Kind: StepVerify, Text: "`nats server report jetstream` shows the meta group with the live servers only, led, and the stream groups that were stalled with a leader again."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/scaledown-v2.10.27.json", Outcome: "both departed servers removed one at a time: 4/3, 3/2 with a leader, every stream kept with its messages and a leader, no stream folder deleted"},
		{Version: "2.10.27", Fixture: "testdata/remedies/scaledown-v2.10.27-failed.json", Outcome: "another run: the three live servers started on the copy elected no meta leader in 60 s (5 meta peers, 3 live), so no removal was sent", Failed: true},
		{Version: "2.11.17", Fixture: "testdata/remedies/scaledown-v2.11.17.json", Outcome: "both departed servers removed one at a time: meta leader at 3 peers, every stream kept with its messages and a leader, no stream folder deleted"},
		{Version: "2.12.1", Fixture: "testdata/bundles/scaledown-v2.12.1", Outcome: "the same: 5/3, 4/3, 3/2 with a leader, every stream kept with its messages and a leader (the stalled one re-placed and led), no stream folder deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/scaledown-v2.12.15.json", Outcome: "the same: meta leader at 3 peers, every stream kept and led, nothing deleted"},
		{Version: "2.14.10", Fixture: "testdata/remedies/scaledown-v2.14.10.json", Outcome: "the same: meta leader at 3 peers, every stream kept and led, nothing deleted"},
		{Version: "2.15.3", Fixture: "testdata/remedies/scaledown-v2.15.3.json", Outcome: "the same: meta leader at 3 peers, every stream kept and led, nothing deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/lostquorum-v2.12.15-temporary-servers.json", Outcome: "with the meta group below quorum (3 of 5 servers lost) and the removals alone: no meta leader in 60 s, nothing removed", Failed: true},
		{Version: "2.14.10", Fixture: "testdata/remedies/lostquorum-v2.14.10-temporary-servers.json", Outcome: "the same", Failed: true},
		{Version: "2.15.2", Fixture: "testdata/remedies/lostquorum-v2.15.2.json", Outcome: "the same", Failed: true},
		{Version: "2.15.3", Fixture: "testdata/bundles/lostquorum-v2.15.3", Outcome: "the same", Failed: true},
	}},
	// server-renamed, by what the renamed servers did to the meta group and
	// the version (testdata/bundles/rename-*, want.json expect.remedies).
	{ID: "rename-old-names-beside", Steps: append(renameSave(),
		remedyStep{Kind: StepAction, Destroys: true, Text: "Then bring the meta group back (this bundle: {{version}}; the renamed servers' new ids were added to the meta group). a) keep the new names (proved on 2.12.1, whose renamed servers added their new ids the same way): start servers named {{olds}} on EMPTY stores beside the renamed ones, same cluster and routes, until the meta group elects a leader ({{beside_size}} peers, quorum {{beside_quorum}})."},
		renameBesideRemoval(),
		renameBesideOutcome(),
		remedyStep{Kind: StepNote, Text: "Not: reverting server_name to {{olds}}: the renamed servers have already added their new ids to the meta group (size {{beside_size}}), so the reverted servers are {{renamed}} of {{beside_size}} and elect no leader (2.12.1)."},
		remedyStep{Kind: StepNote, When: "!rescue", Text: "There is no $JS.API.META.RESCUE before 2.15."},
	), Proven: []report.RemedyProof{
		{Version: "2.12.1", Fixture: "testdata/bundles/rename-v2.12.1", Outcome: "old-names-beside: a meta leader, the group back at its own size; revert-names: no leader in 1 min; meta-rescue: refused"},
	}},
	{ID: "rename-beside-or-revert", Steps: append(renameSave(),
		remedyStep{Kind: StepAction, Destroys: true, Text: "Then bring the meta group back (this bundle: {{version}}; the renamed servers' new ids are not in the meta group). a) keep the new names (proved on 2.15.2): start servers named {{olds}} on EMPTY stores beside the renamed ones, same cluster and routes, until the meta group elects a leader ({{beside_size}} peers, quorum {{beside_quorum}})."},
		renameBesideRemoval(),
		renameBesideOutcome(),
		remedyStep{Kind: StepAction, Destroys: true, Text: "b) or revert server_name to {{olds}} on the same stores (proved on 2.15.2, 2.14.10 and 2.12.15): restart the renamed servers with their old names; a meta leader returns at once, the deleted streams come back empty and R3 ones without a leader."},
		remedyStep{Kind: StepNote, Text: "Not: $JS.API.META.RESCUE: 2.15.2 refuses it on renamed servers (\"raft: not a voting member\"), they are no members of their own meta group."},
	), Proven: []report.RemedyProof{
		{Version: "2.15.2", Fixture: "testdata/bundles/rename-v2.15.2", Outcome: "revert-names and old-names-beside each recovered a meta leader; meta-rescue refused"},
	}},
	{ID: "rename-revert", Steps: append(renameSave(),
		remedyStep{Kind: StepAction, Destroys: true, Text: "Then bring the meta group back (this bundle: {{version}}; the renamed servers' new ids are not in the meta group). a) revert server_name to {{olds}} on the same stores (proved on 2.12.15, 2.14.10 and 2.15.2): restart the renamed servers with their old names; a meta leader returns at once, the deleted streams come back empty and R3 ones without a leader."},
		remedyStep{Kind: StepNote, Text: "Not: servers named {{olds}} on empty stores beside the renamed ones with one peer-remove after another: on 2.12.15 and 2.14.10 the meta group went 5/3, 4/3, 3/2 and ended at 2 peers, one renamed server outside it. There is no $JS.API.META.RESCUE before 2.15."},
	), Proven: []report.RemedyProof{
		{Version: "2.12.15", Fixture: "testdata/bundles/rename-v2.12.15", Outcome: "revert-names recovered a meta leader (3 peers, quorum 2); old-names-beside ended at 2 peers; the streams had been emptied by the rename before"},
	}},
	// store-corrupt of a meta snapshot (metaSnapshotRemedy)
	{ID: "meta-snapshot-move-aside", Steps: []remedyStep{
		{Kind: StepNote, Text: "Do not start {{server}} on this store as it is: on 2.12 and older the start deletes this snapshot and, when its meta WAL holds entries after it, its streams and consumers as orphans 30 s later; on 2.14 and newer JetStream does not start."},
		{Kind: StepCost, Text: "moving files aside destroys nothing if they are kept."},
		{Kind: StepSave, Text: "copy {{meta}} and the server's stream folders out (cp -a)."},
		{Kind: StepAction, Destroys: true, Text: "Then, with the server stopped, move {{meta}}/snapshots and {{meta}}/msgs out of the store (keep peers.idx and tav.idx), and start it while a server with an intact meta snapshot is running: that server is elected meta leader and installs its snapshot on this one."},
		{Kind: StepAction, When: "stagger", Destroys: true, Text: "Where a majority of the meta peers are damaged, do this on every damaged server, then start the intact server and one damaged server, and each further damaged server only once `nats server report jetstream` names the intact server meta leader: on {{version}} never start two damaged servers together (2.11.17 started them together with the intact one and elected one of them, whose empty meta state deleted their streams as orphans)."},
		{Kind: StepAction, When: "together", Destroys: true, Text: "Where a majority of the meta peers are damaged, do this on every damaged server and start them together with the intact one (on {{version}}: 2.12.1 and 2.15.2 elected no meta leader from the intact server and one damaged server in 60 s; started together, the intact one was elected)."},
		{Kind: StepNote, When: "ordercannottell", Text: "Where a majority of the meta peers are damaged, which start order recovers cannot be told for {{version}}: 2.11.17 started them together with the intact one and elected a damaged one, whose empty meta state deleted their streams as orphans; 2.12.1 elected no meta leader from the intact server and one damaged server, and did elect the intact one with all started together; on 2.10.27 all together elected a damaged server, whose empty meta state deleted their streams as orphans (2 runs of 2), and the intact server and one damaged one elected no meta leader in 60 s in 2 runs of 3 (nothing deleted; the third recovered)."},
		{Kind: StepVerify, Text: "the server with the intact snapshot is meta leader and every stream reports its messages on every server (nats stream report)."},
		{Kind: StepNote, Text: "If no server has an intact meta snapshot, keep the damaged servers stopped: starting them recreates no assignment, and their streams must be recreated from their meta.inf after the meta group is rebuilt."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/metasnap-v2.10.27-started-together.json", Outcome: "two of three damaged, moved out, every server started together (no start order is prescribed on 2.10): the damaged ms-1 was elected, LOCAL_0, LOCAL_1 and two ORDERS copies deleted as orphans", Failed: true},
		{Version: "2.10.27", Fixture: "testdata/remedies/metasnap-v2.10.27-started-together-2.json", Outcome: "every server started together again: the same", Failed: true},
		{Version: "2.10.27", Fixture: "testdata/remedies/metasnap-v2.10.27-staggered.json", Outcome: "the intact ms-2 and one damaged server started, the other once ms-2 led (the analyzer built with the 2.11 order for 2.10): ms-2 meta leader, all 4 streams kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.10.27", Fixture: "testdata/remedies/metasnap-v2.10.27-staggered-failed.json", Outcome: "the intact ms-2 and one damaged server started, as in the staggered run that recovered: ms-2 and ms-0 elected no meta leader in 60 s, nothing deleted", Failed: true},
		{Version: "2.10.27", Fixture: "testdata/remedies/metasnap-v2.10.27-staggered-failed-2.json", Outcome: "that staggered start a third time: the same", Failed: true},
		{Version: "2.11.17", Fixture: "testdata/remedies/metasnap-v2.11.17.json", Outcome: "two of three servers' meta snapshots and WALs moved out; the intact ms-1 and one damaged server started, the other once ms-1 led: ms-1 meta leader, all 4 streams kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.12.1", Fixture: "testdata/bundles/metasnap-v2.12.1", Outcome: "two of three damaged, moved out, every server started together: the intact ms-1 meta leader, all 4 streams kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/metasnap-v2.12.15.json", Outcome: "the same"},
		{Version: "2.14.10", Fixture: "testdata/bundles/metasnap-v2.14.10", Outcome: "the same"},
		{Version: "2.15.2", Fixture: "testdata/bundles/metasnap-v2.15.2", Outcome: "the same"},
		{Version: "2.15.3", Fixture: "testdata/remedies/metasnap-v2.15.3.json", Outcome: "the same"},
	}},
	// store-corrupt (storeRemedy)
	{ID: "store-sealed", Steps: []remedyStep{
		{Kind: StepAction, Text: "Run the analysis again with the servers' JetStream key: --key KEY or JSF_KEY=KEY (the `key` of the jetstream block in the servers' own config; give --key again for a prev_encryption_key)."},
		{Kind: StepNote, Text: "Do not start a server on a copy of the config from a bundle, whose key is redacted, nor on any config whose key differs from the one the store was sealed with: it cannot open these stores and brings their streams back empty, deleting their block files and consumer folders."},
	}},
	{ID: "store-stream-meta-files", Steps: []remedyStep{
		{Kind: StepNote, Text: "{{what}}: the server skips this stream at start and serves none of its messages, but its blocks are intact."},
		{Kind: StepCost, Text: "putting the file back overwrites the damaged copy."},
		{Kind: StepSave, Text: "keep the stream folder (do not delete or recreate the stream: that removes the blocks): copy it out with the server stopped (cp -a {{folder|shell}} SAVE/)."},
		{Kind: StepAction, Destroys: true, Text: "Then, with the server stopped, {{fix}}."},
		{Kind: StepVerify, Text: "at its next start the server loads the stream (no \"checksum\" or \"Missing stream metafile\" line for it) and `nats stream info` shows its messages."},
	}},
	{ID: "store-consumer-meta-files", Steps: []remedyStep{
		{Kind: StepNote, Text: "{{what}} of a consumer: {{next}}; its stream and messages are not affected."},
		{Kind: StepCost, Text: "copying the files in overwrites the damaged ones; recreating the consumer starts its delivery and ack state anew."},
		{Kind: StepSave, Text: "keep the consumer folder (its o.dat holds the ack state): copy it out (cp -a {{folder|shell}} SAVE/)."},
		{Kind: StepAction, Destroys: true, Text: "With the server stopped, copy the consumer's meta.inf and meta.sum from a healthy replica's folder of the same consumer, or recreate the consumer with the same config and a start sequence after its ack floor."},
	}},
	{ID: "store-index-db", Steps: []remedyStep{
		{Kind: StepNote, Text: "index.db is a cache; nothing needs removing: the server finds it unusable and rebuilds the state from the blocks at start."},
		{Kind: StepCost, Text: "a rebuild cuts every block at its first bad record."},
		{Kind: StepSave, Text: "if store-corrupt names a block of this stream, copy the stream folder out first (cp -a {{folder|shell}} SAVE/) so `jsforensics dump blk FILE --json` can read the records after the damage."},
		{Kind: StepAction, Destroys: true, Text: "Then start the server: it rebuilds index.db from the blocks."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.15", Fixture: "testdata/bundles/diskfull-v2.12.15", Outcome: "started on the 0-byte index.db files: the state rebuilt from the blocks, the stream kept with its messages and a leader, nothing deleted"},
		{Version: "2.15.3", Fixture: "testdata/bundles/diskfull-v2.15.3", Outcome: "the same"},
		{Version: "2.11.17", Fixture: "testdata/remedies/streamfull-v2.11.17.json", Outcome: "started on the full stream's 0-byte index.db: rebuilt from the blocks, its 64 messages kept, nothing deleted"},
	}},
	{ID: "store-consumer-state", Steps: []remedyStep{
		{Kind: StepNote, Text: "The consumer's state or config is damaged; the stream's messages are not affected."},
		{Kind: StepCost, Text: "recreating the consumer starts its delivery and ack state anew."},
		{Kind: StepSave, Text: "copy {{file}} out first."},
		{Kind: StepAction, Destroys: true, Text: "Then let the consumer be recreated from its config with a start sequence after its ack floor."},
	}},
	{ID: "store-other-file", Steps: []remedyStep{
		{Kind: StepSave, Text: "copy {{file}} out before the server starts on it again."},
		{Kind: StepAction, Text: "Inspect it with `jsforensics dump`."},
	}},
	{ID: "store-block-deleted-record", Steps: append([]remedyStep{
		{Kind: StepNote, Text: "The bad record is of seq {{seq}}, a message deleted before the damage: no message is lost while the block is not rebuilt."},
		{Kind: StepNote, When: "indexdb", Text: "Keep {{indexdb}}: do not remove it."},
		{Kind: StepCost, Text: "removing index.db (or any rebuild) makes the server truncate the block at this record and lose the intact messages after it."},
	}, blockSteps()...)},
	{ID: "store-block-record", Steps: append([]remedyStep{
		{Kind: StepNote, Text: "Only the bad record is unreadable (seq {{seqs}}); every other record of the block is intact."},
		{Kind: StepNote, When: "indexdb", Text: "Keep {{indexdb}}: do not remove it."},
		{Kind: StepCost, Text: "a current index.db keeps the server from rebuilding the block; removing it (or any rebuild) makes the server truncate the block at its first bad record and lose the intact messages after it."},
	}, blockSteps()...)},
	{ID: "store-block-lost", Steps: append([]remedyStep{
		{Kind: StepNote, Text: "This copy no longer holds {{lost}}."},
		{Kind: StepNote, When: "indexdb", Text: "Keep {{indexdb}}: do not remove it."},
		{Kind: StepCost, Text: "index.db is the record of what the block held: removing it (or any rebuild) makes the server forget it, and letting this replica be rebuilt deletes this replica's copy of the block."},
	}, blockSteps()...), Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/perturbed-replica-v2.10.27.json", Outcome: "p3 started behind (20 of 43 messages); the stream peer removal answered \"peer remap failed\" yet took p3 out of the group; R2 and back to R3 put a new replica on p3: 43 messages, 31-60 back, served by p3 as stream leader as by p1 and p2; nothing deleted"},
		{Version: "2.11.17", Fixture: "testdata/remedies/acked-lost-v2.11.17.json", Outcome: "every replica had lost 211-240 (the step's condition did not hold); ack-0 rebuilt all the same (removal, R2, R3) came back with 1-210 and none of them; the remedy now prescribes no rebuild where no other replica's blocks hold the sequences", Failed: true},
		{Version: "2.12.15", Fixture: "testdata/remedies/perturbed-replica-v2.12.15.json", Outcome: "p3 caught up at its start; the removal answered \"peer remap failed\" yet took p3 out and deleted its folder; R2 and R3 rebuilt it from the leader: every sequence back, served by p3 as stream leader, nothing deleted"},
		{Version: "2.15.3", Fixture: "testdata/remedies/perturbed-replica-v2.15.3.json", Outcome: "p3 caught up at its start; the removal was refused (\"peer remap failed\", the group unchanged), R2 dropped a healthy replica (p1), not p3, and R3 put it back: every copy equal, p3 serving every sequence as stream leader, nothing deleted"},
	}},
	// A middle block file gone (testdata/perturbed: 2.12.15 and 2.15.3 log
	// "could not locate msg block" and serve the rest).
	{ID: "store-block-missing", Steps: []remedyStep{
		{Kind: StepNote, Text: "This copy no longer holds {{lost}}: the block file {{block}} is gone."},
		{Kind: StepNote, When: "indexdb", Text: "Keep {{indexdb}}: do not remove it; it is the record of what the block held."},
		{Kind: StepCost, Text: "letting this replica be rebuilt deletes what is left of this replica's copy; a backup's copy of {{block}} is the only other source of these messages on this server."},
		{Kind: StepSave, Text: "copy what is left out, with the server stopped:", Commands: []string{"cp -a {{folder|shell}} SAVE/"}},
		{Kind: StepAction, When: "replicated", Destroys: true,
			Text:     "The stream is R{{replicas}}: once the other replicas are checked to hold these sequences (replica-gap), let this replica be rebuilt from the stream leader, which deletes this replica's copy (saved above): a stream peer removal of {{server}}'s replica of {{stream}} only, then the stream scaled to R{{fewer}} and back to R{{replicas}} (store-block-lost's rebuild; see its note on 2.15):",
			Commands: []string{"{{removal}}", "nats stream edit {{stream|shell}} --replicas {{fewer}}", "nats stream edit {{stream|shell}} --replicas {{replicas}}"}},
		{Kind: StepNote, When: "noneheld", Text: "The stream is R{{replicas}}, but no other replica's blocks hold these sequences: a rebuild of this replica copies from the stream leader, brings none of them back and deletes what is left of this copy. Do not peer-remove it; a backup, the raft WAL or the publishers are what may still hold them."},
		{Kind: StepAction, When: "single", Text: "The stream has no other replica: restore the block from a backup, or republish these messages from their source."},
	}},
	// A block that lost the tombstones of deleted messages (testdata/perturbed).
	{ID: "store-block-resurrected", Steps: []remedyStep{
		{Kind: StepNote, Text: "No message is lost; sequences {{resurrected}} were deleted, and index.db is the record of it: keep {{indexdb}}, do not remove it."},
		{Kind: StepCost, Text: "at its next start the server rebuilds this stream from its blocks, whose tombstones for them are gone, and serves those deleted messages again."},
		{Kind: StepSave, Text: "copy the stream folder out with the server stopped:", Commands: []string{"cp -a {{folder|shell}} SAVE/"}},
		{Kind: StepAction, Destroys: true, Text: "Start the server on it."},
		{Kind: StepVerify, When: "catchup", Text: "The stream is R{{replicas}}: after the start, check that {{server}}'s replica agrees with the others (`nats stream info {{stream|shell}}`; a replica the stream leader catches up takes its state, as 2.12.15 and 2.15.3 did); if these sequences are served again, delete them again (`nats stream rmm {{stream|shell}} SEQ`)."},
		{Kind: StepVerify, When: "nocatchup", Text: "The stream is R{{replicas}}: after the start, check that {{server}}'s replica agrees with the others (`nats stream info {{stream|shell}}`). On 2.10 a replica started on such a block did not catch up (2.10.27: it kept what its blocks held, the group never settled, and while it led the stream served only that): if it stays behind, rebuild it as store-block-lost says (a stream peer removal of its replica, then R{{fewer}} and back to R{{replicas}}). If these sequences are served again, delete them again (`nats stream rmm {{stream|shell}} SEQ`)."},
		{Kind: StepVerify, When: "single", Text: "After the start, delete them again: `nats stream rmm {{stream|shell}} SEQ` for each."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/perturbed-blocks-v2.10.27.json", Outcome: "standalone: the start served the deleted sequences of CUTMID, CUTREC and CUTTOMB again; deleted again one at a time, each stream served what it did before the damage less what its block lost"},
		{Version: "2.10.27", Fixture: "testdata/remedies/perturbed-replica-v2.10.27.json", Outcome: "R3: p3 started on the block stayed behind (20 of 43 messages; in the run before the check said to rebuild it, led by p3 the stream served 1-29 only); rebuilt as the check now says (removal, R2, R3): 43 messages, every sequence served by p3 as leader, no deleted one served again; not proven: p2's meta group stayed in catchup (/raftz, from the start), the cluster never settled (2 runs of 2)", Failed: true},
		{Version: "2.12.15", Fixture: "testdata/remedies/perturbed-replica-v2.12.15.json", Outcome: "R3: p3 took the leader's state at its start: no deleted sequence served again, every copy equal, nothing deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/perturbed-blocks-v2.12.15.json", Outcome: "standalone: the same as on 2.10.27"},
		{Version: "2.15.3", Fixture: "testdata/remedies/perturbed-replica-v2.15.3.json", Outcome: "R3: the same as on 2.12.15"},
		{Version: "2.15.3", Fixture: "testdata/remedies/perturbed-blocks-v2.15.3.json", Outcome: "standalone: the same as on 2.10.27"},
	}},
	{ID: "store-empty-folder", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing is lost: the folder holds no file. It is likely left by a stream created or restored halfway."},
		{Kind: StepSave, Text: "copy the folder out (cp -a {{folder|shell}} SAVE/)."},
		{Kind: StepAction, Destroys: true, Text: "Once no server needs it, remove it with the server stopped to silence the warning."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.27", Fixture: "testdata/remedies/emptyfolders-v2.10.27.json", Outcome: "the 4 empty folders moved out with the servers stopped, every server started: a meta leader, the 5 streams kept with their messages and a leader, no stream folder deleted (one server still catching up the meta group after 60 s)"},
		{Version: "2.11.17", Fixture: "testdata/remedies/emptyfolders-v2.11.17.json", Outcome: "the 4 empty folders moved out with the servers stopped, every server started: a meta leader, the 5 streams kept with their messages and a leader, no stream folder deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/emptyfolders-v2.12.15.json", Outcome: "the same"},
		{Version: "2.15.3", Fixture: "testdata/remedies/emptyfolders-v2.15.3.json", Outcome: "the same"},
	}},
	// index-mismatch
	{ID: "index-db-stale-remove", Steps: []remedyStep{
		{Kind: StepNote, Text: "index.db claims what the blocks do not hold, and the server trusts a current index.db at start without re-reading the blocks."},
		{Kind: StepCost, Text: "removing index.db destroys its record of those messages, and the rebuild that follows cuts every damaged block at its first bad record."},
		{Kind: StepSave, Text: "copy it out with the stream folder:", Commands: []string{"cp {{file|shell}} {{saved|shell}}"}},
		{Kind: StepAction, Destroys: true, Text: "Then, with the server stopped, remove {{file}} so it rebuilds the state from the blocks."},
	}},
	{ID: "index-db-keep", Steps: []remedyStep{
		{Kind: StepNote, Text: "index.db still records what the damaged blocks of this copy held (see store-corrupt): keep it, do not remove it."},
		{Kind: StepSave, Text: "copy it out with the stream folder before the server starts again."},
	}},
	{ID: "index-db-outdated", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing to do: the server rebuilds index.db from the blocks at start."},
	}},
	// meta-no-leader
	{ID: "meta-no-leader", Steps: []remedyStep{
		{Kind: StepNote, Refers: []string{"quorum-unreachable", "peer-id-corrupt", "server-renamed", "peer-offline"}, Text: "JetStream API calls fail until a meta leader is elected: see {{refs}} for why no leader can be elected."},
		{Kind: StepNote, Refers: []string{"!quorum-unreachable", "!peer-id-corrupt", "!server-renamed", "!peer-offline"}, Text: "JetStream API calls fail until a meta leader is elected."},
		{Kind: StepAction, Text: "Check the routes between the servers (nats server report jetstream, /routez)."},
	}},
	// meta-split
	{ID: "meta-split-keep-one-side", Steps: []remedyStep{
		{Kind: StepNote, Text: "Do not let both sides keep running together: the meta state with the higher term replaces the other, and the streams only the other side assigns are removed."},
		{Kind: StepNote, Refers: []string{"orphan-risk"}, Text: "The orphan-risk findings name the stream copies at risk."},
		{Kind: StepCost, Text: "moving a side's meta state aside discards its assignments: the kept meta state then deletes every stream and consumer only that side held."},
		{Kind: StepSave, Text: "back up every store (copy each server's jetstream folder out, cp -a)."},
		{Kind: StepSave, Text: "copy the stream folders that only one side assigns out (or nats stream backup STREAM DIR them), on both sides."},
		{Kind: StepAction, Text: "Decide which side's meta state to keep (the one that assigns the streams that matter)."},
		{Kind: StepAction, Destroys: true, Text: "Stop the servers of the other side, move (do not delete) their $SYS/_js_/_meta_ folder aside, and start them again so they join the kept meta group as new peers."},
		{Kind: StepAction, Text: "Recreate the streams that only the other side held from what was saved (nats stream restore, or republish what `jsforensics dump blk` reads)."},
		{Kind: StepNote, When: "v215", Text: "On 2.15+ a JetStream domain per cluster (or joining the supercluster before enabling JetStream) keeps a new cluster from founding its own meta group."},
		{Kind: StepNote, When: "!v215", Text: "Join a new cluster to the supercluster before enabling JetStream on it, or give it its own JetStream domain."},
	}},
	// meta-split, once the groups have met: the losing side's streams are
	// already gone from its stores.
	{ID: "meta-split-merged", Steps: []remedyStep{
		{Kind: StepNote, Text: "The groups have met: the servers follow one meta group, whose state of the higher term replaced the other side's, and that side's servers removed the streams and consumers only it assigned."},
		{Kind: StepNote, Refers: []string{"asset-lost"}, Text: "The asset-lost findings name the streams gone from every store."},
		{Kind: StepCost, Text: "the steps below destroy nothing; what only the losing side held is gone from its stores, and only a backup, a raft group folder of the stream or the publishers still hold it."},
		{Kind: StepSave, Text: "copy out what still may hold it before anything else changes: any raft group folder of a lost stream ($SYS/_js_/S-…, its WAL can hold recent messages), the servers' logs, and any backup."},
		{Kind: StepAction, Text: "Recreate each lost stream with its config (from a backup, a captured /jsz with config, or a peer's meta.inf) and restore its messages from a backup (nats stream restore) or republish them from their source."},
		{Kind: StepNote, When: "v215", Text: "On 2.15+ a JetStream domain per cluster (or joining the supercluster before enabling JetStream) keeps a new cluster from founding its own meta group."},
		{Kind: StepNote, When: "!v215", Text: "Join a new cluster to the supercluster before enabling JetStream on it, or give it its own JetStream domain."},
	}},
	// orphan-risk
	{ID: "orphan-stream-copy-out", Steps: []remedyStep{
		{Kind: StepCost, Text: "{{server}} deletes this copy when its meta layer recovers (\"Detected orphaned stream\"): what is not copied out is gone."},
		{Kind: StepSave, Text: "before {{server}} starts again (or before its meta layer recovers), copy {{path}} out of the store (cp -a)."},
		{Kind: StepAction, Destroys: true, Text: "After recovery, recreate the stream with the config in its meta.inf (nats stream add {{stream}} --config FILE) and restore its messages from a backup (nats stream backup/restore) or by republishing what `jsforensics extract BUNDLE --stream '{{account}}/{{stream}}' -o FILE` reads from the copied blocks (seq, subject, headers, data)."},
		{Kind: StepNote, Text: "On 2.10.25+ the protections against bad meta snapshots reduce but do not remove this risk."},
	}, Proven: []report.RemedyProof{
		{Version: "2.10.22", Fixture: "testdata/bundles/orphan-v2.10.22", Outcome: "every server started and deleted its orphaned copies (\"Detected orphaned stream\"); the 3 streams created again from their saved meta.inf and their 15 messages each republished from jsforensics extract: a meta leader, all 6 streams with their messages and a leader (the orphaned consumers are not recreated by this remedy)"},
		{Version: "2.10.27", Fixture: "testdata/remedies/orphan-v2.10.27.json", Outcome: "the same"},
		{Version: "2.11.17", Fixture: "testdata/remedies/orphan-v2.11.17.json", Outcome: "the same"},
		{Version: "2.12.15", Fixture: "testdata/remedies/orphan-v2.12.15.json", Outcome: "the same"},
		{Version: "2.15.3", Fixture: "testdata/remedies/orphan-v2.15.3.json", Outcome: "the same"},
	}},
	{ID: "orphan-consumer-recreate", Steps: []remedyStep{
		{Kind: StepCost, Text: "the server deletes the consumer when its meta layer recovers, with its delivery and ack state."},
		{Kind: StepSave, Text: "note the consumer's ack floor (stream seq {{ackfloor}}) and copy obs/{{consumer}}/meta.inf out."},
		{Kind: StepAction, Text: "Recreate it after recovery with the same config (obs/{{consumer}}/meta.inf) and a start sequence after its ack floor."},
	}},
	// replica-divergence
	{ID: "divergence-choose-copy", Steps: []remedyStep{
		{Kind: StepCost, Text: "the replica elected next overwrites the others, and scaling to R1 keeps only the chosen copy."},
		{Kind: StepSave, Text: "stop writes to {{stream}} and keep every copy (copy each server's stream folder out) before any restart or peer-remove."},
		{Kind: StepAction, Text: "Decide which copy is authoritative from the publishers' acknowledgements; read the differing messages from each copy with `jsforensics dump blk`."},
		{Kind: StepAction, Destroys: true, Text: "Then rebuild the other replicas from it: make the chosen server the stream leader (`nats request '$JS.API.STREAM.LEADER.STEPDOWN.{{stream}}' '{\"placement\":{\"preferred\":\"SERVER\"}}'`; 2.10 ignores the placement: step down until it is elected), then scale to R1, which keeps the leader's copy, and back up (nats stream edit {{stream|shell}} --replicas 1, then --replicas N)."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.1", Fixture: "testdata/bundles/membership-v2.12.1", Outcome: "n5's copy chosen (it holds the 186 acknowledged writes the leader lost; the leader's 186 later ones at those sequences are then only in the saved folders); started, n3 of the other copy was elected (n1 in an earlier run), a stepdown with placement preferred n5 made n5 leader, R1 and back to R3: every replica holds n5's 366 messages, no stream folder deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/membership-v2.12.15.json", Outcome: "the same: n5's copy (the 153 acknowledged writes the leader lost) chosen, leader n4 stepped down to n5, R1 and back: every replica holds n5's 413 messages"},
		{Version: "2.14.10", Fixture: "testdata/remedies/membership-v2.14.10.json", Outcome: "the same: n5's copy (the 175 acknowledged writes the leader lost) chosen, leader n4 stepped down to n5, R1 and back: every replica holds n5's 405 messages"},
		{Version: "2.11.17", Fixture: "testdata/remedies/membership-v2.11.17.json", Outcome: "the same: n3's copy (the 139 acknowledged writes the leader lost) chosen, elected at the start, R1 and back: every replica holds n3's 366 messages"},
	}},
	// replica-gap
	{ID: "replica-gap-start", Steps: []remedyStep{
		{Kind: StepSave, Text: "only {{copies}} of those sequences exist ({{holders}}): copy those stream folders out and do not remove or peer-remove those servers."},
		{Kind: StepAction, Destroys: true, Text: "Start {{server}}: once up, it catches up from the stream leader."},
		{Kind: StepVerify, Text: "`nats stream info {{stream|shell}}` shows {{server}} current."},
		{Kind: StepNote, Text: "A 2.10 server whose own block of the stream was torn did not catch up after its start (testdata/perturbed/perturbed-replica-v2.10.27: it stayed behind and the group never settled; 2.12.15 and 2.15.3 took the leader's snapshot): if it stays behind, its replica needs a rebuild (stream peer removal of its replica only, after the copies above are saved)."},
	}, Proven: []report.RemedyProof{
		{Version: "2.11.17", Fixture: "testdata/remedies/scaledown-v2.11.17.json", Outcome: "the server behind started: every stream kept with its messages and a leader, no stream folder deleted"},
		{Version: "2.12.1", Fixture: "testdata/bundles/scaledown-v2.12.1", Outcome: "the same"},
		{Version: "2.12.15", Fixture: "testdata/bundles/diskfull-v2.12.15", Outcome: "the disk-full server started on room: the stream kept with its messages and a leader, nothing deleted"},
		{Version: "2.15.3", Fixture: "testdata/bundles/diskfull-v2.15.3", Outcome: "the same"},
	}},
	{ID: "replica-gap-catch-up", Steps: []remedyStep{
		{Kind: StepSave, Text: "only {{copies}} of those sequences exist ({{holders}}): copy those stream folders out and do not remove or peer-remove those servers."},
		{Kind: StepCost, Text: "a stream peer removal deletes {{server}}'s copy and rebuilds it from the leader."},
		{Kind: StepSave, Text: "copy {{server}}'s stream folder out and read the missing messages from the other replicas (jsforensics dump blk FILE --json on their blocks)."},
		{Kind: StepAction, Text: "{{server}} catches up from the stream leader while it is up and the group has a leader: check `nats stream info {{stream}}` until its lag is 0."},
		{Kind: StepAction, Destroys: true, Text: "If it never catches up, let {{server}}'s replica be rebuilt with a stream peer removal (its replica of {{stream}} only):",
			Commands: []string{"{{removal}}"}},
	}},
	{ID: "replica-gap-rebuild", Steps: []remedyStep{
		{Kind: StepSave, Text: "only {{copies}} of those sequences exist ({{holders}}): copy those stream folders out and do not remove or peer-remove those servers."},
		{Kind: StepCost, Text: "a stream peer removal deletes {{server}}'s copy and rebuilds it from the leader."},
		{Kind: StepSave, Text: "copy {{server}}'s stream folder out and read the missing messages from the other replicas (jsforensics dump blk FILE --json on their blocks)."},
		{Kind: StepAction, Destroys: true, Text: "Then let {{server}}'s replica be rebuilt with a stream peer removal (its replica of {{stream}} only):",
			Commands: []string{"{{removal}}"}},
	}},
	// durability-exposure
	{ID: "durability-compare", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing here needs removing; do not rebuild or peer-remove a replica to \"repair\" it, which deletes the copy that may hold the most."},
		{Kind: StepSave, Text: "save every replica's stream folder (cp -a)."},
		{Kind: StepAction, Text: "Compare the replicas (replica-gap) and the publishers' acknowledgements with what the stores hold; an R1 stream or a tail lost on every replica can only be republished from its source."},
		{Kind: StepAction, Text: "To narrow the window: a shorter sync_interval in the jetstream block, or sync_interval: always (every write fsynced, slower), and servers of one stream in different failure domains."},
	}},
	{ID: "durability-tail-lost", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing here needs removing; do not rebuild or peer-remove a replica, which deletes what it holds."},
		{Kind: StepSave, Text: "save every replica's stream folder and the stream's raft group folder (cp -a): its WAL may still hold the lost tail, which `jsforensics extract` writes out for republishing."},
		{Kind: StepAction, Text: "Compare with the publishers' acknowledgements (acked-lost)."},
	}},
	// acked-lost
	{ID: "acked-lost-republish", Steps: []remedyStep{
		{Kind: StepCost, Text: "any step that rebuilds or removes a replica (peer-remove, scaling down, deleting a stream or raft group folder, restoring from a snapshot) destroys the copies and the raft WAL entries that may be the last trace of these messages."},
		{Kind: StepSave, Text: "copy every server's stream folder and raft group folder ({{group}}) out first."},
		{Kind: StepAction, When: "wal", Text: "The stream group's raft WAL still holds {{count}} of them ({{wal}}): `jsforensics extract BUNDLE --stream '{{account}}/{{stream}}' -o msgs.jsonl` writes them (source raft-wal) with every message the blocks hold; republish the missing sequences from it."},
		{Kind: StepAction, When: "!wal", Text: "No copy and no raft WAL of the bundle holds them (`jsforensics extract BUNDLE --stream '{{account}}/{{stream}}' -o msgs.jsonl` writes what remains); republish them from the publishers' own records."},
		{Kind: StepAction, Text: "Then shorten sync_interval (or set sync_always: true) so acknowledged writes reach the disk before a power loss can take them from every replica at once."},
	}},
	// asset-lost
	{ID: "asset-lost-recreate", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing in the bundle's stores holds it any more, so nothing is left to destroy here."},
		{Kind: StepSave, Text: "save what still may hold it before anything else changes: copy out any raft group folder of the stream ($SYS/_js_/S-…, its WAL can hold recent messages), the servers' logs, and any backup."},
		{Kind: StepAction, When: "group", Text: "The stream's raft group {{group}} is still in the bundle: `jsforensics extract BUNDLE --stream '{{account}}/{{stream}}' -o {{stream}}.jsonl` writes every message its WAL still holds, ready to republish."},
		{Kind: StepAction, Text: "Then recreate it with its config (from a backup, a captured /jsz with config, or a peer's meta.inf) and restore its messages from a backup (nats stream restore) or republish them from their source."},
	}},
	{ID: "asset-lost-consumer", Steps: []remedyStep{
		{Kind: StepNote, Text: "Nothing in the bundle's stores holds the consumer any more."},
		{Kind: StepAction, Text: "Recreate it with its config and a start sequence after the last acknowledged one its clients know (nats consumer add)."},
	}},
	// unsafe-membership-change
	{ID: "membership-one-at-a-time", Steps: []remedyStep{
		{Kind: StepCost, When: "!meta", Text: "each peer-remove deletes the removed server's replica."},
		{Kind: StepCost, When: "meta", Text: "each server removal takes the server out of the meta group and out of every stream and consumer group that lists it; the meta leader places those replicas anew on the remaining servers."},
		{Kind: StepSave, When: "!meta", Text: "copy its stream folder out and check the remaining replicas hold every message (replica-gap)."},
		{Kind: StepSave, When: "meta", Text: "copy each server's store out before it is removed (cp -a of its JetStream folder) and check the remaining replicas of its streams hold every message (replica-gap)."},
		{Kind: StepAction, Destroys: true, Text: "Then remove one peer at a time and wait until the group has a leader and its remaining peers are current (nats stream info, nats server report jetstream) before the next."},
		{Kind: StepVerify, Text: "compare replicas for gaps (replica-gap)."},
	}},
	{ID: "membership-replace-one-at-a-time", Steps: []remedyStep{
		{Kind: StepCost, Text: "peer-remove deletes the removed server's replica and a replacement copies from the leader only."},
		{Kind: StepSave, Text: "copy each server's stream folder out."},
		{Kind: StepAction, Destroys: true, Text: "Then replace one replica at a time (peer-remove one server, wait until the stream has a leader and its replacement replica is current, then the next; a dead server still in the group is never current)."},
		{Kind: StepNote, Text: "With a second replica dead too: 2.12.1, 2.12.15 and 2.14.10 placed the replacement at the first removal and the surviving replica led at once; 2.15.3 only evicted the removed peer (the group at 2 peers, one dead: no leader, writes refused) until the second dead server was removed as well, then placed two replicas that caught up from the surviving one. No acknowledged write was lost on any of them."},
		{Kind: StepVerify, Text: "compare the replicas for lost writes (replica-gap, replica-divergence)."},
	}, Proven: []report.RemedyProof{
		{Version: "2.12.1", Fixture: "testdata/bundles/membership-v2.12.1", Outcome: "carried out on the change itself (the bundle is past it): 5 servers, an R3 stream under publishes, two of its hosts SIGKILLed, then one server removal, the stream led by the surviving replica with a new one catching up (the other killed server never current: the wait ended at 60 s), then the second removal: all 2630 acknowledged writes read back, the replicas equal, no stream folder deleted"},
		{Version: "2.11.17", Fixture: "testdata/remedies/membership-v2.11.17.json", Outcome: "the same (the stream leader was the meta leader and survived): led throughout, all 2628 acknowledged writes read back, the replicas equal, nothing deleted"},
		{Version: "2.12.15", Fixture: "testdata/remedies/membership-v2.12.15.json", Outcome: "the same: led by the surviving replica after the first removal, all 2850 acknowledged writes read back, the replicas equal, nothing deleted"},
		{Version: "2.14.10", Fixture: "testdata/remedies/membership-v2.14.10.json", Outcome: "the same: led by the surviving replica after the first removal, all 2646 acknowledged writes read back, the replicas equal, nothing deleted"},
		{Version: "2.15.3", Fixture: "testdata/remedies/membership-v2.15.3.json", Outcome: "no stream leader for the 60 s between the removals (the first only evicted the removed peer; 118 publishes refused), led and re-placed after the second: all 403 acknowledged writes read back, the replicas equal, nothing deleted"},
	}},
}

// renameSave: what a rename destroyed and how to save what is left.
func renameSave() []remedyStep {
	return []remedyStep{
		{Kind: StepCost, Text: "a renamed server deletes, at its first start, every stream copy whose group lists only its old id{{deleted}}. Their messages are then only in the stream groups' raft WALs (<system account>/_js_/S-*/msgs/) of each store, and no way out below brings them back into the streams."},
		{Kind: StepSave, Text: "before anything else, stop the servers and copy every store directory aside (the whole JetStream root)."},
	}
}

func renameBesideRemoval() remedyStep {
	return remedyStep{Kind: StepAction, Destroys: true, Each: "stops",
		Text:     "Then one at a time, waiting each time until `nats server report jetstream` shows the meta group one smaller and led, stop the server with an old name and remove its old id with a server removal (out of the meta group and every group that lists it):",
		Commands: []string{"{{each}}"}}
}

func renameBesideOutcome() remedyStep {
	return remedyStep{Kind: StepVerify, Text: "the group ends at its own size ({{renamed}}), led by one of {{news}}; streams come back empty, R3 ones without a leader, and R1 streams whose only peer was an old id may be gone from the meta state."}
}

// blockSteps: saving a damaged block and the ways to get its messages back.
func blockSteps() []remedyStep {
	return []remedyStep{
		{Kind: StepSave, Text: "copy {{file}} (and the stream's index.db) out, with the server stopped; `jsforensics dump blk FILE --json` reads every record still intact."},
		{Kind: StepAction, When: "replicated", Destroys: true,
			Text:     "The stream is R{{replicas}}: once the other replicas are checked to hold these sequences (replica-gap), start {{server}} and compare its replica with the others (`nats stream info {{stream|shell}}`, `nats server report jetstream`): 2.12.15 and 2.15.3 caught it up from the stream leader at its start, 2.10.27 did not. If it stays behind, let it be rebuilt from the stream leader, which deletes this replica's copy (saved above): a stream peer removal of {{server}}'s replica of {{stream}} only, then the stream scaled to R{{fewer}} and back to R{{replicas}}:",
			Commands: []string{"{{removal}}", "nats stream edit {{stream|shell}} --replicas {{fewer}}", "nats stream edit {{stream|shell}} --replicas {{replicas}}"}},
		{Kind: StepNote, When: "replicated", Text: "Where no other server can take the replica, 2.10.27 and 2.12.15 answered the removal \"peer remap failed\" yet took {{server}} out of the group, and the scale-down and up put a new replica on it that copied every sequence from the leader; 2.15.3 refused the removal (\"peer remap failed\", the group unchanged: it needs a server outside the group to place the replica on), and its scale-down kept the leader and dropped another, healthy replica, not {{server}}: on 2.15, if the removal is refused, do not scale down; check the group after each step."},
		{Kind: StepNote, When: "noneheld", Text: "The stream is R{{replicas}}, but no other replica's blocks hold these sequences: a rebuild of this replica copies from the stream leader, brings none of them back and deletes this copy. Do not peer-remove it; the raft WAL or the publishers are what may still hold them (acked-lost)."},
		{Kind: StepAction, When: "single", Text: "The stream has no other replica: republish what the dump recovers, or restore from a backup."},
	}
}

// remedyByID indexes the catalogue.
var RemedyByID = func() map[string]*remedy {
	m := map[string]*remedy{}
	for i := range RemedyCatalogue {
		r := &RemedyCatalogue[i]
		if m[r.ID] != nil {
			panic("remedy " + r.ID + " twice in the catalogue")
		}
		m[r.ID] = r
	}
	return m
}()

// streamPeerRemoveCommand removes server's replica of one stream (a stream
// peer removal). The request's "peer" is a server name on every version
// and also a peer id from 2.15 (jetstream_api.go JSApiStreamRemovePeerRequest).
func StreamPeerRemoveCommand(stream, peer string) string {
	subject := "$JS.API.STREAM.PEER.REMOVE." + stream
	body := `{"peer":` + jsonString(peer) + `}`
	return "nats stream cluster peer-remove " + shellWord(stream) + " " + shellWord(peer) + "   # or: nats request " + ShellQuote(subject) + " " + ShellQuote(body)
}

// shellWord is s as one shell word: as it is when it holds nothing the
// shell reads, else single-quoted.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,/:=@+", r)) {
			return ShellQuote(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
}
