// Package acklog reads publishers' acknowledgement logs found in support
// bundles: JSON lines holding the PubAck reply bodies a JetStream server sent
// ({"stream":"ORDERS","seq":17}, with optional domain, duplicate, val,
// batch/count), bare or inside a wrapper line carrying the publisher's own
// value and time; and Jepsen histories in EDN ({:type :ok, :f :publish,
// :value "3-17"}, decoded by HistoryReader into a History of publishes,
// reads and nemesis operations).
//
// Reading is line by line in bounded memory (MaxLine per line; per stream the
// acknowledged sequences are kept as runs, a seqset.Set), never panics on bad input,
// and names the file, line and byte offset of every line it cannot read
// (*LineError). See FORMAT.md.
package acklog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// MaxLine bounds one line: a PubAck body is well under 200 bytes, a wrapper
// with the publisher's value a few KB; longer lines are reported and skipped,
// never buffered.
const MaxLine = 64 << 10

// Formats of a file.
const (
	FormatPubAck = "puback-json" // JSON lines of PubAck bodies (bare or wrapped)
	FormatEDN    = "jepsen-edn"  // Jepsen history (Summary.History)
)

// Record is one line of an ack log.
type Record struct {
	Line   int64 // 1-based
	Offset int64 // byte offset of the line in the file
	// Stream, Seq, Domain, Duplicate, Batch, Count: the PubAck fields
	// (server/stream.go PubAck). Seq is 0 when the line acknowledges nothing
	// (an error reply, an EDN line).
	Stream    string
	Domain    string
	Seq       uint64
	Duplicate bool
	Batch     string
	Count     uint64
	// Value is the PubAck's counter value ("val"), or the wrapper's (or an
	// EDN line's) published value; Time the wrapper's time as written.
	Value string
	Time  string
	// Err is set for an error reply ({"error":{…}}): the publish failed.
	Err *APIError
	// EDN: a Jepsen history line; Type and F are its :type and :f.
	EDN     bool
	Type, F string
}

// APIError is the error of a JSPubAckResponse.
type APIError struct {
	Code        int
	ErrCode     int
	Description string
}

// LineError is a line that could not be read.
type LineError struct {
	File   string
	Line   int64
	Offset int64 // of the line
	Col    int   // byte within the line where decoding failed
	Err    error // wraps ErrFormat or ErrTooLarge
}

