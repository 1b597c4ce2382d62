// Package report is the model of jsforensics' output, the v1 JSON contract in
// shared/spec/report-v1.md, and its renderers (JSON, text, Markdown; xlsx in
// report/xlsx). It imports no parser: the analysis fills these types.
package report

import (
	"fmt"
	"time"

	"github.com/jsforensics/jsforensics/seqset"
)

// Schema names the contract version; bump it only when a field is renamed or dropped.
const Schema = "jsforensics.report/v1"

// Severity of a finding.
type Severity string

const (
	Critical Severity = "critical"
	Warning  Severity = "warning"
	Info     Severity = "info"
)

// Rank orders severities, most severe first.
func (s Severity) Rank() int {
	switch s {
	case Critical:
		return 0
	case Warning:
		return 1
	case Info:
		return 2
	}
	return 3
}

// Report is the whole output of one analysis.
type Report struct {
	Schema      string          `json:"schema"`
	ToolVersion string          `json:"tool_version"`
	Bundle      string          `json:"bundle"`
	Servers     []Server        `json:"servers"`
	Groups      []Group         `json:"groups"`
	Streams     []Stream        `json:"streams"`
	Timeline    []TimelineEvent `json:"timeline"`
	Findings    []Finding       `json:"findings"`
	// Diagnosis links the findings into causes and consequences: what
	// happened and what to do first, cause by cause. Added field.
	Diagnosis []Cause `json:"diagnosis,omitempty"`
	// Checks says, per registered check, whether it judged the bundle:
	// passed, failed (with how many findings), skipped (and why), or not-run
	// (the check broke). Added field.
	Checks []CheckOutcome `json:"checks,omitempty"`
	// Coverage says what was read, what could not be, which checks judged,
	// and why the report may be no verdict on the bundle. Added field.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Histories are the bundle's client histories (Jepsen EDN), each as
	// the public Jepsen report plots it: publish outcomes over the test's
	// time, bucketed, and the nemesis windows. Added field.
	Histories []ClientHistory `json:"histories,omitempty"`
	// Notes are statements about the analysis itself (a server whose name could
	// not be established, a check that could not run). Added field.
	Notes []string `json:"notes,omitempty"`
}

// Cause is one chain of findings: a cause and the consequences it explains.
type Cause struct {
	// Summary says what happened, in one or two sentences naming the
	// figures an operator needs (ids, sizes, servers, streams).
	Summary string `json:"summary"`
	// FirstStep is what to do first; the findings' remedies hold the rest.
	FirstStep string   `json:"first_step,omitempty"`
	Severity  Severity `json:"severity"`
	// Findings index the report's findings, the cause first.
	Findings []int `json:"findings"`
	// TimelineRefs index the timeline: the events behind the whole chain,
	// each once, oldest first.
	TimelineRefs []int `json:"timeline_refs,omitempty"`
}

// CheckOutcome is what one check made of the bundle.
type CheckOutcome struct {
	Code     string `json:"code"`
	Outcome  string `json:"outcome" jsonschema:"enum=passed,enum=failed,enum=skipped,enum=not-run"` // passed, failed, skipped, not-run
	Reason   string `json:"reason,omitempty"`
	Findings int    `json:"findings,omitempty"`
	// Skipped lists the parts of the bundle the check could not judge.
	Skipped []string `json:"skipped,omitempty"`
	// NatscliCode is the code of natscli's `nats audit analyze` check this
	// check computes (SERVER_001 …), for the checks that do. Added field.
	NatscliCode string `json:"natscli_code,omitempty"`
	// CoveredBy are the codes of this report's own checks whose findings
	// already report what this check found (meta-no-leader for
	// META_002, …): its findings that they cover are left out, and
	// Findings counts only the others. Added field.
	CoveredBy []string `json:"covered_by,omitempty"`
}

// Server is one server found in the bundle, by any source.
type Server struct {
	Name    string   `json:"name"`
	PeerID  string   `json:"peer_id,omitempty"`
	Cluster string   `json:"cluster,omitempty"`
	Version string   `json:"version,omitempty"`
	Sources []string `json:"sources"`
	// NameSource says how the name was established: "folder", "log", "capture",
	// or "unknown" when it could not be and Name is a placeholder. Added field.
	NameSource string `json:"name_source,omitempty"`
}

