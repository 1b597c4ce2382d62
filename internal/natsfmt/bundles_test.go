package natsfmt

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// bundleFiles returns the files of the committed bundles (directories and
// bundle.zip archives, all written by real nats-server) whose path keep
// accepts, keyed by "<bundle>/<path>".
func bundleFiles(t testing.TB, keep func(p string) bool) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	dirs, _ := filepath.Glob("../../testdata/bundles/*")
	for _, dir := range dirs {
		var fsys fs.FS
		if fi, err := os.Stat(filepath.Join(dir, "bundle")); err == nil && fi.IsDir() {
			fsys = os.DirFS(filepath.Join(dir, "bundle"))
		} else if b, err := os.ReadFile(filepath.Join(dir, "bundle.zip")); err == nil {
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			fsys = zr
		} else {
			continue
		}
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !keep(p) {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			out[filepath.Base(dir)+"/"+p] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// sortedKeys keeps test output and seeds in a stable order.
func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// snapshotData returns the data of every raft snapshot file of the groups
// whose name starts with group (raft.go encodeSnapshot: term, index, the
// length of the peer state and the peer state, then the data, then an
// 8-byte checksum), in file order.
func snapshotData(t testing.TB, group string) [][]byte {
	snaps := bundleFiles(t, func(p string) bool {
		return path.Base(path.Dir(p)) == "snapshots" && strings.HasPrefix(path.Base(path.Dir(path.Dir(p))), group) &&
			strings.HasPrefix(path.Base(p), "snap.")
	})
	var out [][]byte
	for _, k := range sortedKeys(snaps) {
		b := snaps[k]
		if len(b) < 28 {
			continue // a snapshot file cut short (a fixture's damage), no data to take
		}
		lps := int(binary.LittleEndian.Uint32(b[16:]))
		if lps < 0 || 20+lps > len(b)-8 {
			continue
		}
		out = append(out, b[20+lps:len(b)-8])
	}
	return out
}

func isBlock(p string) bool { return path.Base(path.Dir(p)) == "msgs" && path.Ext(p) == ".blk" }

// checkErr fails unless err is nil or a *binfmt.CorruptError.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var ce *binfmt.CorruptError
	if err != nil && err != io.EOF && !errors.As(err, &ce) {
		t.Fatalf("error is not a CorruptError: %T %v", err, err)
	}
}
