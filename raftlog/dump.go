package raftlog

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/jsonl"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// DumpOptions selects the dump output: text lines (default) or one JSON
// object per line.
type DumpOptions struct {
	JSON bool
}

// The Dump functions print every decoded field of one file, for checking a
// verdict against the raw records. They work on broken files: a decoding
// problem is printed as a line ("! …" in text, {"record":"error"} in JSON
// lines, the schema shared by every dump: internal/jsonl) and what could be
// decoded is still printed. They return only write errors.

type dumper struct {
	w   io.Writer
	o   DumpOptions
	jl  *jsonl.Writer // nil for text
	err error
	// noOffsets: offsets count in a decompressed block, not in the file,
	// and are printed as unknown.
	noOffsets bool
}

func newDumper(w io.Writer, file string, o DumpOptions) *dumper {
	d := &dumper{w: w, o: o}
	if o.JSON {
		d.jl = jsonl.New(w, file)
	}
	return d
}

// line prints one record whose offset is unknown or among its fields.
func (d *dumper) line(kind string, text string, v any) { d.lineAt(kind, jsonl.NoOffset, text, v) }

// lineAt prints one record found at byte offset off (jsonl.NoOffset if unknown).
func (d *dumper) lineAt(kind string, off int64, text string, v any) {
	if d.noOffsets {
		off = jsonl.NoOffset
	}
	if d.jl != nil {
		if kind == "error" {
			d.jl.ErrorAt(off, fmt.Sprint(v))
		} else {
			d.jl.Record(kind, off, v)
		}
		return
	}
	if d.err == nil {
		_, d.err = fmt.Fprintln(d.w, text)
	}
}

func (d *dumper) problem(err error) {
	if err == nil {
		return
	}
	if d.jl != nil {
		if d.noOffsets {
			d.jl.ErrorAt(jsonl.NoOffset, err.Error())
		} else {
			d.jl.Error(err)
		}
		return
	}
	d.line("error", "! "+err.Error(), err.Error())
}

// done returns the first write error.
func (d *dumper) done() error {
	if d.jl != nil {
		return d.jl.Err()
	}
	return d.err
}

func (d *dumper) peerState(indent string, ps *PeerState) {
	d.line("peer_state", fmt.Sprintf("%speer state: cluster_size=%d quorum=%d peers=%d domain_ext=%d has_domain_ext=%v trailing=%d",
		indent, ps.ClusterSize, ps.Quorum(), len(ps.Peers), ps.DomainExt, ps.HasDomainExt, ps.Trailing), ps)
	if !d.o.JSON {
		for i, p := range ps.Peers {
			d.line("", fmt.Sprintf("%s  peer %d %q", indent, i, p), nil)
		}
	}
	for _, is := range ps.Check() {
		d.line("peer_issue", fmt.Sprintf("%s  issue %s: %s", indent, is.Kind, is.Detail), is)
	}
}

// DumpPeerState prints a peers.idx.
func DumpPeerState(w io.Writer, file string, b []byte, o DumpOptions) error {
	d := newDumper(w, file, o)
	ps, err := DecodePeerState(file, b)
	if ps != nil {
		d.peerState("", ps)
	}
	d.problem(err)
	return d.done()
}

// DumpTermVote prints a tav.idx.
func DumpTermVote(w io.Writer, file string, b []byte, o DumpOptions) error {
	d := newDumper(w, file, o)
	tv, err := DecodeTermVote(file, b)
	if tv != nil {
		d.line("term_vote", fmt.Sprintf("term=%d has_term=%v vote=%q trailing=%d", tv.Term, tv.HasTerm, tv.Vote, tv.Trailing), tv)
	}
	d.problem(err)
	return d.done()
}

// DumpCommitIndex prints a commit.idx of group.
func DumpCommitIndex(w io.Writer, file, group string, b []byte, o DumpOptions) error {
	d := newDumper(w, file, o)
	ci, err := DecodeCommitIndex(file, group, b)
	if ci != nil {
		d.line("commit", fmt.Sprintf("commit=%d checksum=%x checksum_ok=%v", ci.Commit, ci.Sum, ci.ChecksumOK), ci)
	}
	d.problem(err)
	return d.done()
}