func (e *LineError) Error() string {
	f := e.File
	if f == "" {
		f = "<input>"
	}
	return fmt.Sprintf("%s line %d (offset %d, byte %d of the line): %v", f, e.Line, e.Offset, e.Col, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader reads records one line at a time.
type Reader struct {
	file   string
	br     *bufio.Reader
	line   int64
	offset int64
	err    error // sticky I/O error or io.EOF
	raw    rawRecord
}

// NewReader returns a Reader over r; file names it in errors.
func NewReader(file string, r io.Reader) *Reader {
	return &Reader{file: file, br: bufio.NewReaderSize(r, MaxLine)}
}

// Next returns the next non-blank line's record. A line that cannot be read
// is a *LineError and reading can go on; io.EOF ends the log; any other
// error is the underlying reader's and sticks.
func (r *Reader) Next() (Record, error) {
	for {
		line, off, err := r.nextLine()
		if err != nil {
			return Record{}, err
		}
		if line == nil {
			continue // blank
		}
		if err := r.raw.decode(line); err != nil {
			return Record{}, r.lineError(off, err)
		}
		return r.raw.record(r.line, off), nil
	}
}

// nextLine returns the next line without its end (nil for a blank line)
// and its offset; a line over MaxLine is skipped and reported.
func (r *Reader) nextLine() ([]byte, int64, error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	off := r.offset
	line, err := r.br.ReadSlice('\n')
	r.offset += int64(len(line))
	if err == bufio.ErrBufferFull {
		// Too long: skip to the end of the line without keeping it.
		for err == bufio.ErrBufferFull {
			var more []byte
			more, err = r.br.ReadSlice('\n')
			r.offset += int64(len(more))
		}
		r.line++
		if err != nil && err != io.EOF {
			r.err = err
		} else if err == io.EOF {
			r.err = io.EOF
		}
		return nil, 0, &LineError{File: r.file, Line: r.line, Offset: off,
			Err: fmt.Errorf("%w: line of %d bytes, more than %d", binfmt.ErrTooLarge, r.offset-off, MaxLine)}
	}
	if err != nil {
		if err != io.EOF {
			r.err = err
			return nil, 0, err
		}
		r.err = io.EOF
		if len(line) == 0 {
			return nil, 0, io.EOF
		}
	}
	r.line++
	line = trimSpace(line)
	if len(line) == 0 {
		if r.err != nil {
			return nil, 0, r.err
		}
		return nil, off, nil
	}
	return line, off, nil
}

func (r *Reader) lineError(off int64, err error) error {
	var de *decodeError
	col := 0
	if errors.As(err, &de) {
		col = de.col
		err = de.err
	}
	return &LineError{File: r.file, Line: r.line, Offset: off, Col: col, Err: err}
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// rawRecord is a decoded line whose strings still point into the line, so
// Read can count a line without allocating.
type rawRecord struct {
	stream, domain, batch, value, time []byte
	escaped                            uint8 // bit per field above: holds JSON escapes
	seq, count                         uint64
	duplicate, hasSeq                  bool
	err                                *APIError
	edn                                bool
	typ, f                             []byte
}

const (
	escStream = 1 << iota
	escDomain
	escBatch
	escValue
	escTime
)

func (rr *rawRecord) reset() { *rr = rawRecord{} }

func (rr *rawRecord) decode(line []byte) error {
	rr.reset()
	if len(line) > 1 && line[0] == '{' && line[1] == ':' {
		return rr.decodeEDN(line)
	}
	s := scanner{b: line}
	if err := rr.object(&s, 0); err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("text after the object")
	}
	if !rr.hasSeq && rr.err == nil {
		return &decodeError{0, fmt.Errorf("%w: neither a PubAck (stream and seq) nor an error reply", binfmt.ErrFormat)}
	}
	return nil
}

func (rr *rawRecord) record(line, off int64) Record {
	str := func(b []byte, bit uint8) string {
		if rr.escaped&bit != 0 {
			if u, err := strconv.Unquote(`"` + string(b) + `"`); err == nil {
				return u
			}
		}
		return string(b)
	}
	return Record{Line: line, Offset: off, Stream: str(rr.stream, escStream), Domain: str(rr.domain, escDomain),
		Seq: rr.seq, Duplicate: rr.duplicate, Batch: str(rr.batch, escBatch), Count: rr.count,
		Value: str(rr.value, escValue), Time: str(rr.time, escTime), Err: rr.err,
		EDN: rr.edn, Type: string(rr.typ), F: string(rr.f)}
}

// object decodes one JSON object: PubAck fields at any depth up to one
// wrapper level, the wrapper's value and time, an error reply; other members
// are skipped.
func (rr *rawRecord) object(s *scanner, depth int) error {
	s.ws()
	if !s.eat('{') {
		return s.fail("not a JSON object")
	}
	s.ws()
	if s.eat('}') {
		return nil
	}
	for {
		s.ws()
		key, _, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if !s.eat(':') {
			return s.fail("':' expected after a key")
		}
		s.ws()
		switch string(key) {
		case "stream":
			err = s.strInto(&rr.stream, &rr.escaped, escStream)
		case "domain":
			err = s.strInto(&rr.domain, &rr.escaped, escDomain)
		case "batch":
			err = s.strInto(&rr.batch, &rr.escaped, escBatch)
		case "seq":
			rr.seq, err = s.uint()
			if err == nil && rr.seq == 0 {
				err = s.fail("sequence 0: no message has it")
			}
			rr.hasSeq = err == nil
		case "count":
			rr.count, err = s.uint()
		case "duplicate":
			rr.duplicate, err = s.boolean()
		case "val", "value":
			err = s.strOrRaw(&rr.value, &rr.escaped, escValue)
		case "time", "ts":
			err = s.strOrRaw(&rr.time, &rr.escaped, escTime)
		case "error":
			if s.peek() == '{' {
				rr.err, err = apiError(s)
			} else {
				err = s.skip(0)
			}
		case "ack", "puback", "reply", "response":
			// A wrapper's member holding the server's reply body.
			if depth == 0 && s.peek() == '{' {
				err = rr.object(s, 1)
			} else {
				err = s.skip(0)
			}
		default:
			err = s.skip(0)
		}
		if err != nil {
			return err
		}
		s.ws()
		if s.eat('}') {
			return nil
		}
		if !s.eat(',') {
			return s.fail("',' or '}' expected")
		}
	}
}

func apiError(s *scanner) (*APIError, error) {
	e := &APIError{}
	s.eat('{')
	s.ws()
	if s.eat('}') {
		return e, nil
	}
	for {
		s.ws()
		key, _, err := s.str()
		if err != nil {
			return nil, err
		}
		s.ws()
		if !s.eat(':') {
			return nil, s.fail("':' expected after a key")
		}
		s.ws()
		switch string(key) {
		case "code", "err_code":
			v, err := s.uint()
			if err != nil {
				return nil, err
			}
			if string(key) == "code" {
				e.Code = int(min(v, 1<<31))
			} else {
				e.ErrCode = int(min(v, 1<<31))
			}
		case "description":
			var b []byte
			var esc uint8
			if err := s.strInto(&b, &esc, 1); err != nil {
				return nil, err
			}
			e.Description = string(b)
			if esc != 0 {
				if u, err := strconv.Unquote(`"` + string(b) + `"`); err == nil {
					e.Description = u
				}
			}
		default:
			if err := s.skip(0); err != nil {
				return nil, err
			}
		}
		s.ws()
		if s.eat('}') {
			return e, nil
		}
		if !s.eat(',') {
			return nil, s.fail("',' or '}' expected")
		}
	}
}

// decodeEDN reads the keywords a Jepsen history line holds: :type, :f and
// a string :value. The rest of the map is not needed and not checked beyond
// its braces.
func (rr *rawRecord) decodeEDN(line []byte) error {
	if line[len(line)-1] != '}' {
		return &decodeError{len(line) - 1, fmt.Errorf("%w: EDN map not closed", binfmt.ErrFormat)}
	}
	rr.edn = true
	b := line[1 : len(line)-1]
	for i := 0; i < len(b); {
		if b[i] != ':' {
			i++
			continue
		}
		j := i + 1
		for j < len(b) && !isSpace(b[j]) && b[j] != ',' {
			j++
		}
		key := b[i+1 : j]
		for j < len(b) && (isSpace(b[j]) || b[j] == ',') {
			j++
		}
		k := j
		if k < len(b) && b[k] == '"' {
			k++
			for k < len(b) && b[k] != '"' {
				if b[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(b) {
				return &decodeError{1 + j, fmt.Errorf("%w: EDN string not closed", binfmt.ErrFormat)}
			}
			if string(key) == "value" {
				rr.value = b[j+1 : k]
			}
			k++
		} else {
			for k < len(b) && !isSpace(b[k]) && b[k] != ',' && b[k] != '}' {
				k++
			}
			v := b[j:k]
			if len(v) > 0 && v[0] == ':' {
				v = v[1:]
			}
			switch string(key) {
			case "type":
				rr.typ = v
			case "f":
				rr.f = v
			case "value":
				rr.value = v
			}
		}
		i = k
	}
	if rr.typ == nil || rr.f == nil {
		return &decodeError{0, fmt.Errorf("%w: EDN line without :type and :f", binfmt.ErrFormat)}
	}
	return nil
}

// Sniff says whether head, the first bytes of a file, is an ack log: its
// first complete lines (up to 8, blank lines skipped) all decode as PubAck
// replies (or error replies) with at least one sequence, or as Jepsen
// history entries. A torn last line of head is not judged.
func Sniff(head []byte) bool {
	var rr rawRecord
	seen, seqs, edn := 0, 0, 0
	for len(head) > 0 && seen < 8 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break // torn (or the only) line: not judged unless nothing else is
		}
		line := trimSpace(head[:i])
		head = head[i+1:]
		if len(line) == 0 {
			continue
		}
		if rr.decode(line) != nil {
			return false
		}
		seen++
		switch {
		case rr.edn:
			edn++
		case rr.hasSeq:
			seqs++
		}
	}
	if seen == 0 && len(trimSpace(head)) > 0 {
		// A file of one line without its end.
		if rr.decode(trimSpace(head)) != nil {
			return false
		}
		seen++
		if rr.edn {
			edn++
		} else if rr.hasSeq {
			seqs++
		}
	}
	if edn > 0 {
		return edn == seen
	}
	return seqs > 0
}
