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
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			for i, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Fatalf("--json line %d is not JSON: %s", i+1, l)
				}
			}
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
	b[40] ^= 0x10
	p := filepath.Join(dir, "1.blk")
	if err := os.WriteFile(p, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dump", "blk", p}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "offset") {
		t.Errorf("no problem with an offset printed:\n%s", out.String())
	}
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
