package storeparse

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// StreamMeta is the part of a stream's meta.inf (JSON of FileStreamInfo:
// "Created" plus the flattened StreamConfig) the analysis needs. Decoding is
// lenient: unknown fields are ignored, a field of the wrong type is left
// zero and listed in FieldErrors; Raw keeps the whole document.
type StreamMeta struct {
	Name              string            `json:"name"`
	Subjects          []string          `json:"subjects"`
	Retention         string            `json:"retention"`
	Storage           string            `json:"storage"`
	NumReplicas       int               `json:"num_replicas"`
	Compression       string            `json:"compression"`
	MaxMsgs           int64             `json:"max_msgs"`
	MaxBytes          int64             `json:"max_bytes"`
	MaxAge            time.Duration     `json:"max_age"`
	MaxMsgsPerSubject int64             `json:"max_msgs_per_subject"`
	Discard           string            `json:"discard"`
	Sealed            bool              `json:"sealed"`
	Metadata          map[string]string `json:"metadata"`
	Created           time.Time         `json:"Created"`
	// Mirror and Sources: the origins the stream takes messages from.
	Mirror      *StreamSourceMeta  `json:"mirror"`
	Sources     []StreamSourceMeta `json:"sources"`
	Raw         json.RawMessage    `json:"-"`
	FieldErrors []string           `json:"-"`
}

// StreamSourceMeta is a mirror or source in a stream's meta.inf
// (server.StreamSource).
type StreamSourceMeta struct {
	Name        string `json:"name"`
	OptStartSeq uint64 `json:"opt_start_seq"`
	Filter      string `json:"filter_subject"`
	External    *struct {
		APIPrefix string `json:"api"`
	} `json:"external"`
}

// ConsumerMeta is the part of a consumer's meta.inf (FileConsumerInfo:
// "Created", "Name" and the flattened ConsumerConfig) the analysis needs.
type ConsumerMeta struct {
	Created        time.Time         `json:"Created"`
	Name           string            `json:"Name"`
	DurableName    string            `json:"durable_name"`
	ConfigName     string            `json:"name"`
	DeliverPolicy  string            `json:"deliver_policy"`
	AckPolicy      string            `json:"ack_policy"`
	FilterSubject  string            `json:"filter_subject"`
	FilterSubjects []string          `json:"filter_subjects"`
	NumReplicas    int               `json:"num_replicas"`
	MaxAckPending  int               `json:"max_ack_pending"`
	AckWait        time.Duration     `json:"ack_wait"`
	Metadata       map[string]string `json:"metadata"`
	Raw            json.RawMessage   `json:"-"`
	FieldErrors    []string          `json:"-"`
}

// ParseStreamMeta decodes a stream (or raft WAL) meta.inf.
func ParseStreamMeta(file string, data []byte) (*StreamMeta, error) {
	m := &StreamMeta{}
	errs, err := lenientJSON(file, data, m)
	if err != nil {
		return nil, err
	}
	m.Raw, m.FieldErrors = json.RawMessage(data), errs
	return m, nil
}

// ParseConsumerMeta decodes a consumer meta.inf.
func ParseConsumerMeta(file string, data []byte) (*ConsumerMeta, error) {
	m := &ConsumerMeta{}
	errs, err := lenientJSON(file, data, m)
	if err != nil {
		return nil, err
	}
	m.Raw, m.FieldErrors = json.RawMessage(data), errs
	return m, nil
}

// lenientJSON decodes an object field by field into v (a pointer to a struct
// of the types above, zero), so one bad field does not lose the others. Only
// a document that is not a JSON object at all is an error. A document that
// decodes whole is decoded once (field by field costs a decode of the whole
// struct per field: most of a start's CPU on a bundle of thousands of
// streams and groups); otherwise v is zeroed and decoded field by field.
func lenientJSON(file string, data []byte, v any) ([]string, error) {
	if json.Unmarshal(data, v) == nil {
		return nil, nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		off := int64(0)
		if se, ok := err.(*json.SyntaxError); ok {
			off = se.Offset
		}
		if len(data) > 0 && data[0] != '{' {
			return nil, binfmt.Stamp(binfmt.Errorf(file, 0, binfmt.ErrFormat, "not JSON (encrypted?): %v", err), natsfmt.StructMetaInf)
		}
		return nil, binfmt.Stamp(binfmt.Errorf(file, off, binfmt.ErrFormat, "meta.inf JSON: %v", err), natsfmt.StructMetaInf)
	}
	var errs []string
	for k, raw := range fields {
		one, _ := json.Marshal(map[string]json.RawMessage{k: raw})
		if err := json.Unmarshal(one, v); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	return errs, nil
}

// CheckMetaSum verifies meta.sum (16 lowercase hex digits of HH64(key,
// meta.inf)) against the meta.inf bytes. key is the stream name (raft group
// name for a WAL) or "<stream>/<consumer>" for a consumer. sumFile names
// meta.sum in errors.
// CheckMetaSumFormat checks that a meta.sum holds a checksum at all (16
// hex digits), for when its meta.inf cannot be read to compare it with.
func CheckMetaSumFormat(sumFile string, sum []byte) error {
	_, err := decodeMetaSum(sumFile, sum)
	return binfmt.Stamp(err, natsfmt.StructMetaSum)
}

func decodeMetaSum(sumFile string, sum []byte) ([8]byte, error) {
	var dec [8]byte
	got := bytes.TrimSpace(sum)
	if len(got) != 16 {
		return dec, binfmt.Errorf(sumFile, 0, binfmt.ErrFormat, "meta.sum has %d bytes, want 16 hex digits", len(sum))
	}
	if _, err := hex.Decode(dec[:], got); err != nil {
		return dec, binfmt.Errorf(sumFile, 0, binfmt.ErrFormat, "meta.sum is not hex: %v", err)
	}
	return dec, nil
}

func CheckMetaSum(sumFile string, sum, inf []byte, key string) error {
	return binfmt.Stamp(checkMetaSum(sumFile, sum, inf, key), natsfmt.StructMetaSum)
}

func checkMetaSum(sumFile string, sum, inf []byte, key string) error {
	want := binfmt.HH64(key, inf)
	dec, err := decodeMetaSum(sumFile, sum)
	if err != nil {
		return err
	}
	got := bytes.TrimSpace(sum)
	if dec != want {
		return binfmt.Errorf(sumFile, 0, binfmt.ErrChecksum, "meta.sum %s, meta.inf hashes to %x (key %q)", got, want, key)
	}
	return nil
}
