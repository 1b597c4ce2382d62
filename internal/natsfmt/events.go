package natsfmt

// EventKind names a timeline event: a logscan catalogue kind (what the
// server logged) or one the analysis derives from other sources. Only the
// kinds that are produced in one package and acted on in another are
// named here; logscan's catalogue holds the rest.
type EventKind string

// Event kinds the server logs (logscan's catalogue produces them; a test
// there keeps this list in its catalogue) and the analysis acts on.
const (
	EventStart             EventKind = "start"
	EventStop              EventKind = "stop"
	EventMetaBootstrap     EventKind = "meta-bootstrap"
	EventMetaLeader        EventKind = "meta-leader" // also from captured /jsz, /raftz and the meta WAL
	EventMetaLeaderSelf    EventKind = "meta-leader-self"
	EventNoMetaLeader      EventKind = "no-meta-leader" // also from captured /jsz, /raftz
	EventMetaContactLost   EventKind = "meta-contact-lost"
	EventMetaRecover       EventKind = "meta-recover"
	EventPeerAdd           EventKind = "peer-add"
	EventPeerRemove        EventKind = "peer-remove"
	EventPeersEvicted      EventKind = "peers-evicted"
	EventQuorumRescue      EventKind = "quorum-rescue"
	EventHealthcheckFailed EventKind = "healthcheck-failed" // also from captured /healthz
	EventSnapshotCorrupt   EventKind = "snapshot-corrupt"
	EventStreamLeader      EventKind = "stream-leader"
	EventRestoredStream    EventKind = "restored-stream"
	EventRestoringStream   EventKind = "restoring-stream"
	EventLeaderSwitch      EventKind = "leader-switch"
	EventTerm              EventKind = "term"
	EventVote              EventKind = "vote"
	EventFilestoreCorrupt  EventKind = "filestore-corrupt"
	EventIndexRebuilt      EventKind = "index-rebuilt"
	EventBlockMissing      EventKind = "block-missing"
)

// LogEventKinds are the kinds above, which the server logs.
var LogEventKinds = []EventKind{
	EventStart, EventStop, EventMetaBootstrap, EventMetaLeader, EventMetaLeaderSelf, EventNoMetaLeader,
	EventMetaContactLost, EventMetaRecover, EventPeerAdd, EventPeerRemove, EventPeersEvicted, EventQuorumRescue,
	EventHealthcheckFailed, EventSnapshotCorrupt, EventStreamLeader, EventRestoredStream, EventRestoringStream,
	EventLeaderSwitch, EventTerm, EventVote, EventFilestoreCorrupt, EventIndexRebuilt, EventBlockMissing,
}

// Event kinds the analysis derives.
const (
	// EventUncleanStop: a restart with no clean shutdown logged before it.
	EventUncleanStop EventKind = "unclean-stop"
	// EventHealthcheckOK: a captured /healthz that said ok.
	EventHealthcheckOK EventKind = "healthcheck-ok"
)