// Group is one raft group: _meta_, S-…, C-….
type Group struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"` // meta, stream, consumer
	Account string         `json:"account,omitempty"`
	Asset   string         `json:"asset,omitempty"`
	Views   []GroupView    `json:"views"`
	History []HistoryEvent `json:"history"`
}

// GroupView is what one server's own state says of a group.
type GroupView struct {
	Server      string   `json:"server"`
	ClusterSize int      `json:"cluster_size"`
	Quorum      int      `json:"quorum"`
	Term        uint64   `json:"term"`
	VotedFor    string   `json:"voted_for,omitempty"`
	Applied     uint64   `json:"applied,omitempty"`
	Commit      uint64   `json:"commit,omitempty"`
	Leader      string   `json:"leader,omitempty"`
	Peers       []string `json:"peers"`
	Source      string   `json:"source"`
	// Time is when the capture this view was read from was answered, by
	// the answering server's clock; absent for a view read from a store's
	// files and for a capture that carries no time (/raftz). Added field.
	Time *time.Time `json:"time,omitempty"`
}

// HistoryEvent is one peer-set or term change, oldest first.
type HistoryEvent struct {
	Time   *time.Time `json:"time" jsonschema:"nullable"` // null when no source dates it
	Term   uint64     `json:"term,omitempty"`
	Index  uint64     `json:"index,omitempty"`
	Event  string     `json:"event"` // add-peer, remove-peer, peer-state, leader, term
	Peer   string     `json:"peer,omitempty"`
	Peers  []string   `json:"peers,omitempty"`
	Server string     `json:"server,omitempty"`
	Source string     `json:"source"`
}

// Stream is one stream and what each server holds of it.
type Stream struct {
	Account string `json:"account"`
	// AccountName is the name the account's JWT gives it, when Account is
	// a public key (operator mode) and the bundle holds the JWT or a capture
	// naming it. Added field.
	AccountName string   `json:"account_name,omitempty"`
	Name        string   `json:"name"`
	Replicas    int      `json:"replicas,omitempty"`
	Group       string   `json:"group,omitempty"`
	OnDisk      []OnDisk `json:"on_disk"`
	AssignedTo  []string `json:"assigned_to,omitempty"`
	// Captured is each server's own view of the stream in captured /jsz,
	// beside what its blocks hold. Added field.
	Captured []OnDisk `json:"captured,omitempty"`
}

// SourceSealed is OnDisk.Source for a copy encrypted at rest that no key opened.
const SourceSealed = "sealed"

