package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The analysis is split by role (issue 16): loading reads the bundle into
// records and judges nothing; checks and facts judge the model and read
// nothing. These tests read the package's own source (go/parser, go/ast)
// and keep the split. Where today's code crosses it, the crossing is listed
// below, by file and function, with what is to become of it: the lists only
// shrink (an entry the code no longer needs fails the test), as the
// branches that move verdicts out of the loaders land.

// loadFindingAllowed are load functions that make, touch or call for
// findings today: file, then function ("Recv.name" for a method).
var loadFindingAllowed = map[string]string{}

// pkgFunc is one function or method of the package, as the tests see it.
type pkgFunc struct {
	file, name string // name is "Recv.name" for a method
	decl       *ast.FuncDecl
	calls      map[string]bool // called by plain name, and ".name" for a method call
	finding    bool            // mentions report.Finding
	checkSide  bool            // takes a *Pass or returns a prescription: a check's helper
	io         bool            // touches the bundle or the OS itself
}

// ioPackages are the imports that read or write: no check or fact imports
// them.
var ioPackages = map[string]bool{"os": true, "io": true, "io/fs": true, "io/ioutil": true, "bufio": true,
	"path/filepath": true, "net": true, "net/http": true, "os/exec": true, "syscall": true}

// parsePackage reads every non-test Go file of the package in dir.
func parsePackage(t *testing.T, dir string) (map[string]*ast.File, []*pkgFunc) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	var funcs []*pkgFunc
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = af
		imports := map[string]string{} // local name -> path
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			local := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = p
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			f := &pkgFunc{file: n, name: funcName(fd), decl: fd, calls: map[string]bool{}}
			f.checkSide = takesPass(fd) || returnsIdent(fd, "prescription")
			ast.Inspect(fd, func(x ast.Node) bool {
				switch x := x.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] != "" {
						if imports[id.Name] == "github.com/jsforensics/jsforensics/report" && x.Sel.Name == "Finding" {
							f.finding = true
						}
						if ioPackages[imports[id.Name]] {
							f.io = true
						}
					} else if x.Sel.Name == "FS" {
						f.io = true // the bundle's FS (l.b.FS, b.FS)
					}
				case *ast.CallExpr:
					switch fn := x.Fun.(type) {
					case *ast.Ident:
						f.calls[fn.Name] = true
					case *ast.SelectorExpr:
						if id, ok := fn.X.(*ast.Ident); !ok || imports[id.Name] == "" {
							f.calls["."+fn.Sel.Name] = true
						}
					}
				case *ast.Ident:
					if x.Name == "ReadFileFS" {
						f.io = true
					}
				}
				return true
			})
			funcs = append(funcs, f)
		}
	}
	return files, funcs
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func takesPass(fd *ast.FuncDecl) bool {
	for _, p := range fd.Type.Params.List {
		if s, ok := p.Type.(*ast.StarExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == "Pass" {
				return true
			}
		}
	}
	return false
}

func returnsIdent(fd *ast.FuncDecl, name string) bool {
	if fd.Type.Results == nil {
		return false
	}
	for _, r := range fd.Type.Results.List {
		if id, ok := r.Type.(*ast.Ident); ok && id.Name == name {
			return true
		}
	}
	return false
}

// callKey is how a call names f: its plain name, or ".name" for a method.
func callKey(f *pkgFunc) string {
	if i := strings.IndexByte(f.name, '.'); i >= 0 {
		return f.name[i:]
	}
	return f.name
}

// isLoadFile says whether a file of the package feeds the Model: the
// loaders, the model's own code and what they call to read (rename,
// salvage, the timeline sink, progress).
func isLoadFile(name string) bool {
	return filepath.Dir(name) == "load" || name == "salvage.go"
}

