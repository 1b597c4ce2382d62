package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// The archives in this file are built by the tests: they are hostile
// containers, not nats-server state, so composing them is legitimate.

type entry struct {
	name     string
	body     []byte
	typ      byte   // tar type flag; 0 = regular file
	link     string // link target for symlinks and hard links
	zipMode  fs.FileMode
	declared int64 // zip: lie about the uncompressed size when > 0
}

func mkTar(t testing.TB, ents []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Mode: 0o644, ModTime: time.Unix(1700000000, 0), Typeflag: e.typ, Linkname: e.link}
		switch e.typ {
		case 0, tar.TypeReg:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.body))
		case tar.TypeDir:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mkZip(t testing.TB, ents []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Unix(1700000000, 0)}
		if e.zipMode != 0 {
			h.SetMode(e.zipMode)
		}
		if e.declared > 0 {
			// A raw entry whose directory claims fewer bytes than the
			// deflate stream expands to.
			var comp bytes.Buffer
			fw, _ := flate.NewWriter(&comp, flate.BestCompression)
			fw.Write(e.body)
			fw.Close()
			h.UncompressedSize64 = uint64(e.declared)
			h.CompressedSize64 = uint64(comp.Len())
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(comp.Bytes())
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sandbox points TMPDIR at a fresh folder and returns it with a folder for
// the archive file. The unpack folder must appear inside tmp only.
func sandbox(t *testing.T) (tmp, src string) {
	base := t.TempDir()
	tmp, src = filepath.Join(base, "tmp"), filepath.Join(base, "src")
	for _, d := range []string{tmp, src} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	return tmp, src
}

// listTree lists every path under dir (relative), to see what was written.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestHostileArchives(t *testing.T) {
	big := bytes.Repeat([]byte{0}, 4<<20) // compresses to a few KiB
	normal := entry{name: "ok/readme.txt", body: []byte("hello\n")}
	many := []entry{}
	for i := 0; i < 20; i++ {
		many = append(many, entry{name: "f/" + strings.Repeat("x", i+1), body: []byte("x")})
	}
	full := mkTar(t, []entry{normal, {name: "ok/second.txt", body: bytes.Repeat([]byte("abcdefgh"), 4096)}, {name: "ok/third.txt", body: []byte("3")}})
	fullGz := gz(t, full)

	tests := []struct {
		name    string
		file    string
		data    []byte
		lim     Limits
		wantErr error  // errors.Is target, nil for success
		errText string // substring of the error
		problem string // substring of some Problem (path: reason)
		present []string
		absent  []string
	}{
		{name: "zip dotdot", file: "b.zip", data: mkZip(t, []entry{normal, {name: "../evil.txt", body: []byte("x")}}),
			problem: "escaping the bundle", present: []string{"ok/readme.txt"}},
		{name: "tar dotdot deep", file: "b.tar", data: mkTar(t, []entry{normal, {name: "a/../../../evil.txt", body: []byte("x")}}),
			problem: "escaping the bundle", present: []string{"ok/readme.txt"}},
		{name: "tgz absolute", file: "b.tgz", data: gz(t, mkTar(t, []entry{normal, {name: "/tmp/evil.txt", body: []byte("x")}})),
			problem: "absolute path", present: []string{"ok/readme.txt"}},
		{name: "zip absolute", file: "b.zip", data: mkZip(t, []entry{normal, {name: "/evil.txt", body: []byte("x")}}),
			problem: "absolute path"},
		{name: "tar symlink out", file: "b.tar", data: mkTar(t, []entry{normal,
			{name: "ln", typ: tar.TypeSymlink, link: "../../../../"}, {name: "ln/evil.txt", body: []byte("x")}}),
			problem: `ln: symlink to "../../../../"`, present: []string{"ok/readme.txt", "ln/evil.txt"}},
		{name: "tar hardlink out", file: "b.tar.gz", data: gz(t, mkTar(t, []entry{normal, {name: "hl", typ: tar.TypeLink, link: "/etc/passwd"}})),
			problem: `hl: hard link to "/etc/passwd"`, absent: []string{"hl"}},
		{name: "zip symlink", file: "b.zip", data: mkZip(t, []entry{normal, {name: "zl", body: []byte("/etc"), zipMode: fs.ModeSymlink | 0o777}}),
			problem: "zl: symlink entry", absent: []string{"zl"}},
		{name: "zip backslashes", file: "b.zip", data: mkZip(t, []entry{{name: `dir\sub\file.txt`, body: []byte("x")}, {name: `..\evil.txt`, body: []byte("x")}}),
			problem: "escaping the bundle", present: []string{"dir/sub/file.txt"}},
		{name: "tar fifo", file: "b.tar", data: mkTar(t, []entry{normal, {name: "fifo", typ: tar.TypeFifo}}),
			problem: "fifo: entry of tar type", absent: []string{"fifo"}},
		{name: "duplicate", file: "b.tar", data: mkTar(t, []entry{normal, {name: "ok/readme.txt", body: []byte("second")}}),
			problem: "ok/readme.txt: duplicate entry"},
		{name: "too many entries", file: "b.zip", data: mkZip(t, many), lim: Limits{MaxEntries: 10},
			wantErr: ErrLimit, errText: `more than 10 entries (at entry "f/xxxxxxxxxxx")`},
		{name: "too many bytes tar", file: "b.tar", data: mkTar(t, []entry{normal, {name: "big.bin", body: bytes.Repeat([]byte("y"), 5000)}}),
			lim: Limits{MaxTotalBytes: 4096}, wantErr: ErrLimit, errText: `"big.bin" expands past the 4096-byte total limit`},
		{name: "too many bytes zip declared", file: "b.zip", data: mkZip(t, []entry{normal, {name: "big.bin", body: bytes.Repeat([]byte("y"), 5000)}}),
			lim: Limits{MaxTotalBytes: 4096}, wantErr: ErrLimit, errText: `"big.bin" claims 5000 bytes`},
		{name: "entry too big", file: "b.tar", data: mkTar(t, []entry{{name: "big.bin", body: bytes.Repeat([]byte("y"), 5000)}}),
			lim: Limits{MaxEntryBytes: 1000}, wantErr: ErrLimit, errText: `"big.bin" is 5000 bytes, more than the 1000-byte entry limit`},
		{name: "gzip bomb", file: "b.tar.gz", data: gz(t, mkTar(t, []entry{normal, {name: "bomb.bin", body: big}})),
			lim: Limits{MaxTotalBytes: 1 << 20}, wantErr: ErrLimit, errText: `"bomb.bin" expands past the 1048576-byte total limit`},
		{name: "zip lying size", file: "b.zip", data: mkZip(t, []entry{normal, {name: "bomb.bin", body: big, declared: 100}}),
			lim: Limits{MaxTotalBytes: 1 << 20}, present: []string{"ok/readme.txt"}}, // read in place: see TestZipInPlaceReadDamage
		{name: "truncated tgz", file: "b.tgz", data: fullGz[:len(fullGz)*2/3],
			problem: `ok/second.txt: archive damage: entry "ok/second.txt" of b.tgz, data at offset 1536 of the tar stream`, present: []string{"ok/readme.txt", "ok/second.txt"}, absent: []string{"ok/third.txt"}},
		{name: "truncated tar", file: "b.tar", data: full[:1024+512+100],
			problem: `ok/second.txt: archive damage: entry "ok/second.txt" of b.tar, data at offset 1536 of the tar stream: 100 of 32768 bytes`, present: []string{"ok/readme.txt"}},
		{name: "truncated zip", file: "b.zip", data: mkZip(t, []entry{normal})[:40], wantErr: zip.ErrFormat, errText: "b.zip"},
		{name: "not an archive", file: "b.zip", data: []byte("just some text\n"), wantErr: ErrNotBundle, errText: "b.zip"},
		{name: "gzip not tar", file: "b.tar.gz", data: gz(t, []byte("just some text\n")), wantErr: ErrNotBundle},
		{name: "empty file", file: "b.tar", data: nil, wantErr: ErrNotBundle},
		{name: "nested", file: "b.zip", data: mkZip(t, []entry{normal,
			{name: "per-server/n1.tar.gz", body: gz(t, mkTar(t, []entry{{name: "inner/x.txt", body: []byte("in")}, {name: "../up.txt", body: []byte("x")}}))},
			{name: "per-server/n2.zip", body: []byte("not a zip")}}),
			problem: "per-server/n2.zip: named like an archive but is none",
			present: []string{"per-server/n1/inner/x.txt", "per-server/n1.tar.gz"}, absent: []string{"per-server/up.txt", "per-server/n2"}},
		// An archive inside the bundle past a limit is refused whole and
		// named; the rest of the bundle is read.
		{name: "nested past limit", file: "b.tar", data: mkTar(t, []entry{normal,
			{name: "n1.tgz", body: gz(t, mkTar(t, []entry{{name: "ok.txt", body: []byte("ok")}, {name: "bomb.bin", body: big}}))}}),
			lim:     Limits{MaxTotalBytes: 1 << 20},
			problem: `n1.tgz: tar.gz archive not read: bundle limit exceeded: n1.tgz: entry "bomb.bin" expands past the 1048576-byte total limit`,
			present: []string{"ok/readme.txt", "n1.tgz"}, absent: []string{"n1", "n1/ok.txt", "n1/bomb.bin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp, src := sandbox(t)
			file := filepath.Join(src, tc.file)
			if err := os.WriteFile(file, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := Open(file, tc.lim)
			if tc.wantErr != nil {
				if err == nil {
					b.Close()
					t.Fatalf("Open succeeded, want error %v", tc.wantErr)
				}
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %q, want %v containing %q", err, tc.wantErr, tc.errText)
				}
				if left := listTree(t, tmp); len(left) != 0 {
					t.Fatalf("failed Open left %v in TMPDIR", left)
				}
			} else {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if tc.problem != "" && !hasProblem(b, tc.problem) {
					t.Errorf("no problem containing %q in %v", tc.problem, b.Problems)
				}
				for _, p := range tc.present {
					if _, err := fs.Stat(b.FS, p); err != nil {
						t.Errorf("%s missing: %v", p, err)
					}
				}
				for _, p := range tc.absent {
					if _, err := fs.Stat(b.FS, p); err == nil {
						t.Errorf("%s present, want absent", p)
					}
				}
				// Only the unpack folder (or the spill folder of an
				// archive read in place) and the folder of the archives
				// inside it may have been written, inside TMPDIR.
				var own []string
				if b.tmp != "" {
					own = append(own, filepath.Base(b.tmp))
				}
				if b.nested != nil {
					own = append(own, filepath.Base(b.nested.dir))
				}
				for _, p := range listTree(t, tmp) {
					if !slices.ContainsFunc(own, func(o string) bool { return p == o || strings.HasPrefix(p, o+"/") }) {
						t.Errorf("%s written outside the unpack folders %v", p, own)
					}
				}
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				if err := b.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
				if left := listTree(t, tmp); len(left) != 0 {
					t.Fatalf("Close left %v in TMPDIR", left)
				}
			}
			if got := listTree(t, src); len(got) != 1 || got[0] != tc.file {
				t.Errorf("source folder now holds %v", got)
			}
			if data, _ := os.ReadFile(file); !bytes.Equal(data, tc.data) {
				t.Errorf("archive changed")
			}
		})
	}
}

