package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// Capture kinds.
const (
	KindJsz     = "jsz"
	KindRaftz   = "raftz"
	KindHealthz = "healthz"
	KindVarz    = "varz"
	// KindGatewayz, KindLeafz and KindAccountz are /gatewayz, /leafz and
	// an account's info (/accountz?acc=, or the system API's account info
	// a gather archive holds), read for natscli's audit checks.
	KindGatewayz = "gatewayz"
	KindLeafz    = "leafz"
	KindAccountz = "accountz"
	// KindStreamInfo is a bare $JS.API.STREAM.INFO answer with its
	// consumer_detail, as a gather archive holds one per stream replica
	// (artifact type stream_info); read only as an archive's entry.
	KindStreamInfo = "stream-info"
	// KindUnknown is a natscli request line whose data could not be placed
	// (an error answer, or data of another endpoint such as /connz).
	KindUnknown = "unknown"
)

// MaxFileBytes caps what Decode reads from one file. Real captures of large
// deployments run to tens of MiB (a /jsz with every stream and consumer);
// 256 MiB leaves room while keeping a runaway input from exhausting memory.
const MaxFileBytes int64 = 256 << 20

// maxErrors bounds the problems kept per file: after that many the file is
// not worth reading on.
const maxErrors = 50

// ServerRef names the server a capture came from, as far as the capture says.
// A bare /raftz or /healthz answer names no server; Node is then the only clue
// (the raft node id, getHash of the server name: see natsfmt.PeerID).
type ServerRef struct {
	Name    string
	ID      string // server id (the random N… nkey), not the raft node id
	Cluster string
	Domain  string
	Host    string
	Version string
	Time    time.Time // when the answer was produced (request time or "now")
	Node    string    // raft node id, from the raftz groups' "id"
}

// Capture is one decoded monitoring answer. Exactly one of Jsz, Raftz,
// Healthz, Varz is set, matching Kind, except for KindUnknown.
type Capture struct {
	Kind    string
	Server  ServerRef
	Info    *ServerInfo // the natscli/system API envelope's "server", if any
	Error   *APIError   // the envelope's "error", if any
	Jsz     *Jsz
	Raftz   *Raftz
	Healthz *Healthz
	Varz    *Varz
	// Gatewayz, Leafz and Account are set for KindGatewayz, KindLeafz and
	// KindAccountz.
	Gatewayz *Gatewayz
	Leafz    *Leafz
	Account  *AccountInfo
	// StreamInfo is a stream info of a gather archive (KindStreamInfo).
	StreamInfo *StreamDetail

	File   string
	Line   int   // 1-based line where the value starts
	Offset int64 // byte offset where the value starts

	// Problem is set when the value was only partly decoded (a field of the
	// wrong type, a bad time); what decoded is kept. The same error is part
	// of the error Decode returns.
	Problem error
}

// Decode reads every monitoring answer in a file: a single JSON object, an
// array of them, JSON lines, pretty-printed objects one after another, or
// natscli `nats server request …` lines ({"server":…,"data":…,"error":…}).
// Which endpoint a value answers is told by its keys; the base name of file
// is used only to place an empty answer ({} from /raftz).
//
// Decoding is lenient: unknown fields are ignored and a field of the wrong
// type is skipped. Problems come back as *CorruptError values naming
// file and byte offset (joined with errors.Join when there are several),
// alongside every capture decoded: a file cut off in the middle keeps what
// came before the cut. At most MaxFileBytes are read.
func Decode(file string, r io.Reader) ([]Capture, error) {
	return decodeStream(file, kindHint(file), r, MaxFileBytes)
}

type decodeState struct {
	file string
	hint string
	lr   *lineReader
	caps []Capture
	errs []error
	// values counts the top-level JSON values and array says the first was
	// an array: the file's shape, for Sniff.
	values int
	array  bool
	// objects counts the JSON objects taken for answers (decodeValue).
	objects int
}

func (s *decodeState) fail(err error) bool {
	s.errs = append(s.errs, err)
	return len(s.errs) < maxErrors
}

// decodeStream is Decode with the kind an empty answer is taken for (hint)
// and the byte limit given.
func decodeStream(file, hint string, r io.Reader, limit int64) ([]Capture, error) {
	return decodeAll(file, hint, r, limit).result()
}

