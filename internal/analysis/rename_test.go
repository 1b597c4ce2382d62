package analysis

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// TestRenameFollowedEverywhere: once the loader renames a server (as it
// does when content names a store or a placeholder), no section of the
// report still names it by its old name: servers, streams' copies and
// captured figures, groups' views and history, the timeline, findings,
// the diagnosis. A bundle with stores, logs and captures of every kind.
func TestRenameFollowedEverywhere(t *testing.T) {
	b, err := bundle.Open(bundlesDir+"/v2.15.2-leader-kill-debug/bundle", bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := Load(b)
	l := &loader{b: b, m: m}
	srv := m.server("dbg-1")
	if srv == nil {
		t.Fatal("no dbg-1")
	}
	l.renameServer(srv, "zz-renamed", "store")
	rep := Build(m, Checks, nil)
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var stale []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "text", "message", "evidence", "remedy", "summary", "first_step", "notes", "events", "file", "path", "bundle":
					// Free text quotes what a source said (a varz answer
					// names its server as it ran) and paths are the bundle's.
					continue
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		case string:
			if v == "dbg-1" || strings.Contains(v, "dbg-1,") || strings.Contains(v, " dbg-1 ") {
				stale = append(stale, path+" = "+v)
			}
		}
	}
	walk("report", doc)
	for _, s := range stale {
		t.Errorf("old name still there: %s", s)
	}
	if !strings.Contains(string(raw), `"zz-renamed"`) {
		t.Error("new name nowhere in the report")
	}
}