// OnDisk is one server's copy of a stream, recomputed from its message blocks.
type OnDisk struct {
	Server   string `json:"server"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	Deleted  uint64 `json:"deleted"`
	// Path is the stream folder, or the capture file, relative to the
	// bundle. Added field.
	Path string `json:"path,omitempty"`
	// Source is where the figures come from: "blocks" or "jsz", or
	// SourceSealed: encrypted at rest and not opened, figures unknown (0
	// here, not the copy's content). Added field.
	Source string `json:"source,omitempty"`
	// Consumers found in the stream's obs/ folder. Added field.
	Consumers []Consumer `json:"consumers,omitempty"`
	// Unreadable are sequences whose record is on disk but fails its
	// checksum: not in Messages (see the store-corrupt finding). Added field.
	Unreadable []Range `json:"unreadable,omitempty"`
}

// Consumer is one consumer's stored state. Added type.
type Consumer struct {
	Name            string `json:"name"`
	AckFloorStream  uint64 `json:"ack_floor_stream"`
	DeliveredStream uint64 `json:"delivered_stream"`
	Pending         int    `json:"pending"`
	Redelivered     int    `json:"redelivered"`
}

// TimelineEvent is one dated event from a log, raft state or a capture, or
// a run of routine log events: Count events of one kind, server and asset
// from Time to Until, shown by the first one's text, file and line.
type TimelineEvent struct {
	Time    time.Time `json:"time"`
	Server  string    `json:"server,omitempty"`
	Source  string    `json:"source"`
	Kind    string    `json:"kind"`
	Group   string    `json:"group,omitempty"`
	Account string    `json:"account,omitempty"`
	Stream  string    `json:"stream,omitempty"`
	Text    string    `json:"text"`
	File    string    `json:"file,omitempty"`
	Line    int       `json:"line,omitempty"`
	// Count is the number of events of a run (2 or more); absent for one
	// event. Added field.
	Count int `json:"count,omitempty"`
	// Until is the time of a run's last event. Added field.
	Until *time.Time `json:"until,omitempty"`
}

// Summary is the event's text, led for a run by how many events it stands
// for and until when: "(x120 until 2026-11-30T01:29:04.112Z) text".
func (e TimelineEvent) Summary() string {
	if e.Count < 2 || e.Until == nil {
		return e.Text
	}
	return fmt.Sprintf("(x%d until %s) %s", e.Count, e.Until.UTC().Format("2006-01-02T15:04:05.000Z"), e.Text)
}

// Range is an inclusive sequence range: seqset.Range, the parsers' SeqRange,
// so a range found in a store reaches the report without a conversion.
type Range = seqset.Range

// Origin is the known id a corrupt peer id most likely came from.
type Origin struct {
	Peer   string `json:"peer"`
	Server string `json:"server"`
	Bits   int    `json:"bits"`
}

// SplitView is one distinct view of the meta group in a meta-split finding.
type SplitView struct {
	Servers     []string `json:"servers"`
	ClusterSize int      `json:"cluster_size"`
	Peers       []string `json:"peers"`
	Leader      string   `json:"leader,omitempty"`
	Term        uint64   `json:"term,omitempty"`
}

// Finding is one thing the analysis found. Fields that do not apply stay empty
// and are left out of the JSON.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Group    string   `json:"group,omitempty"`
	Server   string   `json:"server,omitempty"`
	Peer     string   `json:"peer,omitempty"`
	Account  string   `json:"account,omitempty"`
	// AccountName is the name the account's JWT gives it (its name claim)
	// when Account is a public key (operator mode) and the bundle holds the
	// JWT (a resolver's folder) or a capture naming it; absent otherwise.
	// Added field.
	AccountName string   `json:"account_name,omitempty"`
	Stream      string   `json:"stream,omitempty"`
	Consumer    string   `json:"consumer,omitempty"`
	File        string   `json:"file,omitempty"`
	Offset      *int64   `json:"offset,omitempty"`
	Seq         uint64   `json:"seq,omitempty"`
	Message     string   `json:"message"`
	Evidence    []string `json:"evidence,omitempty"`
	Remedy      string   `json:"remedy,omitempty"`
	// RemedyID names the remedy catalogue entry Remedy and RemedySteps were
	// rendered from (the catalogue in internal/analysis/remedy/remedies.yaml).
	// Added field.
	RemedyID string `json:"remedy_id,omitempty"`
	// RemedySteps is the remedy as steps, in the order to take them: what
	// the actions destroy, what to save first and how, the actions, how to
	// check the outcome. Remedy is these steps as text. Added field.
	RemedySteps []RemedyStep `json:"remedy_steps,omitempty"`
	// RemedyProven lists the real-server runs that executed this remedy,
	// those without success marked Failed; absent when none did (not
	// proven by execution). Added field.
	RemedyProven []RemedyProof `json:"remedy_proven,omitempty"`

	LikelyOrigin *Origin     `json:"likely_origin,omitempty"`
	ClusterSize  int         `json:"cluster_size,omitempty"`
	Quorum       int         `json:"quorum,omitempty"`
	Reachable    *int        `json:"reachable,omitempty"`
	Missing      []string    `json:"missing,omitempty"`
	Ranges       []Range     `json:"ranges,omitempty"`
	Servers      []string    `json:"servers,omitempty"`
	Views        []SplitView `json:"views,omitempty"`
	Messages     *uint64     `json:"messages,omitempty"`
	Bytes        *uint64     `json:"bytes,omitempty"`
	Since        *time.Time  `json:"since,omitempty"`
	Events       []string    `json:"events,omitempty"`
	// Kind refines a code, e.g. "checksum", "truncated-tail", "encrypted". Added field.
	Kind string `json:"kind,omitempty"`
	// TimelineRefs index the report's timeline: the events behind this
	// finding, oldest first. Added field.
	TimelineRefs []int `json:"timeline_refs,omitempty"`
	// Count is how many findings of one kind and cause this one stands for
	// (a check's max_examples; the examples are in Evidence); absent for
	// one. Added field.
	Count int `json:"count,omitempty"`
	// Next is what the finding says a server does on its next start, as
	// data a rehearsal (`jsforensics rehearse`) can hold to what the real
	// server does. Added field.
	Next []ServerNext `json:"server_next,omitempty"`
}

// ServerNext is one thing a server does on its next start.
type ServerNext struct {
	Server string `json:"server"`
	// Does is what it does: deletes-stream (its copy of the stream, as an
	// orphan or as not placed on it) or refuses-jetstream (JetStream does
	// not start).
	Does    string `json:"does" jsonschema:"enum=deletes-stream,enum=refuses-jetstream"`
	Account string `json:"account,omitempty"`
	Stream  string `json:"stream,omitempty"`
	// Release is the nats-server release the statement is for.
	Release string `json:"release,omitempty"`
}

// What a server does next (ServerNext.Does).
const (
	NextDeletesStream    = "deletes-stream"
	NextRefusesJetStream = "refuses-jetstream"
)

// AccountLabel is the finding's account as a reader wants it: "SHOP
// (ACXYZ…)" when AccountName gives the name of an account named by its
// public key, else Account.
func (f Finding) AccountLabel() string {
	if f.AccountName == "" || f.AccountName == f.Account {
		return f.Account
	}
	return f.AccountName + " (" + f.Account + ")"
}

// RemedyStep is one step of a remedy.
type RemedyStep struct {
	// Kind is cost (what the actions destroy), save (what to save first and
	// how), action, verify (how to check the outcome) or note (what not to
	// do, and why).
	Kind string `json:"kind" jsonschema:"enum=cost,enum=save,enum=action,enum=verify,enum=note"`
	Text string `json:"text"`
	// Commands are the exact commands of the step, in order.
	Commands []string `json:"commands,omitempty"`
	// Destructive marks an action that removes, truncates, peer-removes,
	// scales down, moves aside or restarts a server on the state: a save
	// step precedes it.
	Destructive bool `json:"destructive,omitempty"`
	// Refers are the finding codes the step points to, for the analysis to
	// keep the step only where such a finding exists; not part of the
	// contract.
	Refers []string `json:"-"`
	// Removes holds, for each of Commands, the peer id it takes out of the
	// cluster with a server removal ($JS.API.SERVER.REMOVE), "" for a
	// command that removes none; nil when none does. For the analysis to
	// check the removals; not part of the contract.
	Removes []string `json:"-"`
}

// RemedyProof is one real-server run that executed a remedy.
type RemedyProof struct {
	// Version is the nats-server release the run was on.
	Version string `json:"version"`
	Outcome string `json:"outcome"`
	// Failed marks a run that carried the remedy out without success (no
	// meta leader, a stream or messages lost, a stream folder deleted):
	// Outcome says what happened. Added field.
	Failed bool `json:"failed,omitempty"`
	// Variant is the way of the remedy the run carried out, for a remedy
	// that has several (e.g. "for a stream group, by stream peer
	// removal"): a run proves only its own. Empty for a remedy with one
	// way. Added field.
	Variant string `json:"variant,omitempty"`
}

// Ptr returns a pointer to v, for the optional numeric fields of Finding.
func Ptr[T any](v T) *T { return &v }

// CountBySeverity returns how many findings have each severity.
func (r *Report) CountBySeverity() map[Severity]int {
	m := map[Severity]int{}
	for _, f := range r.Findings {
		m[f.Severity]++
	}
	return m
}