// GroupKind classifies a raft group name: "meta", "stream", "consumer" or "".
func GroupKind(group string) string {
	if k := natsfmt.KindOfGroup(group); k != natsfmt.GroupOther {
		return string(k)
	}
	return ""
}

// DumpSnapshot prints a snapshot file of group: header, peer state, and the
// data decoded by group kind. name is the file's base name, compared with
// the header's term and index.
func DumpSnapshot(w io.Writer, file, name, group string, b []byte, o DumpOptions) error {
	d := newDumper(w, file, o)
	s, err := DecodeSnapshot(file, group, b)
	if s == nil {
		d.problem(err)
		return d.done()
	}
	d.line("snapshot", fmt.Sprintf("snapshot term=%d index=%d checksum=%x checksum_ok=%v data_offset=%d data_len=%d",
		s.Term, s.Index, s.Sum, s.ChecksumOK, s.DataOffset, s.DataLen), s)
	if t, i, ok := ParseSnapshotName(name); ok && (t != s.Term || i != s.Index) {
		d.line("error", fmt.Sprintf("! file name says term %d index %d", t, i), fmt.Sprintf("file name says term %d index %d", t, i))
	}
	d.problem(err)
	if s.PeerState != nil {
		d.peerState("", s.PeerState)
	}
	if s.Data != nil {
		d.snapshotData(file, group, s.DataOffset, s.Data)
	}
	return d.done()
}

func (d *dumper) snapshotData(file, group string, off int64, data []byte) {
	switch GroupKind(group) {
	case "meta":
		sas, err := DecodeMetaSnapshot(file, off, data)
		d.line("meta_snapshot", fmt.Sprintf("meta snapshot: %d streams", len(sas)), map[string]int{"streams": len(sas)})
		for _, sa := range sas {
			d.streamAssignment("  ", "stream", sa)
			for _, ca := range sa.Consumers {
				if ca != nil {
					d.consumerAssignment("    ", "consumer", ca)
				}
			}
		}
		d.problem(err)
	case "stream":
		ss, err := DecodeStreamSnapshot(file, off, data)
		if ss != nil {
			d.streamSnapshot("", ss)
		}
		d.problem(err)
	case "consumer":
		cs, err := DecodeConsumerSnapshot(file, off, data)
		if cs != nil {
			d.consumerSnapshot("", cs)
		}
		d.problem(err)
	default:
		d.line("data", fmt.Sprintf("data: %d bytes (unknown group kind)", len(data)), map[string]int{"bytes": len(data)})
	}
}

func (d *dumper) streamSnapshot(indent string, ss *StreamSnapshot) {
	d.line("stream_snapshot", fmt.Sprintf("%sstream state: version=%d legacy=%v msgs=%d bytes=%d first_seq=%d last_seq=%d failed=%d num_deleted=%d deleted_listed=%d",
		indent, ss.Version, ss.Legacy, ss.Msgs, ss.Bytes, ss.FirstSeq, ss.LastSeq, ss.Failed, ss.NumDeleted, ss.DeletedCount()), ss)
	if d.o.JSON {
		return
	}
	for _, src := range ss.Sources {
		d.line("", fmt.Sprintf("%s  source %q seq=%d ident=%q", indent, src.Name, src.Seq, src.Ident), nil)
	}
	for i := range ss.Deleted {
		b := &ss.Deleted[i]
		var rs []string
		for _, r := range b.Ranges() {
			if r.First == r.Last {
				rs = append(rs, fmt.Sprint(r.First))
			} else {
				rs = append(rs, fmt.Sprintf("%d-%d", r.First, r.Last))
			}
		}
		d.line("", fmt.Sprintf("%s  deleted %s at %d: count=%d size=%d [%s]", indent, b.Kind, b.Offset, b.Count(), b.Size, strings.Join(rs, " ")), nil)
	}
}

func (d *dumper) consumerSnapshot(indent string, cs *ConsumerSnapshot) {
	d.line("consumer_snapshot", fmt.Sprintf("%sconsumer state: version=%d delivered=%d/%d ack_floor=%d/%d pending=%d redelivered=%d",
		indent, cs.Version, cs.Delivered.Consumer, cs.Delivered.Stream, cs.AckFloor.Consumer, cs.AckFloor.Stream, len(cs.Pending), len(cs.Redelivered)), cs)
	if d.o.JSON {
		return
	}
	for _, p := range cs.Pending {
		d.line("", fmt.Sprintf("%s  pending stream_seq=%d consumer_seq=%d ts=%s", indent, p.StreamSeq, p.ConsumerSeq, fmtTS(p.TS)), nil)
	}
	for _, r := range cs.Redelivered {
		d.line("", fmt.Sprintf("%s  redelivered stream_seq=%d count=%d", indent, r.StreamSeq, r.Count), nil)
	}
}

