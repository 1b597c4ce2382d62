package raftlog

import (
	"encoding/binary"
	"fmt"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Append entry layout (raft.go (*appendEntry).encode, decodeAppendEntry):
//
//	 0        8        16       24       32       40   42
//	+--------+--------+--------+--------+--------+----+---------------+-------------+
//	| leader | term   | commit | pterm  | pindex | n  | n × entry     | lterm       |
//	| 8 B id | u64 LE | u64 LE | u64 LE | u64 LE |u16 |               | uvarint     |
//	+--------+--------+--------+--------+--------+----+---------------+-------------+
//	entry: u32 LE size (= 1 + len(data)) | u8 type | data
//	lterm: v2.12+ only; v2.10 writes nothing after the last entry.
const (
	appendEntryBaseLen = natsfmt.PeerIDLen + 4*8 + 2 // 42
	entryHeaderLen     = 4 + 1                       // size + type
)

// EntryType is the raft entry type (raft.go EntryType; same values in all
// versions checked).
type EntryType uint8

// Entry types.
const (
	EntryNormal         EntryType = 0
	EntryOldSnapshot    EntryType = 1
	EntryPeerState      EntryType = 2
	EntryAddPeer        EntryType = 3
	EntryRemovePeer     EntryType = 4
	EntryLeaderTransfer EntryType = 5
	EntrySnapshot       EntryType = 6
	EntryCatchup        EntryType = 7 // v2.15.2, internal, never stored
)

var entryTypeNames = [...]string{"Normal", "OldSnapshot", "PeerState", "AddPeer", "RemovePeer", "LeaderTransfer", "Snapshot", "Catchup"}

func (t EntryType) String() string {
	if int(t) < len(entryTypeNames) {
		return entryTypeNames[t]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(t))
}

// Known reports whether t is one of the types a server stores in a WAL
// (EntryCatchup is never stored and so is not "known" here).
func (t EntryType) Known() bool { return t <= EntrySnapshot }

// MarshalText makes entry types print by name in JSON.
func (t EntryType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Entry is one entry of an append entry.
type Entry struct {
	Type EntryType `json:"type"`
	Data []byte    `json:"data"`
	// Offset is the file offset of the entry's size field; DataOffset that
	// of its first data byte.
	Offset     int64 `json:"offset"`
	DataOffset int64 `json:"data_offset"`
}

// AppendEntry is a decoded append entry, as stored in a WAL record.
type AppendEntry struct {
	Leader  string  `json:"leader"`
	Term    uint64  `json:"term"`
	Commit  uint64  `json:"commit"`
	PTerm   uint64  `json:"pterm"`
	PIndex  uint64  `json:"pindex"`
	Entries []Entry `json:"entries"`
	// LTerm is the trailer of v2.12+ ("highest term for catch-ups", 0 =
	// use Term); HasLTerm is false when nothing follows the last entry
	// (v2.10) or what follows is not a uvarint.
	LTerm    uint64 `json:"lterm"`
	HasLTerm bool   `json:"has_lterm"`
	// Trailing counts bytes after the entries and the lterm uvarint.
	Trailing int `json:"trailing,omitempty"`
}

// Index is the raft index of this entry: PIndex + 1. In a WAL it equals
// the record's sequence.
func (ae *AppendEntry) Index() uint64 { return ae.PIndex + 1 }

// DecodeAppendEntry decodes one append entry; base is the file offset of
// b[0] (the WAL record's payload), used in errors. On a malformed entry list
// it returns what it decoded before the fault together with the error.
func DecodeAppendEntry(file string, base int64, b []byte) (*AppendEntry, error) {
	v, err := decodeAppendEntry(file, base, b)
	return v, binfmt.Stamp(err, natsfmt.StructAppendEntry)
}

func decodeAppendEntry(file string, base int64, b []byte) (*AppendEntry, error) {
	d := binfmt.NewDecbuf(file, base, b)
	if d.Len() < appendEntryBaseLen {
		d.Fail(binfmt.ErrTruncated, "append entry needs %d bytes, has %d", appendEntryBaseLen, d.Len())
		return nil, d.Err()
	}
	ae := &AppendEntry{
		Leader: string(d.Bytes(natsfmt.PeerIDLen)),
		Term:   d.U64(),
		Commit: d.U64(),
		PTerm:  d.U64(),
		PIndex: d.U64(),
	}
	countOff := d.Offset()
	n := int(d.U16())
	// Each entry takes at least its 5-byte header: bound the count by that.
	if n > d.Len()/entryHeaderLen {
		return ae, binfmt.Errorf(file, countOff, binfmt.ErrTruncated,
			"%d entries cannot fit in %d bytes", n, d.Len())
	}
	ae.Entries = make([]Entry, 0, n)
	for i := range n {
		off := d.Offset()
		size := d.U32()
		if d.Err() != nil {
			return ae, d.Err()
		}
		if size == 0 {
			return ae, binfmt.Errorf(file, off, binfmt.ErrFormat, "entry %d has size 0", i)
		}
		if uint64(size) > uint64(d.Len()) {
			return ae, binfmt.Errorf(file, off, binfmt.ErrTruncated,
				"entry %d of size %d runs past the end (%d bytes left)", i, size, d.Len())
		}
		t := EntryType(d.Byte())
		dataOff := d.Offset()
		ae.Entries = append(ae.Entries, Entry{Type: t, Data: d.Bytes(int(size) - 1), Offset: off, DataOffset: dataOff})
	}
	if rest := d.Rest(); len(rest) > 0 {
		if v, k := binary.Uvarint(rest); k > 0 {
			ae.LTerm, ae.HasLTerm = v, true
			ae.Trailing = len(rest) - k
		} else {
			ae.Trailing = len(rest)
		}
	}
	return ae, d.Err()
}

// PeerState decodes the data of an EntryPeerState entry.
func (e *Entry) PeerState(file string) (*PeerState, error) {
	if e.Type != EntryPeerState {
		return nil, binfmt.Errorf(file, e.Offset, binfmt.ErrFormat, "entry type %v is not PeerState", e.Type)
	}
	return decodePeerState(file, e.DataOffset, e.Data)
}

// Peer returns the peer id carried by an EntryAddPeer, EntryRemovePeer or
// EntryLeaderTransfer entry (8 bytes).
func (e *Entry) Peer(file string) (string, error) {
	switch e.Type {
	case EntryAddPeer, EntryRemovePeer, EntryLeaderTransfer:
	default:
		return "", binfmt.Errorf(file, e.Offset, binfmt.ErrFormat, "entry type %v carries no peer id", e.Type)
	}
	if len(e.Data) != natsfmt.PeerIDLen {
		return string(e.Data), binfmt.Errorf(file, e.DataOffset, binfmt.ErrFormat,
			"%v peer id is %d bytes, want %d", e.Type, len(e.Data), natsfmt.PeerIDLen)
	}
	return string(e.Data), nil
}
