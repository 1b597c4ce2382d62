package raftlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// OpCode is the first byte of every EntryNormal payload (jetstream_cluster.go
// entryOp; values appended over versions, never renumbered).
type OpCode uint8

// Entry ops.
const (
	OpAssignStream             OpCode = 0  // _meta_: JSON streamAssignment
	OpAssignConsumer           OpCode = 1  // _meta_: JSON consumerAssignment
	OpRemoveStream             OpCode = 2  // _meta_: JSON streamAssignment
	OpRemoveConsumer           OpCode = 3  // _meta_: JSON consumerAssignment
	OpStreamMsg                OpCode = 4  // stream group: binary message
	OpPurgeStream              OpCode = 5  // stream group: JSON streamPurge
	OpDeleteMsg                OpCode = 6  // stream group: JSON streamMsgDelete
	OpUpdateDelivered          OpCode = 7  // consumer group: dseq, sseq, dc, ts
	OpUpdateAcks               OpCode = 8  // consumer group: dseq, sseq
	OpAssignCompressedConsumer OpCode = 9  // _meta_: S2 stream of JSON consumerAssignment
	OpUpdateSkip               OpCode = 10 // consumer group: LE u64 seq
	OpUpdateStream             OpCode = 11 // _meta_: JSON streamAssignment
	OpAddPendingRequest        OpCode = 12 // consumer group: reply subject
	OpRemovePendingRequest     OpCode = 13 // consumer group: reply subject
	OpCompressedStreamMsg      OpCode = 14 // stream group: S2 block of op 4's body
	OpDeleteRange              OpCode = 15 // stream group (2.15.2 flag) / catch-up: JSON {First, Num}
	OpBatchMsg                 OpCode = 16 // stream group, v2.12+: batch header + op 4/14
	OpBatchCommitMsg           OpCode = 17 // stream group, v2.12+: same, commits the batch
	OpResetSeq                 OpCode = 18 // consumer group, v2.15.2: LE u64 seq + reply
)

var opNames = [...]string{
	"assignStream", "assignConsumer", "removeStream", "removeConsumer",
	"streamMsg", "purgeStream", "deleteMsg", "updateDelivered", "updateAcks",
	"assignCompressedConsumer", "updateSkip", "updateStream",
	"addPendingRequest", "removePendingRequest", "compressedStreamMsg",
	"deleteRange", "batchMsg", "batchCommitMsg", "resetSeq",
}

func (o OpCode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("unknown(%d)", uint8(o))
}

// MarshalText makes ops print by name in JSON.
func (o OpCode) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Known reports whether o is an op some checked version writes.
func (o OpCode) Known() bool { return o <= OpResetSeq }

// IsMeta reports whether o belongs in the _meta_ group (the only ops
// applyMetaEntries accepts).
func (o OpCode) IsMeta() bool {
	switch o {
	case OpAssignStream, OpAssignConsumer, OpRemoveStream, OpRemoveConsumer, OpAssignCompressedConsumer, OpUpdateStream:
		return true
	}
	return false
}

// IsStream reports whether o belongs in a stream group.
func (o OpCode) IsStream() bool {
	switch o {
	case OpStreamMsg, OpPurgeStream, OpDeleteMsg, OpCompressedStreamMsg, OpDeleteRange, OpBatchMsg, OpBatchCommitMsg:
		return true
	}
	return false
}

// IsConsumer reports whether o belongs in a consumer group.
func (o OpCode) IsConsumer() bool {
	switch o {
	case OpUpdateDelivered, OpUpdateAcks, OpUpdateSkip, OpAddPendingRequest, OpRemovePendingRequest, OpResetSeq:
		return true
	}
	return false
}

// StreamMsg is a replicated stream message (ops 4 and 14, and inside 16/17).
type StreamMsg struct {
	// LSeq is the leader's last sequence before this message; the message
	// is stored at LSeq+1.
	LSeq    uint64 `json:"lseq"`
	TS      int64  `json:"ts"`
	Subject string `json:"subject"`
	Reply   string `json:"reply,omitempty"`
	Header  []byte `json:"header,omitempty"`
	Data    []byte `json:"data,omitempty"`
	Flags   uint64 `json:"flags"`
	// Sourced is flag bit 0 (message from a source or mirror).
	Sourced bool `json:"sourced"`
	// Compressed is true for op 14 (the body was an S2 block).
	Compressed bool `json:"compressed"`
}

