package capture

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The types below mirror the parts of nats-server's monitoring structures that
// the analysis uses (server/monitor.go, stream.go, consumer.go, store.go,
// events.go of v2.10.22, v2.12.1 and v2.15.2). Fields missing from an older
// version stay at their zero value; unknown fields are ignored.

// Jsz is a /jsz answer (server.JSInfo).
type Jsz struct {
	ServerID string    `json:"server_id"`
	Now      time.Time `json:"now"`
	// Disabled: JetStream is configured but off on this server (shut down
	// while the process runs, e.g. out of space); the answer then carries
	// only server_id and now beside it (monitor.go Jsz).
	Disabled bool            `json:"disabled"`
	Config   JetStreamConfig `json:"config"`

	// JetStreamStats, inlined by the server.
	Memory          uint64   `json:"memory"`
	Storage         uint64   `json:"storage"`
	ReservedMemory  uint64   `json:"reserved_memory"`
	ReservedStorage uint64   `json:"reserved_storage"`
	Accounts        int      `json:"accounts"`
	HAAssets        int      `json:"ha_assets"`
	API             APIStats `json:"api"`

	Streams         int    `json:"streams"`
	StreamsLeader   int    `json:"streams_leader"`   // 2.12+
	Consumers       int    `json:"consumers"`        //
	ConsumersLeader int    `json:"consumers_leader"` // 2.12+
	Messages        uint64 `json:"messages"`
	Bytes           uint64 `json:"bytes"`
	Total           int    `json:"total"` // 2.12+

	Meta           *MetaCluster    `json:"meta_cluster"`
	AccountDetails []AccountDetail `json:"account_details"`
}

// JetStreamConfig is server.JetStreamConfig.
type JetStreamConfig struct {
	MaxMemory    int64         `json:"max_memory"`
	MaxStorage   int64         `json:"max_storage"`
	StoreDir     string        `json:"store_dir"`
	SyncInterval time.Duration `json:"sync_interval"`
	SyncAlways   bool          `json:"sync_always"`
	Domain       string        `json:"domain"`
	CompressOK   bool          `json:"compress_ok"`
	UniqueTag    string        `json:"unique_tag"`
	Strict       bool          `json:"strict"`
}

// APIStats is server.JetStreamAPIStats.
type APIStats struct {
	Level    int    `json:"level"`
	Total    uint64 `json:"total"`
	Errors   uint64 `json:"errors"`
	Inflight uint64 `json:"inflight"`
}

// JetStreamStats is server.JetStreamStats (varz.jetstream.stats, account details).
type JetStreamStats struct {
	Memory          uint64   `json:"memory"`
	Storage         uint64   `json:"storage"`
	ReservedMemory  uint64   `json:"reserved_memory"`
	ReservedStorage uint64   `json:"reserved_storage"`
	Accounts        int      `json:"accounts"`
	HAAssets        int      `json:"ha_assets"`
	API             APIStats `json:"api"`
}

// MetaCluster is server.MetaClusterInfo (/jsz meta_cluster, /varz jetstream.meta).
//
// Peer is the node id of the LEADER (getHash of the leader's name), not of the
// answering server. With no leader the server hashes the empty name, so every
// server reports natsfmt.NoLeaderPeer; use HasLeader.
type MetaCluster struct {
	Name            string        `json:"name"`
	Leader          string        `json:"leader"`
	Peer            string        `json:"peer"`
	Replicas        []PeerInfo    `json:"replicas"` // excludes the leader itself
	ClusterSize     int           `json:"cluster_size"`
	QuorumNeeded    int           `json:"quorum_needed"` // 2.15+; 0 when absent
	Rescue          bool          `json:"rescue"`        // 2.15+
	Pending         int           `json:"pending"`
	PendingRequests int           `json:"pending_requests"` // 2.15+
	PendingInfos    int           `json:"pending_infos"`    // 2.15+
	Snapshot        *MetaSnapshot `json:"snapshot"`         // 2.15+
}

// MetaSnapshot is server.MetaSnapshotStats (2.15+).
type MetaSnapshot struct {
	PendingEntries int           `json:"pending_entries"`
	PendingSize    uint64        `json:"pending_size"`
	LastTime       time.Time     `json:"last_time"`
	LastDuration   time.Duration `json:"last_duration"`
}

