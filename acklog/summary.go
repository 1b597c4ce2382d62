package acklog

import (
	"bufio"
	"bytes"
	"io"
	"sort"
	"strconv"

	"github.com/jsforensics/jsforensics/seqset"
)

// MaxBadKept bounds the unreadable lines a Summary lists; the rest are
// counted.
const MaxBadKept = 20

// MaxRunsPerStream bounds one stream's run list (16 bytes a run). Acks of one
// publisher are increasing and make few runs; only a log interleaving many
// writers' sparse sequences comes near it. Past it, further sequences are
// counted but not kept, and the stream says so (RunsCapped).
const MaxRunsPerStream = 1 << 22

// Summary is what one ack log says, in memory bounded by its streams and
// their runs, not by its lines.
type Summary struct {
	File   string
	Format string // FormatPubAck or FormatEDN ("" when no line was read)
	Lines  int64  // non-blank lines
	// Acks: lines acknowledging a sequence; ErrorReplies: error replies
	// (publishes the server refused).
	Acks, ErrorReplies int64
	// EDNPublishes: Jepsen entries {:type :ok, :f :publish}: acknowledged
	// values without a sequence.
	EDNPublishes int64
	// Bad lines could not be read; the first MaxBadKept are listed.
	Bad     int64
	BadKept []*LineError
	// Streams, sorted by domain then name.
	Streams []*StreamAcks
	// History is a Jepsen history's publishes, reads and nemesis (Format
	// FormatEDN), nil otherwise.
	History *History
}

// StreamAcks are one stream's acknowledged sequences.
type StreamAcks struct {
	Domain, Stream string
	Acked          seqset.Set
	Acks           int64 // lines (duplicates included)
	Duplicates     int64
	// FirstLine and LastLine: where the stream's first and last acks are.
	FirstLine, LastLine int64
	// LastTime is the time of its last wrapped ack, as written ("" if none).
	LastTime string
	// RunsCapped: MaxRunsPerStream was reached; Acked misses sequences.
	RunsCapped bool
}

// ack adds first..last to Acked, unless that needs a run past
// MaxRunsPerStream (then RunsCapped). No message has sequence 0: Read
// reports such lines, and a 0 is not kept.
func (st *StreamAcks) ack(first, last uint64) {
	first = max(first, 1)
	if first > last {
		return
	}
	if len(st.Acked) >= MaxRunsPerStream && st.Acked.NewRuns(first, last) > 0 {
		st.RunsCapped = true
		return
	}
	st.Acked.AddRange(first, last)
}

// Read reads a whole ack log. The error is an I/O error of r only: lines
// that cannot be decoded are counted in the Summary.
func Read(file string, r io.Reader) (*Summary, error) {
	sum := &Summary{File: file}
	br := bufio.NewReaderSize(r, MaxLine)
	if isHistory(br) {
		return sum, readHistory(sum, br)
	}
	rd := NewReader(file, br)
	type key struct{ domain, stream string }
	byKey := map[key]*StreamAcks{}
	var last *StreamAcks // the previous line's stream, the usual next one
	for {
		line, off, err := rd.nextLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			if le, ok := err.(*LineError); ok {
				sum.Lines++
				sum.bad(le)
				continue
			}
			return sum, err
		}
		if line == nil {
			continue
		}
		sum.Lines++
		rr := &rd.raw
		if err := rr.decode(line); err != nil {
			sum.bad(rd.lineError(off, err).(*LineError))
			continue
		}
		switch {
		case rr.edn:
			sum.setFormat(FormatEDN)
			if string(rr.typ) == "ok" && string(rr.f) == "publish" {
				sum.EDNPublishes++
			}
			continue
		case rr.err != nil && !rr.hasSeq:
			sum.setFormat(FormatPubAck)
			sum.ErrorReplies++
			continue
		}
		sum.setFormat(FormatPubAck)
		sum.Acks++
		st := last
		// Compare in place: the map lookup with string(bytes) does not
		// allocate, and the common case (same stream as the line before)
		// needs no lookup at all.
		if st == nil || st.Stream != string(rr.stream) || st.Domain != string(rr.domain) || rr.escaped&(escStream|escDomain) != 0 {
			rec := rr.record(rd.line, off)
			k := key{rec.Domain, rec.Stream}
			if st = byKey[k]; st == nil {
				st = &StreamAcks{Domain: rec.Domain, Stream: rec.Stream, FirstLine: rd.line}
				byKey[k] = st
				sum.Streams = append(sum.Streams, st)
			}
		}
		last = st
		st.Acks++
		st.LastLine = rd.line
		if rr.duplicate {
			st.Duplicates++
		}
		if len(rr.time) > 0 && string(rr.time) != st.LastTime {
			st.LastTime = string(rr.time)
			if rr.escaped&escTime != 0 {
				if u, err := strconv.Unquote(`"` + st.LastTime + `"`); err == nil {
					st.LastTime = u
				}
			}
		}
		first := rr.seq
		if rr.batch != nil && rr.count > 1 && rr.seq > 0 {
			// A batch commit acknowledges the count sequences ending at seq
			// (stream.go: the reply carries the batch's last sequence).
			first = rr.seq - min(rr.count-1, rr.seq-1)
		}
		st.ack(first, rr.seq)
	}
	sort.Slice(sum.Streams, func(i, j int) bool {
		a, b := sum.Streams[i], sum.Streams[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		return a.Stream < b.Stream
	})
	return sum, nil
}

func (s *Summary) bad(le *LineError) {
	s.Bad++
	if len(s.BadKept) < MaxBadKept {
		s.BadKept = append(s.BadKept, le)
	}
}

func (s *Summary) setFormat(f string) {
	if s.Format == "" {
		s.Format = f
	}
}

// Stream returns the acks of stream name in domain, or nil.
func (s *Summary) Stream(domain, name string) *StreamAcks {
	for _, st := range s.Streams {
		if st.Domain == domain && st.Stream == name {
			return st
		}
	}
	return nil
}

// isHistory says whether the input starts, after blanks, with an EDN map
// whose first key is a keyword ("{:"; a JSON object's keys are strings).
func isHistory(br *bufio.Reader) bool {
	head, _ := br.Peek(512) // whatever the input holds, up to 512 bytes
	b := bytes.TrimLeft(head, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	return len(b) > 0 && b[0] == ':'
}
