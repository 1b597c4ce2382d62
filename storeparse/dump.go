package storeparse

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/jsonl"
)

// Dump printers behind `jsforensics dump blk|index|meta|odat`: one line
// per decoded record, as text or as JSON lines (the schema shared by every
// dump, internal/jsonl). They keep going after problems (which are printed
// as "error" lines) so they work on broken files; the returned error is
// only for a failing writer.

// DumpOptions selects the output form.
type DumpOptions struct {
	JSON bool
	// Headers, when set, names what a record's NATS header block holds:
	// JSON fields added to the record and text appended to its line
	// (cmd/jsforensics dump_headers.go). Called only on records with headers.
	Headers func(hdr, data []byte) (fields map[string]any, text string)
}

type dumper struct {
	w   io.Writer
	jl  *jsonl.Writer // nil for text
	err error
}

func newDumper(w io.Writer, file string, o DumpOptions) *dumper {
	d := &dumper{w: w}
	if o.JSON {
		d.jl = jsonl.New(w, file)
	}
	return d
}

// line prints one record; off is its byte offset in the file, or
// jsonl.NoOffset.
func (d *dumper) line(kind string, off int64, v map[string]any, text string) {
	if d.jl != nil {
		d.jl.Record(kind, off, v)
		return
	}
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, "%-8s %s\n", kind, text)
	}
}

func (d *dumper) problem(err error) {
	if d.jl != nil {
		d.jl.Error(err)
		return
	}
	d.line("error", jsonl.NoOffset, nil, err.Error())
}

// done returns the first write error.
func (d *dumper) done() error {
	if d.jl != nil {
		return d.jl.Err()
	}
	return d.err
}

