package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Normalize fills the top-level lists so that the JSON holds [] rather than
// null for an empty section, as the contract shows every section.
func (r *Report) Normalize() {
	if r.Schema == "" {
		r.Schema = Schema
	}
	if r.Servers == nil {
		r.Servers = []Server{}
	}
	if r.Groups == nil {
		r.Groups = []Group{}
	}
	for i := range r.Groups {
		if r.Groups[i].Views == nil {
			r.Groups[i].Views = []GroupView{}
		}
		if r.Groups[i].History == nil {
			r.Groups[i].History = []HistoryEvent{}
		}
		for j := range r.Groups[i].Views {
			if r.Groups[i].Views[j].Peers == nil {
				r.Groups[i].Views[j].Peers = []string{}
			}
		}
	}
	if r.Streams == nil {
		r.Streams = []Stream{}
	}
	if r.Coverage != nil && r.Coverage.ChecksJudged == nil {
		r.Coverage.ChecksJudged = []string{}
	}
	for i := range r.Streams {
		if r.Streams[i].OnDisk == nil {
			r.Streams[i].OnDisk = []OnDisk{}
		}
	}
	if r.Timeline == nil {
		r.Timeline = []TimelineEvent{}
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for i := range r.Findings {
		for j := range r.Findings[i].Views {
			v := &r.Findings[i].Views[j]
			if v.Servers == nil {
				v.Servers = []string{}
			}
			if v.Peers == nil { // a meta view known only from /jsz lists no peers
				v.Peers = []string{}
			}
		}
	}
	for i := range r.Servers {
		if r.Servers[i].Sources == nil {
			r.Servers[i].Sources = []string{}
		}
	}
}

// WriteJSON writes the report as the v1 contract, indented. The bytes are
// json.Encoder's with SetIndent("", "  ") and SetEscapeHTML(false), but the
// top-level lists are encoded one element at a time: the report of a large
// bundle is never held whole as encoded bytes (the Encoder holds it twice,
// marshalled and then indented).
func WriteJSON(w io.Writer, r *Report) error {
	r.Normalize()
	out := bufio.NewWriterSize(w, 64<<10)
	var enc elementEncoder
	v := reflect.ValueOf(r).Elem()
	out.WriteString("{")
	first := true
	for _, f := range reportFields {
		fv := v.Field(f.index)
		if f.omitEmpty && emptyAsEncoder(fv) || f.omitZero && fv.IsZero() {
			continue
		}
		if !first {
			out.WriteString(",")
		}
		first = false
		out.WriteString("\n  ")
		out.WriteString(f.key)
		out.WriteString(": ")
		if fv.Kind() != reflect.Slice || fv.IsNil() || fv.Len() == 0 {
			b, err := enc.encode(fv.Interface(), "  ")
			if err != nil {
				return err
			}
			out.Write(b)
			continue
		}
		out.WriteString("[")
		for i := 0; i < fv.Len(); i++ {
			if i > 0 {
				out.WriteString(",")
			}
			out.WriteString("\n    ")
			b, err := enc.encode(fv.Index(i).Interface(), "    ")
			if err != nil {
				return err
			}
			out.Write(b)
		}
		out.WriteString("\n  ]")
	}
	if first {
		out.WriteString("}\n")
	} else {
		out.WriteString("\n}\n")
	}
	return out.Flush()
}

// elementEncoder encodes one value as json.Encoder does at a given depth,
// reusing its buffer from value to value.
type elementEncoder struct {
	buf bytes.Buffer
}

// encode returns v's JSON, its lines after the first prefixed by prefix,
// without the Encoder's final newline. The bytes are valid until the next call.
func (e *elementEncoder) encode(v any, prefix string) ([]byte, error) {
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")), nil
}

// reportField is one top-level field of Report as encoding/json names it.
type reportField struct {
	index     int
	key       string // the quoted JSON name
	omitEmpty bool
	omitZero  bool
}

// emptyAsEncoder is encoding/json's omitempty test.
func emptyAsEncoder(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

// reportFields are Report's fields in declaration order, as encoding/json
// writes them. Report's fields are exported, untagged ones are none, and
// none is embedded (TestWriteJSONFieldsAsEncoder holds this).
var reportFields = func() []reportField {
	t := reflect.TypeFor[Report]()
	var fields []reportField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		key, _ := json.Marshal(name)
		options := strings.Split(opts, ",")
		fields = append(fields, reportField{index: i, key: string(key),
			omitEmpty: slices.Contains(options, "omitempty"), omitZero: slices.Contains(options, "omitzero")})
	}
	return fields
}()