// Seq is the stream sequence the message is stored at.
func (m *StreamMsg) Seq() uint64 { return m.LSeq + 1 }

// BatchInfo is the header of ops 16 and 17.
type BatchInfo struct {
	ID      string `json:"id"`
	Seq     uint64 `json:"seq"`
	Commit  bool   `json:"commit"`
	InnerOp OpCode `json:"inner_op"`
}

// StreamPurge is op 5 (jetstream_cluster.go streamPurge).
type StreamPurge struct {
	Client  *ClientInfo     `json:"client,omitempty"`
	Stream  string          `json:"stream"`
	LastSeq uint64          `json:"last_seq"`
	Subject string          `json:"subject"`
	Reply   string          `json:"reply"`
	Request json.RawMessage `json:"request,omitempty"`
}

// MsgDelete is op 6 (jetstream_cluster.go streamMsgDelete).
type MsgDelete struct {
	Client  *ClientInfo `json:"client,omitempty"`
	Stream  string      `json:"stream"`
	Seq     uint64      `json:"seq"`
	NoErase bool        `json:"no_erase,omitempty"`
	Subject string      `json:"subject"`
	Reply   string      `json:"reply"`
}

// DeleteRange is op 15 (store.go DeleteRange): First … First+Num-1.
type DeleteRange struct {
	First uint64 `json:"First"`
	Num   uint64 `json:"Num"`
}

// DeliveredUpdate is op 7.
type DeliveredUpdate struct {
	DSeq          uint64 `json:"dseq"`
	SSeq          uint64 `json:"sseq"`
	DeliveryCount uint64 `json:"dc"`
	TS            int64  `json:"ts"`
}

// AckUpdate is op 8.
type AckUpdate struct {
	DSeq uint64 `json:"dseq"`
	SSeq uint64 `json:"sseq"`
}

// Op is a decoded EntryNormal payload. Exactly the field for Code is set
// (Reply for 12, 13 and 18; Seq for 10 and 18). Unknown ops keep their body
// in Raw.
type Op struct {
	Code   OpCode `json:"op"`
	Offset int64  `json:"offset"`

	Stream      *StreamAssignment   `json:"stream_assignment,omitempty"`
	Consumer    *ConsumerAssignment `json:"consumer_assignment,omitempty"`
	Msg         *StreamMsg          `json:"msg,omitempty"`
	Batch       *BatchInfo          `json:"batch,omitempty"`
	Purge       *StreamPurge        `json:"purge,omitempty"`
	Delete      *MsgDelete          `json:"delete,omitempty"`
	DeleteRange *DeleteRange        `json:"delete_range,omitempty"`
	Delivered   *DeliveredUpdate    `json:"delivered,omitempty"`
	Ack         *AckUpdate          `json:"ack,omitempty"`
	Seq         uint64              `json:"seq,omitempty"`
	Reply       string              `json:"reply,omitempty"`
	Raw         []byte              `json:"raw,omitempty"`
}

// MaxStreamMsgBody bounds the decoded body of op 14. A stream message is at
// most max_payload (64 MiB at the very most) plus subject and headers.
const MaxStreamMsgBody = 80 << 20

// MaxAssignmentJSON bounds op 9's decompressed JSON.
const MaxAssignmentJSON = 64 << 20

// DecodeOp decodes an EntryNormal payload whose first byte (the op) is at
// file offset base. Unknown ops are returned with their body in Raw and no
// error.
func DecodeOp(file string, base int64, b []byte) (*Op, error) {
	v, err := decodeOp(file, base, b)
	return v, binfmt.Stamp(err, natsfmt.StructEntryOp)
}

