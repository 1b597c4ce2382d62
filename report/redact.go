package report

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Redact returns a copy of r fit to share with a vendor (--redact):
// account, stream and consumer names, subjects (and the payload-derived
// values that travel in them, such as KV keys), the directories of paths,
// cluster names and the message payloads the report quotes (a client
// history's values) are replaced by tokens, "acc-3f9a", "stream-81c2",
// "consumer-07be", "subj-c1d0", "path-5e22", "bundle-9a0f", "cluster-4d1e",
// "val-90ab", wherever they appear: in the fields that hold them and in
// every message, evidence, remedy, summary, note and timeline text. The
// same input gives the same token throughout the report. Server names and
// ids, peer ids, raft group names, codes, times and every figure stay, so
// the findings read the same.
//
// A cluster name is often a plain word ("new", "east", "nats"), so in free
// text it is replaced only where it stands as a cluster: after "cluster",
// "Cluster:" or "Cluster name is", after a server name and a slash ("n1/east", as the meta
// leader is logged), and quoted (a gateway's name). A payload value is
// replaced where it is quoted, as the report quotes it.
//
// Tokens are keyed by a hash of the whole unredacted report: whoever holds
// only the redacted one cannot confirm a guessed name by hashing it, while
// redacting the same report again gives the same tokens (analyze --redact
// and render --redact of its saved JSON agree).
func Redact(r *Report) (*Report, error) {
	r.Normalize()
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var out Report
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	key := sha256.Sum256(raw)
	rd := &redactor{key: key[:], names: map[string]string{}, used: map[string]bool{}}
	if out.Bundle != "" {
		rd.bundle, rd.bundleToken = out.Bundle, rd.token("bundle", out.Bundle)
	}
	rd.collectNames(&out)
	rd.collectClusters(&out)
	rd.collectValues(&out)
	rd.walk(reflect.ValueOf(&out).Elem())
	for i := range out.Servers {
		if c := r.Servers[i].Cluster; c != "" {
			out.Servers[i].Cluster = rd.token("cluster", c)
		}
	}
	out.Notes = append(out.Notes, "redacted: account, stream, consumer and cluster names, subjects, path directories and quoted message payloads are tokens (acc-…, stream-…, consumer-…, cluster-…, subj-…, path-…, val-…), the same name the same token; server names, ids and figures are as found")
	return &out, nil
}

type redactor struct {
	key                 []byte
	bundle, bundleToken string
	// names maps each account, stream and consumer name to its token.
	names map[string]string
	// odd are the names with characters outside nameChars, replaced as
	// plain substrings.
	odd  []string
	used map[string]bool // tokens handed out, to lengthen one on a collision
	memo map[string]string
	// clusters are the patterns of the cluster names where they stand as
	// one (see Redact), with their tokens.
	clusters []clusterPattern
	// values maps each quoted payload value ("\"0-46\"", as %q writes it)
	// to its quoted token; valueOrder lists them longest first.
	values     map[string]string
	valueOrder []string
}

type clusterPattern struct {
	re    *regexp.Regexp
	token string
}

// serverPhrases are the server's log phrases where "new" follows
// "cluster" and names no cluster ("JetStream cluster new metadata
// leader: …"): a cluster named new is not replaced there.
var serverPhrases = []string{" metadata leader", " remote metadata leader", " stream leader", " consumer leader"}

// replace puts the token for the cluster name wherever the pattern finds
// it: group 1 before it and group 2 after it are kept.
func (c clusterPattern) replace(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range c.re.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[3]:m[4]]
		if name == "new" && slices.ContainsFunc(serverPhrases, func(p string) bool { return strings.HasPrefix(s[m[4]:], p) }) {
			continue
		}
		b.WriteString(s[last:m[3]])
		b.WriteString(c.token)
		last = m[4]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// token is kind-HEX: the shortest prefix (4 digits at least) of the keyed
