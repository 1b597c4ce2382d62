// Package logscan reads nats-server logs and turns the lines that matter to
// a forensic analysis into events.
//
// A Scanner works like bufio.Scanner: it reads lines from an io.Reader and
// Next advances to the next event. Every line is counted in Stats, whether it
// was classified, unknown, too long, binary or not valid UTF-8; nothing is
// dropped silently. The scanner understands the dialects logs arrive in: the
// server's own file and stderr formats (with or without pid and timestamp,
// with ANSI colours), kubectl --timestamps and --prefix, docker json-file
// lines and syslog. Decompress wraps a gzip-compressed reader; RotationOrder
// orders a server's rotated log files.
//
// Lines are classified by one table of patterns, Catalogue(), see
// catalogue.go. The package has no mutable package-level state.
package logscan

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

const (
	// DefaultMaxLine is the longest line kept. Real nats-server lines are
	// short (a few hundred bytes; debug lines that print a raft state or a
	// stream config reach a few KiB). A 1 MiB bound keeps memory small while
	// leaving room for any real line.
	DefaultMaxLine = 1 << 20
	// MaxRaw bounds Event.Raw: the copy of the original line kept for
	// display.
	MaxRaw = 1024
	// MaxText bounds Event.Text.
	MaxText = 8 << 10
	// MaxFieldValue bounds each value in Event.Fields.
	MaxFieldValue = 512
	// MaxBoots bounds the number of banners kept by Boots; older ones are
	// dropped (and counted) if a log holds more.
	MaxBoots = 1024
	// readBufSize is the bufio buffer; lines longer than it are assembled
	// in a separate buffer, up to MaxLine.
	readBufSize = 64 << 10
)

// Options configure a Scanner.
type Options struct {
	// File names the input in errors and events (a path inside a bundle).
	File string
	// Server is the server name the log belongs to, if the caller knows it;
	// otherwise Event.Server is filled from the banner's "Name:" line.
	Server string
	// Location is the time zone of the server's own timestamps (nats-server
	// writes local time unless logtime_utc is set). Nil means UTC.
	// Timestamps that carry a zone (kubectl, docker, RFC 3339 syslog) keep
	// theirs.
	Location *time.Location
	// MaxLine is the longest line processed; longer lines are counted in
	// Stats.TooLong and skipped without being buffered. 0 means
	// DefaultMaxLine.
	MaxLine int
	// All makes Next also stop at lines that were not classified (Kind ==
	// ""). By default only classified lines are returned; the others are
	// counted in Stats.
	All bool
}

// Event is one classified log line.
type Event struct {
	File   string // Options.File
	Line   int    // 1-based line number in the input
	Offset int64  // byte offset of the line's first byte in the input

	Time       time.Time // zero if the line has none
	HasTime    bool
	TimeSource string // "nats", "kubectl", "docker" or "syslog": where Time came from
	Level      string // INF, WRN, ERR, FTL, DBG, TRC; "" if unknown (syslog without priority)
	PID        int    // from the "[pid] " prefix or the syslog tag; 0 if none
	Pod        string // from a kubectl --prefix "[pod/NAME/CONTAINER] "
	Server     string // Options.Server, or the name from the latest banner
	Dialect    string // "nats", "kubectl", "docker", "syslog" (outermost envelope)

	Kind string // catalogue kind; "" for an unclassified line (Options.All)
	// Scope of the message prefix: "" (plain), "raft" (RAFT [node - group]),
	// "filestore" (Filestore [name]), "conn" (<addr> - rid:N -), "nolabel".
	Scope string

	Node     string // raft node id of the logging server (RAFT prefix)
	Group    string // raft group (RAFT prefix, %q group names, Filestore of a WAL)
	Peer     string // the peer a line is about (added, removed, voted for)
	Account  string
	Stream   string
	Consumer string
	Leader   string // a leader named by the line (server name or peer id)
	Term     uint64
	Fields   map[string]string // other named values of the pattern, each bounded by MaxFieldValue

	Text string // the message without prefixes (bounded by MaxText)
	Raw  string // the original line (bounded by MaxRaw)
}

