package model

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
	"github.com/jsforensics/jsforensics/storeparse"
)

// Model holds the facts computed once from a bundle; every check reads it and
// none writes it. The loader (load.go) fills it from the parsers.
type Model struct {
	Bundle  string
	Servers []*Server
	Streams []*Stream
	Groups  []*Group

	Corruptions []Corruption
	// TornFolders are the stream and raft group folders that lost a file to
	// the archive (load_archive.go): what their files are compared with is
	// not all the server wrote.
	TornFolders map[string]bool
	// RaftRecords are the raft group folders of every store, as read
	// (load_raftfiles.go); store-corrupt judges them.
	RaftRecords []*RaftRecord
	// Undelivered are the files the archive did not deliver intact.
	Undelivered map[string]bool

	// IDs maps every peer id that a server name found anywhere in the bundle
	// hashes to, to that name.
	IDs map[string]string

	// streamsByKey indexes Streams by account and name once loading is
	// done (Model.stream); nil on a model built by hand.
	StreamsByKey map[AssetKey]*Stream

	// merged maps the id of a server record merged into another (two
	// records found to be one server) to the id of the record it joined.
	Merged map[ServerID]ServerID

	// Timeline is every dated event, oldest first.
	Timeline []TimelineEvent
	// MetaLeaderStates are what logs and captures say of the meta leader,
	// per server, oldest first.
	MetaLeaderStates []MetaLeaderState
	// MetaFoundings are meta groups seen founded: a server electing a meta
	// leader with a peer set, from logs or raft state.
	MetaFoundings []MetaFounding

	// MetaRemovals are the stream and consumer deletions the meta WALs
	// record (API deletes): what removed an asset on purpose.
	MetaRemovals []MetaRemoval

	// LogStreams are the streams each server's log shows it holding
	// (restored at boot, leading), with the last such line.
	LogStreams map[ServerID]map[AssetKey]LogStream

	// Renames are servers seen under an earlier name (a log whose boots
	// name the server differently), oldest first: one server, two names.
	Renames []Rename
	// AckLogs are the publishers' ack logs the bundle holds (acklog).
	AckLogs []*AckLog
	// Gathers are the bundle's `nats audit gather` archives as natscli
	// reads them (gather.go).
	Gathers []Gather
	// HistoryMatches: for each Jepsen history among them, where its
	// published values are held (load_acklog.go).
	HistoryMatches []*HistoryMatch

	// KeysGiven: the stores were read with the operator's keys
	// (Options.Keys); what stayed sealed is then not this key's.
	KeysGiven bool
	// EncryptedStores are the servers whose store is encrypted at rest.
	EncryptedStores map[ServerID]bool
	// Accounts are the accounts of operator mode the bundle names (by
	// public key): their JWTs (a resolver's folder) and names.
	Accounts map[string]*Account
	// Healthz are the captured /healthz answers, dated or not (the
	// timeline holds only the dated ones).
	Healthz []HealthzAnswer

	// Read is what the bundle reader recognized and could not read.
	Read Read

	Notes []string
}

// Rename is one server that ran as Old and runs as New now.
type Rename struct {
	Old, New string
	File     string // the log whose boot banners say so
	Line     int    // the first boot under New
	OldLine  int    // the last boot under Old
	Time     time.Time
}

// AckLog is what one publisher's ack log says the servers acknowledged,
// stream by stream, as acklog decodes it; the model names the types so that
// checks read them without importing the parser.
type (
	AckLog      = acklog.Summary
	AckedStream = acklog.StreamAcks
)

// ackFormatJepsen marks an ack log that is a Jepsen history: published
// values, no sequences.
const AckFormatJepsen = acklog.FormatEDN

// ServerID is how every model record refers to a server: fixed when the
// server record is made, while its Name may change (a rename, a merge of
// a placeholder), so a rename is one assignment to Server.Name and a merge
// one entry of Model.merged. Model.Name resolves it; Build turns ids into
// names once. It is a string type (the name the record was first made
// under, made unique) rather than an index so that a small model in a
// check's test reads as names, and any mix of an id with a name is a
// compile error.
type ServerID string