// decodeAll runs the decoder over r and returns its state.
func decodeAll(file, hint string, r io.Reader, limit int64) *decodeState {
	s := &decodeState{file: file, hint: hint, lr: newLineReader(r, limit)}
	var src io.Reader = s.lr
	var base int64 // offset of the decoder's input start within the file

	// A UTF-8 byte order mark (Windows editors) is not JSON; drop it.
	head := make([]byte, 3)
	n, _ := io.ReadFull(s.lr, head)
	if n == 3 && bytes.Equal(head, []byte{0xEF, 0xBB, 0xBF}) {
		base = 3
	} else {
		src = io.MultiReader(bytes.NewReader(head[:n]), s.lr)
	}

	dec := json.NewDecoder(src)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			end := base + dec.InputOffset()
			start := end - int64(len(raw))
			if !s.value(raw, start) {
				break
			}
			continue
		}
		if err == io.EOF {
			break
		}
		at := base + dec.InputOffset() // start of the value that failed
		var se *json.SyntaxError
		switch {
		case errors.Is(err, errTooLarge):
			s.fail(binfmt.Errorf(file, limit, binfmt.ErrTooLarge, "file larger than %d bytes; the rest is not read", limit))
		case errors.Is(err, io.ErrUnexpectedEOF):
			at = skipSpace(dec.Buffered(), at)
			s.fail(binfmt.Errorf(file, at, binfmt.ErrTruncated, "line %d: JSON value cut off at end of input (%d bytes)", s.lr.lineAt(at), s.lr.n))
		case errors.As(err, &se):
			at = skipSpace(dec.Buffered(), at)
			// SyntaxError.Offset counts every byte this decoder scanned,
			// the bad one included.
			errAt := base + se.Offset - 1
			if errAt < at {
				errAt = at
			}
			startLine := s.lr.lineAt(at)
			errLine := s.lr.lineAt(errAt)
			if !s.fail(binfmt.Errorf(file, errAt, binfmt.ErrFormat, "line %d: %v", errLine, se)) {
				break
			}
			// A broken line of a JSON-lines file: read on from the next
			// line. A broken multi-line value cannot be resynchronised.
			if startLine != errLine {
				break
			}
			// The decoder's unread bytes start at its InputOffset, before
			// any whitespace ahead of the failed value.
			in := base + dec.InputOffset()
			rest := io.MultiReader(dec.Buffered(), src)
			skipped, ok := skipLine(rest, errAt-in)
			if !ok {
				return s
			}
			base = in + skipped
			src = rest
			dec = json.NewDecoder(src)
			continue
		default:
			var ce *binfmt.CorruptError
			if errors.As(err, &ce) {
				s.fail(err) // from the reader below (a zip entry's checksum)
			} else {
				s.fail(binfmt.Errorf(file, at, binfmt.ErrFormat, "line %d: %v", s.lr.lineAt(at), err))
			}
		}
		break
	}
	return s
}

func (s *decodeState) result() ([]Capture, error) {
	return s.caps, errors.Join(s.errs...)
}

// skipSpace moves at past the JSON whitespace at the head of buf.
func skipSpace(buf io.Reader, at int64) int64 {
	b, _ := buf.(*bytes.Reader)
	if b == nil {
		return at
	}
	for {
		c, err := b.ReadByte()
		if err != nil {
			return at
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return at
		}
		at++
	}
}

// skipLine discards the bytes of r through the first newline found at or after
// position from, and says how many it discarded; ok is false at end of input.
func skipLine(r io.Reader, from int64) (n int64, ok bool) {
	var b [1]byte
	for {
		m, err := r.Read(b[:])
		if m == 1 {
			n++
			if b[0] == '\n' && n > from {
				return n, true
			}
		}
		if err != nil {
			return n, false
		}
	}
}

// value handles one top-level JSON value starting at byte offset start.
func (s *decodeState) value(raw json.RawMessage, start int64) bool {
	line := s.lr.lineAt(start)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return true
	}
	if s.values++; s.values == 1 {
		s.array = raw[0] == '['
	}
	switch raw[0] {
	case '{':
		s.objects++
		c, ok, err := decodeValue(s.file, s.hint, raw, start, line)
		if ok {
			s.caps = append(s.caps, c)
		}
		if err != nil {
			return s.fail(err)
		}
	case '[':
		// An array of answers: walk its elements with their offsets.
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return s.fail(binfmt.Errorf(s.file, start, binfmt.ErrFormat, "line %d: %v", line, err))
		}
		for dec.More() {
			var el json.RawMessage
			if err := dec.Decode(&el); err != nil {
				return s.fail(binfmt.Errorf(s.file, start+dec.InputOffset(), binfmt.ErrFormat, "line %d: %v", line, err))
			}
			elStart := start + dec.InputOffset() - int64(len(el))
			if len(el) == 0 || el[0] != '{' {
				continue
			}
			s.objects++
			c, ok, err := decodeValue(s.file, s.hint, el, elStart, s.lr.lineAt(elStart))
			if ok {
				s.caps = append(s.caps, c)
			}
			if err != nil && !s.fail(err) {
				return false
			}
		}
	}
	// Scalars (a stray number or string) are not answers: ignored.
	return true
}

