package analysis

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/bundle"
)

// Loading is a read phase (readRecords) that does the I/O and returns
// records, and an assemble phase (loader.assemble) that builds the Model
// from them (issue 16). These tests keep the two apart: the read phase has
// no Model to change, and assembling opens nothing through the bundle FS
// but what is listed in assembleReadsAllowed.

// TestReadPhaseHasNoModel: readRecords and every function of the package
// it calls, directly or not, neither are methods of the loader or the
// Model nor name either type: what the read phase makes is records.
func TestReadPhaseHasNoModel(t *testing.T) {
	_, funcs := parsePackage(t, "load")
	byKey := map[string][]*pkgFunc{}
	for _, f := range funcs {
		byKey[callKey(f)] = append(byKey[callKey(f)], f)
	}
	// A method call is known by its name only (".record"): the loader's
	// and the Model's methods are left out of the walk, and a read-phase
	// function calling one is caught by naming the type it is called on.
	isAssembler := func(f *pkgFunc) bool {
		return strings.HasPrefix(f.name, "loader.") || strings.HasPrefix(f.name, "Model.")
	}
	seen := map[*pkgFunc]bool{}
	var walk []*pkgFunc
	for _, f := range byKey["readRecords"] {
		seen[f] = true
		walk = append(walk, f)
	}
	if len(walk) != 1 {
		t.Fatalf("readRecords: %d definitions", len(walk))
	}
	for i := 0; i < len(walk); i++ {
		for c := range walk[i].calls {
			for _, g := range byKey[c] {
				if !seen[g] && !isAssembler(g) {
					seen[g] = true
					walk = append(walk, g)
				}
			}
		}
	}
	if len(walk) < 10 {
		t.Fatalf("only %d read-phase functions found", len(walk))
	}
	for _, f := range walk {
		ast.Inspect(f.decl, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.Ident:
				if x.Name == "Model" || x.Name == "loader" {
					t.Errorf("%s %s: read-phase code names %s; readers return records, the loader assembles the model", f.file, f.name, x.Name)
				}
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "l" && x.Sel.Name == "m" {
					t.Errorf("%s %s: read-phase code reaches a .m (the loader's model)", f.file, f.name)
				}
			}
			return true
		})
	}
}

// assembleReadsAllowed is what assembling may still open through the
// bundle FS, by why (a predicate on the file). None today: the logs are
// scanned while assembling, from the files the sniff opened and holds
// (Bundle.OpenLog, not through the FS), and a stream whose copies a
// meta.inf joined after they were read apart has its blocks read again
// (readAgain), which no committed fixture has. The list only shrinks: an
// entry no fixture needs fails the test.
var assembleReadsAllowed = map[string]func(b *bundle.Bundle, p string) bool{}

// guardFS is a bundle FS that counts what is opened through it and opens
// only what allow lets; any other open fails (and is reported).
type guardFS struct {
	fs.FS
	b     *bundle.Bundle
	mu    sync.Mutex
	used  map[string]bool
	other []string
}

func (g *guardFS) Open(name string) (fs.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for why, allow := range assembleReadsAllowed {
		if allow(g.b, name) {
			g.used[why] = true
			return g.FS.Open(name)
		}
	}
	g.other = append(g.other, name)
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
}

// TestAssembleDoesNoIO: on committed bundles of every source (folders,
// zip and tar archives, an audit archive, an encrypted store with its key,
// a Jepsen history, diverged replicas), the model assembled from the read
// phase's records with the bundle FS shut (guardFS) gives the report
// LoadWith gives, and nothing but what assembleReadsAllowed lists is opened
// through it.
func TestAssembleDoesNoIO(t *testing.T) {
	type tc struct {
		path string
		keys []string
	}
	var cases []tc
	for _, p := range []string{
		"v2.10.22-per-server/bundle", "v2.12.1-archive/bundle.zip", "v2.12.1-archive/bundle.tar.gz",
		"audit-gather-v2.15.2/bundle.zip", "acked-lost-jepsen-v2.15.2/bundle", "metasnap-v2.12.1/bundle",
		"rename-v2.12.1/bundle", "incident-000-captures/bundle",
	} {
		cases = append(cases, tc{path: filepath.Join(bundlesDir, p)})
	}
	for _, p := range []string{"perturbed-replica-v2.15.3/bundle", "perturbed-crash-v2.15.3/bundle"} {
		cases = append(cases, tc{path: filepath.Join("../../testdata/perturbed", p)})
	}
	for _, fx := range encryptedFixtures(t) {
		cases = append(cases, tc{path: fx.forms[0], keys: []string{fx.key}})
	}
	used := map[string]bool{}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.path, "../../testdata/"), func(t *testing.T) {
			opts := Options{Keys: c.keys}
			want := phasedReport(t, c.path, opts, nil)
			var g *guardFS
			got := phasedReport(t, c.path, opts, func(b *bundle.Bundle) {
				g = &guardFS{FS: b.FS, b: b, used: map[string]bool{}}
				b.FS = g
			})
			if !bytes.Equal(got, want) {
				t.Errorf("the model assembled with the bundle FS shut gives another report than LoadWith's")
			}
			sort.Strings(g.other)
			for _, p := range g.other {
				t.Errorf("assembling opened %s", p)
			}
			for why := range g.used {
				used[why] = true
			}
		})
	}
	for why := range assembleReadsAllowed {
		if !used[why] {
			t.Errorf("assembleReadsAllowed lists %q, which no fixture's assembling reads: remove the entry", why)
		}
	}
}

// phasedReport loads the bundle at p as LoadWith does, calling shut (when
// not nil) between the read phase and assembling, and returns the report
// as JSON.
func phasedReport(t *testing.T, p string, opts Options, shut func(*bundle.Bundle)) []byte {
	t.Helper()
	b, err := bundle.Open(p, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var between func()
	if shut != nil {
		between = func() { shut(b) }
	}
	m := load.ModelPhased(b, load.Options{Timeline: opts.Timeline, Progress: opts.Progress, Keys: opts.Keys}, between)
	rep := Build(m, Checks, nil)
	rep.Bundle = path.Base(p)
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
