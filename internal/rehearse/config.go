package rehearse

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/natsconf"
)

// member is one server of the sandbox: its name, what the bundle says of it
// and what the sandbox gives it.
type member struct {
	Name    string
	Cluster string
	Version string
	// StoreRoot is the server's JetStream root in the bundle (…/jetstream).
	StoreRoot string
	// Accounts are the account folders of its store.
	Accounts []string
	// SystemAccount is the account whose folder holds the meta group
	// (`_js_`), "" for the default $SYS.
	SystemAccount string
	// Conf is the server's own config from the bundle, nil when the bundle
	// holds none for it.
	Conf *natsconf.Config
	// Cipher is the cipher its encrypted store was written with ("" when
	// not encrypted or no key given opens it).
	Cipher string

	Dir                               string // its scratch folder
	ClientPort, ClusterPort, HTTPPort int
	Routes                            []string
	// Files are files of the bundle the config refers to (operator JWT,
	// resolver folder), copied beside the store: bundle path → sandbox path.
	Files map[string]string
	Left  []left
}

type left struct{ setting, why string }

// keptJetStream are the jetstream settings carried over from a bundled
// config: what changes how the server reads and keeps its store.
var keptJetStream = map[string]bool{
	"max_memory_store": true, "max_mem_store": true, "max_mem": true, "max_memory": true,
	"max_file_store": true, "max_file": true, "max_disk": true, "max_disk_store": true,
	"sync_interval": true, "sync_always": true, "domain": true, "cipher": true,
	"max_buffered_msgs": true, "max_buffered_size": true, "request_queue_limit": true,
	"unique_tag": true, "strict": true, "max_outstanding_catchup": true, "max_ack_pending": true,
	"max_ha_assets": true, "limits": true, "tpm": true,
}

// keptTop are the top-level settings carried over: who the accounts and
// users are, as the server resolves them.
var keptTop = map[string]bool{
	"accounts": true, "system_account": true, "no_auth_user": true, "authorization": true,
	"operator": true, "operators": true, "trusted": true, "trusted_keys": true,
	"resolver": true, "resolver_preload": true, "resolver_tls": false,
	"max_payload": true, "max_pending": true, "max_control_line": true, "server_tags": true,
	"disable_jetstream_banner": true, "max_connections": true, "max_subscriptions": true,
	"no_system_account": true, "system": false,
}

