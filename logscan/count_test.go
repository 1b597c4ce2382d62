package logscan

import (
	"strings"
	"testing"
)

// Count reads a count field as nats-server prints it (comma()), so that a
// reader of "Restored N messages" takes the number from the event, never
// from its text.
func TestCount(t *testing.T) {
	for _, tt := range []struct {
		line string
		n    uint64
		ok   bool
	}{
		{`[27387] 2026/11/30 01:24:51.439882 [INF]   Restored 0 messages for stream 'APP > EVENTS' in 1ms`, 0, true},
		{`[27387] 2026/11/30 01:24:51.439882 [INF]   Restored 1,234,567 messages for stream 'APP > EVENTS' in 1ms`, 1234567, true},
		{`[27387] 2026/11/30 01:24:51.439882 [INF]   Restored 12x messages for stream 'APP > EVENTS' in 1ms`, 0, false},
		{`[27387] 2026/11/30 01:24:51.439882 [INF]   Restored ,5 messages for stream 'APP > EVENTS' in 1ms`, 0, false},
		{`[27387] 2026/11/30 01:24:51.439882 [INF]   Restored 99,999,999,999,999,999,999 messages for stream 'APP > EVENTS' in 1ms`, 0, false},
	} {
		s := NewScanner(strings.NewReader(tt.line+"\n"), Options{File: "t.log"})
		if !s.Next() {
			t.Fatalf("%s: no event", tt.line)
		}
		ev := s.Event()
		if ev.Kind != "restored-stream" {
			t.Fatalf("%s: kind %q", tt.line, ev.Kind)
		}
		n, ok := ev.Count("msgs")
		if n != tt.n || ok != tt.ok {
			t.Errorf("%s: Count = %d, %v; want %d, %v", tt.line, n, ok, tt.n, tt.ok)
		}
	}
	var ev Event
	if _, ok := ev.Count("msgs"); ok {
		t.Error("an event without the field has a count")
	}
}
