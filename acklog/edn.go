package acklog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// Limits of the history decoder (FORMAT.md, "Jepsen histories").
const (
	// MaxToken bounds one string, keyword, symbol or number: a published
	// value is a few bytes ("7-63"), an error text a few hundred; a longer
	// token is not an operation field we can use and is reported.
	MaxToken = MaxLine
	// MaxEDNDepth bounds nesting: a nemesis value (a partition's grudge
	// map of sets) is three deep.
	MaxEDNDepth = 32
	// MaxOpValues bounds the elements kept of one operation's collection
	// value (a :fetch result lists every value read, one per message): a
	// read can return no more values than were published, and the history
	// holds each of those as a line of its own; past it the rest are
	// skipped and the operation says so (ValuesCut).
	MaxOpValues = 1 << 22
	// maxValueText bounds the EDN text kept of a value that is not a
	// string (a nemesis op's partition map), for display only.
	maxValueText = 240
)

// Op is one operation of a Jepsen history (jepsen.history.Op): the map
// {:index 2027, :time 16123329080, :type :ok, :process 7, :f :publish,
// :value "7-63"}, plus :seq and :error when present.
type Op struct {
	Line   int64 // 1-based line where the map starts
	Offset int64 // byte offset of its '{'
	// Index and Time (nanoseconds since the test began) are -1 when absent.
	Index, Time int64
	// Type and F are keyword names without the colon ("ok", "publish");
	// Process is the process number or keyword name ("7", "nemesis").
	Type, F, Process string
	// Value: a string value's content, or any other value's EDN text (the
	// first maxValueText bytes; ValueText says which).
	Value     string
	ValueText bool
	// Values are the string and integer elements of a collection value (a
	// read's result), in order; ValuesCut: more than MaxOpValues.
	Values    []string
	ValuesCut bool
	// Seq is a :seq the operation carries (a PubAck sequence).
	Seq    uint64
	HasSeq bool
	// Error is the EDN text of :error (bounded), "" if none.
	Error string
}

// HistoryReader decodes a Jepsen history one operation at a time, streaming:
// memory is bounded by one token (MaxToken) and one operation's kept values,
// never by the length of a line.
type HistoryReader struct {
	file string
	br   *bufio.Reader
	off  int64 // bytes consumed
	line int64 // line of the next byte
	err  error // sticky: I/O error or io.EOF
	last byte  // the byte last read (for unread)

	capOn  bool   // keep the bytes read in capBuf (bounded)
	capBuf []byte // raw text of the value being read
	capped bool   // the last byte read was kept

	tok []byte // token buffer, reused
	op  *Op
}

// NewHistoryReader returns a reader of the history r; file names it in
// errors.
func NewHistoryReader(file string, r io.Reader) *HistoryReader {
	return &HistoryReader{file: file, br: bufio.NewReaderSize(r, 64<<10), line: 1}
}

// Line is the number of lines read so far.
func (r *HistoryReader) Line() int64 { return r.line }

// errEOF is an end of input in the middle of an operation.
var errEOF = errors.New("end of input")

// ednError is a decoding error at a byte offset.
type ednError struct {
	off, line int64
	err       error
}

func (e *ednError) Error() string { return e.err.Error() }

func (r *HistoryReader) fail(format string, a ...any) error {
	return &ednError{r.off - 1, r.line, fmt.Errorf("%w: "+format, append([]any{binfmt.ErrFormat}, a...)...)}
}

func (r *HistoryReader) readByte() (byte, error) {
	c, err := r.br.ReadByte()
	if err != nil {
		if err == io.EOF {
			return 0, errEOF
		}
		return 0, err
	}
	r.off++
	r.last = c
	if c == '\n' {
		r.line++
	}
	r.capped = false
	if r.capOn && len(r.capBuf) < maxValueText {
		r.capBuf = append(r.capBuf, c)
		r.capped = true
	}
	return c, nil
}

func (r *HistoryReader) unreadByte() {
	_ = r.br.UnreadByte()
	r.off--
	if r.last == '\n' {
		r.line--
	}
	if r.capped {
		r.capBuf = r.capBuf[:len(r.capBuf)-1]
		r.capped = false
	}
}

func isEDNSpace(c byte) bool {
	return c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r' || c == '\f'
}

func isDelim(c byte) bool {
	return isEDNSpace(c) || c == '{' || c == '}' || c == '[' || c == ']' || c == '(' || c == ')' || c == '"' || c == ';'
}

// skipSpace returns the next byte that is not whitespace or a comment.
func (r *HistoryReader) skipSpace() (byte, error) {
	for {
		c, err := r.readByte()
		if err != nil {
			return 0, err
		}
		switch {
		case isEDNSpace(c):
		case c == ';':
			for c != '\n' {
				if c, err = r.readByte(); err != nil {
					return 0, err
				}
			}
		default:
			return c, nil
		}
	}
}

