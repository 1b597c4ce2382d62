package logscan

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every catalogue entry's example classifies to its kind, through the same
// pattern (no other pattern shadows it), at one of its levels.
func TestCatalogueExamples(t *testing.T) {
	tb := compiledTable()
	if len(tb.all) != len(catalogue) {
		t.Fatalf("compiled %d patterns of %d", len(tb.all), len(catalogue))
	}
	for i := range catalogue {
		p := &catalogue[i]
		if p.Kind == "" || p.Example == "" || p.Source == "" || p.Versions == "" || p.Format == "" {
			t.Errorf("pattern %d (%q) has an empty field", i, p.Format)
			continue
		}
		if !strings.HasPrefix(p.Source, "real ") && !strings.HasPrefix(p.Source, "format ") {
			t.Errorf("pattern %q: Source %q is neither real nor format", p.Format, p.Source)
		}
		s := NewScanner(strings.NewReader(p.Example+"\n"), Options{})
		if !s.Next() {
			t.Errorf("example of %q (%s) does not classify: %q; stats %+v", p.Kind, p.Format, p.Example, s.Stats().UnknownByPrefix)
			continue
		}
		ev := s.Event()
		if ev.Kind != p.Kind {
			t.Errorf("example %q: kind %q, want %q", p.Example, ev.Kind, p.Kind)
		}
		var pp parsed
		parseLine([]byte(p.Example), &pp, nil)
		var m match
		if !classify(&pp, &m) || m.entry.Pattern != p {
			got := "<none>"
			if m.entry != nil {
				got = m.entry.Format
			}
			t.Errorf("example %q matched pattern %q, want %q", p.Example, got, p.Format)
		}
		if p.Levels != "" && ev.Level != "" && !levelIn(ev.Level, p.Levels) {
			t.Errorf("example %q: level %s not in %q", p.Example, ev.Level, p.Levels)
		}
		if s.Stats().LevelMismatch != 0 {
			t.Errorf("example %q counted a level mismatch", p.Example)
		}
		if s.Next() {
			t.Errorf("example %q gave two events", p.Example)
		}
	}
}

// The real-example share is reported so a regression in harvesting shows.
func TestCatalogueSources(t *testing.T) {
	real := 0
	for _, p := range catalogue {
		if strings.HasPrefix(p.Source, "real ") {
			real++
		}
	}
	t.Logf("%d of %d catalogue examples are lines written by a real nats-server", real, len(catalogue))
	if real < len(catalogue)/3 {
		t.Errorf("only %d real examples", real)
	}
}

// Every kind in the catalogue is documented in FORMAT.md's kind table and
// every kind documented there exists.
func TestCatalogueKindsDocumented(t *testing.T) {
	doc, err := os.ReadFile("FORMAT.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|")
	documented := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	kinds := map[string]bool{}
	for _, p := range catalogue {
		kinds[p.Kind] = true
		if !documented[p.Kind] {
			t.Errorf("kind %q is not in FORMAT.md's kind table", p.Kind)
		}
	}
	for k := range documented {
		if !kinds[k] {
			t.Errorf("FORMAT.md documents kind %q that the catalogue does not have", k)
		}
	}
}

func TestCompilePatternErrors(t *testing.T) {
	for _, f := range []string{"a {x", "a {} b", "{x}{y}", "a {b c} d", "{a}{b}{c}{d}{e}{f}{g}{h}{i}"} {
		if _, err := compilePattern(&Pattern{Format: f}); err == nil {
			t.Errorf("compilePattern(%q) succeeded", f)
		}
	}
	c, err := compilePattern(&Pattern{Format: "x {{a:{a}}} -> {b}"})
	if err != nil {
		t.Fatal(err)
	}
	var m match
	if !c.match([]byte("x {a:1 2} -> zz"), &m) || m.n != 2 {
		t.Fatalf("no match")
	}
	if got := string(m.msg[m.caps[0][0]:m.caps[0][1]]); got != "1 2" {
		t.Errorf("capture a = %q", got)
	}
	if got := string(m.msg[m.caps[1][0]:m.caps[1][1]]); got != "zz" {
		t.Errorf("capture b = %q", got)
	}
}

// keyPhrases returns each pattern's longest literal, when it is distinctive
// enough (>= 16 bytes) to say that a line holding it is that kind of line.
func keyPhrases() map[string]*Pattern {
	out := map[string]*Pattern{}
	for _, c := range compiledTable().all {
		best := ""
		for _, l := range c.lits {
			if s := strings.TrimSpace(string(l)); len(s) > len(best) {
				best = s
			}
		}
		if len(best) >= 16 {
			out[best] = c.Pattern
		}
	}
	return out
}