// PeerInfo is server.PeerInfo. Active is the time since the peer was last seen
// (nanoseconds on the wire).
type PeerInfo struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline"`
	Active  time.Duration `json:"active"`
	Lag     uint64        `json:"lag"`
	Peer    string        `json:"peer"`
	Pending bool          `json:"pending"` // 2.15+
}

// AccountDetail is server.AccountDetail.
type AccountDetail struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	JetStreamStats
	Streams []StreamDetail `json:"stream_detail"`
}

// StreamDetail is server.StreamDetail.
type StreamDetail struct {
	Name               string            `json:"name"`
	Created            time.Time         `json:"created"`
	Cluster            *ClusterInfo      `json:"cluster"`
	Config             *StreamConfig     `json:"config"`
	State              StreamState       `json:"state"`
	Consumers          []ConsumerInfo    `json:"consumer_detail"`
	RaftGroup          string            `json:"stream_raft_group"`
	ConsumerRaftGroups []RaftGroupDetail `json:"consumer_raft_groups"`
	// Mirror and Sources are the stream's mirror and sources as its server
	// runs them (server.StreamSourceInfo; in /jsz since 2.10).
	Mirror  *StreamSourceInfo  `json:"mirror"`
	Sources []StreamSourceInfo `json:"sources"`
}

// StreamSourceInfo is server.StreamSourceInfo: a mirror's or a source's
// state. Active is the time since its origin last sent anything
// (nanoseconds on the wire); Seq, the last origin sequence seen, is
// reported from 2.15 and for sources only.
type StreamSourceInfo struct {
	Name     string          `json:"name"`
	External *ExternalStream `json:"external"`
	Lag      uint64          `json:"lag"`
	Seq      uint64          `json:"seq"`
	Active   time.Duration   `json:"active"`
	Error    *APIError       `json:"error"`
	Filter   string          `json:"filter_subject"`
}

// ExternalStream is server.ExternalStream: the API prefix of another
// account or JetStream domain ($JS.<domain>.API).
type ExternalStream struct {
	APIPrefix     string `json:"api"`
	DeliverPrefix string `json:"deliver"`
}

// StreamSource is server.StreamSource: a mirror or source as configured.
type StreamSource struct {
	Name        string          `json:"name"`
	OptStartSeq uint64          `json:"opt_start_seq"`
	Filter      string          `json:"filter_subject"`
	External    *ExternalStream `json:"external"`
}

// ClusterInfo is server.ClusterInfo.
type ClusterInfo struct {
	Name        string     `json:"name"`
	RaftGroup   string     `json:"raft_group"`
	Leader      string     `json:"leader"`
	LeaderSince *time.Time `json:"leader_since"` // 2.12+
	Replicas    []PeerInfo `json:"replicas"`
}

// StreamConfig holds the stream configuration fields of interest.
type StreamConfig struct {
	Name        string   `json:"name"`
	Subjects    []string `json:"subjects"`
	Retention   string   `json:"retention"`
	Storage     string   `json:"storage"`
	Replicas    int      `json:"num_replicas"`
	MaxMsgs     int64    `json:"max_msgs"`
	MaxBytes    int64    `json:"max_bytes"`
	Compression string   `json:"compression"`
	// MaxConsumers and Metadata: read for natscli's audit checks
	// (JETSTREAM_003 limits, JETSTREAM_004 io.nats.monitor.* opt-in).
	MaxConsumers int               `json:"max_consumers"`
	Metadata     map[string]string `json:"metadata"`
	// Discard is what the stream does at max_msgs or max_bytes: "old"
	// (the default, "" before a server fills it in) deletes its oldest
	// messages, "new" refuses the publish. For the remedy of JETSTREAM_003.
	Discard string `json:"discard"`
	// Mirror and Sources as configured (source-stalled).
	Mirror  *StreamSource  `json:"mirror"`
	Sources []StreamSource `json:"sources"`
}

// StreamState is server.StreamState (also the raftz WAL state).
type StreamState struct {
	Messages      uint64    `json:"messages"`
	Bytes         uint64    `json:"bytes"`
	FirstSeq      uint64    `json:"first_seq"`
	FirstTime     time.Time `json:"first_ts"`
	LastSeq       uint64    `json:"last_seq"`
	LastTime      time.Time `json:"last_ts"`
	NumSubjects   int       `json:"num_subjects"`
	NumDeleted    int       `json:"num_deleted"`
	ConsumerCount int       `json:"consumer_count"`
}

