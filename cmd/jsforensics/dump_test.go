package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpEverySubcommand runs each dump subcommand on a file a real
// v2.15.2 server wrote, in text and JSON lines, and checks the file is left
// as it was.
func TestDumpEverySubcommand(t *testing.T) {
	store := filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1")
	meta := filepath.Join(store, "$SYS/_js_/_meta_")
	orders := filepath.Join(store, "$G/streams/ORDERS")
	for _, tc := range []struct {
		sub, file, want string
	}{
		{"blk", filepath.Join(orders, "msgs/1.blk"), "record"},
		{"index", filepath.Join(orders, "msgs/index.db"), "block"},
		{"meta", filepath.Join(orders, "meta.inf"), "ORDERS"},
		{"odat", filepath.Join(orders, "obs/PROC/o.dat"), "ack"},
		{"peers", filepath.Join(meta, "peers.idx"), "fjFyEjc1"},
		{"tav", filepath.Join(meta, "tav.idx"), "term"},
		{"commit", filepath.Join(meta, "commit.idx"), "commit"},
		{"snap", filepath.Join(meta, "snapshots/snap.1.11"), "ORDERS"},
		{"wal", filepath.Join(meta, "msgs/3.blk"), "term"},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			before, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run([]string{"dump", tc.sub, tc.file}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if !strings.Contains(strings.ToLower(out.String()), strings.ToLower(tc.want)) {
				t.Errorf("text output lacks %q:\n%s", tc.want, out.String())
			}
			out.Reset()
			if code := run([]string{"dump", tc.sub, "--json", tc.file}, &out, &errb); code != exitOK {
				t.Fatalf("--json exit %d: %s", code, errb.String())
			}
			checkDumpLines(t, tc.file, out.Bytes())
			after, _ := os.ReadFile(tc.file)
			if !bytes.Equal(before, after) {
				t.Fatal("dump changed the file")
			}
		})
	}
}

// TestDumpBrokenFile: a dump works on a damaged copy and says where.
func TestDumpBrokenFile(t *testing.T) {
	src := filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1/$G/streams/ORDERS/msgs/1.blk")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ORDERS", "msgs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "1.blk")

	// A torn tail alone, as a crash leaves it: a warning, and every record
	// before it printed.
	if err := os.WriteFile(p, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dump", "blk", p}, &out, &errb); code != exitWarning || !strings.Contains(errb.String(), "torn tail") {
		t.Fatalf("torn tail: exit %d, want %d: %s", code, exitWarning, errb.String())
	}
	whole := string(runCLI(t, "dump", "blk", "--checksum-key", "ORDERS-1", src))
	if n := strings.Count(out.String(), "\nrecord "); n == 0 || n != strings.Count(whole, "\nrecord ")-1 {
		t.Errorf("torn tail: %d records printed, want all but the last of:\n%s", n, whole)
	}

	// A checksum failing inside the block as well: critical.
	b[40] ^= 0x10
	if err := os.WriteFile(p, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"dump", "blk", p}, &out, &errb); code != exitCritical || !strings.Contains(errb.String(), "damaged inside") {
		t.Fatalf("bad checksum: exit %d, want %d: %s", code, exitCritical, errb.String())
	}
	if !strings.Contains(out.String(), "offset") {
		t.Errorf("no problem with an offset printed:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"dump", "blk", "--json", p}, &out, &errb); code != exitCritical {
		t.Fatalf("--json exit %d: %s", code, errb.String())
	}
	errorsWithOffset := 0
	for _, l := range checkDumpLines(t, p, out.Bytes()) {
		if l["record"] == "error" && l["offset"] != nil {
			errorsWithOffset++
		}
	}
	if errorsWithOffset == 0 {
		t.Errorf("no error line with an offset:\n%s", out.String())
	}
}