// config renders m's sandbox config. Everything that listens is on
// 127.0.0.1; routes lead only to the sandbox's servers; what could reach
// anything else is left out and said in m.Left.
func (m *member) config(storeDir, logFile, key string) string {
	cipherSet := false
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %s\n", quote(m.Name))
	fmt.Fprintf(&b, "host: \"127.0.0.1\"\nport: %d\nhttp: \"127.0.0.1:%d\"\n", m.ClientPort, m.HTTPPort)
	fmt.Fprintf(&b, "log_file: %s\nlogtime: true\n", quote(logFile))
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %s\n", quote(storeDir))
	if key != "" {
		fmt.Fprintf(&b, "  key: %s\n", quote(key))
	}
	if m.Conf != nil {
		_, cipherSet = m.Conf.Lookup("jetstream", "cipher")
	}
	if key != "" && m.Cipher != "" && !cipherSet {
		// The cipher the store was written with: another makes the
		// server convert every file on start, which production would not.
		fmt.Fprintf(&b, "  cipher: %s\n", m.Cipher)
	}
	if m.Conf != nil {
		if js, ok := m.Conf.Lookup("jetstream"); ok && js.Map != nil {
			for _, k := range js.Map.Keys() {
				v, _ := js.Map.Get(k)
				switch {
				case k == "store_dir" || k == "store" || k == "enabled":
				case k == "key" || k == "encryption_key" || k == "prev_encryption_key":
					if key == "" {
						m.leave("jetstream."+k, "the key is given with --key, never taken from the bundle")
					}
				case !keptJetStream[k]:
					m.leave("jetstream."+k, "not a setting of how the store is read")
				case !writable(v):
					m.leave("jetstream."+k, "its value comes from the environment ($"+varOf(v)+")")
				default:
					fmt.Fprintf(&b, "  %s: %s\n", k, render(v, "  "))
				}
			}
		}
	}
	b.WriteString("}\n")
	if m.Cluster != "" {
		fmt.Fprintf(&b, "cluster {\n  name: %s\n  listen: \"127.0.0.1:%d\"\n  routes: [\n", quote(m.Cluster), m.ClusterPort)
		for _, r := range m.Routes {
			fmt.Fprintf(&b, "    %s\n", quote(r))
		}
		b.WriteString("  ]\n}\n")
	}
	if m.Conf != nil {
		for _, k := range m.Conf.Root.Keys() {
			v, _ := m.Conf.Root.Get(k)
			switch {
			case k == "jetstream" || k == "server_name" || k == "cluster" || k == "host" || k == "net" ||
				k == "port" || k == "listen" || k == "http" || k == "http_port" || k == "https" || k == "https_port" ||
				k == "monitor_port" || k == "log_file" || k == "logfile" || k == "logtime" || k == "pid_file" ||
				k == "ports_file_dir":
			case k == "operator" || k == "operators" || k == "trusted":
				if s, ok := m.file(v, k); ok {
					fmt.Fprintf(&b, "%s: %s\n", k, s)
				}
			case k == "resolver":
				if s, ok := m.resolver(v); ok {
					fmt.Fprintf(&b, "resolver: %s\n", s)
				}
			case !keptTop[k]:
				m.leave(k, "not needed to read the store, or reaches outside the sandbox")
			case !writable(v):
				m.leave(k, "its value comes from the environment ($"+varOf(v)+")")
			default:
				fmt.Fprintf(&b, "%s: %s\n", k, render(v, ""))
			}
		}
		return b.String()
	}
	// No config in the bundle: the accounts are those of the store's
	// folders, each with JetStream on.
	var accs []string
	for _, a := range m.Accounts {
		if a != "$G" && a != "$SYS" {
			accs = append(accs, a)
		}
	}
	if len(accs) > 0 {
		b.WriteString("accounts {\n")
		for _, a := range accs {
			if a == m.SystemAccount {
				fmt.Fprintf(&b, "  %s: {}\n", quote(a))
				continue
			}
			fmt.Fprintf(&b, "  %s: { jetstream: enabled }\n", quote(a))
		}
		b.WriteString("}\n")
	}
	if m.SystemAccount != "" {
		fmt.Fprintf(&b, "system_account: %s\n", quote(m.SystemAccount))
	}
	return b.String()
}

func (m *member) leave(setting, why string) { m.Left = append(m.Left, left{setting, why}) }

// file carries over a setting naming a file of the bundle (an operator
// JWT), copied into the sandbox; an inline JWT is kept as it is.
func (m *member) file(v natsconf.Value, key string) (string, bool) {
	if !writable(v) {
		m.leave(key, "its value comes from the environment ($"+varOf(v)+")")
		return "", false
	}
	var out []string
	vals := v.List
	if vals == nil {
		vals = []natsconf.Value{v}
	}
	for _, e := range vals {
		t := e.Text
		if strings.HasPrefix(t, "eyJ") || !strings.Contains(t, "/") && !strings.HasSuffix(t, ".jwt") {
			out = append(out, quote(t))
			continue
		}
		p, ok := m.Files[t]
		if !ok {
			m.leave(key, fmt.Sprintf("the bundle does not hold %s", t))
			return "", false
		}
		out = append(out, quote(p))
	}
	if v.List != nil {
		return "[" + strings.Join(out, ", ") + "]", true
	}
	return out[0], true
}

