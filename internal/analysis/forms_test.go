package analysis_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// A bundle gives the same report whatever form it comes in. Every
// committed fixture (testdata/bundles/*/ and testdata/perturbed/*/, each a
// bundle/ folder, or archives only, unpacked here for the folder form) is
// analyzed as a folder, as a zip and a .tar.gz packed here the way zip and
// tar tools pack a folder (folder entries and file times kept), and as each
// archive committed with it. The JSON reports must be byte-identical once
// the one thing that differs legitimately is set aside: the report's
// "bundle" field, the path given to analyze (nothing else differed on any
// fixture). A bundle packed one folder deeper (top/bundle/…), or a folder
// holding only the bundle's .tar.gz, gives the same report with that
// folder on every path inside the bundle: the folder is cut from the
// report's text before comparing.
//
// Run time (2 cores): the full set, 60 fixtures in three or four forms
// each, about 13 s; with -short about 3 s, a representative subset: a
// flat and a per-server folder, an audit archive, a zip with empty
// folders, both committed archives of a bundle under a top folder, an
// encrypted store, a perturbed store, a client history.

const testdataDir = "../../testdata"

var shortForms = []string{
	"v2.15.2-flat", "v2.10.22-per-server", "audit-gather-v2.15.2", "emptyfolders-v2.12.1", "v2.12.1-archive",
	"encrypted-v2.15.2", "perturbed-crash-v2.15.3", "acked-lost-jepsen-v2.15.2",
}

// formFixture is one committed fixture: its bundle/ folder, if any, and its
// committed archives.
type formFixture struct {
	name     string
	folder   string
	archives []string
}

func formFixtures(t *testing.T) []formFixture {
	t.Helper()
	var out []formFixture
	for _, set := range []string{"bundles", "perturbed"} {
		dirs, err := os.ReadDir(filepath.Join(testdataDir, set))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if !d.IsDir() {
				continue
			}
			dir := filepath.Join(testdataDir, set, d.Name())
			fx := formFixture{name: d.Name()}
			if fi, err := os.Stat(filepath.Join(dir, "bundle")); err == nil && fi.IsDir() {
				fx.folder = filepath.Join(dir, "bundle")
			}
			for _, a := range []string{"bundle.zip", "bundle.tar.gz", "bundle.tgz", "bundle.tar"} {
				if _, err := os.Stat(filepath.Join(dir, a)); err == nil {
					fx.archives = append(fx.archives, filepath.Join(dir, a))
				}
			}
			if fx.folder == "" && len(fx.archives) == 0 {
				t.Fatalf("%s: neither a bundle/ folder nor a bundle archive", dir)
			}
			out = append(out, fx)
		}
	}
	if len(out) < 50 {
		t.Fatalf("%d fixtures found under %s", len(out), testdataDir)
	}
	return out
}

// packed is one file or folder of a bundle, read from its folder.
type packed struct {
	name  string // slash path; folders end in "/"
	mode  fs.FileMode
	mtime time.Time
	data  []byte
}