// ConsumerInfo is the part of server.ConsumerInfo the analysis reads.
type ConsumerInfo struct {
	Stream         string       `json:"stream_name"`
	Name           string       `json:"name"`
	Created        time.Time    `json:"created"`
	Delivered      SequenceInfo `json:"delivered"`
	AckFloor       SequenceInfo `json:"ack_floor"`
	NumAckPending  int          `json:"num_ack_pending"`
	NumRedelivered int          `json:"num_redelivered"`
	NumWaiting     int          `json:"num_waiting"`
	NumPending     uint64       `json:"num_pending"`
	// PushBound: a push consumer with an active subscriber (omitted when
	// none, and for pull consumers).
	PushBound bool         `json:"push_bound"`
	Cluster   *ClusterInfo `json:"cluster"`
	// Config is the part of the consumer's configuration natscli's audit
	// reads (JETSTREAM_005: io.nats.monitor.* metadata).
	Config *ConsumerConfig `json:"config"`
}

// ConsumerConfig is the part of server.ConsumerConfig read here.
type ConsumerConfig struct {
	Metadata map[string]string `json:"metadata"`
	// Read by consumer-stuck: the ack limits, and whether the consumer
	// takes a subset of its stream (a filter) and delivers by push.
	MaxAckPending  int           `json:"max_ack_pending"`
	AckWait        time.Duration `json:"ack_wait"`
	AckPolicy      string        `json:"ack_policy"`
	FilterSubject  string        `json:"filter_subject"`
	FilterSubjects []string      `json:"filter_subjects"`
	DeliverSubject string        `json:"deliver_subject"`
}

// SequenceInfo is server.SequenceInfo.
type SequenceInfo struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
	// Last is last_active: when the consumer last delivered (delivered)
	// or got an ack (ack_floor); absent before the first.
	Last *time.Time `json:"last_active"`
}

// RaftGroupDetail is server.RaftGroupDetail (consumer name to raft group).
type RaftGroupDetail struct {
	Name      string `json:"name"`
	RaftGroup string `json:"raft_group"`
}

// Raftz is a /raftz answer: account name -> raft group name -> group. The
// `?group=_meta_` form has the same shape with one group.
type Raftz map[string]map[string]RaftzGroup

// RaftzGroup is server.RaftzGroup.
type RaftzGroup struct {
	ID            string                    `json:"id"`
	State         string                    `json:"state"`
	Size          int                       `json:"size"`
	QuorumNeeded  int                       `json:"quorum_needed"`
	Observer      bool                      `json:"observer"`
	Paused        bool                      `json:"paused"`
	Overrun       bool                      `json:"overrun"`       // 2.15+
	OverrunCount  uint64                    `json:"overrun_count"` // 2.15+
	Committed     uint64                    `json:"committed"`
	Applied       uint64                    `json:"applied"`
	CatchingUp    bool                      `json:"catching_up"`
	Leader        string                    `json:"leader"`
	LeaderSince   *time.Time                `json:"leader_since"` // 2.12+
	EverHadLeader bool                      `json:"ever_had_leader"`
	Term          uint64                    `json:"term"`
	VotedFor      string                    `json:"voted_for"`
	PTerm         uint64                    `json:"pterm"`
	PIndex        uint64                    `json:"pindex"`
	SystemAccount bool                      `json:"system_account"`  // 2.12+
	TrafficAcc    string                    `json:"traffic_account"` // 2.12+
	WAL           StreamState               `json:"wal"`
	WALError      json.RawMessage           `json:"wal_error"` // an error value; the server marshals it as {} or a string
	Peers         map[string]RaftzGroupPeer `json:"peers"`     // excludes the answering node
}

// RaftzGroupPeer is server.RaftzGroupPeer. LastSeen is a Go duration string
// (time.Duration.String); see LastSeenDuration.
type RaftzGroupPeer struct {
	Name                string `json:"name"`
	Known               bool   `json:"known"`
	LastReplicatedIndex uint64 `json:"last_replicated_index"`
	LastSeen            string `json:"last_seen"`
}

// LastSeenDuration parses LastSeen. ok is false when it is absent or not a Go
// duration.
func (p RaftzGroupPeer) LastSeenDuration() (d time.Duration, ok bool) {
	if p.LastSeen == "" {
		return 0, false
	}
	d, err := time.ParseDuration(p.LastSeen)
	if err != nil {
		return 0, false
	}
	return d, true
}

