package acklog

import (
	"bytes"
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
