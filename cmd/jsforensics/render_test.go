package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// fixtureDirs are the committed bundles as directories.
func fixtureDirs(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(bundles, "*/bundle"))
	if len(dirs) == 0 {
		t.Fatal("no committed bundles")
	}
	return dirs
}

// runCLI runs the CLI and fails unless it wrote a report (reportExit).
func runCLI(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); !reportExit(code, errb.String()) {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.Bytes()
}

// fileOut runs the CLI with -o and returns the file's bytes.
func fileOut(t *testing.T, args ...string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out")
	runCLI(t, append(args, "-o", p)...)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderReproducesAnalyze: for every fixture and every output format,
// render of the saved JSON report writes the very bytes analyze wrote,
// with and without --verbose and a filter.
func TestRenderReproducesAnalyze(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(strings.TrimPrefix(dir, bundles+"/"), func(t *testing.T) {
			saved := filepath.Join(t.TempDir(), "report.json")
			if err := os.WriteFile(saved, fileOut(t, "analyze", dir, "--format", "json"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, f := range outputFormats {
				variants := [][]string{nil}
				if !f.binary { // the flags change no binary format's layout
					variants = append(variants, []string{"--verbose"}, []string{"--server", "nats-0"})
				}
				for _, extra := range variants {
					args := append([]string{"--format", f.name}, extra...)
					want := fileOut(t, append([]string{"analyze", dir}, args...)...)
					got := fileOut(t, append([]string{"render", saved}, args...)...)
					if !bytes.Equal(got, want) {
						t.Errorf("render %v differs from analyze (%d and %d bytes)", args, len(got), len(want))
					}
				}
			}
		})
	}
}

// timelineLine is an excerpt line of the text report: indented, a time,
// then server, kind and text.
var timelineLine = regexp.MustCompile(`^\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `)

// TestDiagnosisFirst: the first incident's text report, from its captures
// and from its recreated stores, opens with a diagnosis of at most 6
// lines that names the five corrupted ids, the inflated size 10, the
// quorum 6, the 5 servers and the first step of the remedy; no timeline
// line appears twice, while --verbose shows every finding's own excerpt.
func TestDiagnosisFirst(t *testing.T) {
	ids := []string{`\"kCGheKT`, "cnr4t3eg", "cnrtu3eg", "yrzKKR@u", "yrzKKRBt"}
	for _, b := range []string{"incident-000-captures", "v2.10.22-incident-phantom-peers"} {
		t.Run(b, func(t *testing.T) {
			dir := filepath.Join(bundles, b, "bundle")
			var rep report.Report
			if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json"), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Diagnosis) == 0 {
				t.Fatal("no diagnosis in the JSON")
			}
			// Six lines unwrapped: the diagnosis is short, not narrow.
			lines := strings.Split(string(runCLI(t, "analyze", dir, "--width", "0")), "\n")
			end := 1
			for end < len(lines) && lines[end] != "" {
				end++
			}
			diag := strings.Join(lines[1:end], "\n")
			if n := end - 1; n == 0 || n > 6 {
				t.Fatalf("diagnosis of %d lines:\n%s", n, diag)
			}
			if !strings.HasPrefix(diag, "WHAT HAPPENED, WHAT TO DO FIRST\n1. CRITICAL ") {
				t.Errorf("the report does not open with the diagnosis:\n%s", diag)
			}
			for _, want := range append(ids, "to 10 peers", "quorum of 6", "with the 5 peers", "first: What this destroys: ", "Save first: back up every server's store", "Add 1 temporary JetStream server") {
				if !strings.Contains(diag, want) {
					t.Errorf("diagnosis lacks %q:\n%s", want, diag)
				}
			}
			// The excerpts, before the whole timeline the report ends with.
			excerpts := func(lines []string) []string {
				for i, l := range lines {
					if strings.HasPrefix(l, "TIMELINE (") {
						return lines[:i]
					}
				}
				return lines
			}
			seen := map[string]bool{}
			excerpt := 0
			for _, l := range excerpts(lines) {
				if !timelineLine.MatchString(l) {
					continue
				}
				excerpt++
				if seen[strings.TrimSpace(l)] {
					t.Errorf("timeline line twice: %s", l)
				}
				seen[strings.TrimSpace(l)] = true
			}
			if excerpt == 0 {
				t.Error("no timeline excerpt under the cause")
			}
			verbose := 0
			for _, l := range excerpts(strings.Split(string(runCLI(t, "analyze", dir, "--verbose", "--width", "0")), "\n")) {
				if timelineLine.MatchString(l) {
					verbose++
				}
			}
			refs := len(rep.Diagnosis[0].TimelineRefs)
			for _, f := range rep.Findings {
				refs += len(f.TimelineRefs)
			}
			if verbose != refs {
				t.Errorf("--verbose shows %d timeline lines, the cause and findings reference %d", verbose, refs)
			}
		})
	}
}

// TestRenderRefusesBrokenReports: a saved report cut short, or rewritten
// to another schema, fails with exit 1 and a message naming the file,
// and nothing is written.
func TestRenderRefusesBrokenReports(t *testing.T) {
	saved := runCLI(t, "analyze", filepath.Join(bundles, "incident-000-captures", "bundle"), "--format", "json")
	for name, broken := range map[string][]byte{
		"truncated":    saved[:len(saved)/2],
		"other schema": bytes.Replace(saved, []byte(report.Schema), []byte("jsforensics.report/v9"), 1),
	} {
		p := filepath.Join(t.TempDir(), "report.json")
		if err := os.WriteFile(p, broken, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if code := run([]string{"render", p}, &out, &errb); code != exitUnknown || out.Len() != 0 || !strings.Contains(errb.String(), p) {
			t.Errorf("%s: exit %d, stdout %d bytes, stderr %q", name, code, out.Len(), errb.String())
		}
	}
}
