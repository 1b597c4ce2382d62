package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

const modulePath = "github.com/jsforensics/jsforensics"

// analysisImports are the packages of internal/analysis each role may
// import (relative to internal/analysis; "checks/*" is any check family).
// The graph is the architecture: load → model → facts → checks → remedy →
// diagnosis, imports pointing one way (docs/architecture.md).
var analysisImports = map[string][]string{
	"model":     nil,
	"releases":  {"model"},
	"facts":     {"model", "releases"},
	"check":     {"facts", "model"},
	"checks/*":  {"check", "facts", "model", "releases", "remedy"},
	"remedy":    {"model", "releases"},
	"diagnosis": {"remedy", "model"},
	"load":      {"model", "releases", "timeline", "progress", "compare"},
	"compare":   {"model"},
	"timeline":  {"model"},
	"progress":  nil,
}

// pureRoles may not read anything: no I/O package, no bundle reader.
var pureRoles = []string{"model", "releases", "facts", "check", "checks/*", "remedy", "diagnosis", "compare"}

// ioImports are the imports that read or write, and the bundle reader.
var ioImports = map[string]bool{"os": true, "io": true, "io/fs": true, "io/ioutil": true, "bufio": true,
	"path/filepath": true, "net": true, "net/http": true, "os/exec": true, "syscall": true,
	modulePath + "/internal/bundle": true, modulePath + "/internal/storecrypt": true}

// roleOf is the role a package folder of internal/analysis plays.
func roleOf(dir string) string {
	if strings.HasPrefix(dir, "checks/") {
		return "checks/*"
	}
	return dir
}

// packageImports are the non-test imports of every package folder under
// internal/analysis, by folder relative to it ("." for analysis itself).
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(out[dir], p) {
				out[dir] = append(out[dir], p)
			}
		}
		if _, ok := out[dir]; !ok {
			out[dir] = []string{}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportRules keeps the pipeline in the package graph: each role
// imports only the roles below it, no check family imports another, and
// the pure roles (model, facts, checks, remedies, diagnosis) import no I/O
// package and no bundle reader. Loading is the only place with I/O.
func TestImportRules(t *testing.T) {
	pkgs := packageImports(t)
	const prefix = modulePath + "/internal/analysis/"
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	families := 0
	for _, dir := range dirs {
		role := roleOf(dir)
		if role == "checks/*" {
			families++
		}
		allowed, ruled := analysisImports[role]
		for _, p := range pkgs[dir] {
			if slices.Contains(pureRoles, role) && ioImports[p] {
				t.Errorf("%s imports %s: %s is a pure function of the model", dir, p, role)
			}
			rel, inside := strings.CutPrefix(p, prefix)
			if !inside || !ruled {
				continue
			}
			if !slices.Contains(allowed, roleOf(rel)) {
				t.Errorf("%s imports %s: %s may import only %v", dir, rel, role, allowed)
			}
		}
	}
	for role := range analysisImports {
		if role == "checks/*" {
			continue
		}
		if _, ok := pkgs[role]; !ok {
			t.Errorf("no package %s under internal/analysis", role)
		}
	}
	if families < 4 {
		t.Errorf("%d check families found under checks/", families)
	}
}

// checkFile is the file under checks/ that defines the check of code
// (checks/<family>/check_<code>.go), or "" when there is none.
func checkFile(t *testing.T, code string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("checks", "*", "check_"+strings.ReplaceAll(code, "-", "_")+".go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		return ""
	}
	return files[0]
}

// TestOneFilePerCheck: every registered check lives in its family's
// checks/<family>/check_<code>.go, and its tests in check_<code>_test.go
// here, beside the fixtures' helpers, so the folders list the checks.
func TestOneFilePerCheck(t *testing.T) {
	codeConsts := findingCodeConsts(t)
	for _, c := range Checks {
		file := checkFile(t, c.Code)
		if file == "" {
			t.Errorf("check %s: no checks/*/check_%s.go", c.Code, strings.ReplaceAll(c.Code, "-", "_"))
			continue
		}
		test := "check_" + strings.ReplaceAll(c.Code, "-", "_") + "_test.go"
		if _, err := os.Stat(test); err != nil {
			t.Errorf("check %s: no %s", c.Code, test)
		}
		b, err := os.ReadFile(file)
		if err == nil && !strings.Contains(string(b), "Code:        string(report."+codeConsts[c.Code]+")") {
			t.Errorf("%s does not define check %s (Code: string(report.Code…))", file, c.Code)
		}
	}
}

// findingCodeConsts are the Code constants of report/codes.go: finding code
// to constant name.
func findingCodeConsts(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../report/codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			if lit, ok := v.Values[0].(*ast.BasicLit); ok {
				code, _ := strconv.Unquote(lit.Value)
				out[code] = v.Names[0].Name
			}
		}
	}
	return out
}

// TestFindingCodes: report.Codes are the codes of the registered checks,
// in their order, so that the remedy catalogue's finding codes (checked
// against report.Codes as it loads) are codes some check raises.
func TestFindingCodes(t *testing.T) {
	var checks []report.Code
	for _, c := range Checks {
		checks = append(checks, report.Code(c.Code))
	}
	if !slices.Equal(checks, report.Codes) {
		t.Errorf("report.Codes %v, the registered checks' codes %v", report.Codes, checks)
	}
	if n := len(findingCodeConsts(t)); n != len(report.Codes) {
		t.Errorf("report/codes.go declares %d codes, report.Codes lists %d", n, len(report.Codes))
	}
}
