package bundle

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// One file is a bundle when it is what people attach to a ticket. Every
// file here is a committed bundle's own, given in place or copied under
// another name.

var flat = filepath.Join(bundlesDir, "v2.15.2-flat", "bundle")

// A server log, each kind of capture, an ack log and a client history,
// given alone, are bundles of that one file, read as in any bundle.
func TestOneFileBundle(t *testing.T) {
	tmp, _ := sandbox(t)
	for _, tc := range []struct {
		file string
		kind string // "log", "ack", or the capture kind
	}{
		{filepath.Join(flat, "n1.log"), "log"},
		{filepath.Join(flat, "n2-jsz.json"), KindJsz},
		{filepath.Join(flat, "n3-varz.json"), KindVarz},
		{filepath.Join(flat, "n1-healthz.json"), KindHealthz},
		{filepath.Join(flat, "n1-raftz.json"), KindRaftz},
		{incidentLines, KindJsz}, // natscli's envelopes, one a line
		{filepath.Join(bundlesDir, "acked-lost-v2.15.2", "bundle", "client", "ledger-acks.jsonl"), "ack"},
		{filepath.Join(bundlesDir, "acked-lost-jepsen-v2.15.2", "bundle", "client", "history.edn"), "ack"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			before := hashTree(t, tc.file)
			b, err := Open(tc.file, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(tc.file)
			var got string
			switch {
			case len(b.Logs) == 1 && len(b.Captures) == 0 && len(b.AckLogs) == 0:
				got = "log"
				if b.Logs[0].Path != name || b.Logs[0].Name != "n1" {
					t.Errorf("log %s named %q, want %s of n1", b.Logs[0].Path, b.Logs[0].Name, name)
				}
				// Its reader takes the file the sniff read.
				f, err := b.OpenLog(name)
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(f)
				f.Close()
				want, _ := os.ReadFile(tc.file)
				if err != nil || string(data) != string(want) {
					t.Errorf("the log reads %d bytes (%v), the file has %d", len(data), err, len(want))
				}
			case len(b.Captures) == 1 && len(b.Logs) == 0 && len(b.AckLogs) == 0:
				got = b.Captures[0].Kind
				if b.Captures[0].Path != name {
					t.Errorf("capture at %s, want %s", b.Captures[0].Path, name)
				}
			case len(b.AckLogs) == 1 && len(b.Logs) == 0 && len(b.Captures) == 0:
				got = "ack"
			default:
				t.Fatalf("logs %v captures %d ack logs %v", logPaths(b), len(b.Captures), b.AckLogs)
			}
			if got != tc.kind {
				t.Errorf("read as %s, want %s", got, tc.kind)
			}
			if len(b.Stores) != 0 || len(b.Problems) != 0 || b.Archive != "" || b.Root != "" {
				t.Errorf("stores %v problems %v archive %q root %q", storeDirs(b), b.Problems, b.Archive, b.Root)
			}
			if len(b.Notes) != 1 || !strings.HasPrefix(b.Notes[0], "the bundle is one file, "+name+": ") {
				t.Errorf("notes %q", b.Notes)
			}
			ents, err := fs.ReadDir(b.FS, ".")
			if err != nil || len(ents) != 1 || ents[0].Name() != name {
				t.Errorf("the bundle lists %v (%v), want only %s", ents, err, name)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(before, hashTree(t, tc.file)); d != "" {
				t.Errorf("the file changed:\n%s", d)
			}
			if left := listTree(t, tmp); len(left) != 0 {
				t.Errorf("TMPDIR holds %v", left)
			}
		})
	}
}

// A store or raft file alone is a bundle of that file, with nothing in it
// to analyze and a note that names it and the dump that reads it; its
// decoder says whether the content is one.
func TestOneStoreFile(t *testing.T) {
	_, src := sandbox(t)
	meta := filepath.Join(flat, "store-n1", "$SYS", "_js_", "_meta_")
	orders := filepath.Join(flat, "store-n1", "$G", "streams", "ORDERS")
	// A block copied out of its store, as attached to a ticket: the kind
	// is left open, the content still decodes.
	loose := filepath.Join(src, "1.blk")
	copyFile(t, filepath.Join(orders, "msgs", "1.blk"), loose)
	// A peers.idx of the wrong size: named so, but no peer state.
	torn := filepath.Join(src, "peers.idx")
	copyFile(t, filepath.Join(orders, "meta.sum"), torn)
	for _, tc := range []struct {
		file, note string
	}{
		{filepath.Join(orders, "msgs", "1.blk"), "a stream's message block, as nats-server names it, and its content decodes as one"},
		{filepath.Join(meta, "msgs", "3.blk"), "a raft group's WAL block, as nats-server names it, and its content decodes as one"},
		{loose, "a message block (a stream's, or a raft group's WAL), as nats-server names it, and its content decodes as one"},
		{filepath.Join(orders, "msgs", "index.db"), "a stream state file, as nats-server names it, and its content decodes as one"},
		{filepath.Join(orders, "meta.inf"), "meta file, as nats-server names it, and its content decodes as one"},
		{filepath.Join(orders, "meta.sum"), "the checksum of the meta.inf beside it, as nats-server names it, and its content decodes as one"},
		{filepath.Join(orders, "obs", "PROC", "o.dat"), "a consumer state file, as nats-server names it, and its content decodes as one"},
		{filepath.Join(meta, "peers.idx"), "a raft group's peer state, as nats-server names it, and its content decodes as one"},
		{filepath.Join(meta, "tav.idx"), "a raft group's term and vote, as nats-server names it, and its content decodes as one"},
		{filepath.Join(meta, "snapshots", "snap.1.11"), "a raft group's snapshot, as nats-server names it, and its content decodes as one"},
		{torn, "a raft group's peer state, as nats-server names it, and its content does not decode as one: "},
	} {
		name := "copied/" + filepath.Base(tc.file)
		if rel, err := filepath.Rel(bundlesDir, tc.file); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(tc.file); err != nil {
				t.Skip(err) // not every version writes every file
			}
			b, err := Open(tc.file, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if len(b.Stores)+len(b.Logs)+len(b.Captures)+len(b.AckLogs) != 0 {
				t.Errorf("stores %v logs %v captures %d ack logs %v", storeDirs(b), logPaths(b), len(b.Captures), b.AckLogs)
			}
			if len(b.Notes) != 1 || !strings.Contains(b.Notes[0], tc.note) || !strings.Contains(b.Notes[0], "`jsforensics dump ") ||
				!strings.Contains(b.Notes[0], "reads this file record by record") {
				t.Errorf("notes %q, want one holding %q and the dump", b.Notes, tc.note)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Any other file is no bundle: the error says what it holds and what a
// bundle is, in words, not only its first bytes.
func TestOneFileRefused(t *testing.T) {
	tmp, src := sandbox(t)
	orders := filepath.Join(flat, "store-n1", "$G", "streams", "ORDERS")
	cases := []struct{ name, from, seen string }{
		{"notes.txt", "../../README.md", `text that is not a nats-server log (its first line: "# jsforensics")`},
		{"ms-0.conf", filepath.Join(bundlesDir, "metasnap-v2.12.1", "bundle", "conf", "ms-0.conf"), "a nats-server config file"},
		{"stream.json", filepath.Join(orders, "meta.inf"), "JSON that is no monitoring answer the capture reader knows"},
		{"data.bin", filepath.Join(orders, "msgs", "1.blk"), "binary data starting "},
		{"logs.tar.gz", "../../README.md", "though named .tar.gz: no zip, tar or gzipped tar header at offset 0"},
		{"empty.log", "", "nothing: it is empty (0 bytes)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(src, tc.name)
			if tc.from == "" {
				if err := os.WriteFile(file, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				copyFile(t, tc.from, file)
			}
			b, err := Open(file, Limits{})
			if err == nil {
				b.Close()
				t.Fatalf("a bundle of %s", tc.name)
			}
			msg := err.Error()
			if !errors.Is(err, ErrNotBundle) || !strings.HasPrefix(msg, file+": not a bundle: it holds ") ||
				!strings.Contains(msg, tc.seen) || !strings.HasSuffix(msg, bundleForms) {
				t.Errorf("error %q, want ErrNotBundle saying %q and what a bundle is", msg, tc.seen)
			}
			if left := listTree(t, tmp); len(left) != 0 {
				t.Errorf("TMPDIR holds %v", left)
			}
		})
	}
	// Neither a folder nor a regular file.
	if _, err := Open(os.DevNull, Limits{}); !errors.Is(err, ErrNotBundle) || !strings.Contains(err.Error(), "it is a character device") {
		t.Errorf("%s: %v", os.DevNull, err)
	}
}

// A folder holding only an archive it cannot read names the archive and
// why in Problems: the bundle is not silently empty.
func TestFolderWithRefusedArchive(t *testing.T) {
	_, src := sandbox(t)
	folder := filepath.Join(src, "ticket")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(bundlesDir, "v2.12.1-archive", "bundle.tar.gz"), filepath.Join(folder, "bundle.tar.gz"))
	b, err := Open(folder, Limits{MaxTotalBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Stores)+len(b.Logs)+len(b.Captures) != 0 {
		t.Errorf("read past the limit: stores %v logs %v captures %d", storeDirs(b), logPaths(b), len(b.Captures))
	}
	if !hasProblem(b, "bundle.tar.gz: tar.gz archive not read: bundle limit exceeded: bundle.tar.gz: entry ") ||
		!hasProblem(b, "past the 65536-byte total limit") {
		t.Errorf("the refused archive is not named with why: %v", b.Problems)
	}
}
