package natsfmt

import (
	"fmt"
	"strconv"
)

// SeqRange is the inclusive range First..Last of stream sequences (or raft
// indexes). It is the one range type of the project: parsers return it and
// the report prints it.
type SeqRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

func (r SeqRange) String() string {
	if r.First == r.Last {
		return strconv.FormatUint(r.First, 10)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}