func fmtTS(ns int64) string {
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

func groupText(g *RaftGroup) string {
	if g == nil {
		return "group=<none>"
	}
	return fmt.Sprintf("group=%s peers=%v store=%s cluster=%q preferred=%q", g.Name, g.Peers, g.Storage, g.Cluster, g.Preferred)
}

func clientText(c *ClientInfo) string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf(" account=%q", c.AssetAccount())
	if c.Host != "" || c.Server != "" {
		s += fmt.Sprintf(" by host=%q user=%q server=%q", c.Host, c.User, c.Server)
	}
	return s
}

func (d *dumper) streamAssignment(indent, what string, sa *StreamAssignment) {
	d.line("stream_assignment", fmt.Sprintf("%s%s %q replicas=%d created=%s %s%s", indent, what, sa.Config.Name, sa.Config.Replicas,
		sa.Created.UTC().Format(time.RFC3339Nano), groupText(sa.Group), clientText(sa.Client)), sa)
}

func (d *dumper) consumerAssignment(indent, what string, ca *ConsumerAssignment) {
	d.line("consumer_assignment", fmt.Sprintf("%s%s %q stream=%q replicas=%d created=%s %s%s", indent, what, ca.Name, ca.Stream, ca.Config.Replicas,
		ca.Created.UTC().Format(time.RFC3339Nano), groupText(ca.Group), clientText(ca.Client)), ca)
}

// DumpWALRecord prints one WAL record (DecodeWALRecord) of group: a
// tombstone or erased record as such, else the append entry at its
// payload's offset, its entries and their payloads (decoded by the group's
// kind). A record whose sequence is not its raft index is flagged at the
// record's offset. Offsets inside a compressed block do not map to the
// file and are printed as unknown.
func DumpWALRecord(w io.Writer, group string, r *WALRecord, o DumpOptions) error {
	d := newDumper(w, r.File, o)
	d.noOffsets = r.Compressed
	recOff, payOff := r.Offset, r.PayloadOffset
	switch {
	case r.Tombstone:
		d.lineAt("tombstone", recOff, fmt.Sprintf("seq=%d tombstone (deleted or compacted)", r.Seq), map[string]any{"seq": r.Seq})
		return d.done()
	case r.Erased:
		d.lineAt("erased", recOff, fmt.Sprintf("seq=%d erased", r.Seq), map[string]any{"seq": r.Seq})
		return d.done()
	}
	if ae := r.Entry; ae != nil {
		type aeLine struct {
			Seq uint64 `json:"seq"`
			*AppendEntry
			Index uint64 `json:"index"`
		}
		d.lineAt("append_entry", payOff, fmt.Sprintf("seq=%d index=%d leader=%q term=%d commit=%d pterm=%d pindex=%d entries=%d lterm=%d has_lterm=%v trailing=%d",
			r.Seq, ae.Index(), ae.Leader, ae.Term, ae.Commit, ae.PTerm, ae.PIndex, len(ae.Entries), ae.LTerm, ae.HasLTerm, ae.Trailing),
			aeLine{r.Seq, ae, ae.Index()})
		if r.IndexMismatch() {
			msg := fmt.Sprintf("record seq %d holds raft index %d (pindex+1)", r.Seq, ae.Index())
			d.lineAt("error", recOff, "! "+msg, msg)
		}
		ops := r.Ops
		for i := range ae.Entries {
			var op *WALOp
			if len(ops) > 0 && ops[0].Entry == i {
				op, ops = &ops[0], ops[1:]
			}
			d.entry(r.File, group, &ae.Entries[i], op)
		}
	}
	d.problem(r.Err)
	return d.done()
}