// field is one top-level member of an object with the offset of its value.
type field struct {
	key string
	off int64 // offset of the value within the object's bytes
	val json.RawMessage
}

// members lists the top-level members of a JSON object. Later duplicates
// replace earlier ones, as encoding/json does.
func members(obj []byte) (map[string]field, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	m := map[string]field{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		m[k] = field{key: k, off: dec.InputOffset() - int64(len(v)), val: v}
	}
	return m, nil
}

// decodeValue decodes one JSON object found at offset start of file: a bare
// answer or an envelope. ok says whether it is a capture at all.
func decodeValue(file, hint string, obj []byte, start int64, line int) (c Capture, ok bool, err error) {
	c = Capture{File: file, Line: line, Offset: start}
	m, merr := members(obj)
	if merr != nil {
		return c, false, binfmt.Errorf(file, start, binfmt.ErrFormat, "line %d: %v", line, merr)
	}
	if isEnvelope(m) {
		var info ServerInfo
		if e := json.Unmarshal(m["server"].val, &info); e != nil {
			err = fieldError(file, start+m["server"].off, line, e)
		}
		c.Info = &info
		c.Server = ServerRef{Name: info.Name, ID: info.ID, Cluster: info.Cluster, Domain: info.Domain,
			Host: info.Host, Version: info.Version, Time: info.Time}
		if f, has := m["error"]; has && !isNull(f.val) {
			var ae APIError
			if e := json.Unmarshal(f.val, &ae); e != nil && err == nil {
				err = fieldError(file, start+f.off, line, e)
			}
			c.Error = &ae
		}
		c.Kind = KindUnknown
		f, has := m["data"]
		if !has || isNull(f.val) || len(f.val) == 0 || f.val[0] != '{' {
			if hint != "" && c.Error != nil {
				c.Kind = hint
			}
			return c, true, err
		}
		dm, derr := members(f.val)
		if derr != nil {
			return c, true, binfmt.Errorf(file, start+f.off, binfmt.ErrFormat, "line %d: data: %v", line, derr)
		}
		if kind := classify(dm, hint); kind != "" {
			if e := c.fill(kind, f.val, start+f.off, line); e != nil && err == nil {
				err = e
			}
		}
		return c, true, err
	}
	kind := classify(m, hint)
	if kind == "" {
		return c, false, nil
	}
	err = c.fill(kind, obj, start, line)
	return c, true, err
}

// fillFrom sets the server id and time of c from its answer where the
// envelope left them open.
func (c *Capture) fillFrom(id string, now time.Time) {
	if c.Server.ID == "" {
		c.Server.ID = id
	}
	if c.Server.Time.IsZero() {
		c.Server.Time = now
	}
}

// fieldsOf is members of obj, nil when it is not an object.
func fieldsOf(obj []byte) map[string]field {
	m, _ := members(obj)
	return m
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

// isEnvelope: {"server":{…}, "data":…} or {"server":{…}, "error":…}.
func isEnvelope(m map[string]field) bool {
	s, ok := m["server"]
	if !ok || len(s.val) == 0 || s.val[0] != '{' {
		return false
	}
	_, d := m["data"]
	_, e := m["error"]
	return d || e
}

// classify tells which endpoint answered from the top-level keys.
func classify(m map[string]field, hint string) string {
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("server_name") && (has("version") || has("go") || has("start")):
		return KindVarz
	case has("server_id") && (has("meta_cluster") || has("account_details") || has("config") ||
		has("memory") || has("storage") || has("api") || has("streams") || has("disabled")):
		return KindJsz
	case has("status") && !has("server_id") && isString(m["status"].val):
		return KindHealthz
	case has("server_id") && (has("outbound_gateways") || has("inbound_gateways")):
		return KindGatewayz
	case has("server_id") && has("leafs") && has("leafnodes"):
		return KindLeafz
	case has("server_id") && has("account_detail"),
		has("account_name") && (has("client_connections") || has("subscriptions") || has("leafnode_connections")):
		return KindAccountz
	}
	// /raftz: account -> group -> {id, state, term, peers, …}.
	groups := 0
	for _, acc := range m {
		if len(acc.val) == 0 || acc.val[0] != '{' {
			return ""
		}
		gm, err := members(acc.val)
		if err != nil {
			return ""
		}
		for _, g := range gm {
			if len(g.val) == 0 || g.val[0] != '{' {
				return ""
			}
			km, err := members(g.val)
			if err != nil {
				return ""
			}
			n := 0
			for _, k := range []string{"id", "state", "term", "peers", "size", "quorum_needed", "applied"} {
				if _, ok := km[k]; ok {
					n++
				}
			}
			if n < 2 {
				return ""
			}
			groups++
		}
	}
	if groups > 0 || hint == KindRaftz {
		return KindRaftz
	}
	return ""
}