// Stats counts every line read.
type Stats struct {
	Lines      int // lines read, including empty and too long ones
	Bytes      int64
	Empty      int
	Classified int
	Unknown    int
	// UnknownByPrefix counts unknown lines by the kind of prefix their
	// message has: "RAFT", "Filestore", "conn", "plain", "nolabel" (no
	// level label), "json" (a docker line that is not valid JSON),
	// "binary".
	UnknownByPrefix map[string]int
	// ByKind counts classified lines by kind.
	ByKind map[string]int
	// ByDialect counts lines by outer envelope: "nats", "kubectl",
	// "docker", "syslog".
	ByDialect map[string]int
	ByLevel   map[string]int

	TooLong      int // lines longer than MaxLine, skipped
	Binary       int // lines holding NUL or other control bytes
	BadUTF8      int // lines that are not valid UTF-8
	Unterminated int // a last line without a newline (torn tail)
	// LevelMismatch counts lines whose text matched a pattern but whose
	// level is not one the catalogue lists for it (still classified).
	LevelMismatch int

	// Clock: first and last timestamps seen and how often a timestamp went
	// backwards compared to the previous timed line (not an error: the
	// timeline orders events).
	FirstTime, LastTime time.Time
	ClockBackwards      int
	MaxBackwards        time.Duration

	Boots        int // "Starting nats-server" lines
	BootsDropped int // banners dropped from Boots (more than MaxBoots)
}

// Banner is what the server prints at boot.
type Banner struct {
	Line       int
	Time       time.Time
	PID        int
	Version    string
	Git        string
	GoVersion  string
	Cluster    string
	Name       string
	Node       string // raft node id of this server (JetStream only)
	ID         string // server id (NKey)
	ConfigFile string
	StoreDir   string
	Domain     string // JetStream domain ("  Domain:" line), "" when none is printed
}

// Scanner reads log lines from an io.Reader. It is not safe for concurrent
// use.
type Scanner struct {
	r    *bufio.Reader
	opts Options
	max  int

	line  int
	off   int64 // offset of the next line
	long  []byte
	ev    Event
	err   error
	done  bool
	stats Stats
	prevT time.Time
	boots []Banner
	cur   int    // 1 + index in boots of the current boot's banner, 0 if none
	p     parsed // scratch, reused
	// per-line counters kept in arrays (no map work per line); Stats
	// turns them into maps.
	byDialect [len(dialectNames)]int
	byLevel   [len(levelNames)]int
}

var (
	dialectNames = [...]string{"nats", "kubectl", "docker", "syslog"}
	levelNames   = [...]string{"INF", "WRN", "ERR", "FTL", "DBG", "TRC"}
)

func nameIndex(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader, opts Options) *Scanner {
	s := &Scanner{r: bufio.NewReaderSize(r, readBufSize), opts: opts, max: opts.MaxLine}
	if s.max <= 0 {
		s.max = DefaultMaxLine
	}
	if s.opts.Location == nil {
		s.opts.Location = time.UTC
	}
	s.stats.UnknownByPrefix = map[string]int{}
	s.stats.ByKind = map[string]int{}
	return s
}

// Next advances to the next event (by default the next classified line). It
// returns false at the end of the input or on a read error (see Err).
func (s *Scanner) Next() bool {
	for !s.done {
		line, off, ok := s.readLine()
		if !ok {
			continue
		}
		if s.process(line, off) {
			return true
		}
	}
	return false
}

// Event returns the current event. Its strings do not alias the scanner's
// buffers and stay valid after Next.
func (s *Scanner) Event() Event { return s.ev }

// Err returns the first read error, a *CorruptError for a truncated or
// corrupt compressed stream, or nil at a clean end of input.
func (s *Scanner) Err() error { return s.err }

// Stats returns the counts so far. The maps are copies.
func (s *Scanner) Stats() Stats {
	st := s.stats
	st.UnknownByPrefix = cloneMap(s.stats.UnknownByPrefix)
	st.ByKind = cloneMap(s.stats.ByKind)
	st.ByDialect = map[string]int{}
	for i, n := range s.byDialect {
		if n > 0 {
			st.ByDialect[dialectNames[i]] = n
		}
	}
	st.ByLevel = map[string]int{}
	for i, n := range s.byLevel {
		if n > 0 {
			st.ByLevel[levelNames[i]] = n
		}
	}
	return st
}