func (d *dumper) entry(file, group string, e *Entry, op *WALOp) {
	const in = "  "
	switch e.Type {
	case EntryNormal:
		if op == nil { // not decoded by DecodeWALRecord
			o, err := DecodeOp(file, e.DataOffset, e.Data)
			op = &WALOp{Offset: e.DataOffset, Op: o, Err: err}
		}
		if op.Op != nil {
			d.op(in, op.Op, group)
		}
		d.problem(op.Err)
	case EntryPeerState:
		ps, err := e.PeerState(file)
		if ps != nil {
			d.peerState(in, ps)
		}
		d.problem(err)
	case EntryAddPeer, EntryRemovePeer, EntryLeaderTransfer:
		p, err := e.Peer(file)
		d.line("entry", fmt.Sprintf("%s%v peer=%q", in, e.Type, p), map[string]any{"type": e.Type, "peer": p, "offset": e.Offset})
		d.problem(err)
	case EntrySnapshot, EntryOldSnapshot:
		d.line("entry", fmt.Sprintf("%s%v %d bytes", in, e.Type, len(e.Data)), map[string]any{"type": e.Type, "bytes": len(e.Data), "offset": e.Offset})
		d.snapshotData(file, group, e.DataOffset, e.Data)
	default:
		d.line("entry", fmt.Sprintf("%s%v %d bytes", in, e.Type, len(e.Data)), e)
	}
}

func (d *dumper) op(in string, op *Op, group string) {
	if k := GroupKind(group); k == "meta" && !op.Code.IsMeta() || k == "stream" && !op.Code.IsStream() || k == "consumer" && !op.Code.IsConsumer() {
		msg := fmt.Sprintf("op %v does not belong in a %s group", op.Code, k)
		d.lineAt("error", op.Offset, in+"! "+msg, msg)
	}
	switch {
	case op.Stream != nil:
		d.streamAssignment(in, op.Code.String(), op.Stream)
	case op.Consumer != nil:
		d.consumerAssignment(in, op.Code.String(), op.Consumer)
	case op.Msg != nil:
		m := op.Msg
		b := ""
		if op.Batch != nil {
			b = fmt.Sprintf(" batch=%q batch_seq=%d commit=%v", op.Batch.ID, op.Batch.Seq, op.Batch.Commit)
		}
		d.line("op", fmt.Sprintf("%s%v seq=%d ts=%s subject=%q reply=%q header=%d data=%d flags=%d compressed=%v%s",
			in, op.Code, m.Seq(), fmtTS(m.TS), m.Subject, m.Reply, len(m.Header), len(m.Data), m.Flags, m.Compressed, b), op)
	case op.Purge != nil:
		d.line("op", fmt.Sprintf("%s%v stream=%q last_seq=%d request=%s%s", in, op.Code, op.Purge.Stream, op.Purge.LastSeq, op.Purge.Request, clientText(op.Purge.Client)), op)
	case op.Delete != nil:
		d.line("op", fmt.Sprintf("%s%v stream=%q seq=%d no_erase=%v%s", in, op.Code, op.Delete.Stream, op.Delete.Seq, op.Delete.NoErase, clientText(op.Delete.Client)), op)
	case op.DeleteRange != nil:
		d.line("op", fmt.Sprintf("%s%v first=%d num=%d", in, op.Code, op.DeleteRange.First, op.DeleteRange.Num), op)
	case op.Delivered != nil:
		x := op.Delivered
		d.line("op", fmt.Sprintf("%s%v dseq=%d sseq=%d dc=%d ts=%s", in, op.Code, x.DSeq, x.SSeq, x.DeliveryCount, fmtTS(x.TS)), op)
	case op.Ack != nil:
		d.line("op", fmt.Sprintf("%s%v dseq=%d sseq=%d", in, op.Code, op.Ack.DSeq, op.Ack.SSeq), op)
	case op.Code == OpUpdateSkip:
		d.line("op", fmt.Sprintf("%s%v seq=%d", in, op.Code, op.Seq), op)
	case op.Code == OpAddPendingRequest || op.Code == OpRemovePendingRequest || op.Code == OpResetSeq:
		d.line("op", fmt.Sprintf("%s%v seq=%d reply=%q", in, op.Code, op.Seq, op.Reply), op)
	default:
		d.line("op", fmt.Sprintf("%s%v %d bytes", in, op.Code, len(op.Raw)), op)
	}
}
