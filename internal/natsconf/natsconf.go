// Package natsconf reads nats-server configuration files as the server's
// own parser does (nats-server conf/lex.go, conf/parse.go, checked against
// v2.10.22 and v2.15.3): keys with ':', '=' or a space, maps in braces,
// arrays in brackets, quoted and bare strings, '#' and '//' comments,
// `include FILE` (relative to the including file), and $VARIABLE
// references, resolved from keys defined before them in an enclosing
// scope. What the server would take from its environment (a variable no
// scope defines, as the Helm chart's `server_name: $SERVER_NAME`) is not
// in a bundle: such a value is Unresolved, never guessed, and neither is a
// value an include the bundle lacks may have set.
//
// Only what the analysis needs is modelled: scalars are kept as the text
// the file holds (the server's own typing of numbers, sizes and durations
// is applied by the caller that knows the key).
package natsconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Limits that keep a hostile file from costing more than its size.
const (
	// MaxDepth bounds nested maps, arrays and includes together.
	MaxDepth = 32
	// MaxIncludes bounds the include directives followed in one config.
	MaxIncludes = 64
)

// ErrSyntax is wrapped by every error of a file that does not parse.
var ErrSyntax = errors.New("config syntax")

// SyntaxError says where a file stopped parsing; what parsed before it is
// kept.
type SyntaxError struct {
	File   string
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: at offset %d: %s", e.File, e.Offset, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Value is one value of a config: a scalar (Text), a map or an array.
type Value struct {
	Text string
	Map  *Map
	List []Value
	// Var is the name of a $VARIABLE that no enclosing scope defined (the
	// server would look it up in its environment); Text is then empty.
	Var string
	// File and Offset say where the value starts.
	File   string
	Offset int
}

// Unresolved says the value is a variable the bundle does not define.
func (v Value) Unresolved() bool { return v.Var != "" }

// Map holds a block's keys, lower-cased as the server compares them
// (opts.go strings.ToLower(k)); a key given twice keeps its last value, as
// the server's map does.
type Map struct {
	keys []string
	vals map[string]Value
}

func newMap() *Map { return &Map{vals: map[string]Value{}} }

// Get returns the value of key (any case).
func (m *Map) Get(key string) (Value, bool) {
	if m == nil {
		return Value{}, false
	}
	v, ok := m.vals[strings.ToLower(key)]
	return v, ok
}

// Keys lists the map's keys in the order first seen.
func (m *Map) Keys() []string {
	if m == nil {
		return nil
	}
	return append([]string(nil), m.keys...)
}

func (m *Map) set(key string, v Value) {
	k := strings.ToLower(key)
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// Config is one config file as read, its includes merged in.
type Config struct {
	Path string
	Root *Map
	// Includes are the files included (as resolved), MissingIncludes those
	// the bundle does not hold: what they set is unknown.
	Includes, MissingIncludes []string
	// Err is the first syntax error of the file or an include, nil when
	// all of it parsed.
	Err error
}

// Lookup follows keys down nested maps: Lookup("jetstream", "store_dir").
func (c *Config) Lookup(keys ...string) (Value, bool) {
	m := c.Root
	var v Value
	for i, k := range keys {
		var ok bool
		if v, ok = m.Get(k); !ok {
			return Value{}, false
		}
		if i < len(keys)-1 {
			if v.Map == nil {
				return Value{}, false
			}
			m = v.Map
		}
	}
	return v, true
}

// Complete says the config was read whole: it parsed, and every include
// it names was found. A key a config that is not complete lacks may still
// be set; one it holds may be overridden after the point where it stops.
func (c *Config) Complete() bool { return c.Err == nil && len(c.MissingIncludes) == 0 }

// Open reads an included file by its path; the bundle's reader.
type Open func(path string) ([]byte, error)

// Parse reads the config file at path (its bytes data), following
// includes through open (nil: includes are missing).
func Parse(file string, data []byte, open Open) *Config {
	c := &Config{Path: file, Root: newMap()}
	p := &parser{c: c, open: open}
	p.scopes = []*Map{c.Root}
	p.file(file, data, c.Root, 0)
	return c
}

type parser struct {
	c        *Config
	open     Open
	scopes   []*Map // enclosing maps, innermost last, for $VARIABLE lookup
	included int
}

// lexer is a cursor over one file.
type lexer struct {
	file string
	b    []byte
	pos  int
}

func (p *parser) fail(lx *lexer, format string, args ...any) {
	if p.c.Err == nil {
		p.c.Err = &SyntaxError{File: lx.file, Offset: lx.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (p *parser) file(name string, data []byte, into *Map, depth int) {
	lx := &lexer{file: name, b: data}
	// The whole file may be one map in braces (the Helm chart writes its
	// config so); the server reads its keys as top-level ones.
	lx.skip(true)
	end := byte(0)
	if lx.pos < len(lx.b) && lx.b[lx.pos] == '{' {
		lx.pos++
		end = '}'
	}
	if !p.entries(lx, into, depth, end) {
		return
	}
	lx.skip(true)
	if lx.pos < len(lx.b) {
		p.fail(lx, "unexpected %q", lx.b[lx.pos])
	}
}

// skip passes whitespace and comments; with seps also ',' and ';' (entry
// separators). It returns whether a newline was passed.
func (lx *lexer) skip(seps bool) bool {
	nl := false
	for lx.pos < len(lx.b) {
		switch c := lx.b[lx.pos]; {
		case c == '\n':
			nl = true
			lx.pos++
		case c == ' ' || c == '\t' || c == '\r':
			lx.pos++
		case seps && (c == ',' || c == ';'):
			lx.pos++
		case c == '#' || c == '/' && lx.pos+1 < len(lx.b) && lx.b[lx.pos+1] == '/':
			for lx.pos < len(lx.b) && lx.b[lx.pos] != '\n' {
				lx.pos++
			}
		default:
			return nl
		}
	}
	return nl
}

// entries reads key-value entries into m until end (0: the end of the
// file, '}' for a map). It returns false after a syntax error.
func (p *parser) entries(lx *lexer, m *Map, depth int, end byte) bool {
	for {
		lx.skip(true)
		if lx.pos >= len(lx.b) {
			if end != 0 {
				p.fail(lx, "map not closed")
				return false
			}
			return true
		}
		if end != 0 && lx.b[lx.pos] == end {
			lx.pos++
			return true
		}
		start := lx.pos
		key, ok := p.key(lx)
		if !ok {
			return false
		}
		if key == "include" {
			lx.skip(false)
			v, ok := p.scalar(lx)
			if !ok {
				return false
			}
			p.include(lx, v.Text, m, depth)
			continue
		}
		lx.skip(false)
		if lx.pos < len(lx.b) && (lx.b[lx.pos] == ':' || lx.b[lx.pos] == '=') {
			lx.pos++
			lx.skip(false)
		}
		if lx.pos >= len(lx.b) {
			lx.pos = start
			p.fail(lx, "key %q without a value", key)
			return false
		}
		v, ok := p.value(lx, depth)
		if !ok {
			return false
		}
		m.set(key, v)
	}
}

// key reads a bare or quoted key.
func (p *parser) key(lx *lexer) (string, bool) {
	if c := lx.b[lx.pos]; c == '"' || c == '\'' {
		v, ok := p.quoted(lx)
		return v.Text, ok
	}
	start := lx.pos
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ':' || c == '=' || c == '{' || c == '[' || c == '}' || c == ']' || c == ',' || c == ';' || c == '#' {
			break
		}
		lx.pos++
	}
	if lx.pos == start {
		p.fail(lx, "unexpected %q where a key was expected", lx.b[lx.pos])
		return "", false
	}
	return string(lx.b[start:lx.pos]), true
}

// value reads a map, an array, a quoted, block or bare string.
func (p *parser) value(lx *lexer, depth int) (Value, bool) {
	if depth >= MaxDepth {
		p.fail(lx, "nested more than %d deep", MaxDepth)
		return Value{}, false
	}
	start := lx.pos
	switch lx.b[lx.pos] {
	case '{':
		lx.pos++
		m := newMap()
		p.scopes = append(p.scopes, m)
		ok := p.entries(lx, m, depth+1, '}')
		p.scopes = p.scopes[:len(p.scopes)-1]
		return Value{Map: m, File: lx.file, Offset: start}, ok
	case '[':
		lx.pos++
		v := Value{List: []Value{}, File: lx.file, Offset: start}
		for {
			lx.skip(true)
			if lx.pos >= len(lx.b) {
				p.fail(lx, "array not closed")
				return v, false
			}
			if lx.b[lx.pos] == ']' {
				lx.pos++
				return v, true
			}
			e, ok := p.value(lx, depth+1)
			if !ok {
				return v, false
			}
			v.List = append(v.List, e)
		}
	case '(':
		// A block string runs to a ')' alone on a line (conf/lex.go lexBlock).
		end := strings.Index(string(lx.b[lx.pos:]), "\n)")
		if end < 0 {
			p.fail(lx, "block string not closed")
			return Value{}, false
		}
		text := string(lx.b[lx.pos+1 : lx.pos+end+1])
		lx.pos += end + 2
		return Value{Text: text, File: lx.file, Offset: start}, true
	}
	return p.scalar(lx)
}

// scalar reads a quoted or bare string; a bare $NAME is a variable.
func (p *parser) scalar(lx *lexer) (Value, bool) {
	if lx.pos >= len(lx.b) {
		p.fail(lx, "value expected")
		return Value{}, false
	}
	if c := lx.b[lx.pos]; c == '"' || c == '\'' {
		return p.quoted(lx)
	}
	start := lx.pos
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ';' || c == '}' || c == ']' {
			break
		}
		lx.pos++
	}
	text := string(lx.b[start:lx.pos])
	if text == "" {
		p.fail(lx, "unexpected %q where a value was expected", lx.b[lx.pos])
		return Value{}, false
	}
	v := Value{Text: text, File: lx.file, Offset: start}
	// "$2a$…" is a bcrypt hash, not a variable (conf/parse.go bcryptPrefix).
	if name, ok := strings.CutPrefix(text, "$"); ok && name != "" && !strings.HasPrefix(name, "2a$") {
		return p.variable(name, v), true
	}
	return v, true
}

// variable resolves $name from the enclosing scopes, innermost first, as
// the server does before it tries its environment.
func (p *parser) variable(name string, at Value) Value {
	for i := len(p.scopes) - 1; i >= 0; i-- {
		if v, ok := p.scopes[i].Get(name); ok {
			v.File, v.Offset = at.File, at.Offset
			return v
		}
	}
	return Value{Var: name, File: at.File, Offset: at.Offset}
}

// quoted reads a "…" (with backslash escapes) or '…' (raw) string.
func (p *parser) quoted(lx *lexer) (Value, bool) {
	start := lx.pos
	q := lx.b[lx.pos]
	lx.pos++
	var sb strings.Builder
	for lx.pos < len(lx.b) {
		c := lx.b[lx.pos]
		switch {
		case c == q:
			lx.pos++
			return Value{Text: sb.String(), File: lx.file, Offset: start}, true
		case c == '\\' && q == '"' && lx.pos+1 < len(lx.b):
			lx.pos++
			switch e := lx.b[lx.pos]; e {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			default:
				sb.WriteByte(e)
			}
		case c == '\n' && q == '"':
			p.fail(lx, "string not closed on its line")
			return Value{}, false
		default:
			sb.WriteByte(c)
		}
		lx.pos++
	}
	lx.pos = start
	p.fail(lx, "string not closed")
	return Value{}, false
}

// include merges the file at target (relative to the including file) into
// m, as the server parses an include in place.
func (p *parser) include(lx *lexer, target string, m *Map, depth int) {
	resolved := target
	if !path.IsAbs(target) {
		resolved = path.Join(path.Dir(lx.file), target)
	}
	if depth+1 >= MaxDepth || p.included >= MaxIncludes {
		p.c.MissingIncludes = append(p.c.MissingIncludes, resolved)
		return
	}
	p.included++
	var data []byte
	err := errors.New("no reader")
	if p.open != nil {
		data, err = p.open(resolved)
	}
	if err != nil {
		p.c.MissingIncludes = append(p.c.MissingIncludes, resolved)
		return
	}
	p.c.Includes = append(p.c.Includes, resolved)
	p.file(resolved, data, m, depth+1)
}

// Sniff says whether head (a file's first bytes) reads as a nats-server
// config: it parses, and a top-level key is one only a server config has
// (a jetstream, cluster, gateway or leafnodes block, server_name,
// store_dir), so that a JSON capture or a log line does not pass.
func Sniff(head []byte) bool {
	if len(head) == 0 || json.Valid(head) {
		return false // a capture (/varz has server_name and jetstream too)
	}
	// A damaged /varz or /jsz capture is JSON no longer valid, which a config
	// in braces resembles; a server's answer names its server_id, no config
	// key does.
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '{' && bytes.Contains(head, []byte(`"server_id"`)) {
		return false
	}
	c := Parse("sniff", head, nil)
	if c.Err != nil {
		// A prefix cut inside a value still counts when the keys before it
		// are a config's.
		if se, ok := c.Err.(*SyntaxError); !ok || se.Offset < len(head)-256 {
			return false
		}
	}
	for _, k := range []string{"jetstream", "cluster", "gateway", "leafnodes", "server_name", "store_dir"} {
		if _, ok := c.Root.Get(k); ok {
			return true
		}
	}
	return false
}