// readTree reads the folders and files under dir, in walk order.
func readTree(t *testing.T, dir string) []packed {
	t.Helper()
	var out []packed
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		e := packed{name: filepath.ToSlash(rel), mode: fi.Mode(), mtime: fi.ModTime()}
		switch {
		case d.IsDir():
			e.name += "/"
		case fi.Mode().IsRegular():
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: a %v in a fixture", p, fi.Mode().Type())
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pack writes the entries, each named prefix + its name (the folders of
// prefix first), as a zip or a .tar.gz at file.
func pack(t *testing.T, ents []packed, prefix, kind, file string) string {
	t.Helper()
	var all []packed
	for p := strings.TrimSuffix(prefix, "/"); p != "" && p != "."; p = path.Dir(p) {
		all = append([]packed{{name: p + "/", mode: fs.ModeDir | 0o755, mtime: time.Unix(1796000000, 0)}}, all...)
	}
	for _, e := range ents {
		e.name = prefix + e.name
		all = append(all, e)
	}
	ents = all
	var buf bytes.Buffer
	var err error
	switch kind {
	case "zip":
		zw := zip.NewWriter(&buf)
		for _, e := range ents {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: e.mtime}
			h.SetMode(e.mode)
			if strings.HasSuffix(e.name, "/") {
				h.Method = zip.Store
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(e.data); err != nil {
				t.Fatal(err)
			}
		}
		err = zw.Close()
	case "tar.gz":
		gw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gw)
		for _, e := range ents {
			h := &tar.Header{Name: e.name, Mode: int64(e.mode.Perm()), ModTime: e.mtime, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
			if strings.HasSuffix(e.name, "/") {
				h.Typeflag, h.Size = tar.TypeDir, 0
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(e.data); err != nil {
				t.Fatal(err)
			}
		}
		if err = tw.Close(); err == nil {
			err = gw.Close()
		}
	default:
		t.Fatalf("no form %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// unpackCommitted writes the files of a committed zip or .tar.gz under dir
// (trusted fixtures: no name is checked), for the folder form of a fixture
// committed only as archives.
func unpackCommitted(t *testing.T, archive, dir string) {
	t.Helper()
	put := func(name string, mode fs.FileMode, mtime time.Time, r io.Reader) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") || mode.IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasSuffix(archive, ".zip") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			put(f.Name, f.Mode(), f.Modified, rc)
			rc.Close()
		}
		return
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		put(h.Name, h.FileInfo().Mode(), h.ModTime, tr)
	}
}

// formReport analyzes path and gives its JSON report with the bundle's
// path set aside and prefix (the folder a bundle was packed under) cut from
// every bundle path.
func formReport(t *testing.T, path, prefix string) []byte {
	t.Helper()
	return formReportWith(t, path, prefix, bundle.Limits{})
}

func formReportWith(t *testing.T, path, prefix string, lim bundle.Limits) []byte {
	t.Helper()
	rep, err := analysis.Run(path, analysis.Options{ToolVersion: "test", Limits: lim})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rep.Bundle = ""
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if prefix != "" {
		out = bytes.ReplaceAll(out, []byte(prefix), nil)
	}
	return out
}

// sameReport fails when got differs from want, with the lines that differ.
func sameReport(t *testing.T, form string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
	if len(d) > 4000 {
		d = d[:4000] + "\n…"
	}
	t.Errorf("%s: the report differs from the folder's (-folder +%s):\n%s", form, form, d)
}

func TestSameReportInEveryForm(t *testing.T) {
	for _, fx := range formFixtures(t) {
		if testing.Short() && !slices.Contains(shortForms, fx.name) {
			continue
		}
		t.Run(fx.name, func(t *testing.T) {
			tmp := t.TempDir()
			folder := fx.folder
			if folder == "" {
				folder = filepath.Join(tmp, "bundle")
				unpackCommitted(t, fx.archives[0], folder)
			}
			want := formReport(t, folder, "")
			var rep struct{ Coverage *report.Coverage }
			if err := json.Unmarshal(want, &rep); err != nil {
				t.Fatal(err)
			}
			if c := rep.Coverage; c == nil || c.Stores+c.Logs+c.Captures+c.AckLogs == 0 {
				t.Fatalf("the folder form recognized nothing: %+v", c)
			}
			ents := readTree(t, folder)
			forms := map[string]string{}
			for _, kind := range []string{"zip", "tar.gz"} {
				forms["packed "+kind] = pack(t, ents, "", kind, filepath.Join(tmp, "packed."+kind))
			}
			for _, a := range fx.archives {
				forms["committed "+filepath.Base(a)] = a
			}
			for _, form := range slices.Sorted(maps.Keys(forms)) {
				sameReport(t, form, want, formReport(t, forms[form], ""))
			}
		})
	}
}

// A bundle packed one folder deeper (the archive holds top/bundle/…, as
// when the user zipped the folder above the bundle), and a folder holding
// only the bundle's archive, give the folder's report, their extra folder
// aside.
func TestSameReportOneFolderDeeper(t *testing.T) {
	names := []string{"v2.15.2-flat", "v2.10.22-per-server", "audit-gather-v2.15.2", "perturbed-crash-v2.15.3", "lifecycle-v2.12.1"}
	if testing.Short() {
		names = names[:2]
	}
	byName := map[string]formFixture{}
	for _, fx := range formFixtures(t) {
		byName[fx.name] = fx
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fx, ok := byName[name]
			if !ok {
				t.Fatalf("no fixture %s", name)
			}
			tmp := t.TempDir()
			folder := fx.folder
			if folder == "" {
				folder = filepath.Join(tmp, "bundle")
				unpackCommitted(t, fx.archives[0], folder)
			}
			want := formReport(t, folder, "")
			ents := readTree(t, folder)
			for _, kind := range []string{"zip", "tar.gz"} {
				archive := pack(t, ents, "top/bundle/", kind, filepath.Join(tmp, "deeper."+kind))
				sameReport(t, "one folder deeper, "+kind, want, formReport(t, archive, "top/bundle/"))
			}
			// The ticket folder the archive was saved into: the archive
			// is read, one folder down.
			ticket := filepath.Join(tmp, "ticket")
			pack(t, ents, "", "tar.gz", filepath.Join(ticket, "support-8841.tar.gz"))
			sameReport(t, "a folder holding the .tar.gz", want, formReport(t, ticket, "support-8841/"))
		})
	}
}

// A folder holding only an archive that is not read (past a limit) is not
// "nothing recognized" in silence: the report's notes and unread files
// name the archive and why.
func TestFolderHoldingRefusedArchive(t *testing.T) {
	ticket := filepath.Join(t.TempDir(), "ticket")
	data, err := os.ReadFile(filepath.Join(testdataDir, "bundles", "v2.12.1-archive", "bundle.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ticket, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ticket, "bundle.tar.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	rep, err := analysis.Run(ticket, analysis.Options{ToolVersion: "test", Limits: bundle.Limits{MaxTotalBytes: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	const why = "bundle.tar.gz: tar.gz archive not read: bundle limit exceeded"
	noted := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, why) })
	unread := rep.Coverage != nil && slices.ContainsFunc(rep.Coverage.Unread, func(u report.UnreadFile) bool {
		return u.Path == "bundle.tar.gz" && strings.Contains(u.Reason, "not read: bundle limit exceeded")
	})
	if !noted || !unread {
		t.Errorf("the refused archive is not named: notes %q, unread %+v", rep.Notes, rep.Coverage)
	}
}
