package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

var update = flag.Bool("update", false, "rewrite golden files")

const bundles = "../../testdata/bundles"

// bundleForms lists every committed bundle in every form.
func bundleForms(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*/bundle", "*/bundle.zip", "*/bundle.tar.gz"} {
		m, _ := filepath.Glob(filepath.Join(bundles, pat))
		out = append(out, m...)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no committed bundles")
	}
	return out
}

// treeDigest hashes every file under path (or the file itself) with its
// name, size and mode, so any write shows.
func treeDigest(t *testing.T, path string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %v %v\n", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestAnalyzeLeavesBundlesByteIdentical runs analyze on every fixture, as a
// directory and as archives, and checks that not a byte (nor a timestamp)
// of it changed.
func TestAnalyzeLeavesBundlesByteIdentical(t *testing.T) {
	for _, b := range bundleForms(t) {
		t.Run(strings.TrimPrefix(b, bundles+"/"), func(t *testing.T) {
			before := treeDigest(t, b)
			var out, errb bytes.Buffer
			code := run([]string{"analyze", b, "--format", "json"}, &out, &errb)
			if !reportExit(code, errb.String()) {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if after := treeDigest(t, b); after != before {
				t.Fatal("analyze changed the bundle")
			}
			var rep map[string]any
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			if rep["schema"] != "jsforensics.report/v1" {
				t.Errorf("schema %v", rep["schema"])
			}
		})
	}
}

// TestToolErrorsExitUnknown: a bundle that cannot be opened and a usage
// error exit 3 with the error on stderr.
func TestToolErrorsExitUnknown(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", filepath.Join(bundles, "v2.15.2-flat/bundle")}, &out, &errb); code != exitOK {
		t.Errorf("healthy bundle: exit %d: %s", code, errb.String())
	}
	if code := run([]string{"analyze", filepath.Join(bundles, "incident-000-captures/bundle")}, &out, &errb); code != exitCritical {
		t.Errorf("incident bundle: exit %d, want %d", code, exitCritical)
	}
	errb.Reset()
	if code := run([]string{"analyze", filepath.Join(t.TempDir(), "nope")}, &out, &errb); code != exitUnknown || errb.Len() == 0 {
		t.Errorf("missing bundle: exit %d, stderr %q", code, errb.String())
	}
	if code := run([]string{"analyze", "--format", "pdf", bundles}, &out, &errb); code != exitUnknown {
		t.Errorf("bad format: exit %d", code)
	}
	for _, args := range [][]string{{"analyze"}, {"analyze", "a", "b"}, {"analyze", "--no-such-flag", bundles}, {"dump", "blk"}} {
		errb.Reset()
		if code := run(args, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "usage: jsforensics ") {
			t.Errorf("%v: exit %d, stderr %q: want the usage line", args, code, errb.String())
		}
	}
	out.Reset()
	if code := run([]string{"version"}, &out, &errb); code != exitOK || !strings.HasPrefix(out.String(), "jsforensics ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("version: %d %q", code, out.String())
	}
	first := out.String()
	out.Reset()
	if code := run([]string{"--version"}, &out, &errb); code != exitOK || out.String() != first {
		t.Errorf("--version: %d %q, want %q", code, out.String(), first)
	}
}

// TestAnalyzeTextGolden pins the text report of the first incident's
// captures, the page a support engineer reads first.
func TestAnalyzeTextGolden(t *testing.T) {
	for _, tc := range []struct{ format, golden string }{
		{"text", "incident-000.txt"},
		{"markdown", "incident-000.md"},
	} {
		var out, errb bytes.Buffer
		run([]string{"analyze", filepath.Join(bundles, "incident-000-captures/bundle"), "--format", tc.format}, &out, &errb)
		got := bytes.ReplaceAll(out.Bytes(), []byte(bundles), []byte("BUNDLES"))
		path := filepath.Join("testdata", tc.golden)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s; rerun with -update if intended:\n%s", tc.format, path, got)
		}
	}
}

func TestAnalyzeXLSX(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.xlsx")
	var so, se bytes.Buffer
	if code := run([]string{"analyze", filepath.Join(bundles, "incident-000-captures/bundle"), "--format", "xlsx", "-o", out}, &so, &se); code != exitCritical {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Findings")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 { // header + 7 findings
		t.Errorf("%d rows in Findings", len(rows))
	}
}

// TestFormatsOneList: --format's help names every format of outputFormats,
// each name and alias is accepted and writes a report, and output to a
// file or buffer is never treated as a terminal (no colour, no width).
func TestFormatsOneList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", "--help"}, &out, &errb); code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	if !strings.Contains(out.String(), formatNames()) {
		t.Errorf("help lacks %q:\n%s", formatNames(), out.String())
	}
	bundle := filepath.Join(bundles, "incident-000-captures/bundle")
	for _, f := range outputFormats {
		for _, name := range append([]string{f.name}, f.aliases...) {
			p := filepath.Join(t.TempDir(), "report")
			if code := run([]string{"analyze", bundle, "--format", name, "-o", p}, &out, &errb); code != exitCritical {
				t.Errorf("--format %s: exit %d: %s", name, code, errb.String())
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil || len(b) == 0 {
				t.Errorf("--format %s wrote nothing (%v)", name, err)
			}
			if !f.binary && bytes.Contains(b, []byte("\x1b[")) {
				t.Errorf("--format %s to a file holds ANSI escapes", name)
			}
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if tty := terminalOf(f); tty.is || tty.color || tty.width != 0 {
		t.Errorf("a regular file taken for a terminal: %+v", tty)
	}
	if tty := terminalOf(&out); tty.is {
		t.Errorf("a buffer taken for a terminal: %+v", tty)
	}
}

// reportExit says that the CLI wrote a report and exited with its status
// (0 ok, 1 warning, 2 critical, 3 unknown), not that it failed: a failure
// is also 3, and says so on stderr.
func reportExit(code int, stderr string) bool {
	switch code {
	case exitOK, exitWarning, exitCritical:
		return true
	case exitUnknown:
		return !strings.Contains(stderr, "jsforensics:")
	}
	return false
}
