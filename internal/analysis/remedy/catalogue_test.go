package remedy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCatalogueLoads: the embedded catalogue loads, one entry per ID in
// the order of IDs, and no step is left naming a fragment.
func TestCatalogueLoads(t *testing.T) {
	c, err := Load(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	var ids []ID
	for _, r := range c {
		ids = append(ids, r.ID)
		for _, s := range r.Steps {
			if s.Use != "" {
				t.Errorf("%s: step uses %s after Load", r.ID, s.Use)
			}
		}
	}
	if !slices.Equal(ids, IDs) {
		t.Errorf("catalogue ids %v, IDs %v", ids, IDs)
	}
}

// TestIDsListed: IDs lists every ID constant of ids.go, so that Load holds
// each constant to an entry.
func TestIDsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ids.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []ID
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			lit, ok := v.Values[0].(*ast.BasicLit)
			if typ, _ := v.Type.(*ast.Ident); !ok || typ == nil || typ.Name != "ID" {
				t.Errorf("ids.go: %s is not an ID literal", v.Names[0].Name)
				continue
			}
			s, _ := strconv.Unquote(lit.Value)
			consts = append(consts, ID(s))
		}
	}
	if !slices.Equal(consts, IDs) {
		t.Errorf("ids.go declares %v, IDs lists %v", consts, IDs)
	}
}

// TestLoadRejects: each rule of Load fails a catalogue that breaks it,
// and says which.
func TestLoadRejects(t *testing.T) {
	file := string(catalogueFile)
	// in replaces the first old after the line of entry id (the file as a
	// whole for "") with new.
	in := func(id, old, new string) func(*testing.T, string) string {
		return func(t *testing.T, s string) string {
			at := 0
			if id != "" {
				at = strings.Index(s, "  - id: "+id+"\n")
				if at < 0 {
					t.Fatalf("no entry %s", id)
				}
			}
			i := strings.Index(s[at:], old)
			if i < 0 {
				t.Fatalf("no %q after %s", old, id)
			}
			return s[:at+i] + new + s[at+i+len(old):]
		}
	}
	for _, tc := range []struct {
		name    string
		corrupt func(*testing.T, string) string
		want    string
	}{
		{"unknown key", in("", "      - kind: verify\n", "      - kind: verify\n        colour: red\n"), "field colour not found"},
		{"unknown entry key", in("index-db-keep", "    steps:\n", "    stepz:\n"), "field stepz not found"},
		{"unknown step kind", in("", "kind: verify", "kind: verfiy"), `step kind "verfiy"`},
		{"destroys before save", in("asset-lost-consumer", "      - kind: action\n", "      - kind: action\n        destroys: true\n"), "no save step before it"},
		{"destroys before cost", in("store-other-file", "      - kind: action\n", "      - kind: action\n        destroys: true\n"), "no cost step before it"},
		{"destroys on a note", in("index-db-outdated", "      - kind: note\n", "      - kind: note\n        destroys: true\n"), "note step marked destroys"},
		{"save only where the action is not", in("index-db-stale-remove", "      - kind: save\n", "      - kind: save\n        when: x\n"), "no save step before it"},
		{"template not closed", in("", "{{readd}}", "{{readd"), "not closed"},
		{"template name", in("", "{{group}}", "{{Group}}"), "not {{name}}"},
		{"unknown function", in("", "{{stream|shell}}", "{{stream|shel}}"), "no function shel"},
		{"server removal in a text", in("", "{{server}}", "{{server|server-remove}}"), "server-remove is for commands"},
		{"each outside each", in("store-block-missing", "cp -a {{folder|shell}}", "cp -a {{each}}"), "{{each}} in a step with no each"},
		{"refs with no refers", in("meta-no-leader", "refers: [", "unless_found: ["), "{{refs}} in a step that refers to no finding"},
		{"unknown finding code", in("", "refers: [orphan-risk]", "refers: [orphan-risks]"), `finding code "orphan-risks"`},
		{"duplicate id", in("", "id: index-db-keep\n", "id: index-db-stale-remove\n"), "twice in the catalogue"},
		{"unknown id", in("", "id: index-db-keep\n", "id: index-db-kept\n"), "no such ID"},
		{"id with no entry", in("", "id: index-db-keep\n", "id: index-db-kept\n"), `"index-db-keep" has no entry`},
		{"unknown fragment", in("", "use: block-steps", "use: block-step"), "no fragment block-step"},
		{"use with other keys", in("", "      - use: rename-save\n", "      - use: rename-save\n        text: x\n"), "use rename-save has other keys"},
		{"unused fragment", in("", "fragments:\n", "fragments:\n  spare:\n    - kind: note\n      text: x\n"), "fragment spare: used by no entry"},
		{"proof release", in("", `release: "2.10.27"`, `release: "2.10"`), "needs a release"},
		{"repository file in a text", in("", "{{readd}}", "see testdata/remedies/readd-v2.15.2.json"), "cites testdata/"},
		{"repository file in an outcome", in("orphan-stream-copy-out", "          the same\n", "          the same as testdata/x\n"), "the outcome cites testdata/"},
		{"proof fixture", in("orphan-stream-copy-out", "fixture: testdata/bundles/orphan-v2.10.22\n", "fixture: \"\"\n"), "needs a release (N.N.N), a fixture and an outcome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load([]byte(tc.corrupt(t, file)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