func hasProblem(b *Bundle, s string) bool {
	for _, p := range b.Problems {
		if strings.Contains(p.String(), s) {
			return true
		}
	}
	return false
}

// A directory bundle is only read: symlinks in it are reported, not followed.
func TestDirectorySymlinks(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "bundle")
	for _, d := range []string{outside, dir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.log"), []byte("[1] 2026/11/29 23:18:04.782924 [INF] Starting nats-server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.log"), filepath.Join(dir, "x.log")); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Logs) != 0 {
		t.Errorf("followed a symlink out: %v", b.Logs)
	}
	if !hasProblem(b, "out: symlink not followed") || !hasProblem(b, "x.log: symlink not followed") {
		t.Errorf("problems %v", b.Problems)
	}
	if _, err := fs.ReadFile(b.FS, "x.log"); err == nil {
		t.Errorf("FS opened a symlink pointing outside the bundle")
	}
}

// Refused names are quoted whole in the notes: path cleaning must not
// resolve the ".." inside them. The archive is hostile, its contents are real
// bundle files under hostile names, at the top and inside a nested archive.
func TestRefusedNamesQuotedWhole(t *testing.T) {
	real := smallRealEntries(t)
	if len(real) < 2 {
		t.Skip("no real bundle files")
	}
	hostile := []string{"ok/../../../x", "../../etc/passwd", "a/./../../b", "/abs/path", `..\..\win`}
	var ents []entry
	for i, name := range hostile {
		ents = append(ents, entry{name: name, body: real[i%len(real)].body})
	}
	ents = append(ents, real[0])
	inner := mkTar(t, ents)
	ents = append(ents, entry{name: "nested/inner.tar", body: inner})
	for _, kind := range []string{"zip", "tar.gz"} {
		t.Run(kind, func(t *testing.T) {
			_, src := sandbox(t)
			file := filepath.Join(src, "hostile."+kind)
			data := gz(t, mkTar(t, ents))
			if kind == "zip" {
				data = mkZip(t, ents)
			}
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := Open(file, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for _, name := range hostile {
				for _, where := range []string{"", "nested/inner/"} {
					want := where + strconv.Quote(name)
					found := false
					for _, p := range b.Problems {
						if p.Path == want && strings.Contains(p.Reason, "refused") {
							found = true
						}
					}
					if !found {
						t.Errorf("no refusal noted as %s; problems: %v", want, b.Problems)
					}
				}
			}
			if _, err := fs.Stat(b.FS, real[0].name); err != nil {
				t.Errorf("the honest entry %s was not unpacked: %v", real[0].name, err)
			}
		})
	}
}

// A zip read in place meets an entry's damage only when the entry is read:
// the entry whose directory size lies fails its read, is recorded as archive
// damage, and is no longer delivered; its honest neighbour is.
func TestZipInPlaceReadDamage(t *testing.T) {
	big := bytes.Repeat([]byte{0}, 4<<20)
	_, src := sandbox(t)
	file := filepath.Join(src, "b.zip")
	os.WriteFile(file, mkZip(t, []entry{{name: "ok/readme.txt", body: []byte("hello\n")}, {name: "bomb.bin", body: big, declared: 100}}), 0o644)
	b, err := Open(file, Limits{MaxTotalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Root != "" || b.Archive != "zip" {
		t.Fatalf("not read in place: root %q archive %q", b.Root, b.Archive)
	}
	if data, err := fs.ReadFile(b.FS, "bomb.bin"); err == nil || len(data) > 100 {
		t.Fatalf("read %d bytes of an entry that declares 100, err %v", len(data), err)
	}
	if _, err := fs.ReadFile(b.FS, "ok/readme.txt"); err != nil {
		t.Fatal(err)
	}
	dmg := b.ReadDamage()
	if len(dmg) != 1 || dmg[0].Path != "bomb.bin" || !strings.Contains(dmg[0].Reason, "archive damage") {
		t.Errorf("read damage %v", dmg)
	}
	if b.Delivered("bomb.bin") || !b.Delivered("ok/readme.txt") || strings.Join(b.NotDelivered(), ",") != "bomb.bin" {
		t.Errorf("delivered: bomb %v readme %v, not delivered %v", b.Delivered("bomb.bin"), b.Delivered("ok/readme.txt"), b.NotDelivered())
	}
}

// The committed zips are read in place: nothing is written to TMPDIR.
func TestCommittedZipsReadInPlace(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, src := range fx.sources {
			if !strings.HasSuffix(src, ".zip") {
				continue
			}
			tmp, _ := sandbox(t)
			b, err := Open(src, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if b.Root != "" || len(listTree(t, tmp)) != 0 {
				t.Errorf("%s: unpacked to %q (TMPDIR holds %v), want read in place", src, b.Root, listTree(t, tmp))
			}
			if len(b.Stores)+len(b.Captures) == 0 {
				t.Errorf("%s: nothing found in place", src)
			}
			b.Close()
		}
	}
}
