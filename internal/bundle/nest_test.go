package bundle

import (
	"archive/tar"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// Archives inside a bundle are read whatever the bundle's own form. The
// contents are real: a generator bundle's folder, the real `nats audit
// gather` zip, the committed bundle.tar.gz; only the containers around them
// are made here.

// treeEntries lists the folders and files under dir as archive entries
// named prefix + their slash path, folders first in walk order.
func treeEntries(t *testing.T, dir, prefix string) []entry {
	t.Helper()
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			out = append(out, entry{name: name + "/", typ: tar.TypeDir})
			return nil
		}
		data, err := os.ReadFile(p)
		out = append(out, entry{name: name, body: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pack writes the entries as kind ("zip", "tar", "tar.gz") to file.
func pack(t *testing.T, file, kind string, ents []entry) string {
	t.Helper()
	var data []byte
	switch kind {
	case "zip":
		data = mkZip(t, ents)
	case "tar":
		data = mkTar(t, ents)
	case "tar.gz":
		data = gz(t, mkTar(t, ents))
	default:
		t.Fatalf("no archive kind %q", kind)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// inventoryText is what Open found, as JSON, without the bundle's own path
// and form: what must not depend on the form.
func inventoryText(t *testing.T, b *Bundle) string {
	t.Helper()
	c := struct {
		Stores      []Store
		Logs        []Log
		Captures    []Capture
		Problems    []Problem
		Notes       []string
		Undelivered []string
		AckLogs     []string
		Configs     []Config
	}{b.Stores, b.Logs, b.Captures, b.Problems, b.Notes, b.Undelivered, b.AckLogs, b.Configs}
	data, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// withAudit copies a real bundle folder into dir and puts the real audit
// archive in it at diagnostics/audit-gather.zip.
func withAudit(t *testing.T, dir string) {
	t.Helper()
	copyTree(t, os.DirFS(filepath.Join(bundlesDir, "v2.15.2-flat", "bundle")), ".", dir)
	data, err := os.ReadFile(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "diagnostics"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "diagnostics", "audit-gather.zip"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The same folder holding an audit-gather zip, given as the folder, a zip,
// a tar and a .tar.gz (each read in place, and unpacked), inventories the
// same: the archive inside is read in every form, mounted at the same
// path, and nothing is written beside the evidence.
func TestArchiveInsideEveryForm(t *testing.T) {
	tmp, src := sandbox(t)
	tags := auditTags(t)
	folder := filepath.Join(src, "folder")
	withAudit(t, folder)
	ents := treeEntries(t, folder, "")
	forms := map[string]string{"folder": folder}
	for _, kind := range []string{"zip", "tar", "tar.gz"} {
		forms[kind] = pack(t, filepath.Join(src, "b."+kind), kind, ents)
	}
	// A symlink makes a zip unpacked rather than read in place.
	forms["zip unpacked"] = pack(t, filepath.Join(src, "u.zip"), "zip",
		append(ents, entry{name: "link", body: []byte("n1.log"), zipMode: fs.ModeSymlink | 0o777}))
	before := hashTree(t, src)
	var want string
	// With no file kept in the spill file, the archive inside a .tar.gz is
	// inflated from its checkpoint and copied out whole.
	forms["tar.gz from checkpoints"] = forms["tar.gz"]
	for _, name := range []string{"folder", "zip", "tar", "tar.gz", "tar.gz from checkpoints", "zip unpacked"} {
		t.Run(name, func(t *testing.T) {
			if name == "tar.gz from checkpoints" {
				noneHeld(t)
			}
			b, err := Open(forms[name], Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if name == "zip unpacked" && b.Root == "" || name != "zip unpacked" && name != "folder" && b.Root != "" {
				t.Errorf("Root %q: not the way of reading this form meant", b.Root)
			}
			checkAudit(t, &Bundle{Captures: b.Captures}, "diagnostics/audit-gather", tags) // the stores are the folder's
			if len(b.Stores) != 3 || len(b.Logs) != 3 || len(b.Captures) != 55 {
				t.Errorf("%d stores, %d logs, %d captures; want 3, 3 and 15 of the folder + 40 of the audit archive", len(b.Stores), len(b.Logs), len(b.Captures))
			}
			if name == "zip unpacked" {
				// The link's refusal is this form's own.
				var kept []Problem
				for _, p := range b.Problems {
					if p.Path != "link" {
						kept = append(kept, p)
					}
				}
				b.Problems = orEmpty(kept)
			}
			got := inventoryText(t, b)
			if want == "" {
				want = got
			} else if d := cmp.Diff(want, got); d != "" {
				t.Errorf("inventory differs from the folder's (-folder +%s):\n%s", name, d)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if left := listTree(t, tmp); len(left) != 0 {
				t.Errorf("Close left %v in TMPDIR", left)
			}
		})
	}
	if d := cmp.Diff(before, hashTree(t, src)); d != "" {
		t.Errorf("the bundles changed:\n%s", d)
	}
}

// A folder that holds only an archive reads as that archive, one folder
// down; and the archives inside that archive are read too (two levels).
func TestFolderHoldingAnArchive(t *testing.T) {
	_, src := sandbox(t)
	given := filepath.Join(bundlesDir, "v2.12.1-archive", "bundle.tar.gz")
	data, err := os.ReadFile(given)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Open(given, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	folder := filepath.Join(src, "ticket-4711")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "bundle.tar.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(folder, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Captures) == 0 || len(b.Captures) != len(alone.Captures) || len(b.Logs) != len(alone.Logs) || len(b.Stores) != len(alone.Stores) {
		t.Fatalf("folder: %d stores %d logs %d captures; the archive alone: %d %d %d",
			len(b.Stores), len(b.Logs), len(b.Captures), len(alone.Stores), len(alone.Logs), len(alone.Captures))
	}
	for i, c := range alone.Captures {
		if got := b.Captures[i]; got.Path != "bundle/"+c.Path || got.Kind != c.Kind {
			t.Errorf("capture %d: %s %s, want bundle/%s %s", i, got.Path, got.Kind, c.Path, c.Kind)
		}
	}
	for i, s := range alone.Stores {
		if got := b.Stores[i].Dir; got != "bundle/"+s.Dir {
			t.Errorf("store %d: %s, want bundle/%s", i, got, s.Dir)
		}
	}

	// The same folder with the audit archive inside the .tar.gz: two
	// archives deep, read; an archive inside that, three deep, named.
	audit, err := os.ReadFile(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(src, "deep")
	inner := mkZip(t, append(treeEntries(t, filepath.Join(bundlesDir, "v2.15.2-flat", "bundle"), "flat/"),
		entry{name: "more/audit.zip", body: audit}))
	pack(t, filepath.Join(deep, "support.tar.gz"), "tar.gz", []entry{{name: "servers/flat.zip", body: inner}})
	d, err := Open(deep, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Stores) != 3 || len(d.Logs) != 3 || len(d.Captures) != 15 {
		t.Errorf("two archives deep: %d stores %d logs %d captures, want 3 3 15: %v", len(d.Stores), len(d.Logs), len(d.Captures), d.Problems)
	}
	if !hasProblem(d, "support/servers/flat/more/audit.zip: a zip archive 3 archives deep: not read") {
		t.Errorf("the archive three deep is not named: %v", d.Problems)
	}
}

// The FS of a folder with an archive mounted in it is a consistent FS:
// every file and folder of the mount is listed, opened and stat'ed alike
// (testing/fstest), beside the folder's own.
func TestMountedFS(t *testing.T) {
	_, src := sandbox(t)
	folder := filepath.Join(src, "b")
	withAudit(t, folder)
	b, err := Open(folder, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var want []string
	for _, c := range b.Captures {
		want = append(want, c.Path)
	}
	if err := fstest.TestFS(b.FS, want...); err != nil {
		t.Fatal(err)
	}
	ents, err := fs.ReadDir(b.FS, "diagnostics")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "audit-gather audit-gather.zip" {
		t.Errorf("diagnostics lists %v", names)
	}
}

// An archive inside a folder that goes past a limit, or is no archive
// though named like one, is named in Problems with why; the rest is read,
// and nothing of the refused archive is kept.
func TestArchiveInsideRefused(t *testing.T) {
	tmp, src := sandbox(t)
	folder := filepath.Join(src, "b")
	withAudit(t, folder)
	if err := os.WriteFile(filepath.Join(folder, "n2.tar.gz"), []byte("not a tar at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		lim     Limits
		problem string
	}{
		{"bytes", Limits{MaxTotalBytes: 100 << 10},
			`diagnostics/audit-gather.zip: zip archive not read: bundle limit exceeded: diagnostics/audit-gather.zip: entry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Open(folder, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if !hasProblem(b, tc.problem) {
				t.Errorf("no problem %q in %v", tc.problem, b.Problems)
			}
			if !hasProblem(b, "n2.tar.gz: named like an archive but is none") {
				t.Errorf("the false archive is not named: %v", b.Problems)
			}
			if len(b.Captures) != 15 || len(b.Logs) != 3 || len(b.Stores) != 3 {
				t.Errorf("%d captures %d logs %d stores, want the folder's own 15 3 3", len(b.Captures), len(b.Logs), len(b.Stores))
			}
			if _, err := fs.Stat(b.FS, "diagnostics/audit-gather"); err == nil {
				t.Errorf("the refused archive is mounted")
			}
			for _, p := range listTree(t, tmp) {
				if fi, err := os.Stat(filepath.Join(tmp, p)); err == nil && !fi.IsDir() {
					t.Errorf("%s kept of the refused archive", p)
				}
			}
		})
	}
	if left := listTree(t, tmp); len(left) != 0 {
		t.Errorf("Close left %v in TMPDIR", left)
	}
}