// checkDumpLines holds every --json line to the one schema of all dumps
// (internal/jsonl): an object with "file" (as given) and "record"; an
// "offset", when present, a byte offset inside the file; "error" exactly
// on the lines whose record is "error".
func checkDumpLines(t *testing.T, file string, out []byte) []map[string]any {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for i, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("--json line %d is not a JSON object: %s", i+1, l)
		}
		if m["file"] != file {
			t.Errorf("line %d: file %v, want %q", i+1, m["file"], file)
		}
		rec, ok := m["record"].(string)
		if !ok || rec == "" {
			t.Errorf("line %d: no record kind: %s", i+1, l)
		}
		if _, hasErr := m["error"]; hasErr != (rec == "error") {
			t.Errorf("line %d: record %q with error %v", i+1, rec, m["error"])
		}
		if off, ok := m["offset"]; ok {
			if n, isNum := off.(float64); !isNum || n < 0 || n > float64(fi.Size()) {
				t.Errorf("line %d: offset %v outside the %d-byte file", i+1, off, fi.Size())
			}
		}
		lines = append(lines, m)
	}
	return lines
}

// TestDumpRelativePath runs dump blk and dump index from inside the
// stream's msgs folder with bare file names: the checksum key still comes
// from the stream folder above, so every record checks out.
func TestDumpRelativePath(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1/$G/streams/ORDERS/msgs"))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if code := run([]string{"dump", "blk", "--json", filepath.Join(abs, "1.blk")}, &want, &bytes.Buffer{}); code != exitOK {
		t.Fatal("dump with an absolute path failed")
	}
	t.Chdir(abs)
	for _, args := range [][]string{{"dump", "blk", "--json", "1.blk"}, {"dump", "blk", "--json", "./1.blk"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if strings.Count(out.String(), `"checksum_ok":true`) != strings.Count(want.String(), `"checksum_ok":true`) || strings.Contains(out.String(), `"checksum_ok":false`) {
			t.Errorf("%v reads differently from the absolute path:\n%s", args, out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dump", "index", "index.db"}, &out, &errb); code != exitOK || strings.Contains(out.String(), "checksum mismatch") {
		t.Errorf("dump index index.db: exit %d %s%s", code, out.String(), errb.String())
	}
}

// TestDumpNeedsType: dump without a file type is a usage error naming the
// types, never its help with exit 0.
func TestDumpNeedsType(t *testing.T) {
	file := filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1/$G/streams/ORDERS/msgs/1.blk")
	for _, args := range [][]string{{"dump"}, {"dump", file}} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code != exitUnknown || !strings.Contains(errb.String(), "usage: jsforensics dump TYPE FILE") || !strings.Contains(errb.String(), "blk, commit, index") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q", args, out.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dump", "--help"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "blk") {
		t.Errorf("dump --help: exit %d, %q", code, out.String())
	}
}

// TestDumpBlkOnOtherFiles: dump blk of a file that is not a message block
// says so, and what it looks like; a real block outside a stream folder
// still asks for its checksum key.
func TestDumpBlkOnOtherFiles(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte("# cluster config\nlisten: 4222\njetstream {store_dir: /data}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"dump", "blk", conf}, &out, &errb)
	if code != exitUnknown || !strings.Contains(errb.String(), "is not a message block") ||
		!strings.Contains(errb.String(), `looks like text: "# cluster config"`) || strings.Contains(errb.String(), "checksum key") {
		t.Errorf("nats.conf: exit %d, stderr %q", code, errb.String())
	}

	blk, err := os.ReadFile(filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1/$G/streams/ORDERS/msgs/1.blk"))
	if err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "copy.blk")
	if err := os.WriteFile(loose, blk, 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run([]string{"dump", "blk", loose}, &out, &errb); code != exitUnknown || !strings.Contains(errb.String(), "give --checksum-key") {
		t.Errorf("a block outside its stream folder: exit %d, stderr %q", code, errb.String())
	}
}

func TestLooksLike(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"listen: 4222\nport: 1\n", `it looks like text: "listen: 4222"`},
		{"  {\"a\": 1}", `it looks like JSON: "{\"a\": 1}"`},
		{"\x1f\x8b\x08\x00", "it looks like gzip"},
		{"PK\x03\x04rest", "it looks like a zip archive"},
		{"\x00\x01\x02\xff", "first bytes 00 01 02 ff"},
		{strings.Repeat("x", 70), `it looks like text: "` + strings.Repeat("x", 60) + `…"`},
		{"caf\xc3", `it looks like text: "caf\xc3"`}, // a rune cut at the end of what was read
		{"", "no bytes could be read"},
	} {
		if got := looksLike([]byte(tc.in)); got != tc.want {
			t.Errorf("looksLike(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
