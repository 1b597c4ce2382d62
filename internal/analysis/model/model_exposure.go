package model

import "time"

// SyncSetting is how a server flushes its store to disk, and where that was read.
type SyncSetting struct {
	Interval time.Duration
	Always   bool
	Source   string
}

// Exposure is one unclean stop of a server and the streams written in the
// sync interval before it.
type Exposure struct {
	Server   ServerID
	Stop     time.Time
	Timeline int // index of the unclean-stop event
	Sync     SyncSetting
	Streams  []ExposedStream
}

// ExposedStream is a stream copy whose blocks hold messages timestamped in
// the window (counted by block: a block that spans the window's start
// counts whole).
type ExposedStream struct {
	Account, Stream   string
	Path              string
	Replicas          int
	Messages          uint64
	FirstSeq, LastSeq uint64
}

// BlockSpan is one message block's live messages and the sequences and
// times they span.
type BlockSpan struct {
	FirstSeq, LastSeq uint64
	FirstTS, LastTS   int64
	Msgs              uint64
}