// Banner returns the banner of the latest boot seen (zero if none).
func (s *Scanner) Banner() Banner {
	if s.cur == 0 {
		return Banner{}
	}
	return s.boots[s.cur-1]
}

// Boots returns the banner of every boot seen, oldest first (at most
// MaxBoots, the latest ones).
func (s *Scanner) Boots() []Banner { return append([]Banner(nil), s.boots...) }

func cloneMap(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// readLine returns the next line without its line ending, or ok=false if
// there was nothing to process (end of input, or a line that was too long).
// The slice is valid until the next call.
// joinLong ends a line that may have been read in pieces: it adds the last
// piece to what was gathered, or counts the line as too long (then ok is
// false and nothing is kept).
func (s *Scanner) joinLong(frag []byte, tooLong bool) (line []byte, ok bool) {
	if tooLong || len(s.long)+len(frag) > s.max+2 && len(s.long) > 0 {
		s.countTooLong()
		return nil, false
	}
	if len(s.long) == 0 {
		return frag, true
	}
	s.long = append(s.long, frag...)
	return s.long, true
}

func (s *Scanner) readLine() (line []byte, off int64, ok bool) {
	off = s.off
	s.long = s.long[:0]
	tooLong := false
	for {
		frag, err := s.r.ReadSlice('\n')
		s.off += int64(len(frag))
		switch {
		case err == nil:
			frag, ok := s.joinLong(frag, tooLong)
			if !ok {
				return nil, off, false
			}
			return s.finishLine(frag, off, false)
		case errors.Is(err, bufio.ErrBufferFull):
			// A line longer than the buffer: assemble it in s.long up to
			// MaxLine; beyond that, drop what was gathered and skip to
			// the newline without keeping anything.
			if !tooLong && len(s.long)+len(frag) > s.max+2 {
				tooLong = true
				s.long = s.long[:0]
			}
			if !tooLong {
				s.long = append(s.long, frag...)
			}
			continue
		default:
			s.done = true
			if err != io.EOF {
				s.err = s.readErr(err)
			}
			frag, ok := s.joinLong(frag, tooLong)
			if !ok {
				return nil, off, false
			}
			if len(frag) == 0 {
				return nil, off, false
			}
			s.stats.Unterminated++
			return s.finishLine(frag, off, true)
		}
	}
}

func (s *Scanner) finishLine(b []byte, off int64, torn bool) ([]byte, int64, bool) {
	s.line++
	s.stats.Lines++
	s.stats.Bytes += int64(len(b))
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if len(b) > s.max {
		s.line--
		s.stats.Lines--
		s.countTooLong()
		return nil, off, false
	}
	_ = torn
	return b, off, true
}

func (s *Scanner) countTooLong() {
	s.line++
	s.stats.Lines++
	s.stats.TooLong++
}

func (s *Scanner) readErr(err error) error {
	var sentinel error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		sentinel = binfmt.ErrTruncated
	case isChecksumErr(err):
		sentinel = binfmt.ErrChecksum
	default:
		sentinel = binfmt.ErrFormat
	}
	return &binfmt.CorruptError{File: s.opts.File, Offset: s.off, Err: fmt.Errorf("%w: reading log: %v", sentinel, err)}
}

