package bundle

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Log is a file whose first lines look like nats-server log lines.
type Log struct {
	Path string `json:"path"`
	// Format names the envelope around the nats-server lines: "nats" (as the
	// server writes them), "kubectl-timestamps", "kubectl-prefix",
	// "kubectl-prefix+timestamps", "docker-json" or "syslog".
	Format     string `json:"format"`
	Compressed bool   `json:"compressed,omitempty"` // gzip
	Rotated    bool   `json:"rotated,omitempty"`    // name carries nats-server's rotation suffix
	// From the first startup banner in the sniffed prefix (formats.md 9.2),
	// empty when none was seen.
	Name    string `json:"name,omitempty"`
	Node    string `json:"node,omitempty"` // raft node id
	Version string `json:"version,omitempty"`
	Cluster string `json:"cluster,omitempty"`
	Pod     string `json:"pod,omitempty"` // from a kubectl --prefix "[pod/<pod>/<container>] "
	// NameCandidates: the banner name, the pod, then names from the path.
	NameCandidates []string `json:"name_candidates"`
}

// sniffBytes bounds how much of each file is read to recognise it (after
// gzip decompression for a compressed log); the banner is looked for only in
// that prefix.
const sniffBytes = 256 << 10

// sniffLines is how many non-empty lines decide whether a file is a log.
const sniffLines = 40

var (
	// formats.md 9.1, with the optional pid and timestamp; ANSI colours are
	// stripped first.
	natsLineRE = regexp.MustCompile(`^(?:\[\d+\] )?(?:\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} )?\[(?:INF|WRN|ERR|FTL|DBG|TRC)\] `)
	ansiRE     = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// kubectl logs --prefix.
	kubePrefixRE = regexp.MustCompile(`^\[pod/([^/\]\s]+)/[^\]\s]+\] `)
	// kubectl logs --timestamps: RFC 3339 with optional fraction.
	kubeTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) `)
	// RFC 3164 ("<pri>Mmm dd hh:mm:ss host tag[pid]: ") and RFC 5424
	// ("<pri>1 ts host app procid msgid sd ") syslog headers.
	syslog3164RE = regexp.MustCompile(`^(?:<\d{1,3}>)?[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ ([^\s:\[]+)(?:\[\d+\])?: `)
	syslog5424RE = regexp.MustCompile(`^<\d{1,3}>1 \S+ \S+ (\S+) \S+ \S+ (?:-|\[.*?\]) ?`)
	bannerRE     = regexp.MustCompile(`^  (Name|Node|Version|Cluster): +(\S.*?)\s*$`)
)

// logLine is one line with its envelope taken off.
type logLine struct {
	env  string // envelope format, "nats" when none
	pod  string
	msg  string // the nats-server line (label included) or, for syslog, the message
	nats bool   // msg carries a nats-server level label
	tag  string // syslog tag / app name
}

// unwrap takes the known envelopes off one line.
func unwrap(line string) logLine {
	l := logLine{env: "nats"}
	line = strings.TrimRight(line, "\r")
	if strings.HasPrefix(line, `{"log":`) {
		var d struct {
			Log  *string `json:"log"`
			Time string  `json:"time"`
		}
		if json.Unmarshal([]byte(line), &d) == nil && d.Log != nil {
			l.env = "docker-json"
			line = strings.TrimRight(*d.Log, "\r\n")
		}
	}
	var env []string
	if m := kubePrefixRE.FindStringSubmatch(line); m != nil {
		env = append(env, "kubectl-prefix")
		l.pod = m[1]
		line = line[len(m[0]):]
	}
	if m := kubeTimeRE.FindString(line); m != "" {
		env = append(env, "timestamps")
		line = line[len(m):]
	}
	if len(env) > 0 && l.env == "nats" {
		l.env = "kubectl-" + strings.TrimPrefix(strings.Join(env, "+"), "kubectl-")
	}
	if l.env == "nats" {
		if m := syslog3164RE.FindStringSubmatch(line); m != nil {
			l.env, l.tag, line = "syslog", m[1], line[len(m[0]):]
		} else if m := syslog5424RE.FindStringSubmatch(line); m != nil {
			l.env, l.tag, line = "syslog", m[1], line[len(m[0]):]
		}
	}
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiRE.ReplaceAllString(line, "")
	}
	if loc := natsLineRE.FindStringIndex(line); loc != nil {
		l.nats = true
		l.msg = line[loc[1]:]
	} else {
		l.msg = line
	}
	return l
}

// counts says whether the line is a nats-server line: labelled, or syslog
// from a tag naming nats (syslog output carries no label).
func (l logLine) counts() bool {
	return l.nats || (l.env == "syslog" && strings.Contains(strings.ToLower(l.tag), "nats"))
}

// sniffLog decides whether prefix (the first bytes of a file, decompressed)
// is a nats-server log, and fills what the banner says. full says prefix is
// the whole file (so its last line is whole).
func sniffLog(prefix []byte, full bool) (Log, bool) {
	lines := bytes.Split(prefix, []byte("\n"))
	if !full && len(lines) > 1 {
		lines = lines[:len(lines)-1] // a cut line
	}
	var lg Log
	seen, match := 0, 0
	var first *logLine
	banner := map[string]string{}
	for _, raw := range lines {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l := unwrap(string(raw))
		if seen < sniffLines {
			seen++
			if l.counts() {
				match++
				if first == nil {
					c := l
					first = &c
				}
			}
		} else if match == 0 {
			break // not a log: do not read on for a banner
		}
		if m := bannerRE.FindStringSubmatch(l.msg); m != nil && (l.counts()) {
			if _, ok := banner[m[1]]; !ok {
				banner[m[1]] = m[2]
			}
		}
		if lg.Pod == "" && l.pod != "" {
			lg.Pod = l.pod
		}
	}
	// A log: most of the first lines are server lines, or many are (a log
	// can open with a stack trace or a line from a wrapper).
	if match == 0 || (match*2 < seen && match < 5) {
		return Log{}, false
	}
	lg.Format = first.env
	lg.Name, lg.Node, lg.Version, lg.Cluster = banner["Name"], banner["Node"], banner["Version"], banner["Cluster"]
	return lg, true
}
