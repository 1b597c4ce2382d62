package bundle

import (
	"regexp"
	"strings"
)

// genericWords are path pieces that never name a server: layout words,
// capture and audit artifact names, extensions.
var genericWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		data jetstream js store stores storage state var lib opt home root mnt volume volumes tmp temp
		log logs nats nats-server natsserver server servers node nodes pod pods kubectl container
		monitoring monitor metrics captures capture misc bundle bundles support support-bundle
		jsz raftz healthz varz connz routez gatewayz leafz accountz subsz accstatz ipqueuesz profilez
		jetstream_info variables health exp_variables connections routes gateways leafs subs accounts
		account_connections account_leafs account_subs account_jetstream_info account_info account_raftz
		account_ipqueues stream_info profiles replicas clusters streams unclustered manifest
		audit_gather_metadata audit_gather_log
		json jsonl txt out err gz tgz tar zip unpacked current previous`) {
		genericWords[w] = true
	}
}

// affixes are dropped from the front or the back of a name when they are a
// whole piece ("store-n1" gives "n1", "n1-jsz" gives "n1").
var affixes = []string{
	"store", "data", "jetstream", "js-store", "log", "logs", "nats-server", "server",
	"jsz", "raftz", "healthz", "varz", "connz", "routez", "monitoring", "captures", "capture",
}

// extensions are dropped from the end of a name, repeatedly.
var extensions = []string{".gz", ".tgz", ".tar", ".zip", ".log", ".txt", ".json", ".jsonl", ".out", ".err", ".unpacked"}

// rotatedRE is the suffix nats-server's log rotation adds
// (<file>.YYYY.MM.DD.HH.MM.SS.<9-digit ns>, formats.md 9.1).
var rotatedRE = regexp.MustCompile(`\.\d{4}\.\d\d\.\d\d\.\d\d\.\d\d\.\d\d\.\d{9}$`)

// logrotateRE is the numbered or dated suffix logrotate-style tools add
// after a log extension (nats.log.1, nats.log-20261130).
var logrotateRE = regexp.MustCompile(`(\.log)(?:[.-]\d{1,8})$`)

func isRotated(name string) bool {
	return rotatedRE.MatchString(strings.TrimSuffix(name, ".gz"))
}

// stem drops extensions and rotation suffixes from a file or folder name.
func stem(name string) string {
	for {
		prev := name
		name = rotatedRE.ReplaceAllString(name, "")
		name = logrotateRE.ReplaceAllString(name, "$1")
		lower := strings.ToLower(name)
		for _, e := range extensions {
			if strings.HasSuffix(lower, e) && len(name) > len(e) {
				name = name[:len(name)-len(e)]
				break
			}
		}
		if name == prev {
			return name
		}
	}
}

// core drops generic affixes from a stem: "store-n1" → "n1".
func core(s string) string {
	for {
		prev := s
		lower := strings.ToLower(s)
		for _, a := range affixes {
			for _, sep := range []string{"-", "_", "."} {
				if strings.HasPrefix(lower, a+sep) && len(s) > len(a)+1 {
					s = s[len(a)+1:]
				} else if strings.HasSuffix(lower, sep+a) && len(s) > len(a)+1 {
					s = s[:len(s)-len(a)-1]
				}
				lower = strings.ToLower(s)
			}
		}
		if s == prev {
			return s
		}
	}
}

// head is the part of a stem before its first layout word past the first
// piece ("s1-raftz-app" gives "s1"), or "" when there is none.
func head(st string) string {
	i := 0
	for j, piece := range strings.FieldsFunc(st, isSep) {
		i = strings.Index(st[i:], piece) + i
		if j > 0 && genericWords[strings.ToLower(piece)] {
			if h := strings.TrimRight(st[:i], "-_."); !isGeneric(h) {
				return h
			}
			return ""
		}
		i += len(piece)
	}
	return ""
}

// startsWithEndpoint: a name such as "raftz-acc-_G" or "jsz?acc=x" names a
// monitoring query, not a server.
func startsWithEndpoint(st string) bool {
	first, _, _ := strings.Cut(strings.ToLower(st), "-")
	first, _, _ = strings.Cut(first, "_")
	first, _, _ = strings.Cut(first, "?")
	switch first {
	case "jsz", "raftz", "healthz", "varz", "connz", "routez", "gatewayz", "leafz", "accountz", "subsz", "accstatz", "ipqueuesz":
		return true
	}
	return false
}

func isSep(r rune) bool { return r == '-' || r == '_' || r == '.' }

func isGeneric(s string) bool {
	if s == "" || genericWords[strings.ToLower(s)] {
		return true
	}
	return strings.Trim(s, "0123456789") == "" // page numbers, dates
}

// candidates collects names in order, without repeats; the first nfull are
// whole names (content, or a whole path component), the rest pieces.
type candidates struct {
	list  []string
	seen  map[string]bool
	nfull int
}

func (c *candidates) add(s string) {
	if s == "" || c.seen[s] {
		return
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[s] = true
	c.list = append(c.list, s)
}

// full adds whole names; call it before pieces.
func (c *candidates) full(s ...string) {
	for _, x := range s {
		c.add(x)
	}
	c.nfull = len(c.list)
}

// fromPath adds the names the path p suggests: for each component, deepest
// first, its core (affixes dropped), its stem (extensions dropped) and the
// component itself, skipping components that are only layout words; then the
// pieces of each core split on "-", "_" and ".", deepest first.
func (c *candidates) fromPath(p string) {
	if p == "." || p == "" {
		return
	}
	comps := strings.Split(p, "/")
	var cores []string
	for i := len(comps) - 1; i >= 0; i-- {
		comp := comps[i]
		st := stem(comp)
		co := core(st)
		if isGeneric(st) || isGeneric(co) || startsWithEndpoint(st) {
			continue
		}
		c.full(head(st), co, st, comp)
		cores = append(cores, co)
	}
	for _, co := range cores {
		for _, piece := range strings.FieldsFunc(co, isSep) {
			if !isGeneric(piece) {
				c.add(piece)
			}
		}
	}
}
