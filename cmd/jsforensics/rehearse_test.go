package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/report/html"
)

// rehearsalServer is the nats-server for the rehearse command's tests (see
// internal/rehearse's serverBin).
func rehearsalServer(t *testing.T) string {
	t.Helper()
	p := os.Getenv("JSF_NATS_SERVER")
	if p == "" {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, ".cache", "jsforensics-gen", "bin", "v2.15.2", "nats-server")
		}
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("JSF_REQUIRE_NATS_SERVER") != "" {
			t.Fatalf("no nats-server at %q ($JSF_NATS_SERVER)", p)
		}
		t.Skip("no nats-server v2.15.2: set JSF_NATS_SERVER")
	}
	return p
}

// TestRehearseJSONMatchesSchema: `rehearse --format json` on a committed
// fixture exits 0 and prints what `schema --rehearsal` describes.
func TestRehearseJSONMatchesSchema(t *testing.T) {
	bin := rehearsalServer(t)
	t.Parallel()
	var sch, errb bytes.Buffer
	if code := run([]string{"schema", "--rehearsal"}, &sch, &errb); code != exitOK {
		t.Fatalf("schema --rehearsal: exit %d: %s", code, errb.String())
	}
	doc, err := jsonschema.UnmarshalJSON(&sch)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("rehearsal.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("rehearsal.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	errb.Reset()
	dir := filepath.Join(bundles, "orphan-v2.15.2", "bundle")
	if code := run([]string{"rehearse", dir, "--nats-server", bin, "--format", "json", "-q", "--tmpdir", t.TempDir()}, &out, &errb); code != exitOK {
		t.Fatalf("rehearse: exit %d: %s", code, errb.String())
	}
	raw := bytes.Clone(out.Bytes())
	v, err := jsonschema.UnmarshalJSON(&out)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("rehearsal does not match its schema: %v", err)
	}

	// The same rehearsal as a page: a lane a server, a marker a dated
	// warning, error or fatal line of it.
	var r report.Rehearsal
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := html.WriteRehearsal(&page, &r); err != nil {
		t.Fatal(err)
	}
	for _, srv := range r.Servers {
		if !strings.Contains(page.String(), `<g class="lane" data-server="`+srv.Name+`">`) {
			t.Errorf("no lane for %s", srv.Name)
		}
		n := 0
		for _, l := range srv.Lines {
			if strings.Contains(l, "/") && (strings.Contains(l, "[WRN]") || strings.Contains(l, "[ERR]") || strings.Contains(l, "[FTL]")) {
				n++
			}
		}
		if got := strings.Count(page.String(), `data-server="`+srv.Name+`" data-level=`); got != n || n == 0 {
			t.Errorf("%s: %d markers for %d log lines", srv.Name, got, n)
		}
	}
}

// TestRehearseRefuses: what the command refuses before starting anything.
func TestRehearseRefuses(t *testing.T) {
	dir := filepath.Join(bundles, "orphan-v2.15.2", "bundle")
	for name, args := range map[string][]string{
		"no server":        {"rehearse", dir},
		"output in bundle": {"rehearse", dir, "--nats-server", "/bin/true", "-o", filepath.Join(dir, "r.txt")},
		"tmpdir in bundle": {"rehearse", dir, "--nats-server", "/bin/true", "--tmpdir", dir},
		"bad format":       {"rehearse", dir, "--nats-server", "/bin/true", "--format", "xml"},
		"not a server":     {"rehearse", dir, "--nats-server", filepath.Join(t.TempDir(), "nope")},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUnknown || errb.Len() == 0 {
			t.Errorf("%s: exit %d, stderr %q", name, code, errb.String())
		}
		if strings.Contains(errb.String(), "panic") {
			t.Errorf("%s: %s", name, errb.String())
		}
	}
}
