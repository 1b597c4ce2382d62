package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommandsInOneList: the command tree is the one newRootCmd lists, and
// no file of the command adds a command on its own in an init function.
func TestCommandsInOneList(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	var got []string
	for _, c := range root.Commands() {
		got = append(got, c.Name())
		if c.Name() == "dump" {
			for _, d := range c.Commands() {
				got = append(got, "dump "+d.Name())
			}
		}
	}
	want := []string{"analyze", "checks", "completion", "dump", "dump blk", "dump commit", "dump index", "dump meta", "dump odat",
		"dump peers", "dump snap", "dump tav", "dump wal", "extract", "help", "rehearse", "render", "schema", "version"}
	// cobra adds help and completion on Execute only.
	got = append(got, "completion", "help")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("commands:\n got %q\nwant %q", got, want)
	}

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				t.Errorf("%s: func init at %s; add commands in newRootCmd's list", f, fset.Position(fd.Pos()))
			}
		}
	}
}
