package report

// Code is a finding code: the check that raised a finding (Finding.Code,
// CheckOutcome.Code hold one as a string). README's table says what raises
// each, and docs/report.md's which fields each fills.
type Code string

// The finding codes of the registered checks, in the order they run
// (internal/analysis.Checks; a test keeps the two in step).
const (
	CodeStoreCorrupt           Code = "store-corrupt"
	CodeIndexMismatch          Code = "index-mismatch"
	CodePeerIDCorrupt          Code = "peer-id-corrupt"
	CodePeerUnknown            Code = "peer-unknown"
	CodeQuorumUnreachable      Code = "quorum-unreachable"
	CodeMetaSplit              Code = "meta-split"
	CodeOrphanRisk             Code = "orphan-risk"
	CodeReplicaGap             Code = "replica-gap"
	CodeReplicaDivergence      Code = "replica-divergence"
	CodeAckedLost              Code = "acked-lost"
	CodeUnsafeMembershipChange Code = "unsafe-membership-change"
	CodeMetaNoLeader           Code = "meta-no-leader"
	CodeServerRenamed          Code = "server-renamed"
	CodePeerOffline            Code = "peer-offline"
	CodeAssetLost              Code = "asset-lost"
	CodeDurabilityExposure     Code = "durability-exposure"
	CodeJetStreamDisabled      Code = "jetstream-disabled"
	CodeStreamWriteError       Code = "stream-write-error"
	CodeUncleanStop            Code = "unclean-stop"
	CodeSourceStalled          Code = "source-stalled"
	CodeAssetOffline           Code = "asset-offline"
	// Issue 30: the incidents the field reports most.
	CodeGroupStalled    Code = "group-stalled"
	CodeConsumerAhead   Code = "consumer-ahead"
	CodeConsumerMissing Code = "consumer-missing"
	CodeConsumerStuck   Code = "consumer-stuck"
	// natscli's `nats audit analyze` checks, on a gather archive.
	CodeServerUnhealthy        Code = "server-unhealthy"
	CodeVersionsMixed          Code = "versions-mixed"
	CodeCPUHigh                Code = "cpu-high"
	CodeSlowConsumers          Code = "slow-consumers"
	CodeJetStreamUsageHigh     Code = "jetstream-usage-high"
	CodeDomainWhitespace       Code = "domain-whitespace"
	CodeAuthNotRequired        Code = "auth-not-required"
	CodeTLSExpiring            Code = "tls-expiring"
	CodeMemoryOutlier          Code = "memory-outlier"
	CodeHAAssetsHigh           Code = "ha-assets-high"
	CodeClusterNameWhitespace  Code = "cluster-name-whitespace"
	CodeMetaPeerOffline        Code = "meta-peer-offline"
	CodeMetaLeaderDisagree     Code = "meta-leader-disagree"
	CodeReplicaLagging         Code = "replica-lagging"
	CodeSubjectsHigh           Code = "subjects-high"
	CodeStreamLimitsNear       Code = "stream-limits-near"
	CodeStreamMonitor          Code = "stream-monitor"
	CodeConsumerMonitor        Code = "consumer-monitor"
	CodeAccountLimitsNear      Code = "account-limits-near"
	CodeGatewaysMismatch       Code = "gateways-mismatch"
	CodeLeafnodeNameWhitespace Code = "leafnode-name-whitespace"

	// Issue 30: operator mode.
	CodeAccountUnresolved Code = "account-unresolved"
)

// Codes are every finding code above, in that order.
var Codes = []Code{
	CodeStoreCorrupt, CodeIndexMismatch, CodePeerIDCorrupt, CodePeerUnknown, CodeQuorumUnreachable,
	CodeMetaSplit, CodeOrphanRisk, CodeReplicaGap, CodeReplicaDivergence, CodeAckedLost,
	CodeUnsafeMembershipChange, CodeMetaNoLeader, CodeServerRenamed, CodePeerOffline, CodeAssetLost,
	CodeDurabilityExposure, CodeJetStreamDisabled, CodeStreamWriteError, CodeUncleanStop,
	CodeSourceStalled,
	CodeAssetOffline,
	CodeGroupStalled, CodeConsumerAhead,
	CodeConsumerMissing, CodeConsumerStuck,
	CodeServerUnhealthy, CodeVersionsMixed, CodeCPUHigh, CodeSlowConsumers, CodeJetStreamUsageHigh, CodeDomainWhitespace, CodeAuthNotRequired, CodeTLSExpiring, CodeMemoryOutlier, CodeHAAssetsHigh, CodeClusterNameWhitespace, CodeMetaPeerOffline, CodeMetaLeaderDisagree, CodeReplicaLagging, CodeSubjectsHigh, CodeStreamLimitsNear, CodeStreamMonitor, CodeConsumerMonitor,
	CodeAccountLimitsNear, CodeGatewaysMismatch, CodeLeafnodeNameWhitespace,
	CodeAccountUnresolved,
}
