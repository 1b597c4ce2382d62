package storeparse

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata/golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n%s", name, got)
	}
}

// TestDumpGolden dumps files of the v2.15.2-flat bundle: from n1 ORDERS
// (deletes, a secure erase, a subject purge, headers, a 10 KB message;
// consumer PROC) and KV_cfg, from n3 LOGS (an S2-compressed block; index.db
// alone knowing the max_bytes removals).
func TestDumpGolden(t *testing.T) {
	n1 := filepath.Join(store(t, "v2.15.2-flat", "n1").Root, "$G", "streams")
	n3 := filepath.Join(store(t, "v2.15.2-flat", "n3").Root, "$G", "streams")
	read := func(root, p string) []byte {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, js := range []bool{false, true} {
		ext := ".txt"
		if js {
			ext = ".jsonl"
		}
		o := DumpOptions{JSON: js}
		for _, blk := range []struct{ root, p string }{{n1, "ORDERS/msgs/1.blk"}, {n1, "KV_cfg/msgs/1.blk"}, {n3, "LOGS/msgs/6.blk"}} {
			var buf bytes.Buffer
			key, ok := BlockKey(filepath.Join(blk.root, blk.p))
			if !ok {
				t.Fatalf("no key from %s", blk.p)
			}
			b := read(blk.root, blk.p)
			if err := DumpBlock(&buf, blk.p, bytes.NewReader(b), int64(len(b)), key, o); err != nil {
				t.Fatal(err)
			}
			golden(t, strings.NewReplacer("/", "_").Replace(blk.p)+ext, buf.Bytes())
		}
		for _, idx := range []struct{ root, stream string }{{n1, "ORDERS"}, {n3, "LOGS"}} {
			var buf bytes.Buffer
			if err := DumpIndex(&buf, "index.db", read(idx.root, idx.stream+"/msgs/index.db"), idx.stream, o); err != nil {
				t.Fatal(err)
			}
			golden(t, idx.stream+"_index.db"+ext, buf.Bytes())
		}
		var buf bytes.Buffer
		if err := DumpMeta(&buf, "meta.inf", read(n1, "ORDERS/meta.inf"), read(n1, "ORDERS/meta.sum"), "ORDERS", o); err != nil {
			t.Fatal(err)
		}
		if err := DumpMeta(&buf, "meta.inf", read(n1, "ORDERS/obs/PROC/meta.inf"), read(n1, "ORDERS/obs/PROC/meta.sum"), "ORDERS/PROC", o); err != nil {
			t.Fatal(err)
		}
		golden(t, "ORDERS_meta"+ext, buf.Bytes())
		buf.Reset()
		if err := DumpConsumerState(&buf, "o.dat", read(n1, "ORDERS/obs/PROC/o.dat"), o); err != nil {
			t.Fatal(err)
		}
		golden(t, "ORDERS_PROC_o.dat"+ext, buf.Bytes())
	}
}

func TestBlockKey(t *testing.T) {
	for p, want := range map[string]string{
		"b/n1/jetstream/$G/streams/ORDERS/msgs/12.blk":  "ORDERS-12",
		`C:\x\$SYS\_js_\_meta_\msgs\2.blk`:              "_meta_-2",
		"jetstream/$SYS/_js_/S-R3F-7O35jXyB/msgs/1.blk": "S-R3F-7O35jXyB-1",
		"msgs/1.blk.tmp": "",
		"1.blk":          "",
	} {
		got, ok := BlockKey(p)
		if got != want || ok != (want != "") {
			t.Errorf("BlockKey(%q) = %q %v, want %q", p, got, ok, want)
		}
	}
}