// process parses one line and fills s.ev. It reports whether the line is to
// be returned by Next.
func (s *Scanner) process(b []byte, off int64) bool {
	st := &s.stats
	if len(bytes.TrimSpace(b)) == 0 {
		st.Empty++
		return false
	}
	binary := false
	// Leading NUL bytes are what a crash leaves in a preallocated or
	// sparse file; the line after them is often intact.
	if b[0] == 0 {
		binary = true
		b = bytes.TrimLeft(b, "\x00")
	}
	ctl, badUTF8 := checkBytes(b)
	if binary || ctl {
		binary = true
		st.Binary++
	}
	if badUTF8 {
		st.BadUTF8++
	}

	p := &s.p
	p.reset()
	parseLine(b, p, s.opts.Location)
	if i := nameIndex(dialectNames[:], p.dialect); i >= 0 {
		s.byDialect[i]++
	}
	if i := nameIndex(levelNames[:], p.level); i >= 0 {
		s.byLevel[i]++
	}

	if p.hasTime {
		if st.FirstTime.IsZero() {
			st.FirstTime = p.t
		}
		if !s.prevT.IsZero() && p.t.Before(s.prevT) {
			st.ClockBackwards++
			if d := s.prevT.Sub(p.t); d > st.MaxBackwards {
				st.MaxBackwards = d
			}
		}
		s.prevT = p.t
		if p.t.After(st.LastTime) {
			st.LastTime = p.t
		}
	}

	var m match
	ok := p.labelled && classify(p, &m)
	if !ok && p.scope == scopeNoLabel {
		ok = classify(p, &m)
	}
	if ok && m.entry.Levels != "" && p.level != "" && !levelIn(p.level, m.entry.Levels) {
		st.LevelMismatch++
	}
	if !ok {
		st.Unknown++
		key := p.scope.unknownKey()
		if p.jsonBad {
			key = "json"
		} else if binary && p.scope == scopeNoLabel {
			key = "binary"
		}
		st.UnknownByPrefix[key]++
		if !s.opts.All {
			return false
		}
	} else {
		st.Classified++
		st.ByKind[m.entry.Kind]++
	}

	s.fill(b, off, p, &m, ok, badUTF8)
	if ok {
		s.trackBanner(&s.ev)
	}
	return true
}

func levelIn(level, levels string) bool {
	for i := 0; i+3 <= len(levels); i += 4 {
		if levels[i:i+3] == level {
			return true
		}
	}
	return false
}

// checkBytes reports control bytes (below 0x20 other than tab and ESC, the
// ANSI colour introducer; and DEL) and invalid UTF-8. Eight bytes at a time
// are tested for "all printable ASCII" (the usual case), bytes one by one
// only in the words that are not.
func checkBytes(b []byte) (ctl, badUTF8 bool) {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		below := (w - 0x20*lo) & ^w & hi // some byte < 0x20 (exact when no byte >= 0x80)
		x := w ^ (0x7f * lo)
		del := (x - lo) & ^x & hi // some byte == 0x7f
		if w&hi == 0 && below == 0 && del == 0 {
			continue
		}
		if w&hi != 0 {
			break
		}
		for _, c := range b[i : i+8] {
			if (c < 0x20 && c != '\t' && c != 0x1b) || c == 0x7f {
				ctl = true
			}
		}
	}
	rest := b[i:]
	for _, c := range rest {
		if (c < 0x20 && c != '\t' && c != 0x1b) || c == 0x7f {
			ctl = true
			break
		}
	}
	return ctl, !utf8.Valid(rest)
}

// fill builds the event. Raw is allocated once; Text, the captures and the
// prefix values are substrings of it when they lie inside it (the usual
// case), so a classified line costs one string and, if it has named
// values, one map.
func (s *Scanner) fill(b []byte, off int64, p *parsed, m *match, ok, badUTF8 bool) {
	raw := cutUTF8(b, MaxRaw)
	text := cutUTF8(p.text, MaxText)
	st := strs{b: raw, bad: badUTF8}
	st.s = validString(raw, badUTF8)
	ev := Event{
		File:       s.opts.File,
		Line:       s.line,
		Offset:     off,
		Time:       p.t,
		HasTime:    p.hasTime,
		TimeSource: p.timeSource,
		Level:      p.level,
		PID:        p.pid,
		Pod:        st.get(p.pod),
		Server:     s.opts.Server,
		Dialect:    p.dialect,
		Scope:      p.scope.String(),
		Raw:        st.s,
		Text:       st.get(text),
	}
	if ev.Server == "" && s.cur != 0 {
		ev.Server = s.boots[s.cur-1].Name
	}
	if p.scope == scopeRaft {
		ev.Node = st.get(p.scopeA)
		ev.Group = st.get(p.scopeB)
	}
	if p.scope == scopeFilestore {
		if isGroupName(p.scopeA) {
			ev.Group = st.get(p.scopeA)
		} else {
			ev.Stream = st.get(p.scopeA)
		}
	}
	if ok {
		ev.Kind = m.entry.Kind
		if m.n > 0 || p.scope == scopeConn {
			ev.Fields = make(map[string]string, m.n+2)
		}
		if p.scope == scopeConn {
			ev.setField("conn", st.get(p.scopeB))
			ev.setField("addr", st.get(p.scopeA))
		}
		for i := 0; i < m.n; i++ {
			v := cutUTF8(m.msg[m.caps[i][0]:m.caps[i][1]], MaxFieldValue)
			ev.set(m.entry.names[i], st.get(bytes.TrimSpace(v)))
		}
	}
	s.ev = ev
}

