package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECommands: the two commands README gives a newcomer are what
// the repository runs. The sample analyze names a committed bundle, which
// gives a diagnosis (exit 2, a critical cause), and README's first screen
// of it is what `--brief` prints; the test command is the one .ci/run
// runs.
func TestREADMECommands(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## The two commands a newcomer needs\n")
	if !ok {
		t.Fatal("README has no section 'The two commands a newcomer needs'")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := fenced(section, "```sh\n")
	if len(blocks) != 2 {
		t.Fatalf("the section holds %d sh blocks, want 2: %q", len(blocks), blocks)
	}
	analyze, test := strings.TrimSpace(blocks[0]), strings.TrimSpace(blocks[1])

	args, ok := strings.CutPrefix(analyze, "go run ./cmd/jsforensics ")
	if !ok || !strings.HasPrefix(args, "analyze ") || strings.Contains(args, "\n") {
		t.Fatalf("first command %q is not one go run ./cmd/jsforensics analyze", analyze)
	}
	argv := strings.Fields(args)
	bundle := argv[len(argv)-1]
	if _, err := os.Stat(filepath.Join(root, bundle)); err != nil {
		t.Fatalf("README analyzes %s: %v", bundle, err)
	}
	t.Chdir(root) // README's commands run from the clone's root
	var out, errb bytes.Buffer
	if code := run(argv, &out, &errb); code != exitCritical {
		t.Errorf("%s: exit %d, want %d (a critical cause); stderr %q", analyze, code, exitCritical, errb.String())
	}
	if !strings.Contains(out.String(), "WHAT HAPPENED, WHAT TO DO FIRST\n1. CRITICAL ") {
		t.Errorf("%s gives no diagnosis:\n%s", analyze, out.String())
	}
	// README's first screen: "This is the run above with `--brief`".
	_, after, _ := strings.Cut(string(readme), "This is the run above with `--brief`:\n")
	shown := fenced(after, "```\n")
	if len(shown) == 0 {
		t.Fatal("README shows no --brief output")
	}
	out.Reset()
	errb.Reset()
	run(append(argv, "--brief"), &out, &errb)
	if out.String() != shown[0] {
		t.Errorf("README's --brief screen is not what %s --brief prints:\n--- README\n%s--- printed\n%s", analyze, shown[0], out.String())
	}

	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	runs := false
	for _, line := range strings.Split(string(ci), "\n") {
		runs = runs || strings.TrimSpace(line) == test
	}
	if !runs || strings.Contains(test, "\n") {
		t.Errorf("README's test command %q is not a command of .ci/run", test)
	}
}

// fenced returns the bodies of the code blocks of s that open with open
// ("```sh\n"), in order.
func fenced(s, open string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(s, open)
		if !ok {
			return out
		}
		body, tail, ok := strings.Cut(rest, "```\n")
		if !ok {
			return out
		}
		out = append(out, body)
		s = tail
	}
}
