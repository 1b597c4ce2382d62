package analysis

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
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
	srv := m.Server("dbg-1")
	if srv == nil {
		t.Fatal("no dbg-1")
	}
	load.RenameServer(m, srv, "zz-renamed", "store")
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

// TestRenameIsOneAssignment: every model record refers to a server by its
// ServerID, so renaming a server changes its own record and nothing else,
// and merging it into another server adds one alias entry and drops its
// record: every other collection of the model is unchanged, byte for byte,
// while the report (TestRenameFollowedEverywhere) follows.
func TestRenameIsOneAssignment(t *testing.T) {
	b, err := bundle.Open(bundlesDir+"/v2.15.2-leader-kill-debug/bundle", bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// records is every field of the model but the server records, the
	// alias table, the stream index and the notes (a placeholder's note goes with its name).
	records := func(m *model.Model) map[string]string {
		out := map[string]string{}
		v := reflect.ValueOf(m).Elem()
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			if name == "Servers" || name == "Notes" || name == "Merged" || name == "StreamsByKey" || !v.Type().Field(i).IsExported() {
				continue
			}
			var b strings.Builder
			deepDump(&b, v.Field(i))
			out[name] = b.String()
		}
		return out
	}
	unchanged := func(what string, before, after map[string]string) {
		t.Helper()
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s rewrote Model.%s", what, k)
			}
		}
	}

	m := Load(b)
	srv := m.Server("dbg-1")
	if srv == nil {
		t.Fatal("no dbg-1")
	}
	id, n, before := srv.ID, len(m.Servers), records(m)
	load.RenameServer(m, srv, "zz-renamed", "store")
	unchanged("a rename", before, records(m))
	if srv.Name != "zz-renamed" || srv.ID != id || len(m.Servers) != n || len(m.Merged) != 0 {
		t.Errorf("rename: record %+v (id %s before), %d servers (%d before), %d aliases", srv, id, len(m.Servers), n, len(m.Merged))
	}
	if got := m.Name(id); got != "zz-renamed" {
		t.Errorf("the old id names %q", got)
	}

	into := m.Server("dbg-2")
	if into == nil {
		t.Fatal("no dbg-2")
	}
	before = records(m)
	load.RenameServer(m, srv, "dbg-2", "log")
	unchanged("a merge", before, records(m))
	if len(m.Servers) != n-1 || m.Server("zz-renamed") != nil || len(m.Merged) != 1 || m.Merged[id] != into.ID {
		t.Errorf("merge: %d servers (%d before), aliases %v, want %s -> %s", len(m.Servers), n, m.Merged, id, into.ID)
	}
	if got := m.Name(id); got != "dbg-2" {
		t.Errorf("the merged id names %q, want dbg-2", got)
	}
	rep := Build(m, Checks, nil)
	for _, st := range rep.Streams {
		for _, d := range st.OnDisk {
			if d.Server == "zz-renamed" || d.Server == "dbg-1" {
				t.Errorf("stream %s: a copy still on %s after the merge", st.Name, d.Server)
			}
		}
	}
}

// deepDump writes v with every pointer followed and map keys sorted: two
// dumps differ when any value reachable from v does.
func deepDump(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		deepDump(b, v.Elem())
	case reflect.Struct:
		b.WriteString("{")
		for i := 0; i < v.NumField(); i++ {
			b.WriteString(v.Type().Field(i).Name + ":")
			deepDump(b, v.Field(i))
			b.WriteString(" ")
		}
		b.WriteString("}")
	case reflect.Slice, reflect.Array:
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			deepDump(b, v.Index(i))
			b.WriteString(" ")
		}
		b.WriteString("]")
	case reflect.Map:
		var entries []string
		for it := v.MapRange(); it.Next(); {
			var e strings.Builder
			deepDump(&e, it.Key())
			e.WriteString("=")
			deepDump(&e, it.Value())
			entries = append(entries, e.String())
		}
		sort.Strings(entries)
		b.WriteString("map[" + strings.Join(entries, " ") + "]")
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		b.WriteString(v.Type().String())
	default:
		fmt.Fprintf(b, "%v", v)
	}
}
