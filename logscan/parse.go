package logscan

import (
	"bytes"
	"encoding/json"
	"time"
)

// scope is the kind of prefix a message carries after the level label.
type scope uint8

const (
	scopePlain     scope = iota // no scope prefix
	scopeRaft                   // "RAFT [<node> - <group>] "
	scopeFilestore              // "Filestore [<stream or group>] "
	scopeConn                   // "<addr> - rid:N - " and friends
	scopeNoLabel                // no level label at all (panics, stray output)
	numScopes
)

var scopeNames = [numScopes]string{"", "raft", "filestore", "conn", "nolabel"}

func (s scope) String() string { return scopeNames[s] }

// unknownKey is the Stats.UnknownByPrefix key of an unknown line.
func (s scope) unknownKey() string {
	switch s {
	case scopeRaft:
		return "RAFT"
	case scopeFilestore:
		return "Filestore"
	case scopeConn:
		return "conn"
	case scopeNoLabel:
		return "nolabel"
	}
	return "plain"
}

func scopeByName(name string) (scope, bool) {
	for i, n := range scopeNames {
		if n == name {
			return scope(i), true
		}
	}
	return 0, false
}

// parsed is the result of splitting one line into its envelope, prefixes
// and message. Slices point into the line (or into jsonLog).
type parsed struct {
	dialect    string
	t          time.Time
	hasTime    bool
	timeSource string
	pid        int
	level      string
	labelled   bool
	pod        []byte
	text       []byte // message after the level label (or the whole rest)
	scope      scope
	scopeA     []byte // raft node / filestore name / conn address
	scopeB     []byte // raft group / conn id ("rid:8")
	msg        []byte // text after the scope prefix
	jsonBad    bool
	syslog     bool
	sysLevel   string
}

func (p *parsed) reset() { *p = parsed{} }

// parseLine splits b. It never fails: what it cannot recognise stays in
// p.text with labelled == false.
func parseLine(b []byte, p *parsed, loc *time.Location) {
	p.dialect = "nats"
	if len(b) > 0 && b[0] == '{' {
		if inner, t, ok := parseDocker(b); ok {
			p.dialect = "docker"
			if !t.IsZero() {
				p.t, p.hasTime, p.timeSource = t, true, "docker"
			}
			b = inner
		} else {
			p.jsonBad = true
		}
	}
	// kubectl --prefix and --timestamps, in either order.
	for range 2 {
		if rest, pod, ok := cutPodPrefix(b); ok {
			p.pod = pod
			if p.dialect == "nats" {
				p.dialect = "kubectl"
			}
			b = rest
			continue
		}
		if isRFC3339Start(b) {
			if sp := bytes.IndexByte(b, ' '); sp > 0 {
				if t, err := time.Parse(time.RFC3339Nano, string(b[:sp])); err == nil {
					rest := b[sp+1:]
					// A syslog relay writes "TIMESTAMP host tag[pid]: msg".
					if len(rest) > 0 && rest[0] != '[' {
						if hdr, ok := cutSyslogTag(rest, p); ok {
							p.dialect = "syslog"
							p.syslog = true
							if !p.hasTime {
								p.t, p.hasTime, p.timeSource = t, true, "syslog"
							}
							b = hdr
							break
						}
					}
					if p.dialect == "nats" {
						p.dialect = "kubectl"
					}
					if !p.hasTime {
						p.t, p.hasTime, p.timeSource = t, true, "kubectl"
					}
					b = rest
					continue
				}
			}
		}
		break
	}
	if !p.syslog {
		if rest, ok := parseSyslog(b, p); ok {
			b = rest
		}
	}

	// The server's own prefix: "[pid] ", "YYYY/MM/DD HH:MM:SS.micro ",
	// "[LVL] ".
	if len(b) > 2 && b[0] == '[' && isDigit(b[1]) {
		n, i := 0, 1
		for i < len(b) && isDigit(b[i]) && i < 12 {
			n = n*10 + int(b[i]-'0')
			i++
		}
		if i+1 < len(b) && b[i] == ']' && b[i+1] == ' ' {
			p.pid = n
			b = b[i+2:]
		}
	}
	if t, n, ok := parseNatsTime(b, loc); ok {
		if !p.hasTime {
			p.t, p.hasTime, p.timeSource = t, true, "nats"
		}
		b = b[n:]
	}
	if lvl, n, ok := parseLabel(b); ok {
		p.level = lvl
		p.labelled = true
		b = b[n:]
	} else if p.syslog {
		p.level = p.sysLevel
		p.labelled = true
	}
	p.text = b
	if !p.labelled {
		p.scope = scopeNoLabel
		p.msg = b
		return
	}
	splitScope(b, p)
}

// dockerLine is one line of docker's json-file log driver.
type dockerLine struct {
	Log    string `json:"log"`
	Stream string `json:"stream"`
	Time   string `json:"time"`
}

