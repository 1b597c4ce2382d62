package bundle

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenLogOnce: a bundle of more logs than the sniff keeps open (copies
// of a real v2.15.2 server log): OpenLog gives each log's
// whole content, from the file the sniff opened for the first maxHeldLogs
// (one open each) and from a second open, said in Reopened, past them.
// Before OpenLog, every log was opened by the sniff and again by its reader.
func TestOpenLogOnce(t *testing.T) {
	src, err := os.ReadFile("../../testdata/bundles/v2.15.2-flat/bundle/n1.log")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := maxHeldLogs + 3
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%03d.log", i)), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, c, err := OpenCounted(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Logs) != n {
		t.Fatalf("%d logs found, want %d", len(b.Logs), n)
	}
	reopened := 0
	for _, lg := range b.Logs {
		f, err := b.OpenLog(lg.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: %d bytes read (%v), want the file's %d", lg.Path, len(got), err, len(src))
		}
		want := 1
		if f.Reopened != "" {
			reopened++
			want = 2
		}
		if got := c.Opens()[lg.Path]; got != want {
			t.Errorf("%s opened %d times, want %d (reopened %q)", lg.Path, got, want, f.Reopened)
		}
	}
	if reopened != n-maxHeldLogs {
		t.Errorf("%d logs opened again, want %d", reopened, n-maxHeldLogs)
	}
}
