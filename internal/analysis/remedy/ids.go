package remedy

// ID names an entry of the remedy catalogue (remedies.yaml). Checks
// prescribe by these constants, never by a literal (TestEveryRemedyIDPrescribed);
// loading the catalogue fails on an entry that is none of them and on one
// of them with no entry.
type ID string

const (
	MetaCorruptIDRemove         ID = "meta-corrupt-id-remove"
	GroupCorruptIDRemove        ID = "group-corrupt-id-remove"
	PeersIdxHealedBySnapshot    ID = "peers-idx-healed-by-snapshot"
	UnknownPeerRemove           ID = "unknown-peer-remove"
	StreamQuorumPeerRemove      ID = "stream-quorum-peer-remove"
	MetaQuorumRescue            ID = "meta-quorum-rescue"
	MetaQuorumSameNames         ID = "meta-quorum-same-names"
	MetaQuorumTemporaryServers  ID = "meta-quorum-temporary-servers"
	JetStreamDisabled           ID = "jetstream-disabled"
	StreamWriteError            ID = "stream-write-error"
	QuorumRenamedOldIDs         ID = "quorum-renamed-old-ids"
	DepartedServerRemove        ID = "departed-server-remove"
	RenameOldNamesBeside        ID = "rename-old-names-beside"
	RenameBesideOrRevert        ID = "rename-beside-or-revert"
	RenameRevert                ID = "rename-revert"
	MetaSnapshotMoveAside       ID = "meta-snapshot-move-aside"
	StoreSealed                 ID = "store-sealed"
	StoreStreamMetaFiles        ID = "store-stream-meta-files"
	StoreConsumerMetaFiles      ID = "store-consumer-meta-files"
	StoreIndexDB                ID = "store-index-db"
	StoreConsumerState          ID = "store-consumer-state"
	StoreOtherFile              ID = "store-other-file"
	StoreBlockDeletedRecord     ID = "store-block-deleted-record"
	StoreBlockRecord            ID = "store-block-record"
	StoreBlockLost              ID = "store-block-lost"
	StoreBlockMissing           ID = "store-block-missing"
	StoreBlockResurrected       ID = "store-block-resurrected"
	StoreEmptyFolder            ID = "store-empty-folder"
	IndexDBStaleRemove          ID = "index-db-stale-remove"
	IndexDBKeep                 ID = "index-db-keep"
	IndexDBOutdated             ID = "index-db-outdated"
	MetaNoLeader                ID = "meta-no-leader"
	MetaSplitKeepOneSide        ID = "meta-split-keep-one-side"
	MetaSplitMerged             ID = "meta-split-merged"
	OrphanStreamCopyOut         ID = "orphan-stream-copy-out"
	OrphanConsumerRecreate      ID = "orphan-consumer-recreate"
	DivergenceChooseCopy        ID = "divergence-choose-copy"
	ReplicaGapStart             ID = "replica-gap-start"
	ReplicaGapCatchUp           ID = "replica-gap-catch-up"
	ReplicaGapRebuild           ID = "replica-gap-rebuild"
	DurabilityCompare           ID = "durability-compare"
	UncleanStopStart            ID = "unclean-stop-start"
	DurabilityTailLost          ID = "durability-tail-lost"
	AckedLostRepublish          ID = "acked-lost-republish"
	AssetLostRecreate           ID = "asset-lost-recreate"
	AssetLostConsumer           ID = "asset-lost-consumer"
	MembershipOneAtATime        ID = "membership-one-at-a-time"
	MembershipReplaceOneAtATime ID = "membership-replace-one-at-a-time"
	StreamLimitsNear            ID = "stream-limits-near"
	ServerUnhealthy             ID = "server-unhealthy"
	VersionsMixed               ID = "versions-mixed"
	CPUHigh                     ID = "cpu-high"
	SlowConsumers               ID = "slow-consumers"
	JetStreamUsageHigh          ID = "jetstream-usage-high"
	DomainWhitespace            ID = "domain-whitespace"
	AuthNotRequired             ID = "auth-not-required"
	TLSExpiring                 ID = "tls-expiring"
	MemoryOutlier               ID = "memory-outlier"
	HAAssetsHigh                ID = "ha-assets-high"
	ClusterNameWhitespace       ID = "cluster-name-whitespace"
	SubjectsHigh                ID = "subjects-high"
	MirrorRecreate              ID = "mirror-recreate"
	SourceReadd                 ID = "source-readd"
	AssetOfflineNewerRelease    ID = "asset-offline-newer-release"
	ConsumerAheadRecreate       ID = "consumer-ahead-recreate"
	GroupStalledMoveAside       ID = "group-stalled-move-aside"
	GroupNotCurrent             ID = "group-not-current"
	AccountJWTRestore           ID = "account-jwt-restore"
	ConsumerMissingDelete       ID = "consumer-missing-delete"
	ConsumerStuckAcks           ID = "consumer-stuck-acks"
	ConsumerNotLoaded           ID = "consumer-not-loaded"
	AccountLimitsNear           ID = "account-limits-near"
	GatewaysMismatch            ID = "gateways-mismatch"
	LeafnodeNameWhitespace      ID = "leafnode-name-whitespace"
	StreamMonitor               ID = "stream-monitor"
	MetaPeerOffline             ID = "meta-peer-offline"
)

// IDs are every ID above, in the catalogue's order (TestIDsListed keeps
// the two in step).
var IDs = []ID{
	MetaCorruptIDRemove, GroupCorruptIDRemove, PeersIdxHealedBySnapshot, UnknownPeerRemove,
	StreamQuorumPeerRemove, MetaQuorumRescue, MetaQuorumSameNames, MetaQuorumTemporaryServers,
	JetStreamDisabled, StreamWriteError, QuorumRenamedOldIDs, DepartedServerRemove,
	RenameOldNamesBeside, RenameBesideOrRevert, RenameRevert, MetaSnapshotMoveAside, StoreSealed,
	StoreStreamMetaFiles, StoreConsumerMetaFiles, StoreIndexDB, StoreConsumerState, StoreOtherFile,
	StoreBlockDeletedRecord, StoreBlockRecord, StoreBlockLost, StoreBlockMissing,
	StoreBlockResurrected, StoreEmptyFolder, IndexDBStaleRemove, IndexDBKeep, IndexDBOutdated,
	MetaNoLeader, MetaSplitKeepOneSide, MetaSplitMerged, OrphanStreamCopyOut, OrphanConsumerRecreate,
	DivergenceChooseCopy, ReplicaGapStart, ReplicaGapCatchUp, ReplicaGapRebuild, DurabilityCompare,
	UncleanStopStart, DurabilityTailLost, AckedLostRepublish, AssetLostRecreate, AssetLostConsumer,
	MembershipOneAtATime, MembershipReplaceOneAtATime, StreamLimitsNear,
	ServerUnhealthy, VersionsMixed, CPUHigh, SlowConsumers, JetStreamUsageHigh, DomainWhitespace, AuthNotRequired, TLSExpiring, MemoryOutlier, HAAssetsHigh, ClusterNameWhitespace, SubjectsHigh,
	MirrorRecreate, SourceReadd,
	AssetOfflineNewerRelease,
	ConsumerAheadRecreate, GroupStalledMoveAside, GroupNotCurrent,
	AccountJWTRestore,
	ConsumerMissingDelete, ConsumerStuckAcks, ConsumerNotLoaded,
	AccountLimitsNear, GatewaysMismatch, LeafnodeNameWhitespace, StreamMonitor, MetaPeerOffline,
}
