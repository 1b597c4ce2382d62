package model

import "time"

// ConsumerOnDisk is what one stream copy's obs/<consumer> folder holds of a
// consumer that the consumer checks read: meta.inf's ack limits and o.dat's
// pending map, held against the copy's messages.
type ConsumerOnDisk struct {
	Name string
	// MaxAckPending and AckWait are meta.inf's (0 when unset or unreadable);
	// Filtered: the consumer takes a subset of the stream (filter_subject
	// or filter_subjects).
	MaxAckPending int
	AckWait       time.Duration
	Filtered      bool
	// State is false when o.dat is missing or does not decode; the
	// figures below are then zero.
	State               bool
	Delivered, AckFloor uint64 // stream sequences
	Pending             int    // entries of o.dat's pending map
	// PendingGone are pending sequences this copy of the stream no longer
	// holds (deleted, or below its first sequence), the first
	// MaxPendingGone of them; PendingGoneCount counts them all.
	PendingGone      []uint64
	PendingGoneCount int
	File             string // o.dat's path in the bundle
}

// MaxPendingGone bounds ConsumerOnDisk.PendingGone.
const MaxPendingGone = 100

// ConsumerCapture is one server's /jsz consumer_detail of a consumer.
type ConsumerCapture struct {
	Server   ServerID
	Name     string
	Leader   string // cluster.leader as the server names it ("" when none or not clustered)
	Captured time.Time
	File     string
	// From the consumer's config (config=1); zero when absent.
	MaxAckPending  int
	AckWait        time.Duration
	Filtered, Push bool
	HasConfig      bool
	NumAckPending  int
	NumPending     uint64
	NumWaiting     int
	PushBound      bool
	Delivered      uint64     // delivered.stream_seq
	AckFloor       uint64     // ack_floor.stream_seq
	LastDelivered  *time.Time // delivered.last_active
	LastAck        *time.Time // ack_floor.last_active
}

// ConsumerAssignment is what a meta state says of one consumer beside its
// peers: its raft group, whether the group keeps its state in memory, and
// when it was created.
type ConsumerAssignment struct {
	Group   string
	Memory  bool
	Created time.Time
}
