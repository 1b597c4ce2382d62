package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsNeverTouchTheInput: every output flag is refused when it
// points into the bundle (a file in it, a symlink into it, a name
// beginning with "..", the archive itself, a hard link of it, the saved
// report render reads), before any work; the input stays byte-identical
// and nothing is created.
func TestOutputsNeverTouchTheInput(t *testing.T) {
	dir := copyBundle(t, filepath.Join(bundles, "v2.15.2-flat", "bundle"))
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "store-n1"), filepath.Join(outside, "into")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "n1.log"), filepath.Join(outside, "log-link")); err != nil {
		t.Fatal(err)
	}
	zip := filepath.Join(outside, "b.zip")
	if err := os.WriteFile(zip, mustRead(t, filepath.Join(bundles, "v2.12.1-archive", "bundle.zip")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(zip, filepath.Join(outside, "b-hard.zip")); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(outside, "report.json")
	if err := os.WriteFile(saved, runCLI(t, "analyze", dir, "--format", "json"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatal("fixture has no log at its top")
	}
	cases := [][]string{
		{"analyze", dir, "-o", filepath.Join(dir, "report.txt")},
		{"analyze", dir, "-o", logs[0], "--force"},
		{"analyze", dir, "--events", logs[0], "--force"},
		{"analyze", dir, "--events", filepath.Join(dir, "..events")},
		{"analyze", dir, "-o", filepath.Join(outside, "into", "r.json")},
		{"analyze", dir, "-o", filepath.Join(outside, "log-link"), "--force"},
		{"analyze", dir, "--tmpdir", filepath.Join(dir, "store-n1")},
		{"analyze", zip, "-o", zip, "--force"},
		{"analyze", zip, "-o", filepath.Join(outside, "b-hard.zip"), "--force"},
		{"render", saved, "-o", saved, "--force"},
		{"extract", dir, "--stream", "$G/ORDERS", "-o", filepath.Join(dir, "..out.jsonl")},
		{"extract", zip, "--stream", "$G/ORDERS", "-o", zip, "--force"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			before := treeDigest(t, dir) + treeDigest(t, outside)
			var out, errb bytes.Buffer
			code := run(args, &out, &errb)
			if code != exitUnknown || !strings.Contains(errb.String(), "never writes into its input") {
				t.Errorf("exit %d, stderr %q: want %d and a refusal", code, errb.String(), exitUnknown)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %d bytes to stdout before refusing", out.Len())
			}
			if after := treeDigest(t, dir) + treeDigest(t, outside); after != before {
				t.Error("the input or the folder beside it changed")
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOutputFiles: "-o -" is stdout (no file named "-"); an existing file
// is replaced only with --force; a run leaves no temporary file beside its
// output.
func TestOutputFiles(t *testing.T) {
	b, err := filepath.Abs(filepath.Join(bundles, "v2.15.2-flat", "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", b, "-o", "-", "--format", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("-o -: exit %d: %s", code, errb.String())
	}
	if !json.Valid(out.Bytes()) {
		t.Error("-o - did not write the report to stdout")
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error(`-o - created a file named "-"`)
	}
	target := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"analyze", b, "-o", target}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "--force") {
		t.Errorf("existing -o without --force: exit %d, %q", code, errb.String())
	}
	if got := string(mustRead(t, target)); got != "keep me" {
		t.Errorf("the existing file was changed without --force: %q", got)
	}
	events := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(events, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"analyze", b, "--events", events, "-o", filepath.Join(dir, "other.txt")}, &out, &errb); code != exitUnknown {
		t.Errorf("existing --events without --force: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.txt")); err == nil {
		t.Error("the report was written although --events was refused")
	}
	if code := run([]string{"analyze", b, "-o", target, "--events", events, "--force"}, &out, &errb); code != exitOK {
		t.Errorf("--force: exit %d: %s", code, errb.String())
	}
	if got := string(mustRead(t, target)); !strings.HasPrefix(got, "jsforensics ") {
		t.Errorf("--force did not replace the file: %.40q", got)
	}
	if got := mustRead(t, events); !bytes.HasPrefix(got, []byte("{")) {
		t.Errorf("--force did not replace the events file: %.40q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".jsforensics-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestOutputRemovedOnError: a failed write leaves neither the output nor
// its temporary file, and leaves a file of that name untouched.
func TestOutputRemovedOnError(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := createOutput(target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write([]byte("half a report")); err != nil {
		t.Fatal(err)
	}
	if err := o.finish(os.ErrDeadlineExceeded); err == nil {
		t.Fatal("finish dropped the error")
	}
	if got := string(mustRead(t, target)); got != "old" {
		t.Errorf("the target was replaced by a failed write: %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left, want only the old one", len(entries))
	}
}

// TestExitCodes: the exit code is nats server check's: 0 ok, 1 warnings,
// 2 critical, 3 could not judge, with a headline that says why; never an
// all-clear on what was not read.
func TestExitCodes(t *testing.T) {
	unrelated := t.TempDir()
	for name, body := range map[string]string{"notes.txt": "shopping list\nmilk\n", "photo.jpg": "\xff\xd8\xff\xe0 not really", "data.csv": "a,b\n1,2\n"} {
		if err := os.WriteFile(filepath.Join(unrelated, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	enc := filepath.Join(bundles, "encrypted-v2.15.2", "bundle")
	// A healthy bundle's .tar.gz cut at 60%, as an upload that broke off.
	whole := mustRead(t, filepath.Join(bundles, "v2.12.1-archive", "bundle.tar.gz"))
	cut := filepath.Join(t.TempDir(), "cut.tar.gz")
	if err := os.WriteFile(cut, whole[:len(whole)*6/10], 0o644); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		headline string
	}{
		{"healthy", []string{flat}, exitOK, "WHAT HAPPENED: no critical or warning finding\n"},
		{"warnings only", []string{filepath.Join(bundles, "v2.15.2-leader-kill-debug", "bundle")}, exitWarning, "WARNING"},
		{"critical", []string{filepath.Join(bundles, "incident-000-captures", "bundle")}, exitCritical, "CRITICAL"},
		{"empty folder", []string{t.TempDir()}, exitUnknown, "COULD NOT JUDGE: nothing in the bundle was recognized"},
		{"unrelated files", []string{unrelated}, exitUnknown, "COULD NOT JUDGE: nothing in the bundle was recognized"},
		{"--server naming nothing", []string{flat, "--server", "nosuch"}, exitUnknown, "COULD NOT JUDGE: --server nosuch matches no server"},
		{"--stream naming nothing", []string{flat, "--stream", "NOSUCH"}, exitUnknown, "COULD NOT JUDGE: --stream NOSUCH matches no stream"},
		{"--stream in the report's form", []string{flat, "--stream", "$G > ORDERS"}, exitOK, "WHAT HAPPENED: no critical or warning finding\n"},
		{"truncated .tar.gz of a healthy bundle", []string{cut}, exitUnknown, "COULD NOT JUDGE: the archive is cut short"},
		{"no key", []string{enc}, exitUnknown, "COULD NOT JUDGE: 24 files of enc-0's store stayed sealed"},
		{"wrong key", []string{enc, "--key", "jsf-test-wrong-key"}, exitUnknown, "the key given does not open them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"analyze"}, tc.args...), &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			head := out.String()
			if i := strings.Index(head, "\n\n"); i > 0 {
				head = head[:i+1]
			}
			// The headline wraps at the width: compared word by word.
			if words := func(s string) string { return strings.Join(strings.Fields(s), " ") }; !strings.Contains(words(head), words(tc.headline)) {
				t.Errorf("headline %q does not hold %q", head, tc.headline)
			}
			if tc.code == exitUnknown && strings.Contains(head, "WHAT HAPPENED: no critical or warning finding\n") {
				t.Error("an all-clear headline on a bundle not judged")
			}
		})
	}
}
