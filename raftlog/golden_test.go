package raftlog_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path"
	"path/filepath"
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
		if r.Tombstone {
			io.WriteString(w, "tombstone\n")
			continue
		}
		if err := raftlog.DumpWALRecord(w, file, group, r.Seq, r.Offset+22+int64(len(r.Subject)), r.Data, o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDumpGolden(t *testing.T) {
	const root = "testdata/real"
	flip := func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x10; return b }
	cases := []struct {
		name, file, group string
		corrupt           func([]byte) []byte
	}{
		{"peers", "v2.15.2/n1/_meta_/peers.idx", "_meta_", nil},
		{"tav", "v2.15.2/n1/_meta_/tav.idx", "_meta_", nil},
		{"tav-novote", "v2.10.22/n2/_meta_/tav.idx", "_meta_", nil},
		{"commit", "v2.15.2/n1/_meta_/commit.idx", "_meta_", nil},
		{"snap-meta", "v2.12.1/n1/_meta_/snapshots/", "_meta_", nil},
		{"snap-stream", "v2.10.22/n1/S-R3F-L49bFXn7/snapshots/", "", nil},
		{"snap-stream-purged", "v2.10.22/n1/S-R3F-zNrxmMOu/snapshots/", "", nil},
		{"snap-consumer", "v2.10.22/n1/C-R3F-*/snapshots/", "", nil},
		{"snap-flipped", "v2.12.1/n1/_meta_/snapshots/", "_meta_", flip},
		{"wal-meta", "v2.12.1/n2/_meta_/msgs/*.blk", "_meta_", nil},
		{"wal-stream", "v2.15.2/n1/S-R3F-*/msgs/*.blk", "", nil},
		{"wal-consumer", "v2.10.22/n2/C-R3F-*/msgs/*.blk", "", nil},
	}
	for _, c := range cases {
		for _, js := range []bool{false, true} {
			name := c.name
			if js {
				name += ".json"
			}
			t.Run(name, func(t *testing.T) {
				pat := root + "/" + c.file
				if strings.HasSuffix(c.file, "/") {
					pat += "snap.*"
				}
				m, _ := filepath.Glob(pat)
				if len(m) == 0 {
					t.Fatalf("no file %s", pat)
				}
				file := m[0]
				rel, _ := filepath.Rel(root, file)
				rel = filepath.ToSlash(rel)
				group := c.group
				if group == "" {
					group = strings.Split(rel, "/")[2]
				}
				b, err := os.ReadFile(file)
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
