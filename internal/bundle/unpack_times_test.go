package bundle

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestTarGzUnpackedAsListed: every file of the committed .tar.gz comes out
// of Open with the bytes and the modification time its tar header gives
// (times are evidence; the Linux path sets them through the open file).
func TestTarGzUnpackedAsListed(t *testing.T) {
	archive := "../../testdata/bundles/v2.12.1-archive/bundle.tar.gz"
	b, err := Open(archive, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		want, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(b.FS, h.Name)
		if err != nil {
			t.Errorf("%s: %v", h.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes unpacked, the archive holds %d other ones", h.Name, len(got), len(want))
		}
		fi, err := fs.Stat(b.FS, h.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(h.ModTime) {
			t.Errorf("%s: modified %v, the archive says %v", h.Name, fi.ModTime(), h.ModTime)
		}
		files++
	}
	if files == 0 {
		t.Fatal("no file in the archive")
	}
}