// TestLoadMakesNoFinding: load code makes no report.Finding, calls no
// function that makes or touches one (a check's helper, a remedy), and
// holds no check helper (a function of a *Pass, a prescription).
func TestLoadMakesNoFinding(t *testing.T) {
	_, funcs := parsePackage(t, ".")
	_, loadFuncs := parsePackage(t, "load")
	funcs = append(funcs, loadFuncs...)
	// A finding constructor: a function outside the load files that
	// mentions report.Finding or is a check's helper. Called by load code,
	// it is a verdict made while loading.
	makers := map[string]bool{}
	for _, f := range funcs {
		if !isLoadFile(f.file) && (f.finding || f.checkSide) {
			makers[callKey(f)] = true
		}
	}
	got := map[string]bool{}
	n := 0
	for _, f := range funcs {
		if !isLoadFile(f.file) {
			continue
		}
		n++
		var why []string
		if f.finding {
			why = append(why, "mentions report.Finding")
		}
		if f.checkSide {
			why = append(why, "is a check's helper (takes a *Pass or returns a prescription)")
		}
		for c := range f.calls {
			if makers[c] {
				why = append(why, "calls "+strings.TrimPrefix(c, ".")+", which makes findings or remedies")
			}
		}
		if len(why) == 0 {
			continue
		}
		key := f.file + " " + f.name
		got[key] = true
		if _, ok := loadFindingAllowed[key]; !ok {
			sort.Strings(why)
			t.Errorf("%s %s: load code %s; loaders return records, checks judge them", f.file, f.name, strings.Join(why, "; "))
		}
	}
	if n < 20 {
		t.Fatalf("only %d load functions found", n)
	}
	for key, why := range loadFindingAllowed {
		if !got[key] {
			t.Errorf("loadFindingAllowed lists %s (%s), which no longer crosses: remove the entry", key, why)
		}
	}
}

// modelRunners run checks over a model a test builds; bundleReaders load
// one from files instead.
var (
	modelRunners  = map[string]bool{"runCheck": true, "runChecks": true, "runAllChecks": true, "runOne": true, "wantVerdict": true}
	bundleReaders = map[string]bool{"Run": true, "analyze": true, "analyzeKeys": true, "Load": true, "LoadWith": true, "fixtures": true, "copyTree": true, "loadFixtures": true}
)

// TestEveryCheckTestedOnModel: every registered check has, in its
// check_<code>_test.go, a test that runs it over a model built in the test
// (not loaded from a bundle) and asserts on its findings by its code or
// its value. Checks lacking one are listed.
func TestEveryCheckTestedOnModel(t *testing.T) {
	var lacking []string
	for _, c := range Checks {
		base := "check_" + strings.ReplaceAll(c.Code, "-", "_")
		varName := checkVarName(t, checkFile(t, c.Code), c.Code)
		af, err := parser.ParseFile(token.NewFileSet(), base+"_test.go", nil, 0)
		if err != nil {
			lacking = append(lacking, c.Code+" (no "+base+"_test.go)")
			continue
		}
		ok := false
		for _, d := range af.Decls {
			fd, isFunc := d.(*ast.FuncDecl)
			if !isFunc || !strings.HasPrefix(fd.Name.Name, "Test") || fd.Body == nil {
				continue
			}
			runs, loads, names := false, false, false
			ast.Inspect(fd.Body, func(x ast.Node) bool {
				switch x := x.(type) {
				case *ast.CallExpr:
					if id, isID := x.Fun.(*ast.Ident); isID {
						runs = runs || modelRunners[id.Name]
						loads = loads || bundleReaders[id.Name]
					}
					if sel, isSel := x.Fun.(*ast.SelectorExpr); isSel {
						loads = loads || bundleReaders[sel.Sel.Name] && sel.Sel.Name != "Run" || sel.Sel.Name == "Open"
						// family.CheckX.Run(p)
						if x, isSel := sel.X.(*ast.SelectorExpr); isSel && x.Sel.Name == varName && sel.Sel.Name == "Run" {
							runs = true
						}
					}
				case *ast.Ident:
					names = names || x.Name == varName
				case *ast.BasicLit:
					names = names || x.Kind == token.STRING && x.Value == strconv.Quote(c.Code)
				}
				return true
			})
			if runs && !loads && names {
				ok = true
				break
			}
		}
		if !ok {
			lacking = append(lacking, c.Code)
		}
	}
	if len(lacking) > 0 {
		t.Errorf("checks without a test on a small model in their check_<code>_test.go: %s", strings.Join(lacking, ", "))
	}
}

// checkVarName is the name of the package variable of file that holds the
// check with code.
func checkVarName(t *testing.T, file, code string) string {
	t.Helper()
	consts := findingCodeConsts(t)
	af, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatalf("check %s: %v", code, err)
	}
	for _, d := range af.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, v := range vs.Values {
				cl, ok := v.(*ast.CompositeLit)
				if !ok {
					continue
				}
				for _, e := range cl.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					// Code: string(report.CodeX), the constant of code.
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" && types.ExprString(kv.Value) == "string(report."+consts[code]+")" {
						return vs.Names[i].Name
					}
				}
			}
		}
	}
	t.Fatalf("%s defines no check %s", file, code)
	return ""
}