func tsText(ns int64) string {
	if ns == 0 {
		return "0"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// DumpBlock prints every record of a message block.
func DumpBlock(w io.Writer, file string, r io.ReaderAt, size int64, key string, o DumpOptions) error {
	d := newDumper(w, file, o)
	br, err := NewBlockReader(file, r, size, key)
	if err != nil {
		d.problem(err)
		return d.done()
	}
	d.line("block", jsonl.NoOffset, map[string]any{"size": size, "decoded_size": br.Size(), "compressed": br.Compressed(), "key": key},
		fmt.Sprintf("%s size %d decoded %d compressed %v key %q", file, size, br.Size(), br.Compressed(), key))
	n := 0
	for {
		rec, err := br.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			d.problem(err)
			if rec.Len == 0 {
				break
			}
		}
		n++
		var flags []string
		if rec.HasHeaders {
			flags = append(flags, "hdr")
		}
		if rec.Erased {
			flags = append(flags, "erased")
		}
		if rec.Tombstone {
			flags = append(flags, "tombstone")
		}
		if !rec.ChecksumOK {
			flags = append(flags, "badsum")
		}
		fields := map[string]any{"len": rec.Len, "seq": rec.Seq, "ts": rec.TS,
			"subject": string(rec.Subject), "header_len": len(rec.Header), "data_len": len(rec.Data),
			"headers": rec.HasHeaders, "erased": rec.Erased, "tombstone": rec.Tombstone, "checksum_ok": rec.ChecksumOK,
			"checksum": fmt.Sprintf("%x", rec.Sum)}
		text := fmt.Sprintf("off %d len %d seq %d ts %s subj %q hdr %d data %d sum %x %s", rec.Offset, rec.Len, rec.Seq,
			tsText(rec.TS), rec.Subject, len(rec.Header), len(rec.Data), rec.Sum, strings.Join(flags, ","))
		if o.Headers != nil && len(rec.Header) > 0 && !rec.Erased {
			hf, ht := o.Headers(rec.Header, rec.Data)
			for k, v := range hf {
				fields[k] = v
			}
			if ht != "" {
				text += " " + ht
			}
		}
		off := rec.Offset
		if br.Compressed() {
			// Offsets count in the decompressed block, not in the file.
			fields["decoded_offset"], off = rec.Offset, jsonl.NoOffset
		}
		d.line("record", off, fields, text)
	}
	if ro, rs, ok := br.Resync(); ok {
		d.line("resync", ro, map[string]any{"seq": rs}, fmt.Sprintf("next intact record at offset %d seq %d", ro, rs))
	}
	d.line("end", jsonl.NoOffset, map[string]any{"records": n, "good_end": br.GoodEnd(), "torn": br.Torn()},
		fmt.Sprintf("%d records, good end %d, torn %v", n, br.GoodEnd(), br.Torn()))
	return d.done()
}

// DumpIndex prints a decoded index.db.
func DumpIndex(w io.Writer, file string, data []byte, key string, o DumpOptions) error {
	d := newDumper(w, file, o)
	x, err := ParseIndex(file, data, key)
	if err != nil {
		d.problem(err)
	}
	if x == nil {
		return d.done()
	}
	d.line("state", jsonl.NoOffset, map[string]any{"version": x.Version, "messages": x.Msgs, "bytes": x.Bytes, "first_seq": x.FirstSeq, "first_ts": x.FirstTS,
		"last_seq": x.LastSeq, "last_ts": x.LastTS, "last_block": x.LastBlock, "last_checksum": fmt.Sprintf("%x", x.LastChecksum), "checksum_ok": x.ChecksumOK},
		fmt.Sprintf("v%d msgs %d bytes %d first %d (%s) last %d (%s) last_block %d lchk %x checksum_ok %v", x.Version, x.Msgs, x.Bytes,
			x.FirstSeq, tsText(x.FirstTS), x.LastSeq, tsText(x.LastTS), x.LastBlock, x.LastChecksum, x.ChecksumOK))
	for _, s := range x.Subjects {
		d.line("subject", jsonl.NoOffset, map[string]any{"subject": s.Subject, "total": s.Total, "first_block": s.FirstBlock, "last_block": s.LastBlock},
			fmt.Sprintf("%q total %d blocks %d..%d", s.Subject, s.Total, s.FirstBlock, s.LastBlock))
	}
	for _, b := range x.Blocks {
		dels := b.Deleted.Seqs(0)
		ds := make([]string, len(dels))
		for i, q := range dels {
			ds[i] = strconv.FormatUint(q, 10)
		}
		d.line("block", jsonl.NoOffset, map[string]any{"index": b.Index, "bytes": b.Bytes, "first_seq": b.FirstSeq, "first_ts": b.FirstTS, "last_seq": b.LastSeq,
			"last_ts": b.LastTS, "num_deleted": b.NumDeleted, "ttls": b.TTLs, "schedules": b.Schedules, "deleted": dels},
			fmt.Sprintf("%d bytes %d seqs %d..%d deleted %d [%s] ttls %d schedules %d", b.Index, b.Bytes, b.FirstSeq, b.LastSeq,
				b.NumDeleted, strings.Join(ds, " "), b.TTLs, b.Schedules))
	}
	return d.done()
}

// DumpMeta prints a meta.inf (stream or consumer, told apart by its keys)
// and the meta.sum verdict when sum is not nil.
func DumpMeta(w io.Writer, file string, data, sum []byte, key string, o DumpOptions) error {
	d := newDumper(w, file, o)
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(data, &probe)
	if _, isConsumer := probe["Name"]; isConsumer {
		m, err := ParseConsumerMeta(file, data)
		if err != nil {
			d.problem(err)
		} else {
			d.line("consumer", jsonl.NoOffset, map[string]any{"name": m.Name, "durable_name": m.DurableName, "ack_policy": m.AckPolicy, "deliver_policy": m.DeliverPolicy,
				"filter_subject": m.FilterSubject, "filter_subjects": m.FilterSubjects, "num_replicas": m.NumReplicas, "metadata": m.Metadata, "created": m.Created},
				fmt.Sprintf("consumer %q durable %q ack %s deliver %s filter %q %q replicas %d created %s metadata %v", m.Name, m.DurableName, m.AckPolicy,
					m.DeliverPolicy, m.FilterSubject, m.FilterSubjects, m.NumReplicas, m.Created.UTC().Format(time.RFC3339Nano), m.Metadata))
		}
	} else {
		m, err := ParseStreamMeta(file, data)
		if err != nil {
			d.problem(err)
		} else {
			d.line("stream", jsonl.NoOffset, map[string]any{"name": m.Name, "subjects": m.Subjects, "retention": m.Retention, "storage": m.Storage, "num_replicas": m.NumReplicas,
				"compression": m.Compression, "max_msgs": m.MaxMsgs, "max_bytes": m.MaxBytes, "metadata": m.Metadata, "created": m.Created},
				fmt.Sprintf("stream %q subjects %q retention %s storage %s replicas %d compression %q max_msgs %d max_bytes %d created %s metadata %v", m.Name,
					m.Subjects, m.Retention, m.Storage, m.NumReplicas, m.Compression, m.MaxMsgs, m.MaxBytes, m.Created.UTC().Format(time.RFC3339Nano), m.Metadata))
			for _, fe := range m.FieldErrors {
				d.line("warning", jsonl.NoOffset, map[string]any{"field": fe}, fe)
			}
		}
	}
	if sum != nil {
		if err := CheckMetaSum("meta.sum", sum, data, key); err != nil {
			d.problem(err)
		} else {
			d.line("sum", jsonl.NoOffset, map[string]any{"ok": true, "key": key}, fmt.Sprintf("meta.sum ok (key %q)", key))
		}
	}
	return d.done()
}

// DumpConsumerState prints a decoded o.dat.
func DumpConsumerState(w io.Writer, file string, data []byte, o DumpOptions) error {
	d := newDumper(w, file, o)
	s, err := ParseConsumerState(file, data)
	if err != nil {
		d.problem(err)
	}
	if s == nil {
		return d.done()
	}
	d.line("state", jsonl.NoOffset, map[string]any{"version": s.Version, "ack_floor": s.AckFloor, "delivered": s.Delivered},
		fmt.Sprintf("v%d ack_floor stream %d consumer %d delivered stream %d consumer %d", s.Version, s.AckFloor.Stream, s.AckFloor.Consumer, s.Delivered.Stream, s.Delivered.Consumer))
	for _, p := range s.Pending {
		d.line("pending", jsonl.NoOffset, map[string]any{"stream_seq": p.StreamSeq, "consumer_seq": p.ConsumerSeq, "ts": p.TS},
			fmt.Sprintf("stream %d consumer %d delivered %s", p.StreamSeq, p.ConsumerSeq, tsText(p.TS)))
	}
	for _, r := range s.Redelivered {
		d.line("redeliv", jsonl.NoOffset, map[string]any{"stream_seq": r.StreamSeq, "count": r.Count}, fmt.Sprintf("stream %d count %d", r.StreamSeq, r.Count))
	}
	return d.done()
}

// BlockKey derives the checksum key from a block path ending in
// ".../streams/<name>/msgs/N.blk" or ".../_js_/<group>/msgs/N.blk" (any
// slash or backslash separators). ok is false when the path has no such shape.
func BlockKey(p string) (key string, ok bool) {
	parts := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	n := len(parts)
	if n < 3 || parts[n-2] != "msgs" {
		return "", false
	}
	num, found := strings.CutSuffix(parts[n-1], ".blk")
	if _, err := strconv.ParseUint(num, 10, 32); !found || err != nil {
		return "", false
	}
	return parts[n-3] + "-" + num, true
}
