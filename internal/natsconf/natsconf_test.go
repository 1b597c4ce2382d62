package natsconf

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openDir(dir string) Open {
	return func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.Base(p))) }
}

// TestFixtureConfigs: the configs real servers ran with in the committed
// fixtures read as the generator wrote them (server_name and the
// jetstream block's values).
func TestFixtureConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/bundles/*/bundle/conf/*.conf")
	if len(files) == 0 {
		t.Fatal("no fixture configs")
	}
	for _, f := range files {
		c := Parse(f, read(t, f), nil)
		if !c.Complete() {
			t.Errorf("%s: %v", f, c.Err)
			continue
		}
		name, _ := c.Lookup("server_name")
		if want := strings.TrimSuffix(filepath.Base(f), ".conf"); name.Text != want {
			t.Errorf("%s: server_name %q, want %q", f, name.Text, want)
		}
		if v, _ := c.Lookup("jetstream", "sync_interval"); v.Text != "30s" {
			t.Errorf("%s: sync_interval %q", f, v.Text)
		}
		if v, _ := c.Lookup("cluster", "routes"); len(v.List) != 2 {
			t.Errorf("%s: %d routes", f, len(v.List))
		}
		if !Sniff(read(t, f)) {
			t.Errorf("%s: not sniffed as a config", f)
		}
	}
}

// The files under testdata/ are each accepted by a real nats-server
// (v2.15.3 `nats-server -t -c FILE`, SERVER_NAME set for helm.conf;
// TestServerAcceptsTestdata repeats it when JSF_NATS_SERVER names one).
func TestTestdataConfigs(t *testing.T) {
	for _, tc := range []struct {
		file             string
		name, nameVar    string
		sync             string
		missing          int
		complete, sniffs bool
	}{
		// The Helm chart's form: one map in braces, JSON-like keys, the
		// name from the pod's environment.
		{file: "helm.conf", nameVar: "SERVER_NAME", complete: true, sniffs: true},
		// Variables defined in the file, an include beside it.
		{file: "vars.conf", name: "n1", sync: "10s", complete: true, sniffs: true},
		{file: "always.conf", name: "n2", sync: "always", complete: true, sniffs: true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := filepath.Join("testdata", tc.file)
			c := Parse(p, read(t, p), openDir("testdata"))
			if c.Complete() != tc.complete {
				t.Errorf("complete %v (err %v, missing %v)", c.Complete(), c.Err, c.MissingIncludes)
			}
			v, _ := c.Lookup("server_name")
			if v.Text != tc.name || v.Var != tc.nameVar {
				t.Errorf("server_name %q var %q, want %q var %q", v.Text, v.Var, tc.name, tc.nameVar)
			}
			s, ok := c.Lookup("jetstream", "sync_interval")
			if !ok {
				s, _ = c.Lookup("jetstream", "sync")
			}
			if s.Text != tc.sync {
				t.Errorf("sync %q, want %q", s.Text, tc.sync)
			}
			if Sniff(read(t, p)) != tc.sniffs {
				t.Errorf("sniff %v", !tc.sniffs)
			}
		})
	}
	// Without the include beside it, vars.conf is not read whole.
	p := filepath.Join("testdata", "vars.conf")
	c := Parse(p, read(t, p), nil)
	if c.Complete() || len(c.MissingIncludes) != 1 || c.MissingIncludes[0] != "testdata/extra.conf" {
		t.Errorf("missing include: complete %v, missing %v", c.Complete(), c.MissingIncludes)
	}
	c = Parse(p, read(t, p), openDir("testdata"))
	if v, _ := c.Lookup("http"); v.Text != "127.0.0.1:-1" {
		t.Errorf("included http %q", v.Text)
	}
}

// TestServerAcceptsTestdata runs a real nats-server's config check on the
// testdata files (JSF_NATS_SERVER=path/to/nats-server).
func TestServerAcceptsTestdata(t *testing.T) {
	bin := os.Getenv("JSF_NATS_SERVER")
	if bin == "" {
		t.Skip("JSF_NATS_SERVER not set")
	}
	for _, f := range []string{"helm.conf", "vars.conf", "always.conf"} {
		cmd := exec.Command(bin, "-t", "-c", f)
		cmd.Dir = "testdata"
		cmd.Env = append(os.Environ(), "SERVER_NAME=x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", f, err, out)
		}
	}
}

// TestSyntaxErrors: a file that stops parsing keeps what came before and
// says where it stopped.
func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		in     string
		offset int
		keep   string
	}{
		{"server_name: a\njetstream {\n  store_dir: /x\n", 43, "server_name"},
		{"server_name: \"a\nport: 1\n", 15, ""}, // the line ends inside the string
		{"a: [1, 2\n", 9, ""},
		{"a: 1\n}\n", 5, "a"},
	} {
		c := Parse("f.conf", []byte(tc.in), nil)
		var se *SyntaxError
		if !errors.As(c.Err, &se) || !errors.Is(c.Err, ErrSyntax) {
			t.Errorf("%q: error %v", tc.in, c.Err)
			continue
		}
		if se.Offset != tc.offset {
			t.Errorf("%q: offset %d, want %d", tc.in, se.Offset, tc.offset)
		}
		if _, ok := c.Root.Get(tc.keep); tc.keep != "" && !ok {
			t.Errorf("%q: %s lost", tc.in, tc.keep)
		}
	}
}

// TestNotConfigs: captures, logs and text are not sniffed as configs.
func TestNotConfigs(t *testing.T) {
	for _, in := range []string{
		`{"server_id":"N","server_name":"n1","jetstream":{"config":{"store_dir":"/x"}}}`,
		// A /varz capture with a flipped byte: no longer JSON, still no config.
		`{"server_id":"N","server_name":"n1","jetstream":{"config":{"store_dir":"/x"q}}}`,
		"[1234] 2026/11/30 10:00:00.000000 [INF] Starting nats-server\n",
		"shopping list\nmilk\n",
		"",
	} {
		if Sniff([]byte(in)) {
			t.Errorf("%q sniffed as a config", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.conf")
	fixtures, _ := filepath.Glob("../../testdata/bundles/*/bundle/conf/*.conf")
	for _, p := range append(files, fixtures...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := Parse("f.conf", b, func(string) ([]byte, error) { return b, nil })
		if c.Err != nil {
			var se *SyntaxError
			if !errors.As(c.Err, &se) || se.Offset < 0 || se.Offset > len(b) {
				t.Fatalf("error %v", c.Err)
			}
		}
		Sniff(b)
	})
}