func parseDocker(b []byte) (inner []byte, t time.Time, ok bool) {
	var d dockerLine
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, time.Time{}, false
	}
	if d.Log == "" && d.Stream == "" && d.Time == "" {
		return nil, time.Time{}, false
	}
	if d.Time != "" {
		t, _ = time.Parse(time.RFC3339Nano, d.Time)
	}
	inner = []byte(d.Log)
	inner = bytes.TrimRight(inner, "\r\n")
	return inner, t, true
}

// cutPodPrefix cuts kubectl --prefix "[pod/NAME/CONTAINER] ".
func cutPodPrefix(b []byte) (rest, pod []byte, ok bool) {
	if !bytes.HasPrefix(b, []byte("[pod/")) {
		return nil, nil, false
	}
	end := bytes.Index(b, []byte("] "))
	if end < 0 || end > 320 {
		return nil, nil, false
	}
	inner := b[5:end]
	pod = inner
	if i := bytes.IndexByte(inner, '/'); i >= 0 {
		pod = inner[:i]
	}
	return b[end+2:], pod, true
}

func isRFC3339Start(b []byte) bool {
	return len(b) >= 20 && isDigit(b[0]) && isDigit(b[3]) && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':'
}

// syslog severities (RFC 5424) to nats labels. Tracef uses Notice.
var sysSeverity = [8]string{"FTL", "FTL", "FTL", "ERR", "WRN", "INF", "INF", "DBG"}

var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseSyslog recognises "<PRI>" (optional), a BSD "Mmm _d hh:mm:ss" or an
// RFC 3339 timestamp, and "[host ]tag[pid]: ". The BSD stamp has no year, so
// it gives no time: the nats timestamp inside (if any) or none is used.
func parseSyslog(b []byte, p *parsed) ([]byte, bool) {
	orig := b
	sev := -1
	if len(b) > 2 && b[0] == '<' {
		i, n := 1, 0
		for i < len(b) && i < 5 && isDigit(b[i]) {
			n = n*10 + int(b[i]-'0')
			i++
		}
		if i > 1 && i < len(b) && b[i] == '>' && n < 192 {
			sev = n % 8
			b = b[i+1:]
		} else {
			return orig, false
		}
	}
	var t time.Time
	hasT := false
	switch {
	case isBSDStamp(b):
		b = b[16:]
	case isRFC3339Start(b):
		sp := bytes.IndexByte(b, ' ')
		if sp < 0 {
			return orig, false
		}
		tt, err := time.Parse(time.RFC3339Nano, string(b[:sp]))
		if err != nil {
			return orig, false
		}
		t, hasT = tt, true
		b = b[sp+1:]
	default:
		if sev < 0 {
			return orig, false
		}
	}
	rest, ok := cutSyslogTag(b, p)
	if !ok {
		if sev < 0 {
			return orig, false
		}
		rest = b // "<PRI>msg": a bare priority
	}
	p.dialect = "syslog"
	p.syslog = true
	if sev >= 0 {
		p.sysLevel = sysSeverity[sev]
	}
	if hasT && !p.hasTime {
		p.t, p.hasTime, p.timeSource = t, true, "syslog"
	}
	return rest, true
}

func isBSDStamp(b []byte) bool {
	if len(b) < 16 || b[3] != ' ' || b[6] != ' ' || b[9] != ':' || b[12] != ':' || b[15] != ' ' {
		return false
	}
	for _, m := range months {
		if string(b[:3]) == m {
			return true
		}
	}
	return false
}