// Server is one server, by whatever sources it was seen.
type Server struct {
	ID         ServerID
	Name       string
	NameSource string // folder, log, capture, store, unknown
	PeerID     string
	Cluster    string
	Version    string
	Sources    map[string]bool
	StoreDir   string // jetstream root relative to the bundle, if its store is present
	// Alive says a log or capture shows the server running (not only named).
	Alive bool
	// Sync is how the server flushes its store (captures, config), nil
	// when the bundle does not say.
	Sync *SyncSetting
	// SyncUnknown says why the bundle holds this server's config but its
	// sync setting cannot be told from it (a value from the environment, an
	// include the bundle lacks); "" otherwise.
	SyncUnknown string
	// Meta is what this server's own meta state (snapshot then WAL ops)
	// assigns; nil when the store holds no usable meta state.
	Meta *MetaState
	// JetStream is what its captures say of its JetStream (on or off, its
	// store limit and usage); nil when no /jsz, /healthz or /varz of it
	// says anything.
	JetStream *JetStreamStatus
	// Domain is the server's JetStream domain ("" for none) and
	// DomainFrom what said so (/jsz or /varz config.domain, the log's
	// "Domain:" line or its JetStream banner without one); DomainFrom ""
	// when nothing in the bundle tells (see MetaDomain). Each domain runs
	// a meta group of its own.
	Domain, DomainFrom string
}

// MetaDomain is the JetStream domain whose meta group s belongs to: its
// own where the bundle tells it; where it does not, the one domain every
// server whose domain is told shares (a server without captures or log in
// a one-domain bundle), else "".
func MetaDomain(m *Model, s *Server) string {
	if s == nil {
		return ""
	}
	if s.DomainFrom != "" {
		return s.Domain
	}
	one, n := "", 0
	for _, o := range m.Servers {
		if o.DomainFrom != "" && (n == 0 || o.Domain != one) {
			one, n = o.Domain, n+1
		}
	}
	if n == 1 {
		return one
	}
	return ""
}

// Domains are the distinct JetStream domains of the bundle's servers
// (MetaDomain), sorted; one entry ("") when none has a domain.
func Domains(m *Model) []string {
	seen := map[string]bool{}
	for _, s := range m.Servers {
		seen[MetaDomain(m, s)] = true
	}
	return SortedKeys(seen)
}

// JetStreamStatus is what one server's captures say of its JetStream.
type JetStreamStatus struct {
	// Off are the answers saying JetStream is off on the server while it
	// runs (/jsz disabled: true, /healthz error 10076); On those of it
	// running (a /jsz that is not disabled).
	Off, On []JetStreamAnswer
	// MaxStorage is the configured file store limit (max_file_store, /jsz
	// or /varz config max_storage; 0 when none says); Storage and Reserved
	// the bytes JetStream counted stored and reserved by stream limits, as
	// the newest answer reporting them says (StorageSource names it).
	MaxStorage        int64
	MaxStorageSource  string
	Storage, Reserved uint64
	StorageSource     string
	// StoreDir is the configured JetStream root (store_dir/jetstream).
	StoreDir string
}

// JetStreamAnswer is one captured answer about a server's JetStream.
type JetStreamAnswer struct {
	Time time.Time // zero for an undated answer
	Text string    // what it said, e.g. "/jsz disabled: true"
	File string
	Line int
}

// ref is how a record refers to s: its ID, or for a record made by hand
// without one (a check's small model) its name, which Name resolves to it.
func (s *Server) Ref() ServerID {
	if s.ID == "" {
		return ServerID(s.Name)
	}
	return s.ID
}