// skipLine passes the rest of the current line (after an error).
func (r *HistoryReader) skipLine() {
	r.capOn = false
	if r.last == '\n' {
		return
	}
	for {
		c, err := r.readByte()
		if err != nil {
			if err != errEOF {
				r.err = err
			}
			return
		}
		if c == '\n' {
			return
		}
	}
}

// Next returns the next operation. An operation that cannot be decoded is
// a *LineError (wrapping binfmt.ErrFormat, binfmt.ErrTooLarge or, for a
// map cut off by the end of the file, binfmt.ErrTruncated) and reading
// goes on at the next line; io.EOF ends the history; any other error is
// the underlying reader's and sticks.
func (r *HistoryReader) Next() (Op, error) {
	if r.err != nil {
		return Op{}, r.err
	}
	c, err := r.skipSpace()
	if err != nil {
		return Op{}, r.ioEnd(err)
	}
	start, line := r.off-1, r.line
	var op Op
	if c != '{' {
		err = r.fail("an operation map expected, found %q", c)
	} else {
		op = Op{Line: line, Offset: start, Index: -1, Time: -1}
		err = r.opMap(&op)
	}
	if err == nil {
		return op, nil
	}
	var ee *ednError
	switch {
	case errors.As(err, &ee):
	case err == errEOF:
		r.err = io.EOF
		return Op{}, &LineError{File: r.file, Line: line, Offset: start, Col: int(min(r.off-start, 1<<30)),
			Err: fmt.Errorf("%w: operation map cut off by the end of the file", binfmt.ErrTruncated)}
	default:
		r.err = err
		return Op{}, err
	}
	r.skipLine()
	return Op{}, &LineError{File: r.file, Line: ee.line, Offset: start, Col: int(min(max(ee.off-start, 0), 1<<30)), Err: ee.err}
}

func (r *HistoryReader) ioEnd(err error) error {
	if err == errEOF {
		err = io.EOF
	}
	r.err = err
	return err
}

// opMap reads the operation's map after its '{'.
func (r *HistoryReader) opMap(op *Op) error {
	r.op = op
	defer func() { r.op = nil }()
	for {
		c, err := r.skipSpace()
		if err != nil {
			return err
		}
		if c == '}' {
			return nil
		}
		if c == '#' {
			if n, err := r.readByte(); err != nil || n != '_' {
				if err != nil {
					return err
				}
				return r.fail("a keyword key expected in an operation map, found #%c", n)
			}
			if _, _, err := r.value(0, false); err != nil { // #_ discards the next value
				return err
			}
			continue
		}
		if c != ':' {
			return r.fail("a keyword key expected in an operation map, found %q", c)
		}
		tok, err := r.token()
		if err != nil {
			return err
		}
		key := string(tok) // the token buffer is reused by the value
		switch key {
		case "index", "time":
			v, err := r.integer(key)
			if err != nil {
				return err
			}
			if key[0] == 'i' {
				op.Index = v
			} else {
				op.Time = v
			}
		case "seq":
			v, err := r.integer("seq")
			if err != nil {
				return err
			}
			if v < 1 {
				return r.fail(":seq %d: no message has it", v)
			}
			op.Seq, op.HasSeq = uint64(v), true
		case "type", "f", "process":
			kind, text, err := r.value(0, false)
			if err != nil {
				return err
			}
			if kind == kindColl {
				return r.fail(":%s is a collection", key)
			}
			switch key[0] {
			case 't':
				op.Type = text
			case 'f':
				op.F = text
			default:
				op.Process = text
			}
		case "value":
			r.capOn, r.capBuf = true, r.capBuf[:0]
			kind, text, err := r.value(0, true)
			r.capOn = false
			if err != nil {
				return err
			}
			if kind == kindString {
				op.Value = text
			} else {
				op.Value, op.ValueText = string(trimSpace(r.capBuf)), true
			}
		case "error":
			r.capOn, r.capBuf = true, r.capBuf[:0]
			_, _, err := r.value(0, false)
			r.capOn = false
			if err != nil {
				return err
			}
			op.Error = string(trimSpace(r.capBuf))
		default:
			if _, _, err := r.value(0, false); err != nil {
				return err
			}
		}
	}
}

// integer reads an integer value (Clojure's N suffix allowed).
func (r *HistoryReader) integer(key string) (int64, error) {
	kind, text, err := r.value(0, false)
	if err != nil {
		return 0, err
	}
	if kind != kindToken {
		return 0, r.fail(":%s is not an integer", key)
	}
	if n := len(text); n > 1 && text[n-1] == 'N' {
		text = text[:n-1]
	}
	v, perr := strconv.ParseInt(text, 10, 64)
	if perr != nil {
		return 0, r.fail(":%s %q is not an integer", key, text)
	}
	return v, nil
}

