package bundle

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestTarsReadInPlace: the committed .tar.gz, and a .tar of it, are read
// in place: nothing unpacked, the small files kept in the spill file only.
func TestTarsReadInPlace(t *testing.T) {
	tmp, src := sandbox(t)
	tgz, err := os.ReadFile("../../testdata/bundles/v2.12.1-archive/bundle.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	gr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(gr)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"b.tar.gz": tgz, "b.tar": plain} {
		file := filepath.Join(src, name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(file, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if b.Root != "" || b.inPlace == nil || len(b.Stores) != 3 {
			t.Errorf("%s: root %q, in place %v, %d stores", name, b.Root, b.inPlace != nil, len(b.Stores))
		}
		left := listTree(t, tmp)
		if name == "b.tar" && len(left) != 0 {
			t.Errorf("%s: TMPDIR holds %v", name, left)
		}
		for _, p := range left {
			if p != filepath.Base(b.tmp) && p != filepath.Base(b.tmp)+"/spill" {
				t.Errorf("%s: TMPDIR holds %s besides the spill file", name, p)
			}
		}
		b.Close()
		if left := listTree(t, tmp); len(left) != 0 {
			t.Errorf("%s: Close left %v", name, left)
		}
	}
}
