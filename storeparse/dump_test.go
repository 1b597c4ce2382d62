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

func TestDumpGolden(t *testing.T) {
	const root = "testdata/stores/v2.15.2/jetstream/$G/streams/"
	read := func(p string) []byte {
		b, err := os.ReadFile(root + p)
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
		for _, blk := range []string{"ORDERS/msgs/1.blk", "KV_cfg-1/msgs/1.blk"} {
			var buf bytes.Buffer
			key, ok := BlockKey(root + blk)
			if !ok {
				t.Fatalf("no key from %s", blk)
			}
			b := read(blk)
			if err := DumpBlock(&buf, blk, bytes.NewReader(b), int64(len(b)), key, o); err != nil {
				t.Fatal(err)
			}
			golden(t, strings.NewReplacer("/", "_").Replace(blk)+ext, buf.Bytes())
		}
		var buf bytes.Buffer
		if err := DumpIndex(&buf, "index.db", read("ORDERS/msgs/index.db"), "ORDERS", o); err != nil {
			t.Fatal(err)
		}
		golden(t, "ORDERS_index.db"+ext, buf.Bytes())
		buf.Reset()
		if err := DumpMeta(&buf, "meta.inf", read("ORDERS/meta.inf"), read("ORDERS/meta.sum"), "ORDERS", o); err != nil {
			t.Fatal(err)
		}
		if err := DumpMeta(&buf, "meta.inf", read("ORDERS/obs/PROC/meta.inf"), read("ORDERS/obs/PROC/meta.sum"), "ORDERS/PROC", o); err != nil {
			t.Fatal(err)
		}
		golden(t, "ORDERS_meta"+ext, buf.Bytes())
		buf.Reset()
		if err := DumpConsumerState(&buf, "o.dat", read("ORDERS/obs/PROC/o.dat"), o); err != nil {
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
