package analysis

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
	"github.com/klauspost/compress/gzip"
)

// reportJSON is the report as JSON, without the bundle's path.
func reportJSON(t *testing.T, rep *report.Report) string {
	t.Helper()
	r := *rep
	r.Bundle = ""
	b, err := json.MarshalIndent(&r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runWith(t *testing.T, path string, lim bundle.Limits) *report.Report {
	t.Helper()
	rep, err := Run(path, Options{ToolVersion: "test", Limits: lim})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// TestArchivesReportAsTheirFolder: every committed .zip and .tar.gz
// fixture, read in place, gives the report of the folder it unpacks into;
// the .tar.gz also as a plain .tar, and with a spill budget too small to
// keep any file (every file then read by inflating the archive again from
// its start), which only adds a note saying so.
func TestArchivesReportAsTheirFolder(t *testing.T) {
	archives, _ := filepath.Glob(bundlesDir + "/*/bundle.zip")
	tgzs, _ := filepath.Glob(bundlesDir + "/*/bundle.tar.gz")
	archives = append(archives, tgzs...)
	if len(tgzs) == 0 || len(archives) < 2 {
		t.Fatalf("archives %v", archives)
	}
	for _, archive := range archives {
		name := filepath.Base(filepath.Dir(archive)) + "/" + filepath.Base(archive)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			unpackArchive(t, archive, dir)
			want := reportJSON(t, analyze(t, dir))
			if got := reportJSON(t, analyze(t, archive)); got != want {
				t.Fatalf("report of %s differs from its folder's:\n%s", name, firstDiff(got, want))
			}
			if !strings.HasSuffix(archive, ".tar.gz") {
				return
			}
			tarPath := filepath.Join(t.TempDir(), "bundle.tar")
			data, err := os.ReadFile(archive)
			if err != nil {
				t.Fatal(err)
			}
			gr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(gr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tarPath, plain, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := reportJSON(t, analyze(t, tarPath)); got != want {
				t.Fatalf("report of %s as a plain .tar differs from its folder's:\n%s", name, firstDiff(got, want))
			}
			tiny := runWith(t, archive, bundle.Limits{SpillBytes: 4})
			var notes []string
			for _, n := range tiny.Notes {
				if strings.Contains(n, "read in place: the temporary space ran out") {
					continue
				}
				notes = append(notes, n)
			}
			if len(notes) != len(tiny.Notes)-1 {
				t.Errorf("no note that the spill budget ran out: %v", tiny.Notes)
			}
			tiny.Notes = notes
			if got := reportJSON(t, tiny); got != want {
				t.Fatalf("report of %s with no spill differs from its folder's:\n%s", name, firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + al[i] + "\n want " + bl[i]
		}
	}
	return "one is a prefix of the other"
}

// TestTruncatedTarGzNotKept: a .tar.gz cut in half and read with no file
// kept in the spill file (every file inflated again from the archive)
// says in its notes what was not read, and no store finding rests on the
// file cut.
func TestTruncatedTarGzNotKept(t *testing.T) {
	data := cutHalf(packDir(t, bundlesDir+"/orphan-v2.10.22/bundle", "tar.gz"))
	p := filepath.Join(t.TempDir(), "cut.tar.gz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(p, bundle.Limits{SpillBytes: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := Build(Load(b), Checks, nil)
	if !hasNote(got, "of the tar stream") || !hasNote(got, "entries after it not read") && !hasNote(got, "not delivered intact") {
		t.Errorf("no note of what was not read: %v", got.Notes)
	}
	if len(b.NotDelivered()) == 0 {
		t.Fatalf("nothing marked not delivered: %v", got.Notes)
	}
	for _, f := range got.Findings {
		if f.Code == "store-corrupt" || f.Code == "index-mismatch" || !delivered(f.File, b.NotDelivered()) {
			t.Errorf("finding %s on %s, a file the archive did not deliver", f.Code, f.File)
		}
	}
}
