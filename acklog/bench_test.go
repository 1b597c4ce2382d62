package acklog

import (
	"bytes"
	"io"
	"runtime/metrics"
	"strconv"
	"testing"
)

// benchLines is the size of the benchmark's ack log.
const benchLines = 10_000_000

// lineShape splits a real reply body around its sequence digits.
type lineShape struct{ before, after []byte }

func shapeOf(tb testing.TB, line []byte) lineShape {
	i := bytes.Index(line, []byte(`"seq":`))
	if i < 0 {
		tb.Fatalf("no seq in %q", line)
	}
	i += len(`"seq":`)
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	return lineShape{append([]byte(nil), line[:i]...), append([]byte(nil), line[j:]...)}
}

// genLog produces n lines on demand in the shape of the real servers'
// replies (the fixture's plain ack and, every 1000th line, its duplicate
// ack), sequences 1..n, without holding the log in memory.
type genLog struct {
	plain, dup lineShape
	next, n    uint64
	pending    []byte
	buf        []byte
	peak       uint64
	reads      int
	sample     []metrics.Sample
}

func (g *genLog) Read(p []byte) (int, error) {
	if g.reads++; g.reads%64 == 0 {
		metrics.Read(g.sample)
		g.peak = max(g.peak, g.sample[0].Value.Uint64())
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	for n < len(p) {
		if g.next >= g.n {
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		g.next++
		sh := g.plain
		if g.next%1000 == 0 {
			sh = g.dup
		}
		g.buf = append(append(strconv.AppendUint(append(g.buf[:0], sh.before...), g.next, 10), sh.after...), '\n')
		line := g.buf
		c := copy(p[n:], line)
		n += c
		g.pending = line[c:]
	}
	return n, nil
}

// BenchmarkRead reads an ack log of 10 million lines; reported per line and
// with the peak live heap seen while reading.
func BenchmarkRead(b *testing.B) {
	data, _ := loadFixture(b)
	lines := bytes.Split(data, []byte("\n"))
	var plain, dup []byte
	for _, l := range lines {
		switch {
		case plain == nil && bytes.HasPrefix(l, []byte("{")) && !bytes.Contains(l, []byte("duplicate")):
			plain = l
		case dup == nil && bytes.Contains(l, []byte("duplicate")):
			dup = l
		}
	}
	if plain == nil || dup == nil {
		b.Fatal("fixture lacks a plain or a duplicate reply")
	}
	b.ReportAllocs()
	var bytesRead int64
	var peak uint64
	for b.Loop() {
		g := &genLog{plain: shapeOf(b, plain), dup: shapeOf(b, dup), n: benchLines,
			sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
		cr := &countingReader{r: g}
		s, err := Read("bench", cr)
		if err != nil {
			b.Fatal(err)
		}
		if s.Acks != benchLines || len(s.Streams) != 1 || len(s.Streams[0].Acked) != 1 {
			b.Fatalf("acks %d streams %d", s.Acks, len(s.Streams))
		}
		bytesRead += cr.n
		peak = max(peak, g.peak)
	}
	b.SetBytes(bytesRead / int64(b.N))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchLines, "ns/line")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