// MetaState is the set of assignments one server's meta layer holds.
type MetaState struct {
	Source  string // e.g. "snapshot+wal"
	Streams map[AssetKey]*Assignment
	// SnapshotCorrupt: the meta snapshot fails its checksum, so Streams is
	// only what the WAL holds after it (the server never applies it);
	// AfterSnapshot counts those WAL entries.
	SnapshotCorrupt bool
	AfterSnapshot   int
	// SnapshotTerm and SnapshotIndex: the newest meta snapshot file's (its
	// header, read even when it fails its checksum; 0 with none).
	// SnapshotAssigns: the streams that snapshot alone assigns, before any
	// WAL entry; nil unless it is intact and decoded. Two snapshots of one
	// group at the same index hold the same state.
	SnapshotTerm, SnapshotIndex uint64
	SnapshotAssigns             map[AssetKey]bool
}

// AssetKey names a stream within its account.
type AssetKey struct{ Account, Stream string }

// Assignment is one stream assignment with its consumers.
type Assignment struct {
	Account, Stream string
	Group           string
	Peers           []string
	Replicas        int
	Consumers       map[string][]string // consumer name -> its group's peers
	// ConsumerAssignments: consumer name -> its group and creation.
	ConsumerAssignments map[string]ConsumerAssignment
	// Config is the stream config as the assignment holds it (JSON), to
	// tell which of meta.inf and meta.sum changed when they disagree.
	Config json.RawMessage
	// ConsumerConfigs are the consumers' configs as the assignments hold
	// them (JSON), by consumer name; a consumer without one is absent.
	ConsumerConfigs map[string]json.RawMessage
}

// MetaRemoval is one removeStream or removeConsumer op of a meta WAL.
type MetaRemoval struct {
	Server                    ServerID
	Account, Stream, Consumer string
	Index                     uint64
	File                      string
}

// Stream is one stream and every server's copy of it.
type Stream struct {
	Account, Name string
	Replicas      int
	Group         string
	Copies        []*StreamCopy
	Captured      []OnDisk // per-server figures from captured /jsz
	// ConsumerCaptures are the consumers of every captured /jsz of the
	// stream (consumer-stuck reads the leader's).
	ConsumerCaptures []ConsumerCapture
	// AssignedTo are the servers the meta state assigns the stream to (a
	// peer id no server is known by stands as its own id).
	AssignedTo []ServerID
	// WALSeqs: per server, the sequences of stream messages its copy of
	// the stream's raft WAL holds (what an extract finds there).
	WALSeqs map[ServerID][]report.Range
	// WALPending: per server, the sequences of stream messages in its WAL
	// entries past the group's newest snapshot: what it applies at its next
	// start (pendingQuorum).
	WALPending map[ServerID][]report.Range
	// Comparison is how the copies compare message by message; nil with
	// fewer than two readable copies.
	Comparison *ReplicaComparison
	// Links are the stream's mirror or sources (meta.inf, /jsz config)
	// with what each server's /jsz says of them; Created is when each
	// server says the stream was created (meta.inf Created, /jsz created):
	// a stream deleted and made again under its name has a new one.
	Links   []*StreamLink
	Created []CreatedAt
}

// StreamLink is a stream's mirror or one of its sources.
type StreamLink struct {
	Kind   string // "mirror" or "source"
	Origin string // the origin stream's name
	// API is the external API prefix ("$JS.<domain>.API" for another
	// JetStream domain, an import of another account), "" for the same
	// account and domain.
	API string
	// From says where the config was read (meta.inf of a copy, /jsz).
	From string
	// States are what each server's /jsz said of it.
	States []LinkState
}

// LinkState is one server's /jsz view of a mirror or source.
type LinkState struct {
	Server ServerID
	Lag    uint64
	// Seq is the last origin sequence taken (2.15+, sources only; 0 when
	// not reported).
	Seq    uint64
	Active time.Duration
	Error  string
	File   string
}