// cutUTF8 bounds b to n bytes without splitting a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	i := len(b) - 1
	for i > 0 && i > len(b)-utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if !utf8.FullRune(b[i:]) {
		b = b[:i]
	}
	return b
}

// strs turns slices of the current line into strings, as substrings of
// the one Raw string when the slice lies inside it.
type strs struct {
	b   []byte
	s   string
	bad bool
}

func (t *strs) get(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	if !t.bad && len(t.b) > 0 {
		off := cap(t.b) - cap(v)
		if off >= 0 && off+len(v) <= len(t.b) && &t.b[off] == &v[0] {
			return t.s[off : off+len(v)]
		}
	}
	return validString(v, t.bad || !utf8.Valid(v))
}

func validString(b []byte, bad bool) string {
	if bad {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	return string(b)
}

// isGroupName reports a raft group name: the meta group or a generated
// stream/consumer group name (S-R3F-xxxx, C-R3F-xxxx).
func isGroupName(b []byte) bool {
	return string(b) == natsfmt.MetaGroup || (len(b) > 3 && (b[0] == 'S' || b[0] == 'C') && b[1] == '-' && b[2] == 'R')
}

func (ev *Event) set(name, v string) {
	switch name {
	case "account":
		ev.Account = v
	case "stream":
		ev.Stream = v
	case "consumer":
		ev.Consumer = v
	case "group":
		ev.Group = v
	case "peer":
		ev.Peer = v
	case "leader":
		ev.Leader = v
	case "term":
		if t, err := strconv.ParseUint(v, 10, 64); err == nil {
			ev.Term = t
		}
	case "_":
		// matched but not kept
	default:
		ev.setField(name, v)
	}
}

// Count reads the field name (Fields) as a count the way nats-server prints
// it, with comma() (server/util.go) grouping thousands: "1,234,567". ok is
// false when the event has no such field or it is not a count.
func (ev *Event) Count(name string) (n uint64, ok bool) {
	v, has := ev.Fields[name]
	if !has || v == "" {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			if n > (math.MaxUint64-uint64(c-'0'))/10 {
				return 0, false
			}
			n = n*10 + uint64(c-'0')
		case c == ',' && i > 0 && i < len(v)-1:
		default:
			return 0, false
		}
	}
	return n, true
}

func (ev *Event) setField(name, v string) {
	if ev.Fields == nil {
		ev.Fields = make(map[string]string, 4)
	}
	ev.Fields[name] = v
}

// trackBanner keeps the per-boot banner up to date.
func (s *Scanner) trackBanner(ev *Event) {
	if ev.Kind == "start" {
		s.stats.Boots++
		if len(s.boots) >= MaxBoots {
			copy(s.boots, s.boots[1:])
			s.boots = s.boots[:len(s.boots)-1]
			s.stats.BootsDropped++
		}
		s.boots = append(s.boots, Banner{Line: ev.Line, Time: ev.Time, PID: ev.PID})
		s.cur = len(s.boots)
		return
	}
	if s.cur == 0 {
		return
	}
	b := &s.boots[s.cur-1]
	f := ev.Fields
	switch ev.Kind {
	case "version":
		b.Version = f["version"]
	case "git":
		b.Git = f["git"]
	case "go-version":
		b.GoVersion = f["go"]
	case "cluster-name":
		if b.Cluster == "" {
			b.Cluster = f["cluster"]
		}
	case "server-name":
		b.Name = f["name"]
	case "node-id":
		b.Node = f["node"]
	case "server-id":
		b.ID = f["id"]
	case "config-file":
		b.ConfigFile = f["path"]
	case "store-dir":
		b.StoreDir = f["dir"]
	case "js-domain":
		b.Domain = f["domain"]
	}
}
