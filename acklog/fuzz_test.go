package acklog

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// FuzzRead: any bytes read as an ack log never panic, every line is either
// counted or reported with a line number inside the input, and the runs stay
// sorted and disjoint. Seeded with the real servers' replies.
func FuzzRead(f *testing.F) {
	data, _ := loadFixture(f)
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Add([]byte("{:type :ok, :f :publish, :value \"0-1\"}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		Sniff(in)
		s, err := Read("fuzz", bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		lines := int64(bytes.Count(in, []byte("\n")) + 1)
		for _, le := range s.BadKept {
			if le.Line < 1 || le.Line > lines || le.Offset < 0 || le.Offset > int64(len(in)) {
				t.Fatalf("error outside the input: %v", le)
			}
		}
		for _, st := range s.Streams {
			runs := st.Acked
			for i := 1; i < len(runs); i++ {
				if runs[i].First-1 <= runs[i-1].Last || runs[i].First > runs[i].Last {
					t.Fatalf("runs not disjoint and sorted: %v", runs)
				}
			}
		}
	})
}

// jepsenHistory is the history of the real Jepsen-style run
// (acked-lost-jepsen-v2.15.2, with :seq).
const jepsenHistory = "../testdata/bundles/acked-lost-jepsen-v2.15.2/bundle/client/history-seq.edn"

// FuzzHistory: any bytes read as a Jepsen history never panic, every error
// names a line and an offset inside the input, and an op's values are
// bounded. Seeded with the real run's history and the public report's
// lines.
func FuzzHistory(f *testing.F) {
	data, err := os.ReadFile(jepsenHistory)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/3])
	f.Add([]byte(publicReport))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewHistoryReader("fuzz", bytes.NewReader(in))
		lines := int64(bytes.Count(in, []byte("\n")) + 1)
		for n := 0; ; n++ {
			op, err := r.Next()
			if err == io.EOF {
				break
			}
			if n > len(in) {
				t.Fatalf("more operations than bytes")
			}
			var le *LineError
			if errors.As(err, &le) {
				if le.Line < 1 || le.Line > lines || le.Offset < 0 || le.Offset > int64(len(in)) {
					t.Fatalf("error outside the input: %v", le)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if op.Line < 1 || op.Line > lines || len(op.Values) > MaxOpValues || len(op.Value) > MaxToken {
				t.Fatalf("op %+v", op)
			}
		}
		if s, err := Read("fuzz", bytes.NewReader(in)); err != nil || (s.History != nil && int64(len(s.History.Pubs)) > s.History.Ops) {
			t.Fatalf("read: %v", err)
		}
	})
}