// hash no other input of this report got.
func (rd *redactor) token(kind, value string) string {
	if rd.memo == nil {
		rd.memo = map[string]string{}
	}
	if t, ok := rd.memo[kind+"\x00"+value]; ok {
		return t
	}
	m := hmac.New(sha256.New, rd.key)
	m.Write([]byte(kind + "\x00" + value))
	sum := hex.EncodeToString(m.Sum(nil))
	t := kind + "-" + sum[:4]
	for n := 5; rd.used[t] && n <= len(sum); n++ {
		t = kind + "-" + sum[:n]
	}
	rd.used[t] = true
	rd.memo[kind+"\x00"+value] = t
	return t
}

// collectNames finds every account, stream and consumer name the report's
// fields hold; the free text is searched for these.
func (rd *redactor) collectNames(r *Report) {
	add := func(kind, name string) {
		if name == "" {
			return
		}
		if _, ok := rd.names[name]; ok {
			return
		}
		rd.names[name] = rd.token(kind, name)
		if !nameRun.MatchString(name) || nameRun.FindString(name) != name {
			rd.odd = append(rd.odd, name)
		}
	}
	asset := func(account, a string) {
		add("acc", account)
		st, consumer, _ := strings.Cut(a, " > ")
		add("stream", st)
		add("consumer", consumer)
	}
	for _, st := range r.Streams {
		add("acc", st.Account)
		add("acc", st.AccountName)
		add("stream", st.Name)
		for _, copies := range [][]OnDisk{st.OnDisk, st.Captured} {
			for _, d := range copies {
				for _, c := range d.Consumers {
					add("consumer", c.Name)
				}
			}
		}
	}
	for _, g := range r.Groups {
		asset(g.Account, g.Asset)
	}
	for _, f := range r.Findings {
		add("acc", f.Account)
		add("acc", f.AccountName)
		add("stream", f.Stream)
		add("consumer", f.Consumer)
	}
	for _, e := range r.Timeline {
		add("acc", e.Account)
		add("stream", e.Stream)
	}
	// Longest first, so a name that holds another is replaced whole.
	slices.SortFunc(rd.odd, func(a, b string) int { return len(b) - len(a) })
}

// collectClusters makes the patterns of the report's cluster names: after
// "cluster", "Cluster:" or "Cluster name is" (log lines, varz), after a
// server name and a slash ("n1/C", the meta leader as logged), and quoted
// (a gateway). Longest name first, so a name that holds another is
// replaced whole.
func (rd *redactor) collectClusters(r *Report) {
	var names []string
	seen := map[string]bool{}
	for _, s := range r.Servers {
		if c := s.Cluster; c != "" && !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	// A server name (any: a log may use one the server no longer has)
	// standing alone before the slash, not a path's folder.
	const server = `[A-Za-z0-9_$-]+`
	for _, c := range names {
		q := regexp.QuoteMeta(c)
		// Group 1 stands before the name and group 2 after it; both kept.
		for _, pat := range []string{
			`((?i:\bcluster)(?::|\s+name\s+is|\s+name\s+updated\s+to)?\s+)` + q + `($|[^A-Za-z0-9_$/-])`,
			`((?:^|[\s:(,])` + server + `/)` + q + `($|[^A-Za-z0-9_$/-])`,
			`(")` + q + `(")`,
		} {
			rd.clusters = append(rd.clusters, clusterPattern{re: regexp.MustCompile(pat), token: rd.token("cluster", c)})
		}
	}
}

// collectValues finds the message payloads the report quotes: a client
// history's lost values, and every quoted value of an acked-lost finding's
// message and of its evidence lines that list values ("lost values: …") or
// begin with one (a lost value, with the held values it was acknowledged
// between). Its other evidence lines (log lines, copies) quote no payload.
func (rd *redactor) collectValues(r *Report) {
	rd.values = map[string]string{}
	add := func(s string) {
		for _, q := range quotedStrings(s) {
			if _, ok := rd.values[q]; !ok {
				v, _ := strconv.Unquote(q)
				rd.values[q] = strconv.Quote(rd.token("val", v))
				rd.valueOrder = append(rd.valueOrder, q)
			}
		}
	}
	for _, h := range r.Histories {
		for _, b := range h.Buckets {
			for _, v := range b.LostValues {
				add(v)
			}
		}
	}
	for _, f := range r.Findings {
		if f.Code != "acked-lost" {
			continue
		}
		add(f.Message)
		for _, e := range f.Evidence {
			if strings.HasPrefix(e, `"`) || strings.HasPrefix(e, "lost values: ") {
				add(e)
			}
		}
	}
	slices.SortFunc(rd.valueOrder, func(a, b string) int { return len(b) - len(a) })
}

// quotedStrings returns the Go-quoted strings in s ("\"0-46\"" as %q writes
// them), in order.
func quotedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			break
		}
		q, err := strconv.QuotedPrefix(s[i+j:])
		if err != nil {
			i += j + 1
			continue
		}
		out = append(out, q)
		i += j + len(q)
	}
	return out
}