const (
	kindToken  = iota // number, keyword (colon dropped), symbol, character
	kindString        // decoded content
	kindColl          // map, vector, list, set
)

// value reads one EDN value. collect: the elements of a collection at the
// top go to r.op.Values.
func (r *HistoryReader) value(depth int, collect bool) (int, string, error) {
	if depth > MaxEDNDepth {
		return 0, "", r.fail("nesting deeper than %d", MaxEDNDepth)
	}
	c, err := r.skipSpace()
	if err != nil {
		return 0, "", err
	}
	switch c {
	case '"':
		s, err := r.str()
		return kindString, s, err
	case '{':
		return kindColl, "", r.coll('}', depth, false) // a map's keys are no result
	case '[', '(':
		return kindColl, "", r.coll(closerOf(c), depth, collect)
	case '}', ']', ')':
		return 0, "", r.fail("unexpected %q", c)
	case '#':
		n, err := r.readByte()
		if err != nil {
			return 0, "", err
		}
		switch n {
		case '{':
			return kindColl, "", r.coll('}', depth, collect)
		case '_': // discard the next value
			if _, _, err := r.value(depth+1, false); err != nil {
				return 0, "", err
			}
			return r.value(depth, collect)
		case '"': // regex
			s, err := r.str()
			return kindString, s, err
		}
		// A tag (#inst, #uuid, #jepsen.history.Op): the value follows.
		r.unreadByte()
		if _, err := r.token(); err != nil {
			return 0, "", err
		}
		return r.value(depth+1, collect)
	case ':':
		t, err := r.token()
		return kindToken, string(t), err
	case '\\':
		t, err := r.token()
		return kindToken, "\\" + string(t), err
	}
	r.unreadByte()
	t, err := r.token()
	if err != nil {
		return 0, "", err
	}
	if len(t) == 0 {
		return 0, "", r.fail("value expected")
	}
	return kindToken, string(t), nil
}

func closerOf(c byte) byte {
	switch c {
	case '{':
		return '}'
	case '[':
		return ']'
	}
	return ')'
}

// coll reads a collection's elements up to closer.
func (r *HistoryReader) coll(closer byte, depth int, collect bool) error {
	top := collect && depth == 0
	for {
		c, err := r.skipSpace()
		if err != nil {
			return err
		}
		if c == closer {
			return nil
		}
		r.unreadByte()
		kind, text, err := r.value(depth+1, false)
		if err != nil {
			return err
		}
		if top && kind != kindColl && (kind == kindString || isInteger(text)) {
			if len(r.op.Values) < MaxOpValues {
				r.op.Values = append(r.op.Values, text)
			} else {
				r.op.ValuesCut = true
			}
		}
	}
}

func isInteger(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// token reads up to the next delimiter.
func (r *HistoryReader) token() ([]byte, error) {
	r.tok = r.tok[:0]
	for {
		c, err := r.readByte()
		if err == errEOF {
			return r.tok, nil // the caller meets the end next
		}
		if err != nil {
			return nil, err
		}
		if isDelim(c) {
			r.unreadByte()
			return r.tok, nil
		}
		if len(r.tok) >= MaxToken {
			return nil, &ednError{r.off - 1, r.line, fmt.Errorf("%w: token longer than %d bytes", binfmt.ErrTooLarge, MaxToken)}
		}
		r.tok = append(r.tok, c)
	}
}

// str reads a string after its opening quote and decodes its escapes.
func (r *HistoryReader) str() (string, error) {
	r.tok = r.tok[:0]
	for {
		c, err := r.readByte()
		if err != nil {
			return "", err
		}
		if len(r.tok) >= MaxToken {
			return "", &ednError{r.off - 1, r.line, fmt.Errorf("%w: string longer than %d bytes", binfmt.ErrTooLarge, MaxToken)}
		}
		switch c {
		case '"':
			return string(r.tok), nil
		case '\\':
			e, err := r.readByte()
			if err != nil {
				return "", err
			}
			switch e {
			case 'n':
				r.tok = append(r.tok, '\n')
			case 't':
				r.tok = append(r.tok, '\t')
			case 'r':
				r.tok = append(r.tok, '\r')
			case 'b':
				r.tok = append(r.tok, '\b')
			case 'f':
				r.tok = append(r.tok, '\f')
			case '"', '\\', '/':
				r.tok = append(r.tok, e)
			case 'u':
				var v rune
				for range 4 {
					h, err := r.readByte()
					if err != nil {
						return "", err
					}
					d, ok := hexVal(h)
					if !ok {
						return "", r.fail("bad \\u escape")
					}
					v = v<<4 | rune(d)
				}
				r.tok = utf8.AppendRune(r.tok, v)
			default:
				return "", r.fail("unknown escape \\%c", e)
			}
		default:
			r.tok = append(r.tok, c)
		}
	}
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
