package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The archive limits are flags: --tmpdir chooses where the committed
// archive is unpacked (and nothing is left there), --max-entries refuses it
// when lowered.
func TestAnalyzeLimitFlags(t *testing.T) {
	archive := filepath.Join(bundles, "v2.12.1-archive/bundle.tar.gz")
	tmp := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", "--tmpdir", tmp, archive}, &out, &errb); code != exitOK {
		t.Fatalf("--tmpdir: exit %d: %s", code, errb.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left %v in --tmpdir", left)
	}
	errb.Reset()
	if code := run([]string{"analyze", "--max-entries", "5", archive}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "more than 5 entries") {
		t.Errorf("--max-entries 5: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	missing := filepath.Join(tmp, "nope")
	if code := run([]string{"analyze", "--tmpdir", missing, archive}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), missing) {
		t.Errorf("--tmpdir missing: exit %d, stderr %q", code, errb.String())
	}
}
