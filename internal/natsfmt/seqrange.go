package natsfmt

import "github.com/jsforensics/jsforensics/seqset"

// SeqRange is the inclusive range First..Last of stream sequences (or raft
// indexes): seqset.Range, the one range type of the project, which parsers
// return and the report prints.
type SeqRange = seqset.Range
