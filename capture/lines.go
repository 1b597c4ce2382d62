package capture

import (
	"bytes"
	"errors"
	"io"
)

// errTooLarge is returned by lineReader once more than its limit has been read.
var errTooLarge = errors.New("input exceeds the size limit")

// lineReader counts the bytes read through it, refuses to read more than
// limit bytes, and answers "which line is byte offset X on" for offsets that
// only grow. It keeps the bytes read but not yet counted, which is at most
// what the JSON decoder above it still buffers, so memory stays bounded by the
// largest single value plus one read.
type lineReader struct {
	r     io.Reader
	limit int64
	n     int64    // bytes read so far
	pend  [][]byte // bytes read from offset base on, not yet counted
	base  int64
	line  int // line number (1-based) of offset base
	err   error
}

func newLineReader(r io.Reader, limit int64) *lineReader {
	// Read one byte past the limit so a file of exactly limit bytes passes
	// and a bigger one is noticed.
	return &lineReader{r: io.LimitReader(r, limit+1), limit: limit, line: 1}
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if l.n+int64(n) > l.limit {
		n = int(l.limit - l.n)
		err = errTooLarge
	}
	if n > 0 {
		l.pend = append(l.pend, bytes.Clone(p[:n]))
		l.n += int64(n)
	}
	if err != nil {
		l.err = err
	}
	return n, err
}

// lineAt returns the 1-based line of byte offset off. Offsets must not
// decrease between calls; an offset behind the last one answers the last line.
func (l *lineReader) lineAt(off int64) int {
	for off > l.base && len(l.pend) > 0 {
		c := l.pend[0]
		take := off - l.base
		if take >= int64(len(c)) {
			l.line += bytes.Count(c, []byte{'\n'})
			l.base += int64(len(c))
			l.pend[0] = nil
			l.pend = l.pend[1:]
			continue
		}
		l.line += bytes.Count(c[:take], []byte{'\n'})
		l.base += take
		l.pend[0] = c[take:]
	}
	return l.line
}
