package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProgressSilentOffTerminal: analyze draws its progress only on a
// terminal. With stderr a buffer or a plain file (not a terminal), and
// with --quiet, a run over an archive (which has the most stages) writes
// nothing to stderr.
func TestProgressSilentOffTerminal(t *testing.T) {
	archive := filepath.Join(bundles, "v2.12.1-archive", "bundle.tar.gz")
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if newProgress(f, false) != nil {
		t.Fatal("a progress display for a plain file")
	}
	var out bytes.Buffer
	if code := run([]string{"analyze", archive}, &out, f); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, args := range [][]string{{"analyze", archive}, {"analyze", "--quiet", archive}} {
		var errBuf bytes.Buffer
		out.Reset()
		if code := run(args, &out, &errBuf); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errBuf.String())
		}
		if errBuf.Len() != 0 {
			t.Errorf("%q wrote to a non-terminal stderr: %q", args, errBuf.String())
		}
		if out.Len() == 0 {
			t.Errorf("%q: no report", args)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 {
		t.Errorf("wrote %d bytes to a stderr file", fi.Size())
	}
}

// TestProgressBarDraws: the display itself, given a writer, draws each
// stage by name with its files (a terminal is not needed to see what it
// writes; what it redraws within 100 ms is throttled away).
func TestProgressBarDraws(t *testing.T) {
	var drawn bytes.Buffer
	p := &barProgress{w: &drawn}
	p.Stage("reading stores", 2, 3<<20)
	p.Advance(1, 1<<20)
	p.Advance(2, 3<<20)
	p.Stage("comparing replicas", 0, 0) // nothing to count: no division by zero, no error
	p.Advance(0, 0)
	p.close()
	for _, want := range []string{"reading stores 1/2 files", "comparing replicas"} {
		if !bytes.Contains(drawn.Bytes(), []byte(want)) {
			t.Errorf("display lacks %q: %q", want, drawn.String())
		}
	}
}
