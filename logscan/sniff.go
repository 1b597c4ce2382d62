package logscan

import (
	"bufio"
	"bytes"
	"sync"
)

// sniffReaders are the read buffers of Sniff's scanners: NewScanner keeps a
// *bufio.Reader that is already big enough, so a bundle of thousands of
// small files does not allocate a buffer per file.
var sniffReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}

// SniffLines is how many non-empty lines Sniff weighs.
const SniffLines = 40

// Sniffed is what Sniff learnt of a file it takes for a server log.
type Sniffed struct {
	// Dialect is the outermost envelope of the first server line, as
	// Event.Dialect names it: "nats", "kubectl", "docker" or "syslog".
	Dialect string
	Pod     string // the first kubectl --prefix pod seen
	// Banner is the first boot's banner within head (zero if head holds
	// no "Starting nats-server" line).
	Banner Banner
}

// Sniff says whether head, the first bytes of a file (decompressed), holds
// nats-server log lines. whole says head is the whole file; otherwise its last
// line, likely cut, is not read. Lines are read by the Scanner itself, so the
// envelopes, prefixes and levels are the ones it recognises: a line counts
// when the Scanner finds the server's level label in it, or, for syslog
// output (which carries no label), when the catalogue knows its text. Of the
// first SniffLines non-empty lines, at least one must count and at least half
// of them, or at least 5 (a log can open with a stack trace or a wrapper's
// lines).
func Sniff(head []byte, whole bool) (Sniffed, bool) {
	if !whole {
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
	}
	br := sniffReaders.Get().(*bufio.Reader)
	br.Reset(bytes.NewReader(head))
	defer func() { br.Reset(nil); sniffReaders.Put(br) }()
	sc := NewScanner(br, Options{All: true})
	var out Sniffed
	seen, match := 0, 0
	for sc.Next() {
		ev := sc.Event()
		if out.Pod == "" {
			out.Pod = ev.Pod
		}
		if seen >= SniffLines {
			if match == 0 {
				break // not a log: do not read on for a banner
			}
			continue
		}
		seen++
		if ev.Scope != "nolabel" && (ev.Dialect != "syslog" || ev.Kind != "") {
			if match == 0 {
				out.Dialect = ev.Dialect
			}
			match++
		}
	}
	if match == 0 || (match*2 < seen && match < 5) {
		return Sniffed{}, false
	}
	if boots := sc.Boots(); len(boots) > 0 {
		out.Banner = boots[0]
	}
	return out, true
}