// Healthz is a /healthz answer (server.HealthStatus).
type Healthz struct {
	Status     string         `json:"status"`
	StatusCode int            `json:"status_code"`
	Error      string         `json:"error"`
	Errors     []HealthzError `json:"errors"`
	// ErrCode is the JetStream API error code that Error (else the first of
	// Errors carrying one) ends with: the server writes an ApiError as
	// "<description> (<err_code>)" (jetstream_errors.go ApiError.Error), so
	// a server whose JetStream is off answers "JetStream not enabled
	// (10076)". 0 when none carries one. Set by decoding, not on the wire.
	ErrCode uint16 `json:"-"`
}

// ErrCodeJetStreamNotEnabled is JSNotEnabledErr
// (jetstream_errors_generated.go): what /healthz reports while JetStream
// is disabled on a server configured with it (monitor.go healthz).
const ErrCodeJetStreamNotEnabled = 10076

// JetStreamNotEnabled says whether the answer reports JetStream off on the
// server (error code 10076).
func (h *Healthz) JetStreamNotEnabled() bool { return h.ErrCode == ErrCodeJetStreamNotEnabled }

// apiErrCode is the code an ApiError text ends with ("… (10076)"), 0 if
// it ends otherwise.
func apiErrCode(text string) uint16 {
	text = strings.TrimSpace(text)
	if !strings.HasSuffix(text, ")") {
		return 0
	}
	i := strings.LastIndex(text, " (")
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseUint(text[i+2:len(text)-1], 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// errCode is the code of the answer's error (see ErrCode).
func (h *Healthz) errCode() uint16 {
	if c := apiErrCode(h.Error); c != 0 {
		return c
	}
	for _, e := range h.Errors {
		if c := apiErrCode(e.Error); c != 0 {
			return c
		}
	}
	return 0
}

// HealthzError is server.HealthzError; Type is the server's string form
// (CONNECTION, BAD_REQUEST, JETSTREAM, ACCOUNT, STREAM, CONSUMER).
type HealthzError struct {
	Type     string `json:"type"`
	Account  string `json:"account"`
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	Error    string `json:"error"`
}

// Varz is the part of a /varz answer (server.Varz) the analysis reads.
type Varz struct {
	ServerID      string        `json:"server_id"`
	ServerName    string        `json:"server_name"`
	Version       string        `json:"version"`
	GitCommit     string        `json:"git_commit"`
	Go            string        `json:"go"`
	Host          string        `json:"host"`
	Port          int           `json:"port"`
	Cluster       ClusterVarz   `json:"cluster"`
	Gateway       GatewayVarz   `json:"gateway"`
	Start         time.Time     `json:"start"`
	Now           time.Time     `json:"now"`
	Uptime        string        `json:"uptime"`
	Mem           int64         `json:"mem"`
	Connections   int           `json:"connections"`
	Routes        int           `json:"routes"`
	Remotes       int           `json:"remotes"`
	SystemAccount string        `json:"system_account"`
	ConfigDigest  string        `json:"config_digest"` // 2.12+
	JetStream     JetStreamVarz `json:"jetstream"`

	// Read for natscli's audit checks (SERVER_003, 004, 007, 008): the CPU
	// use in percent of one core, the cores, slow consumers since start,
	// whether clients must authenticate, and the expiry of each listener's
	// TLS certificate (2.12+; zero when it has none; the cluster's and
	// gateway's are in Cluster and Gateway).
	CPU             float64   `json:"cpu"`
	Cores           int       `json:"cores"`
	SlowConsumers   int64     `json:"slow_consumers"`
	AuthRequired    bool      `json:"auth_required"`
	TLSCertNotAfter time.Time `json:"tls_cert_not_after"`
	LeafNode        TLSExpiry `json:"leaf"`
	MQTT            TLSExpiry `json:"mqtt"`
	Websocket       TLSExpiry `json:"websocket"`
}

// TLSExpiry is the tls_cert_not_after of one listener of /varz.
type TLSExpiry struct {
	TLSCertNotAfter time.Time `json:"tls_cert_not_after"`
}

// ClusterVarz is server.ClusterOptsVarz.
type ClusterVarz struct {
	Name     string   `json:"name"`
	Addr     string   `json:"addr"`
	Port     int      `json:"cluster_port"`
	URLs     []string `json:"urls"`
	PoolSize int      `json:"pool_size"`
	// TLSCertNotAfter is the expiry of the route listener's certificate.
	TLSCertNotAfter time.Time `json:"tls_cert_not_after"`
}

// GatewayVarz is the part of server.GatewayOptsVarz the analysis reads.
type GatewayVarz struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int    `json:"port"`
	// TLSCertNotAfter is the expiry of the gateway listener's certificate.
	TLSCertNotAfter time.Time `json:"tls_cert_not_after"`
}

// JetStreamVarz is server.JetStreamVarz. Meta equals /jsz meta_cluster.
type JetStreamVarz struct {
	Config *JetStreamConfig `json:"config"`
	Stats  *JetStreamStats  `json:"stats"`
	Meta   *MetaCluster     `json:"meta"`
}

// ServerInfo is server.ServerInfo, the "server" of a natscli request line or
// of a system-account API answer.
type ServerInfo struct {
	Name      string            `json:"name"`
	Host      string            `json:"host"`
	ID        string            `json:"id"`
	Cluster   string            `json:"cluster"`
	Domain    string            `json:"domain"`
	Version   string            `json:"ver"`
	Tags      []string          `json:"tags"`
	Metadata  map[string]string `json:"metadata"`
	JetStream bool              `json:"jetstream"`
	Flags     uint64            `json:"flags"`
	Seq       uint64            `json:"seq"`
	Time      time.Time         `json:"time"`
}

// APIError is server.ApiError, the "error" of a request line.
type APIError struct {
	Code        int    `json:"code"`
	ErrCode     uint16 `json:"err_code"`
	Description string `json:"description"`
}

// Gatewayz is the part of a /gatewayz answer (server.Gatewayz) natscli's
// CLUSTER_002 reads: the gateways of this server, outbound by remote
// cluster and inbound by the cluster they come from.
type Gatewayz struct {
	ServerID string                      `json:"server_id"`
	Now      time.Time                   `json:"now"`
	Name     string                      `json:"name"`
	Outbound map[string]RemoteGatewayz   `json:"outbound_gateways"`
	Inbound  map[string][]RemoteGatewayz `json:"inbound_gateways"`
}

// RemoteGatewayz is one gateway connection of /gatewayz: whether the
// server's configuration names it (else it was learnt from a peer).
type RemoteGatewayz struct {
	IsConfigured bool `json:"configured"`
}

// Leafz is the part of a /leafz answer (server.Leafz) natscli's LEAF_001
// reads.
type Leafz struct {
	ServerID string     `json:"server_id"`
	Now      time.Time  `json:"now"`
	NumLeafs int        `json:"leafnodes"`
	Leafs    []LeafInfo `json:"leafs"`
}

// LeafInfo is one leafnode connection of /leafz: the remote server's name
// and the local account it is bound to.
type LeafInfo struct {
	Name    string `json:"name"`
	IsSpoke bool   `json:"is_spoke"`
	Account string `json:"account"`
	IP      string `json:"ip"`
	Port    int    `json:"port"`
}

// AccountInfo is the part of an account's info (server.AccountInfo: the
// system API's $SYS.REQ.ACCOUNT.<account>.INFO answer, or /accountz?acc=
// account_detail) natscli's ACCOUNTS_001 reads: the account's connections
// and subscriptions on this server, and its JWT's limits when the server
// runs in operator mode (Claim is nil otherwise).
type AccountInfo struct {
	AccountName string        `json:"account_name"`
	NameTag     string        `json:"name_tag"` // the JWT's name, in operator mode
	LeafCnt     int64         `json:"leafnode_connections"`
	ClientCnt   int64         `json:"client_connections"`
	SubCnt      int64         `json:"subscriptions"`
	Claim       *AccountClaim `json:"decoded_jwt"`
}

// AccountClaim is the part of a decoded account JWT (jwt.AccountClaims)
// read here: its limits, each 0 when the JWT leaves it out and -1 when it
// sets none.
type AccountClaim struct {
	Nats struct {
		Limits AccountLimits `json:"limits"`
	} `json:"nats"`
}

// AccountLimits are the connection and subscription limits of an account
// JWT (jwt.OperatorLimits).
type AccountLimits struct {
	Conn         int64 `json:"conn"`
	LeafNodeConn int64 `json:"leaf"`
	Subs         int64 `json:"subs"`
}

// Accountz is the part of an /accountz answer read here: with ?acc= it
// holds that account's info.
type Accountz struct {
	ServerID string       `json:"server_id"`
	Now      time.Time    `json:"now"`
	Account  *AccountInfo `json:"account_detail"`
}
