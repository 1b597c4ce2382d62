package natsfmt

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// realConsumerStates returns every o.dat and every consumer group snapshot's
// data in the committed bundles (but the o.dat files the encrypted
// scenario sealed).
func realConsumerStates(t testing.TB) [][]byte {
	var out [][]byte
	odat := bundleFiles(t, func(p string) bool { return path.Base(p) == "o.dat" })
	for _, k := range sortedKeys(odat) {
		if strings.HasPrefix(k, "encrypted-") {
			continue
		}
		out = append(out, odat[k])
	}
	nodat := len(out)
	out = append(out, snapshotData(t, "C-")...)
	if nodat == 0 || len(out) == nodat {
		t.Fatalf("%d o.dat, %d consumer snapshots", nodat, len(out)-nodat)
	}
	return out
}

func TestConsumerStateReal(t *testing.T) {
	for i, b := range realConsumerStates(t) {
		s, err := DecodeConsumerState("o.dat", 0, b)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if s.AckFloor.Stream > s.Delivered.Stream || s.AckFloor.Consumer > s.Delivered.Consumer {
			t.Errorf("state %d: ack floor %+v above delivered %+v", i, s.AckFloor, s.Delivered)
		}
		for _, p := range s.Pending {
			if p.StreamSeq <= s.AckFloor.Stream || p.StreamSeq > s.Delivered.Stream || p.TS == 0 {
				t.Errorf("state %d: pending %+v outside ack floor %+v .. delivered %+v", i, p, s.AckFloor, s.Delivered)
			}
		}
		if !slices.IsSortedFunc(s.Pending, func(a, b PendingAck) int { return int(a.StreamSeq) - int(b.StreamSeq) }) {
			t.Errorf("state %d: pending not sorted", i)
		}
		for _, cut := range []int{0, 1, 3, len(b) - 1} {
			if _, err := DecodeConsumerState("o.dat", 0, b[:cut]); err == nil && cut < len(b) {
				t.Errorf("state %d cut to %d bytes decoded", i, cut)
			}
		}
		bad := bytes.Clone(b)
		bad[0] = 0x17
		var ce *binfmt.CorruptError
		if _, err := DecodeConsumerState("o.dat", 40, bad); !errors.As(err, &ce) || ce.Offset != 40 {
			t.Errorf("state %d bad magic: %v", i, err)
		}
	}
}

// TestConsumerStateDropsEmptyRedeliveries: the last byte of a real state
// with nothing redelivered is the redelivered count 0. Replaced by three
// entries, one with a zero count and one with a zero sequence, only the
// third is kept, as the server's decodeConsumerState keeps it.
func TestConsumerStateDropsEmptyRedeliveries(t *testing.T) {
	n := 0
	for _, b := range realConsumerStates(t) {
		s, err := DecodeConsumerState("o.dat", 0, b)
		if err != nil || len(s.Redelivered) != 0 || b[len(b)-1] != 0 {
			continue
		}
		n++
		withRedeliveries := append(bytes.Clone(b[:len(b)-1]), 3, 1, 0, 0, 5, 2, 4)
		got, err := DecodeConsumerState("o.dat", 0, withRedeliveries)
		want := []Redelivery{{StreamSeq: s.AckFloor.Stream + 2, Count: 4}}
		if err != nil || !slices.Equal(got.Redelivered, want) {
			t.Fatalf("redelivered %+v, %v; want %+v", got.Redelivered, err, want)
		}
	}
	if n == 0 {
		t.Fatal("no real consumer state without redeliveries")
	}
}

func FuzzConsumerState(f *testing.F) {
	for _, b := range realConsumerStates(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeConsumerState("o.dat", 0, b)
		checkErr(t, err)
		if err == nil {
			for _, r := range s.Redelivered {
				if r.Count == 0 {
					t.Fatal("a zero redelivery count kept")
				}
			}
		}
	})
}
