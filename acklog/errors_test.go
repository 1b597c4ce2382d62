package acklog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/acklog"
)

// TestErrorsPublic: a library user tells why a line was not read with this
// package's own names: errors.As to *acklog.LineError, errors.Is with its
// sentinels.
func TestErrorsPublic(t *testing.T) {
	log := `{"stream":"ORDERS","seq":1}` + "\n" + "not an ack\n" + `{"stream":"ORDERS","seq":` + strings.Repeat("9", acklog.MaxLine) + "}\n"
	s, err := acklog.Read("pub.log", strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.BadKept) != 2 {
		t.Fatalf("%d bad lines kept, want 2", len(s.BadKept))
	}
	for i, want := range []error{acklog.ErrFormat, acklog.ErrTooLarge} {
		var le *acklog.LineError
		if err := error(s.BadKept[i]); !errors.As(err, &le) || le.File != "pub.log" || !errors.Is(err, want) {
			t.Errorf("line %d: %v, want a LineError wrapping %v", i+2, err, want)
		}
	}
}