func decodeOp(file string, base int64, b []byte) (*Op, error) {
	if len(b) == 0 {
		return nil, binfmt.Errorf(file, base, binfmt.ErrTruncated, "empty entry has no op byte")
	}
	op := &Op{Code: OpCode(b[0]), Offset: base}
	body, boff := b[1:], base+1
	var err error
	switch op.Code {
	case OpAssignStream, OpRemoveStream, OpUpdateStream:
		op.Stream = &StreamAssignment{}
		if err = decodeJSON(file, boff, body, op.Stream); err == nil {
			err = jsonFill(file, boff, op.Stream.fill())
		}
	case OpAssignConsumer, OpRemoveConsumer:
		op.Consumer = &ConsumerAssignment{}
		if err = decodeJSON(file, boff, body, op.Consumer); err == nil {
			err = jsonFill(file, boff, op.Consumer.fill())
		}
	case OpAssignCompressedConsumer:
		var js []byte
		if js, err = natsfmt.DecodeS2Stream(file, boff, bytes.NewReader(body), int64(len(body)), MaxAssignmentJSON); err == nil {
			op.Consumer = &ConsumerAssignment{}
			// Offsets inside the decompressed JSON do not map to the file:
			// report the op's body offset.
			if err = decodeJSON(file, boff, js, op.Consumer); err == nil {
				err = jsonFill(file, boff, op.Consumer.fill())
			} else {
				var ce *binfmt.CorruptError
				if errors.As(err, &ce) {
					ce.Offset = boff
				}
			}
		}
	case OpStreamMsg:
		op.Msg, err = decodeStreamMsg(file, boff, body, false)
	case OpCompressedStreamMsg:
		op.Msg, err = decodeCompressedStreamMsg(file, boff, body)
	case OpBatchMsg, OpBatchCommitMsg:
		op.Batch, op.Msg, err = decodeBatch(file, boff, body, op.Code == OpBatchCommitMsg)
	case OpPurgeStream:
		op.Purge = &StreamPurge{}
		err = decodeJSON(file, boff, body, op.Purge)
	case OpDeleteMsg:
		op.Delete = &MsgDelete{}
		err = decodeJSON(file, boff, body, op.Delete)
	case OpDeleteRange:
		op.DeleteRange = &DeleteRange{}
		err = decodeJSON(file, boff, body, op.DeleteRange)
	case OpUpdateDelivered:
		d := binfmt.NewDecbuf(file, boff, body)
		op.Delivered = &DeliveredUpdate{DSeq: d.Uvarint(), SSeq: d.Uvarint(), DeliveryCount: d.Uvarint(), TS: d.Varint()}
		err = d.Err()
	case OpUpdateAcks:
		d := binfmt.NewDecbuf(file, boff, body)
		op.Ack = &AckUpdate{DSeq: d.Uvarint(), SSeq: d.Uvarint()}
		err = d.Err()
	case OpUpdateSkip:
		d := binfmt.NewDecbuf(file, boff, body)
		op.Seq = d.U64()
		err = d.Err()
	case OpAddPendingRequest, OpRemovePendingRequest:
		op.Reply = string(body)
	case OpResetSeq:
		d := binfmt.NewDecbuf(file, boff, body)
		op.Seq = d.U64()
		op.Reply = string(d.Rest())
		err = d.Err()
	default:
		op.Raw = body
	}
	return op, err
}

