// Package jsonl writes the JSON lines of every `jsforensics dump`: one
// schema for all of them, so a script reads a block dump and a WAL dump
// the same way.
//
// Each line is one object:
//
//	{"file": "<path as given>", "offset": <byte offset, when known>,
//	 "record": "<what the line is>", <the record's own fields>…, "error": "<problem>"}
//
// "file" and "record" are always present; "offset" is the byte offset in
// the file where the record begins and is left out when it is not known
// (a record inside a compressed block, a summary line); "error" is present
// only on problem lines, whose record is "error" (with "structure" and
// "seq" when the decoder knows them). The record's own fields
// follow in key order; a value that is not a JSON object sits under "value".
package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// NoOffset marks a record whose byte offset is not known.
const NoOffset int64 = -1

// Writer writes dump lines of one file. It keeps the first write error.
type Writer struct {
	w    io.Writer
	file string
	err  error
}

// New returns a Writer for the records of file.
func New(w io.Writer, file string) *Writer { return &Writer{w: w, file: file} }

// Err returns the first error met while writing.
func (w *Writer) Err() error { return w.err }

// Record writes one record line. fields is marshalled with encoding/json;
// an object's keys are merged into the line (a "file", "offset" or
// "record" key among them is replaced by the line's own), anything else
// is written as "value". offset is NoOffset when unknown; then an
// "offset" the fields carry is kept.
func (w *Writer) Record(record string, offset int64, fields any) {
	w.write(record, offset, fields, "")
}

// Error writes a problem line. The offset, and the structure that failed
// and the sequence when known, come from a *binfmt.CorruptError in err's
// chain, when there is one.
func (w *Writer) Error(err error) {
	if err == nil {
		return
	}
	off := NoOffset
	var fields map[string]any
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		off = ce.Offset
		fields = map[string]any{}
		if ce.Structure != "" {
			fields["structure"] = ce.Structure
		}
		if ce.Seq != 0 {
			fields["seq"] = ce.Seq
		}
	}
	w.write("error", off, fields, err.Error())
}

// ErrorAt writes a problem line found at a known offset (NoOffset if none),
// for problems that are not decoding errors (a name disagreeing with a header).
func (w *Writer) ErrorAt(offset int64, msg string) { w.write("error", offset, nil, msg) }

func (w *Writer) write(record string, offset int64, fields any, errText string) {
	if w.err != nil {
		return
	}
	var own map[string]json.RawMessage
	if fields != nil {
		raw, err := json.Marshal(fields)
		if err != nil {
			w.err = err
			return
		}
		switch {
		case string(raw) == "null": // a nil map or pointer: no fields
		case bytes.HasPrefix(raw, []byte("{")):
			if err := json.Unmarshal(raw, &own); err != nil {
				w.err = err
				return
			}
		default:
			own = map[string]json.RawMessage{"value": raw}
		}
	}
	if v, ok := own["offset"]; ok && offset == NoOffset {
		var n int64
		if json.Unmarshal(v, &n) == nil {
			offset = n
		}
	}
	delete(own, "file")
	delete(own, "offset")
	delete(own, "record")
	if errText != "" {
		delete(own, "error")
	}

	var b bytes.Buffer
	b.WriteString(`{"file":`)
	b.Write(marshal(w.file))
	if offset >= 0 {
		b.WriteString(`,"offset":`)
		b.Write(marshal(offset))
	}
	b.WriteString(`,"record":`)
	b.Write(marshal(record))
	keys := make([]string, 0, len(own))
	for k := range own {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(',')
		b.Write(marshal(k))
		b.WriteByte(':')
		b.Write(own[k])
	}
	if errText != "" {
		b.WriteString(`,"error":`)
		b.Write(marshal(errText))
	}
	b.WriteString("}\n")
	_, w.err = w.w.Write(b.Bytes())
}

// marshal encodes a string or number, which cannot fail.
func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
