package logscan

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// maxCaps bounds the captures of one pattern.
const maxCaps = 8

// compiled is a Pattern split into literals and capture names:
// lits[0] names[0] lits[1] names[1] ... names[n-1] lits[n].
type compiled struct {
	*Pattern
	lits   [][]byte
	names  []string
	litLen int // total literal length, for ordering (most specific first)
}

// table is the compiled catalogue: per scope, candidates by the message's
// first word, plus patterns whose first word is itself a capture.
type table struct {
	byKey [numScopes]map[string][]*compiled
	wild  [numScopes][]*compiled
	// phrases are the distinctive literals of each pattern, for the
	// "key phrase" check in tests and Matches.
	all []*compiled
}

var compiledTable = sync.OnceValue(func() *table {
	t, err := compileCatalogue(catalogue)
	if err != nil {
		panic(err) // the catalogue is a constant of the program; its test covers this
	}
	return t
})

func compileCatalogue(pats []Pattern) (*table, error) {
	t := &table{}
	for i := range t.byKey {
		t.byKey[i] = map[string][]*compiled{}
	}
	for i := range pats {
		c, err := compilePattern(&pats[i])
		if err != nil {
			return nil, err
		}
		sc, ok := scopeByName(c.Scope)
		if !ok {
			return nil, fmt.Errorf("logscan: pattern %q: unknown scope %q", c.Format, c.Scope)
		}
		t.all = append(t.all, c)
		if key, ok := firstWord(c.lits[0], len(c.names) == 0); ok {
			t.byKey[sc][string(key)] = append(t.byKey[sc][string(key)], c)
		} else {
			t.wild[sc] = append(t.wild[sc], c)
		}
	}
	order := func(l []*compiled) {
		sort.SliceStable(l, func(i, j int) bool { return l[i].litLen > l[j].litLen })
	}
	for sc := range t.byKey {
		for _, l := range t.byKey[sc] {
			order(l)
		}
		order(t.wild[sc])
	}
	return t, nil
}

func compilePattern(p *Pattern) (*compiled, error) {
	c := &compiled{Pattern: p}
	// "{name}" is a capture; "{{" and "}}" are literal braces.
	f := p.Format
	var lit []byte
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == '{' && i+1 < len(f) && f[i+1] == '{':
			lit = append(lit, '{')
			i++
		case f[i] == '}' && i+1 < len(f) && f[i+1] == '}':
			lit = append(lit, '}')
			i++
		case f[i] == '{':
			j := strings.IndexByte(f[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("logscan: pattern %q: unclosed {", p.Format)
			}
			name := f[i+1 : i+j]
			if name == "" || strings.ContainsAny(name, "{ ") {
				return nil, fmt.Errorf("logscan: pattern %q: bad capture name %q", p.Format, name)
			}
			c.lits = append(c.lits, lit)
			lit = nil
			c.names = append(c.names, name)
			i += j
		default:
			lit = append(lit, f[i])
		}
	}
	c.lits = append(c.lits, lit)
	if len(c.names) > maxCaps {
		return nil, fmt.Errorf("logscan: pattern %q: more than %d captures", p.Format, maxCaps)
	}
	for k := 1; k < len(c.lits)-1; k++ {
		if len(c.lits[k]) == 0 {
			return nil, fmt.Errorf("logscan: pattern %q: two captures side by side", p.Format)
		}
	}
	for _, l := range c.lits {
		c.litLen += len(l)
	}
	return c, nil
}

// firstWord returns the message's first word, leading spaces included (the
// banner lines are indented). For a pattern's first literal, the word must
// end before a capture starts (whole says the literal is the whole pattern).
func firstWord(b []byte, whole bool) ([]byte, bool) {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	if sp := bytes.IndexByte(b[i:], ' '); sp >= 0 {
		return b[:i+sp], true
	}
	if whole {
		return b, len(b) > i
	}
	return nil, false
}

// match is the result of matching one message.
type match struct {
	entry *compiled
	msg   []byte
	caps  [maxCaps][2]int
	n     int
}

// classify matches p.msg against the catalogue of p's scope.
func classify(p *parsed, m *match) bool {
	t := compiledTable()
	msg := p.msg
	if key, ok := firstWord(msg, true); ok {
		for _, c := range t.byKey[p.scope][string(key)] {
			if c.match(msg, m) {
				return true
			}
		}
	}
	for _, c := range t.wild[p.scope] {
		if c.match(msg, m) {
			return true
		}
	}
	return false
}

// match matches msg against the pattern: every literal in order, each
// capture taking the shortest text up to the next literal, the last literal
// anchored at the end.
func (c *compiled) match(msg []byte, m *match) bool {
	lits := c.lits
	if !bytes.HasPrefix(msg, lits[0]) {
		return false
	}
	n := len(c.names)
	if n == 0 {
		if len(msg) != len(lits[0]) {
			return false
		}
		m.entry, m.msg, m.n = c, msg, 0
		return true
	}
	pos := len(lits[0])
	for k := 0; k < n; k++ {
		next := lits[k+1]
		var end, after int
		if k == n-1 {
			// The last literal is anchored at the end of the line.
			if !bytes.HasSuffix(msg, next) || len(msg)-len(next) < pos {
				return false
			}
			end = len(msg) - len(next)
			after = len(msg)
		} else {
			i := bytes.Index(msg[pos:], next)
			if i < 0 {
				return false
			}
			end = pos + i
			after = end + len(next)
		}
		m.caps[k] = [2]int{pos, end}
		pos = after
	}
	m.entry, m.msg, m.n = c, msg, n
	return true
}