func decodeJSON(file string, off int64, b []byte, v any) error {
	err := json.Unmarshal(b, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return binfmt.Errorf(file, off+se.Offset, binfmt.ErrFormat, "JSON: %v", err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return binfmt.Errorf(file, off+te.Offset, binfmt.ErrFormat, "JSON: %v", err)
	}
	return binfmt.Errorf(file, off, binfmt.ErrFormat, "JSON: %v", err)
}

func jsonFill(file string, off int64, err error) error {
	if err == nil {
		return nil
	}
	return binfmt.Errorf(file, off, binfmt.ErrFormat, "config JSON: %v", err)
}

// Stream message body (after the op byte; jetstream_cluster.go
// encodeStreamMsgAllowCompressAndBatch, decodeStreamMsg):
//
//	lseq u64 | ts u64 | u16 subjLen, subject | u16 replyLen, reply |
//	u16 hdrLen, header | u32 msgLen, payload | uvarint flags (optional)
func decodeStreamMsg(file string, off int64, b []byte, compressed bool) (*StreamMsg, error) {
	d := binfmt.NewDecbuf(file, off, b)
	m := &StreamMsg{Compressed: compressed}
	m.LSeq = d.U64()
	m.TS = int64(d.U64())
	m.Subject = string(d.Bytes(int(d.U16())))
	m.Reply = string(d.Bytes(int(d.U16())))
	m.Header = d.Bytes(int(d.U16()))
	m.Data = d.Bytes(int(d.U32()))
	if d.Err() != nil {
		return m, d.Err()
	}
	if d.Len() > 0 {
		m.Flags = d.Uvarint()
		m.Sourced = m.Flags&1 != 0
	}
	return m, d.Err()
}

func decodeCompressedStreamMsg(file string, off int64, b []byte) (*StreamMsg, error) {
	raw, err := natsfmt.DecodeS2Block(file, off, b, MaxStreamMsgBody)
	if err != nil {
		return nil, err
	}
	m, err := decodeStreamMsg(file, off, raw, true)
	if err != nil {
		// Offsets inside the decompressed body do not map to the file.
		var ce *binfmt.CorruptError
		if errors.As(err, &ce) {
			ce.Offset = off
			ce.Err = fmt.Errorf("in S2-decoded body: %w", ce.Err)
		}
	}
	return m, err
}

// Batch header (ops 16, 17; decodeBatchMsg): u16 idLen, id, uvarint seq,
// inner op (4 or 14), inner body.
func decodeBatch(file string, off int64, b []byte, commit bool) (*BatchInfo, *StreamMsg, error) {
	d := binfmt.NewDecbuf(file, off, b)
	bi := &BatchInfo{Commit: commit}
	bi.ID = string(d.Bytes(int(d.U16())))
	bi.Seq = d.Uvarint()
	innerOff := d.Offset()
	bi.InnerOp = OpCode(d.Byte())
	if d.Err() != nil {
		return bi, nil, d.Err()
	}
	var m *StreamMsg
	var err error
	switch bi.InnerOp {
	case OpStreamMsg:
		m, err = decodeStreamMsg(file, innerOff+1, d.Rest(), false)
	case OpCompressedStreamMsg:
		m, err = decodeCompressedStreamMsg(file, innerOff+1, d.Rest())
	default:
		err = binfmt.Errorf(file, innerOff, binfmt.ErrFormat, "batch inner op %v is not streamMsg or compressedStreamMsg", bi.InnerOp)
	}
	return bi, m, err
}

// DecodeMetaSnapshot decodes the data of a _meta_ snapshot (the snapshot
// file's data, or an EntrySnapshot in the _meta_ WAL): an S2 block of a JSON
// array of stream assignments, each with its "Consumers". Zero bytes means
// no streams and gives an empty, non-nil slice. base is the file offset of
// data[0].
func DecodeMetaSnapshot(file string, base int64, data []byte) ([]*StreamAssignment, error) {
	v, err := decodeMetaSnapshot(file, base, data)
	return v, binfmt.Stamp(err, natsfmt.StructSnapshotData)
}

func decodeMetaSnapshot(file string, base int64, data []byte) ([]*StreamAssignment, error) {
	if len(data) == 0 {
		return []*StreamAssignment{}, nil
	}
	js, err := natsfmt.DecodeS2Block(file, base, data, natsfmt.MaxDecompressed)
	if err != nil {
		return nil, err
	}
	var out []*StreamAssignment
	if err := json.Unmarshal(js, &out); err != nil {
		return nil, binfmt.Errorf(file, base, binfmt.ErrFormat, "meta snapshot JSON (in S2-decoded data): %v", err)
	}
	if out == nil {
		out = []*StreamAssignment{}
	}
	for i, sa := range out {
		if sa == nil {
			return out, binfmt.Errorf(file, base, binfmt.ErrFormat, "meta snapshot stream %d is null", i)
		}
		if err := sa.fill(); err != nil {
			return out, binfmt.Errorf(file, base, binfmt.ErrFormat, "meta snapshot stream %d config: %v", i, err)
		}
	}
	return out, nil
}
