package analysis

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestChecksImportNoParser keeps the analysis split by role: checks, the
// facts and the diagnosis are pure functions of the model, so their files
// import the standard library, the report contract and the shared format
// leaf (peer ids, quorum, kinds) and nothing else — no parser, no bundle
// reader. Loading (load_*.go) is the only place with I/O.
func TestChecksImportNoParser(t *testing.T) {
	files, err := filepath.Glob("check_*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "diagnosis.go")
	allowed := map[string]bool{
		"github.com/jsforensics/jsforensics/report":                     true,
		"github.com/jsforensics/jsforensics/internal/natsfmt":           true,
		"github.com/jsforensics/jsforensics/seqset":                     true,
		"github.com/jsforensics/jsforensics/internal/analysis/model":    true,
		"github.com/jsforensics/jsforensics/internal/analysis/facts":    true,
		"github.com/jsforensics/jsforensics/internal/analysis/releases": true,
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, ".") && !allowed[path] && !strings.HasPrefix(path, "github.com/jsforensics/jsforensics/internal/analysis/") {
				t.Errorf("%s imports %s: checks read the model, loading (load_*.go) reads the bundle", f, path)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("only %d check files found", checked)
	}
}

// TestOneFilePerCheck: every registered check lives in check_<code>.go
// beside its own check_<code>_test.go, so the folder lists the checks.
func TestOneFilePerCheck(t *testing.T) {
	for _, c := range Checks {
		base := "check_" + strings.ReplaceAll(c.Code, "-", "_")
		for _, f := range []string{base + ".go", base + "_test.go"} {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("check %s: no %s", c.Code, f)
			}
		}
		b, err := os.ReadFile(base + ".go")
		if err == nil && !strings.Contains(string(b), "Code:        \""+c.Code+"\"") {
			t.Errorf("%s does not define check %s", base+".go", c.Code)
		}
	}
}