// CreatedAt is one server's word on when a stream was created.
type CreatedAt struct {
	Server ServerID
	Time   time.Time
	From   string // "meta.inf <path>" or "/jsz <file>"
}

// OriginDomain is the JetStream domain a link's API prefix names
// ($JS.<domain>.API), ok false when the prefix names none.
func (l *StreamLink) OriginDomain() (string, bool) {
	const pre, suf = "$JS.", ".API"
	if len(l.API) > len(pre)+len(suf) && l.API[:len(pre)] == pre && l.API[len(l.API)-len(suf):] == suf {
		return l.API[len(pre) : len(l.API)-len(suf)], true
	}
	return "", false
}

// Link returns the stream's link of kind to origin, made on first use.
func (s *Stream) Link(kind, origin, api, from string) *StreamLink {
	for _, l := range s.Links {
		if l.Kind == kind && l.Origin == origin && l.API == api {
			return l
		}
	}
	l := &StreamLink{Kind: kind, Origin: origin, API: api, From: from}
	s.Links = append(s.Links, l)
	return l
}

// StreamCopy is what one server holds of a stream, recomputed from blocks.
type StreamCopy struct {
	Server                   ServerID
	Path                     string
	FirstSeq, LastSeq        uint64
	Messages, Bytes, Deleted uint64
	Consumers                []report.Consumer
	// ConsumerStates are the same consumers' ack limits and pending maps
	// (consumer-stuck), in the same order.
	ConsumerStates []ConsumerOnDisk
	Replicas       int
	Encrypted      bool
	// NoMeta: meta.inf is missing, so the server skips the folder at start
	// ("Missing stream metafile"): it never loads the stream, so it never
	// deletes it as an orphan either.
	NoMeta bool
	// Blocks are the message blocks' sequence and time spans, oldest first
	// (what was written when: durability-exposure).
	Blocks []BlockSpan
	// Unreadable: records on disk that fail their checksum, not counted.
	Unreadable []report.Range
	// Resurrected: messages the blocks hold whose deletion this copy's
	// index.db records (their tombstones are gone): deleted, not held, for
	// the replica comparison (storeparse StreamScan.Resurrected).
	Resurrected []storeparse.SeqRange
	// Clustered: the server's store holds raft groups (a _js_ folder); a
	// non-clustered server's stream is never a replica of a cluster's.
	Clustered bool
	// MetaInf and MetaSum are the copy's meta.inf and meta.sum as the scan
	// read them, once (nil when missing or unreadable; MetaInf nil when
	// sealed); MetaSumOK: meta.sum verifies meta.inf. Which of the two
	// changed when they disagree is store-corrupt's call (blameMeta).
	MetaInf, MetaSum []byte
	MetaSumOK        bool
	// Index is index.db as the scan decoded it and held it against the
	// blocks; nil when index.db is missing or unreadable. Whether it
	// disagrees is index-mismatch's call.
	Index *IndexRecord
	// BlockDamage: the scan found a message block of this copy damaged (a
	// store-corrupt finding of its own).
	BlockDamage bool
	// SourceSeq and SourceHeader: the copy's last live message carrying a
	// Nats-Stream-Source header (a sourced stream's), its sequence and
	// the header's value ("<origin>[:<hash>] <origin seq> …").
	SourceSeq    uint64
	SourceHeader string
	// read is the copy's place in the order the stores were read (store,
	// account, folder), which the report keeps.
	Read int
}

// IndexRecord is what a stream copy's index.db says of the stream, and
// where it differs from the blocks (storeparse StreamScan.Mismatches).
type IndexRecord struct {
	File                           string
	FirstSeq, LastSeq, Msgs, Bytes uint64
	Mismatches                     []storeparse.Mismatch
	// Stale: its checksum holds but nats-server does not trust it at start
	// (storeparse IndexCurrent false) and rebuilds from the blocks.
	Stale bool
}

