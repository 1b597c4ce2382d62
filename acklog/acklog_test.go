package acklog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/seqset"
)

// The fixture: the raw PubAck bodies real v2.15.2 servers sent, one per
// line, as testdata/gen recorded them (acked-lost-v2.15.2).
const (
	fixtureDir = "../testdata/bundles/acked-lost-v2.15.2"
	fixtureLog = fixtureDir + "/bundle/client/ledger-acks.jsonl"
)

type fixtureExpect struct {
	Stream     string `json:"stream"`
	Acked      int64  `json:"acked"`
	Duplicates int64  `json:"duplicates"`
	AckedFirst uint64 `json:"acked_first"`
	AckedLast  uint64 `json:"acked_last"`
}

func loadFixture(t testing.TB) ([]byte, fixtureExpect) {
	t.Helper()
	data, err := os.ReadFile(fixtureLog)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Expect fixtureExpect `json:"expect"`
	}
	wb, err := os.ReadFile(fixtureDir + "/want.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil {
		t.Fatal(err)
	}
	return data, w.Expect
}

func summarize(t *testing.T, data []byte) *Summary {
	t.Helper()
	s, err := Read("acks.jsonl", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFixtureLog: the summary of the real servers' replies is what the
// generator counted: every ack, the one duplicate, one run 1..last.
func TestFixtureLog(t *testing.T) {
	data, x := loadFixture(t)
	s := summarize(t, data)
	if s.Format != FormatPubAck || s.Acks != x.Acked || s.Bad != 0 || len(s.Streams) != 1 {
		t.Fatalf("format %q acks %d bad %d streams %d; want %q %d 0 1", s.Format, s.Acks, s.Bad, len(s.Streams), FormatPubAck, x.Acked)
	}
	st := s.Streams[0]
	if st.Stream != x.Stream || st.Duplicates != x.Duplicates || st.Acks != x.Acked {
		t.Errorf("stream %q dups %d acks %d; want %q %d %d", st.Stream, st.Duplicates, st.Acks, x.Stream, x.Duplicates, x.Acked)
	}
	if got := st.Acked; len(got) != 1 || got[0] != (seqset.Range{First: x.AckedFirst, Last: x.AckedLast}) {
		t.Errorf("runs %v; want [{%d %d}]", got, x.AckedFirst, x.AckedLast)
	}
	// The Reader gives the same records one by one.
	r := NewReader("acks.jsonl", bytes.NewReader(data))
	n, dups := int64(0), int64(0)
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		n++
		if rec.Duplicate {
			dups++
		}
		if rec.Stream != x.Stream || rec.Seq == 0 || rec.Line != n {
			t.Fatalf("record %+v", rec)
		}
	}
	if n != x.Acked || dups != x.Duplicates {
		t.Errorf("Next: %d records, %d duplicates", n, dups)
	}
}

// TestWrappedAndReordered: the same replies inside wrapper lines carrying the
// publisher's value and time, with the lines reversed and a domain added,
// give the same sequences.
func TestWrappedAndReordered(t *testing.T) {
	data, x := loadFixture(t)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var out bytes.Buffer
	for i := len(lines) - 1; i >= 0; i-- {
		fmt.Fprintf(&out, "{\"time\":\"2026-12-01T12:00:%02dZ\",\"value\":\"entry %d\",\"ack\":%s}\r\n", i%60, i, lines[i])
	}
	s := summarize(t, out.Bytes())
	if s.Acks != x.Acked || len(s.Streams) != 1 || s.Bad != 0 {
		t.Fatalf("acks %d streams %d bad %d (%v)", s.Acks, len(s.Streams), s.Bad, s.BadKept)
	}
	if got := s.Streams[0].Acked; len(got) != 1 || got[0] != (seqset.Range{First: x.AckedFirst, Last: x.AckedLast}) {
		t.Errorf("runs %v", got)
	}
	if s.Streams[0].LastTime != "2026-12-01T12:00:00Z" {
		t.Errorf("last time %q", s.Streams[0].LastTime)
	}
	rec, err := NewReader("w", bytes.NewReader(out.Bytes())).Next()
	if err != nil || rec.Value != fmt.Sprintf("entry %d", len(lines)-1) || rec.Seq == 0 {
		t.Errorf("first wrapped record %+v, %v", rec, err)
	}
}

// TestV21022Spacing: v2.10.22 writes the same bodies with a space after
// each comma (stream.go: "{%q:%q, %q:"); the real lines so respaced give the
// same summary.
func TestV21022Spacing(t *testing.T) {
	data, x := loadFixture(t)
	spaced := bytes.ReplaceAll(data, []byte(`","seq":`), []byte(`", "seq":`))
	if bytes.Equal(spaced, data) {
		t.Fatal("nothing respaced")
	}
	s := summarize(t, spaced)
	if s.Acks != x.Acked || s.Bad != 0 || s.Streams[0].Acked.Count() != x.AckedLast-x.AckedFirst+1 {
		t.Errorf("acks %d bad %d count %d", s.Acks, s.Bad, s.Streams[0].Acked.Count())
	}
	if !Sniff(spaced) {
		t.Error("respaced log not recognised")
	}
}

// TestBrokenLines: damage to single lines of the real log costs those lines
// only, each reported with its line number and offset.
func TestBrokenLines(t *testing.T) {
	data, x := loadFixture(t)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cases := []struct {
		name   string
		line   int // 0-based line to damage
		break_ func([]byte) []byte
		want   error
	}{
		{"torn", 5, func(b []byte) []byte { return b[:len(b)/2] }, binfmt.ErrFormat},
		{"seq-not-a-number", 7, func(b []byte) []byte { return bytes.Replace(b, []byte(`"seq":`), []byte(`"seq":x`), 1) }, binfmt.ErrFormat},
		{"negative-seq", 8, func(b []byte) []byte { return bytes.Replace(b, []byte(`"seq":`), []byte(`"seq":-`), 1) }, binfmt.ErrFormat},
		{"huge-seq", 9, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"seq":`), []byte(`"seq":99999999999999999999999`), 1)
		}, binfmt.ErrFormat},
		{"seq-zero", 10, func(b []byte) []byte {
			sh := shapeOf(t, b)
			return append(append(sh.before, '0'), sh.after...)
		}, binfmt.ErrFormat},
		{"too-long", 11, func(b []byte) []byte { return append(bytes.Repeat([]byte(" "), MaxLine+10), b...) }, binfmt.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			off := 0
			for i, l := range lines {
				if i == c.line {
					off = buf.Len()
					nl := bytes.HasSuffix(l, []byte("\n"))
					b := c.break_(append([]byte(nil), bytes.TrimSuffix(l, []byte("\n"))...))
					buf.Write(b)
					if nl {
						buf.WriteByte('\n')
					}
					continue
				}
				buf.Write(l)
			}
			s := summarize(t, buf.Bytes())
			if s.Bad != 1 || s.Acks != x.Acked-1 {
				t.Fatalf("bad %d acks %d; want 1 and %d", s.Bad, s.Acks, x.Acked-1)
			}
			le := s.BadKept[0]
			if le.Line != int64(c.line+1) || le.Offset != int64(off) || le.File != "acks.jsonl" || !errors.Is(le, c.want) {
				t.Errorf("error %v: line %d offset %d; want line %d offset %d, %v", le, le.Line, le.Offset, c.line+1, off, c.want)
			}
		})
	}
}

// TestSniff: the ack log and the Jepsen histories are recognised; no other
// file of any committed bundle is (captures, natscli lines, polls, logs,
// store files).
func TestSniff(t *testing.T) {
	data, _ := loadFixture(t)
	if !Sniff(data[:min(len(data), 4096)]) {
		t.Error("real ack log not recognised")
	}
	if !Sniff(data[:100]) { // a torn last line in the head
		t.Error("head of the ack log not recognised")
	}
	n := 0
	err := filepath.WalkDir("../testdata/bundles", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.FromSlash(fixtureLog) {
			return err
		}
		if filepath.Base(p) == "ledger-acks.jsonl" && strings.Contains(p, "acked-lost-v") {
			// The ack log of another acked-lost fixture (acked-lost-v2.11.17).
			if b, err := os.ReadFile(p); err != nil || !Sniff(b[:min(len(b), 4096)]) {
				t.Errorf("%s: ack log not recognised (%v)", p, err)
			}
			return nil
		}
		if strings.HasSuffix(p, ".edn") && strings.Contains(p, "acked-lost-jepsen") {
			if b, err := os.ReadFile(p); err != nil || !Sniff(b[:min(len(b), 4096)]) {
				t.Errorf("%s: Jepsen history not recognised (%v)", p, err)
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if Sniff(b[:min(len(b), 4096)]) {
			t.Errorf("%s taken for an ack log", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("only %d files tried", n)
	}
}

// TestEDN: Jepsen history entries (the map shape jepsen.history writes,
// with the nats queue workload's :f and string :value) are recognised and
// counted, never taken for sequences.
func TestEDN(t *testing.T) {
	hist := "{:index 0, :time 1000, :type :invoke, :process 0, :f :publish, :value \"0-1\"}\n" +
		"{:index 1, :time 2000, :type :ok, :process 0, :f :publish, :value \"0-1\"}\n" +
		"{:index 2, :time 3000, :type :info, :process 1, :f :publish, :value \"1-1\", :error :timeout}\n"
	if !Sniff([]byte(hist)) {
		t.Fatal("history not recognised")
	}
	s := summarize(t, []byte(hist))
	if s.Format != FormatEDN || s.EDNPublishes != 1 || s.Acks != 0 || len(s.Streams) != 0 {
		t.Errorf("format %q publishes %d acks %d streams %d", s.Format, s.EDNPublishes, s.Acks, len(s.Streams))
	}
}

// TestRunsCapped: past MaxRunsPerStream a sequence that needs a run of its
// own is not kept and the stream says so; one that extends a run still is.
func TestRunsCapped(t *testing.T) {
	var st StreamAcks
	for i := uint64(0); i < MaxRunsPerStream; i++ {
		st.ack(2*i+1, 2*i+1)
	}
	if st.RunsCapped || len(st.Acked) != MaxRunsPerStream {
		t.Fatalf("capped %v at %d runs", st.RunsCapped, len(st.Acked))
	}
	st.ack(2, 2)                                   // joins two runs
	st.ack(2*MaxRunsPerStream, 2*MaxRunsPerStream) // extends the last
	if st.RunsCapped || len(st.Acked) != MaxRunsPerStream-1 {
		t.Fatalf("capped %v at %d runs after joining", st.RunsCapped, len(st.Acked))
	}
	st.ack(1<<40, 1<<40+5) // takes the run the join freed
	st.ack(1<<41, 1<<41)
	if !st.RunsCapped || !st.Acked.Contains(1<<40) || st.Acked.Contains(1<<41) {
		t.Fatalf("capped %v, contains %v %v", st.RunsCapped, st.Acked.Contains(1<<40), st.Acked.Contains(1<<41))
	}
	st.ack(0, 0)
	if st.Acked.Contains(0) {
		t.Error("sequence 0 kept")
	}
}