// cutSyslogTag cuts "[host ]tag[pid]: " and records the pid.
func cutSyslogTag(b []byte, p *parsed) ([]byte, bool) {
	lim := min(len(b), 256)
	i := bytes.Index(b[:lim], []byte(": "))
	if i <= 0 {
		if lim == len(b) && len(b) > 0 && b[len(b)-1] == ':' {
			i = len(b) - 1
		} else {
			return nil, false
		}
	}
	hdr := b[:i]
	if bytes.Count(hdr, []byte(" ")) > 1 {
		return nil, false
	}
	tag := hdr
	if sp := bytes.IndexByte(hdr, ' '); sp >= 0 {
		tag = hdr[sp+1:]
	}
	if len(tag) == 0 || tag[0] == '[' {
		return nil, false
	}
	if ob := bytes.IndexByte(tag, '['); ob > 0 && tag[len(tag)-1] == ']' {
		n := 0
		for _, c := range tag[ob+1 : len(tag)-1] {
			if !isDigit(c) {
				return nil, false
			}
			n = n*10 + int(c-'0')
		}
		if p.pid == 0 {
			p.pid = n
		}
	} else if bytes.ContainsAny(tag, "[]") {
		return nil, false
	}
	rest := b[i+1:]
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return rest, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseNatsTime parses "2006/01/02 15:04:05.000000 " (the fraction is
// optional) without allocating.
func parseNatsTime(b []byte, loc *time.Location) (time.Time, int, bool) {
	if len(b) < 20 || b[4] != '/' || b[7] != '/' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, 0, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if !isDigit(c) {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, 0, false
	}
	i := 19
	ns := 0
	if b[i] == '.' {
		i++
		digits := 0
		for i < len(b) && isDigit(b[i]) && digits < 9 {
			ns = ns*10 + int(b[i]-'0')
			i++
			digits++
		}
		if digits == 0 {
			return time.Time{}, 0, false
		}
		for k := digits; k < 9; k++ {
			ns *= 10
		}
	}
	if i >= len(b) || b[i] != ' ' {
		return time.Time{}, 0, false
	}
	if loc == nil {
		loc = time.UTC
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ns, loc), i + 1, true
}

// parseLabel parses "[INF] " or its ANSI-coloured form
// "[\x1b[32mINF\x1b[0m] ".
func parseLabel(b []byte) (string, int, bool) {
	if len(b) < 5 || b[0] != '[' {
		return "", 0, false
	}
	i := 1
	if b[i] == 0x1b {
		j := skipANSI(b, i)
		if j == i {
			return "", 0, false
		}
		i = j
	}
	if i+3 > len(b) {
		return "", 0, false
	}
	lvl := levelName(b[i : i+3])
	if lvl == "" {
		return "", 0, false
	}
	i += 3
	if i < len(b) && b[i] == 0x1b {
		i = skipANSI(b, i)
	}
	if i >= len(b) || b[i] != ']' {
		return "", 0, false
	}
	i++
	if i < len(b) && b[i] == ' ' {
		i++
	} else if i != len(b) {
		return "", 0, false
	}
	return lvl, i, true
}

// skipANSI skips one "\x1b[...m" sequence at b[i].
func skipANSI(b []byte, i int) int {
	if i+2 >= len(b) || b[i] != 0x1b || b[i+1] != '[' {
		return i
	}
	for j := i + 2; j < len(b) && j < i+12; j++ {
		c := b[j]
		if c == 'm' {
			return j + 1
		}
		if !isDigit(c) && c != ';' {
			return i
		}
	}
	return i
}

func levelName(b []byte) string {
	switch string(b) {
	case "INF":
		return "INF"
	case "WRN":
		return "WRN"
	case "ERR":
		return "ERR"
	case "FTL":
		return "FTL"
	case "DBG":
		return "DBG"
	case "TRC":
		return "TRC"
	}
	return ""
}

var (
	raftPrefix      = []byte("RAFT [")
	filestorePrefix = []byte("Filestore [")
	dashSep         = []byte(" - ")
)

// splitScope recognises the message's scope prefix.
func splitScope(b []byte, p *parsed) {
	p.scope, p.msg = scopePlain, b
	switch {
	case bytes.HasPrefix(b, raftPrefix):
		rest := b[len(raftPrefix):]
		end := bytes.Index(rest, []byte("] "))
		if end < 0 {
			if bytes.HasSuffix(rest, []byte("]")) {
				end = len(rest) - 1
			} else {
				return
			}
		}
		inner := rest[:end]
		sep := bytes.Index(inner, dashSep)
		if sep < 0 {
			return
		}
		p.scope = scopeRaft
		p.scopeA, p.scopeB = inner[:sep], inner[sep+3:]
		p.msg = rest[min(end+2, len(rest)):]
	case bytes.HasPrefix(b, filestorePrefix):
		rest := b[len(filestorePrefix):]
		end := bytes.Index(rest, []byte("] "))
		if end < 0 {
			return
		}
		p.scope = scopeFilestore
		p.scopeA = rest[:end]
		p.msg = rest[end+2:]
	default:
		splitConn(b, p)
	}
}

// splitConn recognises "<addr> - <kind>:<n> - " (client.go initClient) and
// the internal "SYSTEM - ", "JETSTREAM - ", "ACCOUNT - ".
func splitConn(b []byte, p *parsed) {
	lim := min(len(b), 160)
	i := bytes.Index(b[:lim], dashSep)
	if i < 0 {
		return
	}
	addr := b[:i]
	if bytes.IndexByte(addr, ' ') >= 0 {
		return
	}
	rest := b[i+3:]
	switch string(addr) {
	case "SYSTEM", "JETSTREAM", "ACCOUNT":
		p.scope, p.scopeA, p.scopeB, p.msg = scopeConn, nil, addr, rest
		return
	}
	if len(addr) > 0 && bytes.IndexByte(addr, ':') < 0 {
		return
	}
	// kind: cid, rid, gid, lid, wid, mid, optionally "_ws", then ":<n> - ".
	if len(rest) < 7 || rest[1] != 'i' || rest[2] != 'd' {
		return
	}
	switch rest[0] {
	case 'c', 'r', 'g', 'l', 'w', 'm':
	default:
		return
	}
	j := 3
	if bytes.HasPrefix(rest[j:], []byte("_ws")) {
		j += 3
	}
	if j >= len(rest) || rest[j] != ':' {
		return
	}
	j++
	k := j
	for k < len(rest) && isDigit(rest[k]) {
		k++
	}
	if k == j {
		return
	}
	id := rest[:k]
	tail := rest[k:]
	switch {
	case bytes.HasPrefix(tail, dashSep):
		tail = tail[3:]
	case len(tail) == 0:
	default:
		return
	}
	p.scope, p.scopeA, p.scopeB, p.msg = scopeConn, addr, id, tail
}