// Group is a raft group and every view of it.
type Group struct {
	Name           string
	Kind           natsfmt.GroupKind
	Account, Asset string
	Views          []View
	History        []HistoryEvent
	// WALSeqs: for a stream group, per server, the sequences of the stream
	// messages its WAL holds that no removal in it takes (what an extract
	// of the stream finds there; Stream.WALSeqs for a stream in a store).
	WALSeqs map[ServerID][]report.Range
}

// View is one server's view of a group, from one source.
type View struct {
	GroupView
	// Leader as this view knows it ("" when none; unknown when !LeaderKnown).
	LeaderKnown bool
	// Alive lists peers this view saw recently (raftz last_seen), by id.
	Alive []string
	// File is the peers.idx this view was read from, with where each id
	// starts in it; VoteFile the tav.idx its vote came from (offset 8).
	File        string
	PeerOffsets map[string]int64
	VoteFile    string
	Time        *time.Time
	// StartPeers and StartSize are the peer state of the group's newest
	// valid snapshot (StartFile) where it differs from this peers.idx view:
	// what a server that starts from the snapshot's peers uses instead
	// (startsFromSnapshotPeers).
	StartPeers []string
	StartSize  int
	StartFile  string
	// Tracked: the peers of Peers that only an add-peer entry of the WAL
	// names (not yet committed, not in peers.idx nor in ClusterSize;
	// trackedPeers).
	Tracked []string
}

// Corruption is a store file problem found by a parser.
type Corruption struct {
	Server          ServerID
	Account, Stream string
	File            string // relative to the bundle
	Offset          int64
	HasOffset       bool
	Seq             uint64
	Kind            natsfmt.CorruptionKind // natsfmt.KindOf the parser error: its sentinel and structure
	Structure       binfmt.Structure       // what failed, as the parser's reader stamped it
	Replicas        int                    // the stream's replicas when known
	Message         string
	Lost            []report.Range // every sequence this damage costs the copy
	// Evidence says what the server does with the damage on its next
	// start; beside the figures, not part of them.
	Evidence []string
	// Next is what the server does with the damage on its next start, as
	// data (report.Finding.Next).
	Next []report.ServerNext
	// IndexDB is the copy's index.db when it is the only record of what
	// the damaged file held (a remedy must not remove it).
	IndexDB string
	// SnapshotPeers: for a damaged peers.idx, the group's newest snapshot
	// when its peer state is readable (what 2.12.5+ and 2.14+ start from).
	SnapshotPeers string
	// EmptyFolder: a stream folder holding nothing at all (no meta.inf, no
	// blocks); the server warns and skips it, nothing is lost.
	EmptyFolder bool
	// FieldErrors: meta.inf is JSON whose fields have the wrong type
	// (Message lists them).
	FieldErrors bool
	// OfDeleted: the damaged record is of a message whose deletion a
	// tombstone or index.db records; it costs no message unless the server
	// rebuilds the block (and is no critical while index.db is current).
	OfDeleted bool
	// Rebuilds: the server rebuilds this block at its next start (index.db
	// missing or stale), cutting it at its first bad record.
	Rebuilds bool
	// Resurrected: deleted messages (index.db records their deletion) whose
	// tombstones this damage took: the rebuild at the next start serves
	// them again. Costs no message; Lost is empty.
	Resurrected []report.Range
	// BadRecord: a block record whose checksum fails, its framing intact, of
	// sequence BadSeq; IndexCurrent: the copy's index.db is current, so the
	// server trusts it at its next start rather than rebuild the block.
	BadRecord    bool
	BadSeq       uint64
	IndexCurrent bool
	// RebuildCut is what a rebuild of the block drops from this, its first
	// bad record, on (nil when it is not the first or nothing goes).
	RebuildCut *RebuildCut
	// Unproven: a rule of what the server never writes that no fixture
	// proves for the server's release line (check_raft_files.go): info,
	// the finding says it cannot tell.
	Unproven bool
}

