package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStreamGrammar: analyze, render and extract read --stream alike:
// ACCOUNT/NAME, 'ACCOUNT > NAME' and a bare NAME one account has give the
// same result; a name no stream has is answered with the bundle's streams;
// a bare name two accounts have, with the accounts; a malformed one with
// the grammar, before any work.
func TestStreamGrammar(t *testing.T) {
	flat := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	saved := filepath.Join(t.TempDir(), "report.json")
	runCLI(t, "analyze", flat, "--format", "json", "-o", saved)
	forms := []string{"$G/ORDERS", "$G > ORDERS", "$G>ORDERS", "ORDERS"}
	var first [3][]byte
	for i, s := range forms {
		dir := t.TempDir()
		out := filepath.Join(dir, "msgs.jsonl")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"extract", flat, "--stream", s, "-o", out}, &stdout, &stderr); code != exitOK {
			t.Fatalf("extract --stream %q: exit %d: %s", s, code, stderr.String())
		}
		msgs, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := [3][]byte{msgs,
			runCLI(t, "analyze", flat, "--format", "json", "--stream", s),
			runCLI(t, "render", saved, "--format", "json", "--stream", s)}
		if i == 0 {
			first = got
			if bytes.Count(msgs, []byte("\n")) == 0 || !bytes.Contains(got[1], []byte(`"name": "ORDERS"`)) {
				t.Fatalf("--stream %q: nothing extracted or reported", s)
			}
			continue
		}
		for k, what := range []string{"extract", "analyze", "render"} {
			if !bytes.Equal(got[k], first[k]) {
				t.Errorf("%s --stream %q differs from --stream %q", what, s, forms[0])
			}
		}
	}

	streams := "$G > EVENTS, $G > KV_cfg, $G > LOGS, $G > ORDERS, $G > TMP"
	for _, args := range [][]string{
		{"extract", flat, "--stream", "NOPE", "-o", filepath.Join(t.TempDir(), "x")},
		{"extract", flat, "--stream", "$G/NOPE", "-o", filepath.Join(t.TempDir(), "x")},
		{"analyze", flat, "--stream", "NOPE", "--width", "0"},
		{"render", saved, "--stream", "SHOP > NOPE", "--width", "0"},
	} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code != exitUnknown || !strings.Contains(out.String()+errb.String(), streams) {
			t.Errorf("%q: exit %d, does not list the streams:\n%s%.600s", args, code, errb.String(), out.String())
		}
	}

	for _, args := range [][]string{
		{"extract", flat, "--stream", "ORD ERS", "-o", filepath.Join(t.TempDir(), "x")},
		{"analyze", flat, "--stream", "$G/"},
		{"render", saved, "--stream", "orders.new"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "give ACCOUNT/NAME, 'ACCOUNT > NAME' or a NAME one account has") || out.Len() != 0 {
			t.Errorf("%q: exit %d: %s", args, code, errb.String())
		}
	}

	// Two accounts with an ORDERS stream: the bare name is refused, the
	// full one read.
	two := copyBundle(t, flat)
	src := filepath.Join(two, "store-n1", "$G", "streams", "ORDERS")
	dst := filepath.Join(two, "store-n1", "APP", "streams", "ORDERS")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"extract", two, "--stream", "ORDERS", "-o", filepath.Join(t.TempDir(), "x")},
		{"analyze", two, "--stream", "ORDERS"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "accounts $G, APP each have a stream ORDERS") {
			t.Errorf("%q: exit %d: %s", args, code, errb.String())
		}
	}
	if rep := runCLI(t, "analyze", two, "--format", "json", "--stream", "APP/ORDERS"); !bytes.Contains(rep, []byte(`"account": "APP"`)) {
		t.Error("analyze --stream APP/ORDERS reports no stream of APP")
	}
	if rep := runCLI(t, "analyze", two, "--format", "json", "--stream", "ORDERS", "--account", "APP"); !bytes.Contains(rep, []byte(`"account": "APP"`)) {
		t.Error("analyze --stream ORDERS --account APP reports no stream of APP")
	}
}