func isString(b []byte) bool { return len(b) > 0 && b[0] == '"' }

// fill decodes data (found at offset off) as kind into c.
func (c *Capture) fill(kind string, data []byte, off int64, line int) error {
	c.Kind = kind
	var err error
	switch kind {
	case KindJsz:
		var v Jsz
		err = json.Unmarshal(data, &v)
		c.Jsz = &v
		if c.Server.ID == "" {
			c.Server.ID = v.ServerID
		}
		if c.Server.Time.IsZero() {
			c.Server.Time = v.Now
		}
		if c.Server.Domain == "" {
			c.Server.Domain = v.Config.Domain
		}
		if c.Server.Cluster == "" && v.Meta != nil {
			c.Server.Cluster = v.Meta.Name
		}
	case KindRaftz:
		var v Raftz
		err = json.Unmarshal(data, &v)
		c.Raftz = &v
		c.Server.Node = v.nodeID()
	case KindHealthz:
		var v Healthz
		err = json.Unmarshal(data, &v)
		v.ErrCode = v.errCode()
		c.Healthz = &v
	case KindGatewayz:
		var v Gatewayz
		err = json.Unmarshal(data, &v)
		c.Gatewayz = &v
		c.fillFrom(v.ServerID, v.Now)
	case KindLeafz:
		var v Leafz
		err = json.Unmarshal(data, &v)
		c.Leafz = &v
		c.fillFrom(v.ServerID, v.Now)
	case KindAccountz:
		var ai AccountInfo
		if _, ok := fieldsOf(data)["account_detail"]; ok {
			var v Accountz
			err = json.Unmarshal(data, &v)
			c.fillFrom(v.ServerID, v.Now)
			if v.Account != nil {
				ai = *v.Account
			}
		} else {
			err = json.Unmarshal(data, &ai)
		}
		c.Account = &ai
	case KindVarz:
		var v Varz
		err = json.Unmarshal(data, &v)
		c.Varz = &v
		if c.Server.Name == "" {
			c.Server.Name = v.ServerName
		}
		if c.Server.ID == "" {
			c.Server.ID = v.ServerID
		}
		if c.Server.Cluster == "" {
			c.Server.Cluster = v.Cluster.Name
		}
		if c.Server.Version == "" {
			c.Server.Version = v.Version
		}
		if c.Server.Host == "" {
			c.Server.Host = v.Host
		}
		if c.Server.Time.IsZero() {
			c.Server.Time = v.Now
		}
	}
	if err != nil {
		err = fieldError(c.File, off, line, err)
		c.Problem = err
	}
	return err
}

// fieldError turns an encoding/json error met at offset base into a
// CorruptError at the most precise offset known.
func fieldError(file string, base int64, line int, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return binfmt.Errorf(file, base+te.Offset, binfmt.ErrFormat, "line %d: field %q: JSON %s does not fit %s", line, te.Field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return binfmt.Errorf(file, base+se.Offset, binfmt.ErrFormat, "line %d: %v", line, se)
	}
	return binfmt.Errorf(file, base, binfmt.ErrFormat, "line %d: %v", line, err)
}

// kindHint reads a kind from a file's base name (n1-raftz.json, jsz.json…).
func kindHint(file string) string {
	b := strings.ToLower(path.Base(strings.ReplaceAll(file, "\\", "/")))
	switch {
	case strings.Contains(b, "raftz"), strings.Contains(b, "raft"):
		return KindRaftz
	case strings.Contains(b, "healthz"), strings.Contains(b, "health"):
		return KindHealthz
	case strings.Contains(b, "varz"):
		return KindVarz
	case strings.Contains(b, "jsz"), strings.Contains(b, "jetstream"):
		return KindJsz
	case strings.Contains(b, "gatewayz"):
		return KindGatewayz
	case strings.Contains(b, "leafz"):
		return KindLeafz
	case strings.Contains(b, "accountz"):
		return KindAccountz
	}
	return ""
}