// walk rewrites every exported string reachable from v.
func (rd *redactor) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(rd.text(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			rd.walk(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			rd.walk(v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				rd.walk(v.Field(i))
			}
		}
	}
}

var (
	// nameRun is a run of the characters account, stream and consumer
	// names are made of; a name is replaced where it is a whole run, so
	// "ORDERS" goes in "$G > ORDERS" and ".../streams/ORDERS/msgs" but
	// not in "ORDERS2".
	nameRun = regexp.MustCompile(`[A-Za-z0-9_$-]+`)
	// absPath is an absolute path in a log line (a config file, a store
	// directory): its directories may name the customer.
	absPath = regexp.MustCompile(`(^|[\s"'=(\[])(/[^\s"'()\[\],]+)`)
	// subject is a dotted NATS subject: a letter, _ or $ first, then
	// tokens joined by dots.
	subject = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$*>-]*(?:\.[A-Za-z0-9_$*>-]+)+`)
)

// fileExts end dotted words that are file names, not subjects.
var fileExts = map[string]bool{"blk": true, "idx": true, "db": true, "inf": true, "sum": true, "dat": true, "log": true,
	"conf": true, "json": true, "jsonl": true, "gz": true, "tgz": true, "zip": true, "tar": true, "txt": true, "key": true, "go": true}

// systemSubjects are prefixes of the server's own subjects: kept, with
// the names inside them replaced.
var systemSubjects = []string{"$JS.", "$JSC.", "$SYS.", "$NRG.", "_INBOX."}

// text redacts one string.
func (rd *redactor) text(s string) string {
	if s == "" {
		return s
	}
	for _, q := range rd.valueOrder {
		s = strings.ReplaceAll(s, q, rd.values[q])
	}
	if rd.bundle != "" {
		s = strings.ReplaceAll(s, rd.bundle, rd.bundleToken)
	}
	for _, c := range rd.clusters {
		s = c.replace(s)
	}
	s = absPath.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.IndexByte(m, '/')
		dir, base := path.Split(m[i:])
		if dir == "/" { // "/jsz", "/routez": an endpoint, no directory
			return m
		}
		return m[:i] + rd.token("path", strings.TrimSuffix(dir, "/")) + "/" + base
	})
	s = subject.ReplaceAllStringFunc(s, func(m string) string {
		parts := strings.Split(m, ".")
		if fileExts[parts[len(parts)-1]] || strings.HasPrefix(parts[0], "path-") || strings.HasPrefix(parts[0], "bundle-") {
			return m
		}
		short, numeric := true, true
		for _, p := range parts[1:] {
			short = short && len(p) <= 1
			numeric = numeric && strings.Trim(p, "0123456789") == ""
		}
		if short && len(parts[0]) <= 1 || numeric { // "e.g", "v2.10.22"
			return m
		}
		for _, p := range systemSubjects {
			if strings.HasPrefix(m, p) {
				return m
			}
		}
		return rd.token("subj", m)
	})
	for _, n := range rd.odd {
		s = strings.ReplaceAll(s, n, rd.names[n])
	}
	return nameRun.ReplaceAllStringFunc(s, func(m string) string {
		if t, ok := rd.names[m]; ok {
			return t
		}
		return m
	})
}
