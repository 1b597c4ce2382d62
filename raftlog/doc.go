// Package raftlog decodes the raft (NRG) and meta-layer state that nats-server
// keeps under <store>/<system account>/_js_/<group>/: peers.idx, tav.idx,
// commit.idx, snapshot files, the append entries stored in the group's WAL,
// the upper-layer entry payloads (meta ops, stream and consumer group ops),
// the meta snapshot, the stream snapshot and the consumer snapshot.
//
// Every decoder takes bytes (or an io.ReaderAt and a size) and a file name
// used only in errors; there is no package state. Every problem is reported
// as a *CorruptError naming the file and the byte offset.
//
// The WAL of a group is an ordinary filestore; its record framing is read by
// package storeparse and each record (its frame and payload) is handed to
// DecodeWALRecord here, the one place the payload's file offset, the append
// entry and its ops are joined. The byte layouts are documented in
// FORMAT.md.
package raftlog