// RebuildCut is where a rebuild truncates a block with a bad record, and
// what goes with it: the sequences, of which Msgs intact messages.
type RebuildCut struct {
	Offset int64
	Lost   report.Range
	Msgs   uint64
}

// MetaLeaderState is one observation of a server's meta leader: Leader is ""
// when the server says it has none.
type MetaLeaderState struct {
	Time     time.Time
	Server   ServerID
	Leader   string
	Source   string
	Timeline int // index into Model.Timeline, -1 if none
}

// MetaFounding is a meta group founded by a server: its first meta leader
// and the peers it knew then.
type MetaFounding struct {
	Time   time.Time
	Server ServerID
	Leader string
	Peers  []string
	Source string
}

// GroupView is one server's view of a raft group: report.GroupView with
// the server by id.
type GroupView struct {
	Server      ServerID
	ClusterSize int
	Quorum      int
	Term        uint64
	VotedFor    string
	Applied     uint64
	Commit      uint64
	Leader      string
	Peers       []string
	Source      string
}

// HistoryEvent is one peer-set or term change: report.HistoryEvent with
// the server by id.
type HistoryEvent struct {
	Time   *time.Time
	Term   uint64
	Index  uint64
	Event  string
	Peer   string
	Peers  []string
	Server ServerID
	Source string
}

// TimelineEvent is one dated event or run of events:
// report.TimelineEvent with the server by id.
type TimelineEvent struct {
	Time    time.Time
	Server  ServerID
	Source  string
	Kind    string
	Group   string
	Account string
	Stream  string
	Text    string
	File    string
	Line    int
	Count   int
	Until   *time.Time
}

// LogStream is the last line of a server's log that shows it holding a
// stream, with the count a "Restored N messages" line gives (logscan's msgs
// field); Restored is nil for other lines.
type LogStream struct {
	TimelineEvent
	Restored *uint64
}

// OnDisk is one server's figures of a stream: report.OnDisk with the
// server by id.
type OnDisk struct {
	Server     ServerID
	FirstSeq   uint64
	LastSeq    uint64
	Messages   uint64
	Bytes      uint64
	Deleted    uint64
	Path       string
	Source     string
	Consumers  []report.Consumer
	Unreadable []report.Range
}

// Name is the name of the server id refers to now, following merges; an
// id no server record has (a peer id no name hashes to, a small model
// built by a test) is its own name.
func (m *Model) Name(id ServerID) string {
	if s := m.ServerOf(id); s != nil {
		return s.Name
	}
	return string(m.canon(id))
}

// canon is the id id resolves to after merges: the id of a record in
// Servers, or id itself when none.
func (m *Model) canon(id ServerID) ServerID {
	for seen := 0; seen <= len(m.Merged); seen++ {
		next, ok := m.Merged[id]
		if !ok {
			break
		}
		id = next
	}
	return id
}

// same says whether two ids name the same server now.
func (m *Model) Same(a, b ServerID) bool { return m.Name(a) == m.Name(b) }

// sortedNames are the names of ids, sorted.
func SortedNames(m *Model, ids []ServerID) []string {
	out := m.Names(ids)
	sort.Strings(out)
	return out
}

// serverOf returns the server record id refers to, or nil. An id no
// record has is its own name (see Name): the record of that name, if any.
func (m *Model) ServerOf(id ServerID) *Server {
	if id == "" {
		return nil
	}
	id = m.canon(id)
	for _, s := range m.Servers {
		if s.ID == id {
			return s
		}
	}
	return m.Server(string(id))
}

// Names resolves ids to names, in the order given.
func (m *Model) Names(ids []ServerID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = m.Name(id)
	}
	return out
}

// newID is the id of a server record made under name: the name, unless a
// record (kept or merged) already has it as its id.
func (m *Model) NewID(name string) ServerID {
	taken := func(id ServerID) bool {
		if _, ok := m.Merged[id]; ok {
			return true
		}
		for _, s := range m.Servers {
			if s.ID == id {
				return true
			}
		}
		return false
	}
	id := ServerID(name)
	for n := 2; taken(id); n++ {
		id = ServerID(fmt.Sprintf("%s#%d", name, n))
	}
	return id
}

