package storeparse

import (
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// o.dat (consumer state; store.go encodeConsumerState, filestore.go
// decodeConsumerState) is decoded by natsfmt, which raftlog shares for
// consumer snapshots. No checksum. See ../internal/natsfmt/FORMAT.md.
type (
	ConsumerState = natsfmt.ConsumerState
	SeqPair       = natsfmt.SeqPair
	PendingAck    = natsfmt.PendingAck
	Redelivery    = natsfmt.Redelivery
)

// ParseConsumerState decodes o.dat bytes, versions 1 and 2.
func ParseConsumerState(file string, data []byte) (*ConsumerState, error) {
	s, err := natsfmt.DecodeConsumerState(file, 0, data)
	if err == nil && s.Trailing > 0 {
		// o.dat holds the state alone: bytes after it are damage.
		err = binfmt.Errorf(file, int64(len(data)-s.Trailing), binfmt.ErrFormat, "%d bytes after the consumer state", s.Trailing)
	}
	return s, binfmt.Stamp(err, natsfmt.StructConsumerState)
}
