package raftlog_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// dumpWALFile frames a WAL block with storeparse and dumps every record as
// jsforensics dump wal does.
func dumpWALFile(t *testing.T, w io.Writer, file, group string, b []byte, o raftlog.DumpOptions) {
	key := group + "-" + strings.TrimSuffix(path.Base(file), ".blk")
	br, err := storeparse.NewBlockReader(file, bytes.NewReader(b), int64(len(b)), key)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := br.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := raftlog.DumpWALRecord(w, group, raftlog.DecodeWALRecord(file, walFrame(&r, br.Compressed()), r.Data), o); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDumpGolden dumps raft files of the generator's bundles; each case
// names a bundle, a server and a file pattern inside its _js_ folder, where
// {NAME} stands for the raft group of stream NAME (as /jsz reported it).
func TestDumpGolden(t *testing.T) {
	flip := func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x10; return b }
	cases := []struct {
		name, bundle, server, file string
		corrupt                    func([]byte) []byte
	}{
		{"peers", "v2.15.2-flat", "n1", "_meta_/peers.idx", nil},
		{"tav", "v2.15.2-flat", "n1", "_meta_/tav.idx", nil},
		{"tav-novote", "v2.10.22-per-server", "nats-1", "_meta_/tav.idx", nil},
		{"commit", "v2.15.2-flat", "n1", "_meta_/commit.idx", nil},
		{"snap-meta", "v2.12.1-archive", "js-a", "_meta_/snapshots/snap.*", nil},
		// ORDERS: deletes, a secure erase and a subject purge (v2.10 state).
		{"snap-stream", "v2.10.22-per-server", "nats-0", "{ORDERS}/snapshots/snap.*", nil},
		// KV_cfg: puts, a delete and a key purge (v2.15 state).
		{"snap-stream-kv", "v2.15.2-flat", "n1", "{KV_cfg}/snapshots/snap.*", nil},
		{"snap-consumer", "v2.10.22-per-server", "nats-0", "C-R3F-*/snapshots/snap.*", nil},
		{"snap-flipped", "v2.12.1-archive", "js-a", "_meta_/snapshots/snap.*", flip},
		{"wal-meta", "v2.12.1-archive", "js-a", "_meta_/msgs/*.blk", nil},
		{"wal-stream", "v2.15.2-flat", "n1", "{KV_cfg}/msgs/*.blk", nil},
		// ORDERS: deletes, purges and a 10 KB message sent compressed.
		{"wal-stream-orders", "v2.10.22-per-server", "nats-1", "{ORDERS}/msgs/*.blk", nil},
		{"wal-consumer", "v2.10.22-per-server", "nats-1", "C-R3F-*/msgs/*.blk", nil},
	}
	for _, c := range cases {
		for _, js := range []bool{false, true} {
			name := c.name
			if js {
				name += ".json"
			}
			t.Run(name, func(t *testing.T) {
				sc := bundleServer(t, c.bundle, c.server)
				pat := c.file
				if name, rest, ok := strings.Cut(strings.TrimPrefix(pat, "{"), "}"); ok && strings.HasPrefix(pat, "{") {
					i := slices.IndexFunc(sc.streams, func(s streamWant) bool { return s.Name == name })
					if i < 0 {
						t.Fatalf("%s: no stream %s", sc.label, name)
					}
					pat = sc.streams[i].Group + rest
				}
				m, _ := fs.Glob(sc.js, pat)
				if len(m) == 0 {
					t.Fatalf("%s: no file %s", sc.label, pat)
				}
				file := m[0]
				rel := sc.label + "/" + file
				group := strings.Split(file, "/")[0]
				b, err := fs.ReadFile(sc.js, file)
				if err != nil {
					t.Fatal(err)
				}
				if c.corrupt != nil {
					b = c.corrupt(b)
				}
				o := raftlog.DumpOptions{JSON: js}
				var out bytes.Buffer
				switch base := path.Base(rel); {
				case base == "peers.idx":
					err = raftlog.DumpPeerState(&out, rel, b, o)
				case base == "tav.idx":
					err = raftlog.DumpTermVote(&out, rel, b, o)
				case base == "commit.idx":
					err = raftlog.DumpCommitIndex(&out, rel, group, b, o)
				case strings.HasPrefix(base, "snap."):
					err = raftlog.DumpSnapshot(&out, rel, base, group, b, o)
				default:
					dumpWALFile(t, &out, rel, group, b, o)
				}
				if err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "golden", name+".txt")
				if *update {
					if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if !bytes.Equal(out.Bytes(), want) {
					t.Errorf("dump of %s differs from %s:\n%s", rel, golden, out.Bytes())
				}
			})
		}
	}
}