// reportView is v as the report says it, by name.
func (m *Model) ReportView(v View) report.GroupView {
	return report.GroupView{Server: m.Name(v.Server), ClusterSize: v.ClusterSize, Quorum: v.Quorum, Term: v.Term, VotedFor: v.VotedFor,
		Applied: v.Applied, Commit: v.Commit, Leader: v.Leader, Peers: v.Peers, Source: v.Source, Time: v.Time}
}

// reportOnDisk is d as the report says it, by name.
func (m *Model) ReportOnDisk(d OnDisk) report.OnDisk {
	return report.OnDisk{Server: m.Name(d.Server), FirstSeq: d.FirstSeq, LastSeq: d.LastSeq, Messages: d.Messages, Bytes: d.Bytes,
		Deleted: d.Deleted, Path: d.Path, Source: d.Source, Consumers: d.Consumers, Unreadable: d.Unreadable}
}

// reportEvent is e as the report says it, by name.
func (m *Model) reportEvent(e TimelineEvent) report.TimelineEvent {
	return report.TimelineEvent{Time: e.Time, Server: m.Name(e.Server), Source: e.Source, Kind: e.Kind, Group: e.Group,
		Account: e.Account, Stream: e.Stream, Text: e.Text, File: e.File, Line: e.Line, Count: e.Count, Until: e.Until}
}

// reportTimeline is the timeline as the report says it, by name.
func (m *Model) ReportTimeline() []report.TimelineEvent {
	if m.Timeline == nil {
		return nil
	}
	out := make([]report.TimelineEvent, len(m.Timeline))
	for i, e := range m.Timeline {
		out[i] = m.reportEvent(e)
	}
	return out
}

// idOf is the id of the server named name now: that record's, or, when no
// record has the name, the name itself as an id (what a record made later
// under the name will take).
func (m *Model) IDOf(name string) ServerID {
	if s := m.Server(name); s != nil {
		return s.ID
	}
	return ServerID(name)
}

// server returns the server named name, or nil.
func (m *Model) Server(name string) *Server {
	for _, s := range m.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// serverByID returns the server whose peer id is id, or nil.
func (m *Model) ServerByID(id string) *Server {
	for _, s := range m.Servers {
		if s.PeerID == id {
			return s
		}
	}
	return nil
}

func SortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// serversOf are the server ids keying byServer, by name.
func ServersOf[V any](m *Model, byServer map[ServerID]V) []ServerID {
	out := make([]ServerID, 0, len(byServer))
	for k := range byServer {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return m.Name(out[i]) < m.Name(out[j]) })
	return out
}

// notAsWritten says whether the archive delivered file other than the
// server wrote it: not intact, or in a folder that lost a file to the
// archive (a tar stream that breaks off loses every entry after the torn
// one). What such a file holds is no store damage.
func (m *Model) NotAsWritten(file string) bool {
	return m.Undelivered[file] || m.TornFolders[StoreFolder(file)]
}

// Read is what the bundle reader recognized and could not read, as loading
// found it: counts and paths only, no judgment (coverage makes that).
type Read struct {
	Stores, Logs, Captures, AckLogs int
	// Unread are the files refused or not readable, and those the archive
	// did not deliver intact.
	Unread []report.UnreadFile
	// CutAt is the entry inside which a tar stream ends ("" when it does
	// not): a tar cannot be read past a torn entry, so every entry after it
	// is missing unlisted.
	CutAt string
}

