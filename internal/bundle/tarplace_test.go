package bundle

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// fixtureTarGz packs the folder dir as a .tar.gz at level, after filler
// files of pseudo-random text that put the bundle's files megabytes into
// the decompressed stream (so that they are read from checkpoints other
// than the first). It returns the archive and every file's bytes.
func fixtureTarGz(t *testing.T, dir string, level int) ([]byte, map[string][]byte) {
	t.Helper()
	files := map[string][]byte{}
	var out bytes.Buffer
	gw, err := gzip.NewWriterLevel(&out, level)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(gw)
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := range 3 {
		var b bytes.Buffer
		for b.Len() < 700<<10 {
			fmt.Fprintf(&b, "filler %d line %d %x\n", i, rnd.IntN(1000), rnd.Uint64())
		}
		name := fmt.Sprintf("filler/%d.txt", i)
		files[name] = b.Bytes()
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(b.Len()), Mode: 0o644, ModTime: time.Unix(1700000000, 0)})
		tw.Write(b.Bytes())
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = "bundle/" + filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: rel + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: fi.ModTime()})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = data
		if err := tw.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Size: int64(len(data)), Mode: 0o644, ModTime: fi.ModTime()}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	gw.Close()
	return out.Bytes(), files
}

// noneHeld has every file of a .tar.gz read from its checkpoint.
func noneHeld(t *testing.T) {
	old := holdMax
	holdMax = -1
	t.Cleanup(func() { holdMax = old })
}

// TestTarGzFilesFromCheckpoints: with no file kept in the spill file,
// every file of a real bundle packed as a .tar.gz reads back with its own
// bytes, whole and at any offset (backwards too), from checkpoints spread
// through the stream.
func TestTarGzFilesFromCheckpoints(t *testing.T) {
	noneHeld(t)
	_, src := sandbox(t)
	for _, level := range []int{1} {
		data, files := fixtureTarGz(t, "../../testdata/bundles/orphan-v2.10.22/bundle", level)
		file := filepath.Join(src, fmt.Sprintf("b%d.tar.gz", level))
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(file, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		tf := b.nest.base.(*tarFS)
		if len(tf.pins) < 4 {
			t.Errorf("level %d: %d checkpoints pinned", level, len(tf.pins))
		}
		if len(b.Stores) != 3 {
			t.Errorf("level %d: %d stores", level, len(b.Stores))
		}
		rnd := rand.New(rand.NewPCG(5, 6))
		for name, want := range files {
			got, err := fs.ReadFile(b.FS, name)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("level %d: %s: %d bytes read (%v), %d packed", level, name, len(got), err, len(want))
			}
			if len(want) == 0 {
				continue
			}
			f, err := b.FS.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			ra := f.(io.ReaderAt)
			for range 3 {
				off := rnd.Int64N(int64(len(want)))
				n := min(int64(len(want))-off, 1+rnd.Int64N(64<<10))
				p := make([]byte, n)
				if k, err := ra.ReadAt(p, off); int64(k) != n || (err != nil && err != io.EOF) || !bytes.Equal(p, want[off:off+n]) {
					t.Fatalf("level %d: %s: ReadAt(%d bytes at %d): %d, %v", level, name, n, off, k, err)
				}
			}
			f.Close()
		}
		if nd := b.NotDelivered(); len(nd) != 0 {
			t.Errorf("level %d: not delivered: %v", level, nd)
		}
		b.Close()
	}
}

// TestTarGzTornFromCheckpoint: a .tar.gz cut in the middle of an entry
// that is read from its checkpoint delivers that entry's true prefix,
// marked not delivered, and nothing after it.
func TestTarGzTornFromCheckpoint(t *testing.T) {
	noneHeld(t)
	_, src := sandbox(t)
	data, files := fixtureTarGz(t, "../../testdata/bundles/orphan-v2.10.22/bundle", 6)
	cut := data[:len(data)*3/5]
	file := filepath.Join(src, "cut.tar.gz")
	if err := os.WriteFile(file, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(file, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Undelivered) != 1 {
		t.Fatalf("undelivered %v; problems %v", b.Undelivered, b.Problems)
	}
	torn := b.Undelivered[0]
	got, err := fs.ReadFile(b.FS, torn)
	if err != nil {
		t.Fatal(err)
	}
	if want := files[torn]; len(got) >= len(want) || !bytes.Equal(got, want[:len(got)]) {
		t.Errorf("%s: %d bytes delivered of %d, not its prefix", torn, len(got), len(want))
	}
	if !hasProblem(b, "archive damage: entry") || b.Delivered(torn) {
		t.Errorf("no archive damage for %s: %v", torn, b.Problems)
	}
}

// TestTarGzChangedAfterOpen: bytes that no longer inflate to what pass 1
// read (the archive changed under the analysis) are archive damage of the
// file being read, as a zip entry failing its CRC-32.
func TestTarGzChangedAfterOpen(t *testing.T) {
	noneHeld(t)
	_, src := sandbox(t)
	data, files := fixtureTarGz(t, "../../testdata/bundles/orphan-v2.10.22/bundle", 6)
	file := filepath.Join(src, "b.tar.gz")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(file, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	changed := bytes.Clone(data)
	for i := len(changed) / 2; i < len(changed)-8; i += 97 {
		changed[i] ^= 0x55
	}
	if err := os.WriteFile(file, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for name, want := range files {
		got, err := fs.ReadFile(b.FS, name)
		if err == nil && bytes.Equal(got, want) {
			continue
		}
		if err == nil {
			t.Errorf("%s: other bytes read without an error", name)
		}
		if b.Delivered(name) {
			t.Errorf("%s: unreadable (%v) but not marked", name, err)
		}
		bad++
	}
	if bad == 0 || len(b.ReadDamage()) != bad {
		t.Errorf("%d files unreadable, read damage %v", bad, b.ReadDamage())
	}
}
