package bundle

import "io"

// Read-ahead sizes: a few decompressed chunks of copyBufSize are kept ready.
const aheadChunks = 4

// readAhead decompresses on a goroutine of its own, a few chunks ahead of
// the reader, as `tar xzf` runs gzip in a process of its own: inflating and
// writing files then overlap on two cores. Each chunk carries how far into
// the compressed input it started, so the ratio check and the progress
// figures come from the reading goroutine without sharing a counter.
type readAhead struct {
	chunks chan aheadChunk
	free   chan []byte
	stop   chan struct{}
	done   chan struct{}
	cur    aheadChunk
	off    int
	watch  *readWatch
}

type aheadChunk struct {
	b   []byte
	in  int64 // compressed bytes read before this chunk's first byte
	err error // after b: the inflater's error (io.EOF at the end)
}

// newReadAhead starts reading r, whose compressed input read so far in
// gives. Stop must be called when done with it.
func newReadAhead(r io.Reader, in func() int64, watch *readWatch) *readAhead {
	ra := &readAhead{chunks: make(chan aheadChunk, aheadChunks), free: make(chan []byte, aheadChunks+2),
		stop: make(chan struct{}), done: make(chan struct{}), watch: watch}
	for range aheadChunks + 2 {
		ra.free <- make([]byte, copyBufSize)
	}
	go ra.fill(r, in)
	return ra
}

func (ra *readAhead) fill(r io.Reader, in func() int64) {
	defer close(ra.done)
	defer close(ra.chunks)
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.stop:
			return
		}
		start := in()
		n := 0
		var err error
		for n < len(b) && err == nil {
			var k int
			k, err = r.Read(b[n:])
			n += k
		}
		select {
		case ra.chunks <- aheadChunk{b: b[:n], in: start, err: err}:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.off == len(ra.cur.b) {
		if ra.cur.err != nil {
			return 0, ra.cur.err
		}
		if ra.cur.b != nil {
			ra.free <- ra.cur.b[:cap(ra.cur.b)]
		}
		c, ok := <-ra.chunks
		if !ok {
			return 0, io.ErrUnexpectedEOF // not reached: the last chunk carries an error
		}
		ra.cur, ra.off = c, 0
		ra.watch.read(c.in)
	}
	n := copy(p, ra.cur.b[ra.off:])
	ra.off += n
	return n, nil
}

// compressed gives how far into the compressed input the bytes being read
// are (at the start of their chunk: never ahead of them).
func (ra *readAhead) compressed() int64 { return ra.cur.in }

// Stop ends the goroutine and waits for it.
func (ra *readAhead) Stop() {
	close(ra.stop)
	<-ra.done
}
