// Package natsfmt holds the nats-server encodings that more than one parser
// reads: the message-block record frame and its checksum (a raft WAL is a
// filestore too), the AVL seqset, consumer state (o.dat and consumer
// snapshots), the S2 block and stream formats, raft peer ids and the quorum
// rule, sequence ranges, and the names of the structures and corruption kinds
// that errors and findings carry.
//
// It sits between internal/binfmt (format-agnostic: cursor, CorruptError,
// bounded reads, HighwayHash) and the parsers (storeparse, raftlog, capture),
// which import it instead of decoding these formats themselves. It imports
// only the standard library, klauspost/compress, highwayhash (through
// binfmt) and binfmt. The formats are documented in FORMAT.md.
package natsfmt
