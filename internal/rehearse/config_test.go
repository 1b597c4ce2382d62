package rehearse

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsconf"
)

// fixtures are the committed bundles the generator wrote with real servers.
func fixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{"../../testdata/bundles", "../../testdata/perturbed"} {
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := filepath.Join(root, e.Name(), "bundle")
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			} else if z := p + ".zip"; fileExists(z) {
				out = append(out, z)
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("%d committed fixtures found", len(out))
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestSandboxConfigsOnFixtures: for every committed fixture, every server
// with a store gets a config whose every listener is on 127.0.0.1, whose
// routes lead only to the sandbox's own cluster ports, and which holds no
// leafnode, gateway, websocket or MQTT block; the guard passes it.
func TestSandboxConfigsOnFixtures(t *testing.T) {
	for _, fx := range fixtures(t) {
		b, err := bundle.Open(fx, bundle.Limits{TempDir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", fx, err)
		}
		m := analysis.Load(b)
		members, err := plan(b, m)
		if err != nil {
			b.Close()
			continue // no store: nothing to rehearse (said as an error)
		}
		sb := &sandbox{Dir: t.TempDir(), Members: members}
		if err := sb.layOut(b); err != nil {
			t.Fatalf("%s: %v", fx, err)
		}
		ports := map[string]bool{}
		for _, mb := range members {
			ports["nats-route://127.0.0.1:"+strconv.Itoa(mb.ClusterPort)] = true
		}
		for _, mb := range members {
			text := mb.config(filepath.Join(mb.Dir, "store"), filepath.Join(mb.Dir, "server.log"), "")
			if err := checkLoopback(mb.Name, text); err != nil {
				t.Errorf("%s: %v\n%s", fx, err, text)
				continue
			}
			c := natsconf.Parse("x.conf", []byte(text), nil)
			if v, _ := c.Lookup("host"); v.Text != "127.0.0.1" {
				t.Errorf("%s %s: host %q", fx, mb.Name, v.Text)
			}
			if v, _ := c.Lookup("http"); !strings.HasPrefix(v.Text, "127.0.0.1:") {
				t.Errorf("%s %s: http %q", fx, mb.Name, v.Text)
			}
			if v, ok := c.Lookup("cluster", "routes"); ok {
				for _, r := range v.List {
					if !ports[r.Text] || r.Text == "nats-route://127.0.0.1:"+strconv.Itoa(mb.ClusterPort) {
						t.Errorf("%s %s: route %q is not to another sandbox server", fx, mb.Name, r.Text)
					}
				}
			}
			for _, k := range []string{"leafnodes", "gateway", "websocket", "mqtt"} {
				if _, ok := c.Lookup(k); ok {
					t.Errorf("%s %s: %s kept", fx, mb.Name, k)
				}
			}
			if v, _ := c.Lookup("server_name"); v.Text != mb.Name {
				t.Errorf("%s: server_name %q, want %q", fx, v.Text, mb.Name)
			}
		}
		b.Close()
	}
}

// TestCheckLoopbackRefuses: the guard refuses every way a config could
// reach or listen beyond loopback.
func TestCheckLoopbackRefuses(t *testing.T) {
	ok := "host: 127.0.0.1\nport: 4222\nhttp: \"127.0.0.1:8222\"\ncluster { name: c, listen: \"127.0.0.1:6222\", routes: [\"nats-route://127.0.0.1:6223\"] }\n"
	if err := checkLoopback("ok", ok); err != nil {
		t.Fatalf("loopback config refused: %v", err)
	}
	for name, text := range map[string]string{
		"route elsewhere":   strings.Replace(ok, "nats-route://127.0.0.1:6223", "nats-route://10.0.0.7:6222", 1),
		"route by name":     strings.Replace(ok, "nats-route://127.0.0.1:6223", "nats://nats-1.nats.svc:6222", 1),
		"host any":          strings.Replace(ok, "host: 127.0.0.1", "host: 0.0.0.0", 1),
		"no host":           strings.Replace(ok, "host: 127.0.0.1\n", "", 1),
		"http port alone":   strings.Replace(ok, "\"127.0.0.1:8222\"", "8222", 1),
		"http all":          strings.Replace(ok, "\"127.0.0.1:8222\"", "\"0.0.0.0:8222\"", 1),
		"cluster listen":    strings.Replace(ok, "\"127.0.0.1:6222\"", "\"0.0.0.0:6222\"", 1),
		"cluster no listen": "host: 127.0.0.1\nport: 4222\ncluster { name: c, routes: [\"nats-route://127.0.0.1:6223\"] }\n",
		"leafnode remote":   ok + "leafnodes { remotes: [{url: \"nats-leaf://127.0.0.1:7422\"}] }\n",
		"gateway":           ok + "gateway { name: g, listen: \"127.0.0.1:7222\" }\n",
		"websocket":         ok + "websocket { listen: \"127.0.0.1:8080\", no_tls: true }\n",
		"mqtt":              ok + "mqtt { listen: \"127.0.0.1:1883\" }\n",
		"url resolver":      ok + "resolver: URL(\"http://accounts.example.com:9090/jwt/v1/accounts/\")\n",
		"advertise":         strings.Replace(ok, "routes:", "advertise: \"203.0.113.5:6222\", routes:", 1),
		"unparsable":        ok + "cluster {\n",
	} {
		if err := checkLoopback(name, text); err == nil {
			t.Errorf("%s: not refused:\n%s", name, text)
		}
	}
}

// TestConfigLeavesOutWhatReachesOut: a bundled config with a leafnode
// remote, a gateway, routes elsewhere and an environment variable keeps
// its accounts and JetStream settings and leaves the rest out, said.
func TestConfigLeavesOutWhatReachesOut(t *testing.T) {
	src := `server_name: n1
port: 4222
http: 0.0.0.0:8222
jetstream { store_dir: /data, domain: hub, sync_interval: 30s, max_file_store: 10GB, key: $JS_KEY }
cluster { name: prod, listen: 0.0.0.0:6222, routes: [nats://n2.prod:6222, nats://n3.prod:6222] }
leafnodes { remotes: [{url: "nats-leaf://hub.example.com:7422", credentials: /etc/leaf.creds}] }
gateway { name: prod, listen: 0.0.0.0:7222, gateways: [{name: dr, url: "nats://dr.example.com:7222"}] }
accounts { APP: { jetstream: enabled, users: [{user: app, password: "s3cr\"t"}] }, SYS: {} }
system_account: SYS
authorization { token: $TOKEN }
`
	c := natsconf.Parse("n1.conf", []byte(src), nil)
	mb := &member{Name: "n1", Cluster: "prod", Conf: c, ClientPort: 1, ClusterPort: 2, HTTPPort: 3, Routes: []string{"nats-route://127.0.0.1:5"}}
	text := mb.config("/sb/store", "/sb/server.log", "")
	if err := checkLoopback("n1", text); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	out := natsconf.Parse("out.conf", []byte(text), nil)
	if out.Err != nil {
		t.Fatalf("%v\n%s", out.Err, text)
	}
	for _, k := range [][]string{{"jetstream", "domain"}, {"jetstream", "sync_interval"}, {"jetstream", "max_file_store"}, {"accounts", "APP", "users"}, {"system_account"}} {
		if _, ok := out.Lookup(k...); !ok {
			t.Errorf("%s not kept:\n%s", strings.Join(k, "."), text)
		}
	}
	if v, _ := out.Lookup("accounts", "APP", "users"); len(v.List) != 1 || func() string { p, _ := v.List[0].Map.Get("password"); return p.Text }() != `s3cr"t` {
		t.Errorf("password not kept as written:\n%s", text)
	}
	for _, k := range [][]string{{"leafnodes"}, {"gateway"}, {"authorization"}, {"jetstream", "key"}} {
		if _, ok := out.Lookup(k...); ok {
			t.Errorf("%s kept:\n%s", strings.Join(k, "."), text)
		}
	}
	said := map[string]bool{}
	for _, l := range mb.Left {
		said[l.setting] = true
	}
	for _, k := range []string{"leafnodes", "gateway", "authorization", "jetstream.key"} {
		if !said[k] {
			t.Errorf("leaving out %s is not said (left: %v)", k, mb.Left)
		}
	}
}

// TestCipherOfEncryptedFixtures: the cipher a real server wrote its
// encrypted store with is what the sandbox config names, so the rehearsed
// server does not convert the copy's files on start.
func TestCipherOfEncryptedFixtures(t *testing.T) {
	for fx, want := range map[string]string{"encrypted-aes-v2.12.1": "aes", "encrypted-v2.15.2": "chacha"} {
		root := filepath.Join("..", "..", "testdata", "bundles", fx)
		var w struct {
			Expect struct {
				Key string `json:"key"`
			} `json:"expect"`
		}
		raw, err := os.ReadFile(filepath.Join(root, "want.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &w); err != nil || w.Expect.Key == "" {
			t.Fatalf("%s: no key in want.json: %v", fx, err)
		}
		b, err := bundle.Open(filepath.Join(root, "bundle"), bundle.Limits{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		members, err := plan(b, analysis.LoadWith(b, analysis.Options{Keys: []string{w.Expect.Key}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, mb := range members {
			if got := cipherOf(b, mb.StoreRoot, w.Expect.Key); got != want {
				t.Errorf("%s %s: cipher %q, want %q", fx, mb.Name, got, want)
			}
			if got := cipherOf(b, mb.StoreRoot, "not-the-key"); got != "" {
				t.Errorf("%s %s: cipher %q under a wrong key", fx, mb.Name, got)
			}
		}
		b.Close()
	}
	// A plain store opens under no key: the key is then not given to the
	// server, which would encrypt the copy.
	b, err := bundle.Open(filepath.Join("..", "..", "testdata", "bundles", "orphan-v2.15.2", "bundle"), bundle.Limits{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	members, err := plan(b, analysis.Load(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, mb := range members {
		if got := cipherOf(b, mb.StoreRoot, "any-key"); got != "" {
			t.Errorf("plain %s: cipher %q", mb.Name, got)
		}
	}
}

// TestOperatorModeWithoutConfigIsSaid: a bundle of operator mode without
// its servers' configs (operator-v2.15.3: stores, resolver folders, logs)
// is rehearsed with config accounts under the public keys, and says so.
func TestOperatorModeWithoutConfigIsSaid(t *testing.T) {
	b, err := bundle.Open(filepath.Join("..", "..", "testdata", "bundles", "operator-v2.15.3", "bundle"), bundle.Limits{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	members, err := plan(b, analysis.Load(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, mb := range members {
		said := false
		for _, l := range mb.Left {
			said = said || l.setting == "operator"
		}
		keys := 0
		for _, a := range mb.Accounts {
			if publicAccountKey(a) {
				keys++
			}
		}
		if !said || keys < 2 {
			t.Errorf("%s: operator mode said %v, %d accounts by public key (%v)", mb.Name, said, keys, mb.Accounts)
		}
	}
	for s, want := range map[string]bool{"ADFYPA2NFDKT5ANDETOMNMQEDGYDKY4PUM4KRNWKL3FXUDAWXT6LYAO4": true, "APP": false, "SYS": false,
		"NDFYPA2NFDKT5ANDETOMNMQEDGYDKY4PUM4KRNWKL3FXUDAWXT6LYAO4": false, "ADFYPA2NFDKT5ANDETOMNMQEDGYDKY4PUM4KRNWKL3FXUDAWXT6LYAO": false} {
		if publicAccountKey(s) != want {
			t.Errorf("publicAccountKey(%q) = %v", s, !want)
		}
	}
}

// TestSandboxPortsDistinct: every port the sandbox hands out is its own,
// however many servers (a port freed at once could be handed out twice).
func TestSandboxPortsDistinct(t *testing.T) {
	for range 20 {
		var ms []*member
		for i := range 7 {
			ms = append(ms, &member{Name: "s" + strconv.Itoa(i), Cluster: "c"})
		}
		sb := &sandbox{Dir: t.TempDir(), Members: ms}
		if err := sb.layOut(nil); err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, mb := range ms {
			for _, p := range []int{mb.ClientPort, mb.ClusterPort, mb.HTTPPort} {
				if seen[p] {
					t.Fatalf("port %d handed out twice", p)
				}
				seen[p] = true
			}
		}
	}
}
