package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestSharedRemedyOnFixtures: on the incident fixtures whose corrupt peer
// ids each get a peer-id-corrupt finding, the text and Markdown reports
// print that remedy once, for the ids of those findings, and still hold
// every command of every finding's remedy (nothing of a remedy is lost by
// printing it once); the JSON keeps each finding's own remedy.
func TestSharedRemedyOnFixtures(t *testing.T) {
	for _, fx := range []string{"v2.10.22-incident-phantom-peers", "v2.12.4-incident-phantom-peers"} {
		t.Run(fx, func(t *testing.T) {
			dir := filepath.Join(bundles, fx, "bundle")
			var r report.Report
			if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json"), &r); err != nil {
				t.Fatal(err)
			}
			var corrupt []report.Finding
			for _, f := range r.Findings {
				if f.Code == "peer-id-corrupt" {
					corrupt = append(corrupt, f)
				}
			}
			if len(corrupt) < 2 {
				t.Fatalf("%d peer-id-corrupt findings, want several", len(corrupt))
			}
			for _, f := range corrupt {
				if !strings.Contains(f.Remedy, "What this destroys") || !strings.Contains(f.Remedy, f.Peer) {
					t.Errorf("JSON: %s's remedy is not its own: %s", f.Peer, f.Remedy)
				}
			}
			// Compared with white space folded: the text report wraps prose
			// and puts a command's trailing comment on a line of its own.
			fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			first, _, _ := strings.Cut(corrupt[0].Remedy, "\n")
			first = fold(first)
			for _, format := range []string{"text", "markdown"} {
				out := fold(string(runCLI(t, "analyze", dir, "--format", format)))
				if n := strings.Count(out, first); n != 1 {
					t.Errorf("%s: the peer-id-corrupt remedy printed %d times, want once", format, n)
				}
				for _, f := range r.Findings {
					for _, line := range strings.Split(f.Remedy, "\n")[1:] {
						if cmd, ok := strings.CutPrefix(line, "  "); ok && !strings.Contains(out, fold(cmd)) {
							t.Errorf("%s: %s's command %q is not in the report", format, f.Code, cmd)
						}
					}
				}
			}
		})
	}
}