// resolver carries over a memory resolver as it is and a full or cache
// resolver onto the copy of its folder; a URL resolver reaches outside.
func (m *member) resolver(v natsconf.Value) (string, bool) {
	switch {
	case !writable(v):
		m.leave("resolver", "its value comes from the environment ($"+varOf(v)+")")
		return "", false
	case v.Map == nil && strings.EqualFold(v.Text, "MEMORY"):
		return "MEMORY", true
	case v.Map == nil:
		m.leave("resolver", "a URL resolver reaches outside the sandbox: accounts that only it knows are not resolved")
		return "", false
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, k := range v.Map.Keys() {
		e, _ := v.Map.Get(k)
		if k == "dir" {
			p, ok := m.Files[e.Text]
			if !ok {
				m.leave("resolver", fmt.Sprintf("the bundle does not hold its folder %s", e.Text))
				return "", false
			}
			fmt.Fprintf(&b, "  dir: %s\n", quote(p))
			continue
		}
		if !writable(e) {
			continue
		}
		fmt.Fprintf(&b, "  %s: %s\n", k, render(e, "  "))
	}
	b.WriteString("}")
	return b.String(), true
}

// writable says v holds no value from the environment.
func writable(v natsconf.Value) bool { return varOf(v) == "" }

func varOf(v natsconf.Value) string {
	if v.Var != "" {
		return v.Var
	}
	for _, e := range v.List {
		if s := varOf(e); s != "" {
			return s
		}
	}
	if v.Map != nil {
		for _, k := range v.Map.Keys() {
			e, _ := v.Map.Get(k)
			if s := varOf(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// render writes v back as config text.
func render(v natsconf.Value, indent string) string {
	switch {
	case v.Map != nil:
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range v.Map.Keys() {
			e, _ := v.Map.Get(k)
			fmt.Fprintf(&b, "%s  %s: %s\n", indent, quoteKey(k), render(e, indent+"  "))
		}
		b.WriteString(indent + "}")
		return b.String()
	case v.List != nil:
		var parts []string
		for _, e := range v.List {
			parts = append(parts, render(e, indent+"  "))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return scalar(v.Text)
}

var bare = regexp.MustCompile(`^(true|false|yes|no|on|off|-?[0-9]+(\.[0-9]+)?([a-zA-Z]{1,3})?|[0-9]+(ms|s|m|h))$`)

// scalar keeps numbers, sizes, durations and booleans bare (the server
// types them by their form) and quotes everything else.
func scalar(s string) string {
	if bare.MatchString(s) {
		return s
	}
	return quote(s)
}

func quoteKey(k string) string {
	if regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_\-]*$`).MatchString(k) {
		return k
	}
	return quote(k)
}

// quote writes s as a double-quoted config string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// checkLoopback parses a sandbox config as the server would and refuses it
// when anything in it could reach or listen beyond this machine's loopback:
// an address that is not 127.0.0.1, ::1 or localhost, a URL elsewhere, a
// leafnode remote, a gateway, a websocket or MQTT listener.
func checkLoopback(name, text string) error {
	c := natsconf.Parse(name, []byte(text), nil)
	if c.Err != nil {
		return fmt.Errorf("sandbox config of %s does not parse: %w", name, c.Err)
	}
	var bad []string
	if h, ok := c.Root.Get("host"); !ok || !loopback(h.Text) {
		bad = append(bad, "host (the client listener must be on 127.0.0.1)")
	}
	if cl, ok := c.Root.Get("cluster"); ok && (cl.Map == nil || !has(cl.Map, "listen")) {
		bad = append(bad, "cluster.listen (a cluster must listen on 127.0.0.1)")
	}
	walk(c.Root, "", func(path string, v natsconf.Value) {
		key := path[strings.LastIndex(path, ".")+1:]
		switch key {
		case "leafnodes", "leaf", "gateway", "gateways", "websocket", "ws", "mqtt", "remotes":
			bad = append(bad, path+" (would reach or listen outside the sandbox)")
			return
		}
		if v.Map != nil || v.List != nil {
			return
		}
		if h, ok := hostOf(key, v.Text); ok && !loopback(h) {
			bad = append(bad, fmt.Sprintf("%s = %q", path, v.Text))
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("sandbox config of %s is refused, it reaches beyond 127.0.0.1: %s", name, strings.Join(bad, "; "))
	}
	return nil
}

func walk(m *natsconf.Map, prefix string, f func(string, natsconf.Value)) {
	for _, k := range m.Keys() {
		v, _ := m.Get(k)
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		walkValue(p, v, f)
	}
}

func walkValue(p string, v natsconf.Value, f func(string, natsconf.Value)) {
	f(p, v)
	if v.Map != nil {
		walk(v.Map, p, f)
	}
	for _, e := range v.List {
		walkValue(p, e, f)
	}
}

// hostOf returns the host a value names: any URL's, and for the keys that
// take an address (host, listen, http, advertise…) its host part.
func hostOf(key, s string) (string, bool) {
	if i := strings.Index(s, "://"); i > 0 {
		u, err := url.Parse(s)
		if err != nil {
			return s, true // unreadable: refused
		}
		return u.Hostname(), true
	}
	switch key {
	case "host", "net", "listen", "http", "https", "advertise", "client_advertise", "cluster_advertise", "routes", "connect_urls":
	default:
		return "", false
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h, true
	}
	if strings.Trim(s, "0123456789") == "" {
		return "", true // a port alone listens on every interface
	}
	return s, true
}

func loopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func has(m *natsconf.Map, k string) bool { _, ok := m.Get(k); return ok }
