package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the schema `jsforensics schema` prints, with
// formats (date-time) asserted.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"schema"}, &out, &errb); code != exitOK {
		t.Fatalf("schema: exit %d: %s", code, errb.String())
	}
	doc, err := jsonschema.UnmarshalJSON(&out)
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

// TestEveryFixtureReportMatchesSchema analyzes every committed bundle and
// validates its JSON report against the schema the binary prints.
func TestEveryFixtureReportMatchesSchema(t *testing.T) {
	s := compileSchema(t)
	dirs, _ := filepath.Glob(filepath.Join(bundles, "*/bundle"))
	if len(dirs) == 0 {
		t.Fatal("no committed bundles")
	}
	for _, dir := range dirs {
		t.Run(strings.TrimPrefix(dir, bundles+"/"), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"analyze", dir, "--format", "json"}, &out, &errb); !reportExit(code, errb.String()) {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			rep, err := jsonschema.UnmarshalJSON(&out)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(rep); err != nil {
				t.Errorf("report does not match the schema: %v", err)
			}
		})
	}
}

// TestSchemaRejects: the schema is no rubber stamp; a report with a
// renamed field, a wrong type, an unknown severity or a missing required
// field fails.
func TestSchemaRejects(t *testing.T) {
	s := compileSchema(t)
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", filepath.Join(bundles, "incident-000-captures/bundle"), "--format", "json"}, &out, &errb); code != exitCritical {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	good := out.String()
	for name, bad := range map[string]string{
		"renamed field":    strings.Replace(good, `"cluster_size"`, `"clusterSize"`, 1),
		"wrong type":       strings.Replace(good, `"quorum": 6`, `"quorum": "6"`, 1),
		"negative term":    strings.Replace(good, `"term": 0`, `"term": -1`, 1),
		"unknown severity": strings.Replace(good, `"severity": "critical"`, `"severity": "fatal"`, 1),
		"missing required": strings.Replace(good, `"schema": "jsforensics.report/v1",`, ``, 1),
		"bad time":         strings.Replace(good, `"time": "2025-`, `"time": "yesterday 2025-`, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(doc) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestReportDocNamesEveryField keeps docs/report.md in step with the
// types: every property of the schema is named there as `field`.
func TestReportDocNamesEveryField(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"schema"}, &out, &errb); code != exitOK {
		t.Fatalf("schema: exit %d: %s", code, errb.String())
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for typ, d := range s.Defs {
		for field := range d.Properties {
			n++
			if !bytes.Contains(doc, []byte("`"+field+"`")) {
				t.Errorf("docs/report.md does not name %s.%s", typ, field)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d properties in the schema", n)
	}
}