// storeFolder is the stream or raft group folder a store file belongs to:
// the folder above msgs/ or obs/, else the file's own folder.
func StoreFolder(p string) string {
	dir := path.Dir(p)
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		switch path.Base(d) {
		case "msgs", "obs", "snapshots":
			return path.Dir(d)
		}
		if strings.HasSuffix(path.Dir(d), "/streams") || strings.HasSuffix(path.Dir(d), "/_js_") {
			return d
		}
	}
	return dir
}

// merge folds the server record from into into (two records found to be
// one server): into takes from's store, liveness and sources, from leaves
// Servers, and its id resolves to into's from now on.
func (m *Model) Merge(from, into *Server) {
	if from.StoreDir != "" {
		into.StoreDir = from.StoreDir
		into.Meta = from.Meta
	}
	into.Alive = into.Alive || from.Alive
	for k := range from.Sources {
		into.Sources[k] = true
	}
	m.Servers = slices.DeleteFunc(m.Servers, func(s *Server) bool { return s == from })
	if m.Merged == nil {
		m.Merged = map[ServerID]ServerID{}
	}
	m.Merged[from.ID] = into.ID
}

// pendingQuorum is the sequences that a quorum of the stream's replicas
// hold in their WAL past their snapshot (Stream.WALPending): committed
// entries every server applies at its next start, once a leader (which
// holds them, having the longest log of a quorum) commits them again.
// Seen on v2.15.3 after all three servers were killed under load
// (testdata/perturbed/perturbed-crash-*): every server served them.
func (st *Stream) PendingQuorum() []report.Range {
	q := max(st.Replicas, len(st.AssignedTo))/2 + 1
	if len(st.WALPending) < q {
		return nil
	}
	type edge struct {
		at    uint64
		delta int
	}
	var es []edge
	for _, rs := range st.WALPending {
		for _, r := range rs {
			es = append(es, edge{r.First, 1}, edge{r.Last + 1, -1})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].at < es[j].at || es[i].at == es[j].at && es[i].delta < es[j].delta })
	var out []report.Range
	n := 0
	for i, e := range es {
		n += e.delta
		if n >= q && i+1 < len(es) && es[i+1].at > e.at {
			out = append(out, report.Range{First: e.at, Last: es[i+1].at - 1})
		}
	}
	return seqset.Of(out...)
}

// pendingBeyondBlocks is pendingQuorum less what every copy's blocks hold.
func (st *Stream) PendingBeyondBlocks(m *Model) []report.Range {
	pend := seqset.Set(st.PendingQuorum())
	var out seqset.Set
	for _, c := range st.Copies {
		lacks := seqset.Set(CopyMissing(m, st, c)).Union(seqset.Set{{First: c.LastSeq + 1, Last: ^uint64(0) - 1}})
		out = out.Union(pend.Intersect(lacks))
	}
	return out
}

// stream is the model's stream account > name: through the index the
// loader's last step builds, or a scan for a model built by hand.
func (m *Model) Stream(account, name string) *Stream {
	if m.StreamsByKey != nil {
		return m.StreamsByKey[AssetKey{account, name}]
	}
	for _, st := range m.Streams {
		if st.Account == account && st.Name == name {
			return st
		}
	}
	return nil
}

// assignedGroup is the raft group any server's meta state assigns the
// stream, "" if none.
func (m *Model) AssignedGroup(account, name string) string {
	for _, s := range m.Servers {
		if s.Meta == nil {
			continue
		}
		if a := s.Meta.Streams[AssetKey{account, name}]; a != nil && a.Group != "" {
			return a.Group
		}
	}
	return ""
}

// copyMissing are the sequences up to its last one that copy c of st lacks
// through damage: records failing their checksum and what damage to its
// files cost (Corruption.Lost).
func CopyMissing(m *Model, st *Stream, c *StreamCopy) []report.Range {
	missing := append([]report.Range(nil), c.Unreadable...)
	for _, k := range m.Corruptions {
		if k.Server == c.Server && k.Account == st.Account && k.Stream == st.Name {
			missing = append(missing, k.Lost...)
		}
	}
	return seqset.Of(missing...)
}
