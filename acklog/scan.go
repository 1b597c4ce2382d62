package acklog

import (
	"fmt"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// maxDepth bounds the nesting of skipped JSON values: a wrapper's own
// members are flat; deeper nesting is not a log line we can use.
const maxDepth = 32

// decodeError carries the byte within the line where decoding failed.
type decodeError struct {
	col int
	err error
}

func (e *decodeError) Error() string { return fmt.Sprintf("byte %d: %v", e.col, e.err) }
func (e *decodeError) Unwrap() error { return e.err }

// scanner walks one JSON line in place: strings are returned as slices of
// the line (escapes flagged, not decoded), so a line costs no allocation.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(what string) error {
	return &decodeError{s.i, fmt.Errorf("%w: %s", binfmt.ErrFormat, what)}
}

func (s *scanner) ws() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a JSON string and returns its raw content and whether it holds
// escapes.
func (s *scanner) str() ([]byte, bool, error) {
	if !s.eat('"') {
		return nil, false, s.fail("string expected")
	}
	start, esc := s.i, false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			return out, esc, nil
		case c == '\\':
			esc = true
			s.i += 2
		case c < 0x20:
			return nil, false, s.fail("control character in a string")
		default:
			s.i++
		}
	}
	return nil, false, s.fail("string not closed")
}

func (s *scanner) strInto(dst *[]byte, escaped *uint8, bit uint8) error {
	v, esc, err := s.str()
	if err != nil {
		return err
	}
	*dst = v
	if esc {
		*escaped |= bit
	}
	return nil
}

// strOrRaw reads a string, or keeps any other value's raw text.
func (s *scanner) strOrRaw(dst *[]byte, escaped *uint8, bit uint8) error {
	if s.peek() == '"' {
		return s.strInto(dst, escaped, bit)
	}
	start := s.i
	err := s.skip(0)
	*dst = s.b[start:s.i]
	return err
}

// uint reads a non-negative integer that fits in 64 bits.
func (s *scanner) uint() (uint64, error) {
	start := s.i
	var v uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, s.fail("number out of range")
		}
		v = v*10 + d
		s.i++
	}
	if s.i == start {
		return 0, s.fail("unsigned integer expected")
	}
	if c := s.peek(); c == '.' || c == 'e' || c == 'E' {
		return 0, s.fail("integer expected")
	}
	return v, nil
}

func (s *scanner) boolean() (bool, error) {
	switch {
	case s.lit("true"):
		return true, nil
	case s.lit("false"):
		return false, nil
	}
	return false, s.fail("true or false expected")
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// skip passes over one JSON value of any kind.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	s.ws()
	switch c := s.peek(); {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.ws()
		if s.eat(closer) {
			return nil
		}
		for {
			s.ws()
			if c == '{' {
				if _, _, err := s.str(); err != nil {
					return err
				}
				s.ws()
				if !s.eat(':') {
					return s.fail("':' expected after a key")
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.eat(closer) {
				return nil
			}
			if !s.eat(',') {
				return s.fail("',' expected")
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		s.i++
		for s.i < len(s.b) && isNumberByte(s.b[s.i]) {
			s.i++
		}
		return nil
	case s.lit("true"), s.lit("false"), s.lit("null"):
		return nil
	}
	return s.fail("value expected")
}

func isNumberByte(d byte) bool {
	return d >= '0' && d <= '9' || d == '.' || d == 'e' || d == 'E' || d == '+' || d == '-'
}
