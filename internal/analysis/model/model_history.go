package model

// HistoryMatch is where the values a Jepsen history published are held:
// the stream copies' blocks and the stream groups' raft WALs, looked up by
// payload (a Jepsen client publishes the value as the message's data).
type HistoryMatch struct {
	Log *AckLog
	// Streams holding any of the values, the most values first.
	Streams []*HistoryStream
	// Copies: stream copies whose blocks were searched; Capped: some
	// value was found more often than kept (storeparse.PayloadHit).
	Copies int
	Capped bool
}

// HistoryStream is where one stream holds a history's values.
type HistoryStream struct {
	Stream *Stream
	// Held: value -> the copies (blocks) and WALs holding it.
	Held   map[string][]ValueHeld
	Values int // distinct values held in some copy's blocks
}

// ValueHeld is one place a published value is held.
type ValueHeld struct {
	Server ServerID
	Seq    uint64
	WAL    bool // in the stream group's raft WAL, not in the blocks
}

// InBlocks says whether some copy's blocks hold the value (at seq, when
// seq is not 0).
func (hs *HistoryStream) InBlocks(value string, seq uint64) bool {
	for _, h := range hs.Held[value] {
		if !h.WAL && (seq == 0 || h.Seq == seq) {
			return true
		}
	}
	return false
}
