package logscan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzScanner feeds arbitrary bytes to the scanner (every dialect parser
// and the catalogue run on them) and checks its invariants. Seeds are lines
// and chunks of the server logs of the bundles and their dialect transforms.
func FuzzScanner(f *testing.F) {
	var logs [][]byte
	for _, lg := range serverLogs(f) {
		logs = append(logs, lg.data)
	}
	more, _ := filepath.Glob("testdata/dialects/*.log")
	for _, n := range more {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		logs = append(logs, b)
	}
	for _, b := range logs {
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i := 0; i < len(lines); i += 7 {
			f.Add(lines[i])
		}
		f.Add(b[:min(len(b), 4096)])
	}
	for _, p := range catalogue {
		f.Add([]byte(p.Example + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewScanner(bytes.NewReader(data), Options{MaxLine: 512, All: true})
		n := 0
		for s.Next() {
			ev := s.Event()
			n++
			if len(ev.Raw) > MaxRaw+3*MaxRaw/4 || len(ev.Text) > 3*MaxText {
				t.Fatalf("unbounded event strings: raw %d text %d", len(ev.Raw), len(ev.Text))
			}
			for _, v := range []string{ev.Raw, ev.Text, ev.Stream, ev.Group, ev.Node, ev.Pod, ev.Account, ev.Consumer, ev.Peer, ev.Leader} {
				if !utf8.ValidString(v) {
					t.Fatalf("invalid UTF-8 in event: %q", v)
				}
			}
			for _, v := range ev.Fields {
				if len(v) > MaxFieldValue || !utf8.ValidString(v) {
					t.Fatalf("bad field %q", v)
				}
			}
			if ev.Line < 1 || ev.Offset < 0 || ev.Offset >= int64(len(data)) {
				t.Fatalf("bad position %d/%d", ev.Line, ev.Offset)
			}
		}
		st := s.Stats()
		if st.Lines != st.Empty+st.TooLong+st.Classified+st.Unknown {
			t.Fatalf("counts do not add up: %+v", st)
		}
		if n != st.Classified+st.Unknown {
			t.Fatalf("%d events for %d classified + %d unknown", n, st.Classified, st.Unknown)
		}
		if want := bytes.Count(data, []byte("\n")) + st.Unterminated; st.Lines != want {
			t.Fatalf("%d lines, want %d", st.Lines, want)
		}
		if s.Err() != nil {
			t.Fatalf("error on in-memory input: %v", s.Err())
		}
	})
}
