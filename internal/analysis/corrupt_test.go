package analysis

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// The store these tests break: a real v2.15.2 stream whose one block holds
// 40 records (seq 1 at offset 0, each plain record 58 bytes up to seq 4),
// written by the generator into the v2.15.2-flat bundle.
const (
	corruptBundle = bundlesDir + "/v2.15.2-flat/bundle"
	eventsDir     = "store-n1/$G/streams/EVENTS"
	eventsBlock   = eventsDir + "/msgs/1.blk"
)

// copyTree copies a fixture into a temporary folder so it can be broken.
func copyTree(t *testing.T, src string) string { return copyTreeTB(t, src) }

// copyTreeTB is copyTree for tests and benchmarks.
func copyTreeTB(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func rewrite(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipBit(off, bit int) func([]byte) []byte {
	return func(b []byte) []byte { b[off] ^= 1 << bit; return b }
}

func truncateAt(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }

func zeroFrom(n int) func([]byte) []byte {
	return func(b []byte) []byte {
		for i := n; i < len(b); i++ {
			b[i] = 0
		}
		return b
	}
}

// TestCorruptionsGiveFindings breaks copies of real files in the ways disks
// and crashes do, and checks each gives its finding on the exact file, at
// the exact offset or sequence.
func TestCorruptionsGiveFindings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string
		corrupt func([]byte) []byte
		// want: the finding expected on file (relative to the bundle).
		code, wantFile, kind string
		seq                  uint64
		offset               int64 // -1: not checked
		lost                 *report.Range
	}{
		{name: "payload bit flip", file: eventsBlock, corrupt: flipBit(58+22+15+5, 3),
			code: "store-corrupt", wantFile: eventsBlock, kind: "checksum", seq: 2, offset: 58},
		{name: "record length bit flip", file: eventsBlock, corrupt: flipBit(116+2, 4),
			code: "store-corrupt", wantFile: eventsBlock, seq: 0, offset: 116},
		// seq 3 was deleted (index.db says so): 4-40 are the messages lost.
		{name: "truncated mid-record", file: eventsBlock, corrupt: truncateAt(116 + 30),
			code: "store-corrupt", wantFile: eventsBlock, offset: 116, lost: &report.Range{First: 4, Last: 40}},
		{name: "zeroed tail", file: eventsBlock, corrupt: zeroFrom(174),
			code: "store-corrupt", wantFile: eventsBlock, offset: 174, lost: &report.Range{First: 4, Last: 40}},
		{name: "meta.sum no longer matches", file: eventsDir + "/meta.sum", corrupt: func(b []byte) []byte { b[0] ^= 1; return b },
			code: "store-corrupt", wantFile: eventsDir + "/meta.sum", kind: "meta-checksum", offset: -1},
		{name: "garbage index.db", file: eventsDir + "/msgs/index.db", corrupt: func(b []byte) []byte { return bytes.Repeat([]byte{0xa5}, len(b)) },
			code: "store-corrupt", wantFile: eventsDir + "/msgs/index.db", kind: "index", offset: -1},
		// index.db written when the block held all 40 records, the block
		// cut back to 4 whole records, as after losing its later writes:
		// index.db is now from an older (larger) state than the blocks.
		{name: "index.db from an older state", file: eventsBlock, corrupt: truncateAt(174 + 95),
			code: "index-mismatch", wantFile: eventsDir + "/msgs/index.db", offset: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, corruptBundle)
			rewrite(t, filepath.Join(dir, filepath.FromSlash(tc.file)), tc.corrupt)
			rep, err := Run(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got *report.Finding
			for i, f := range rep.Findings {
				if f.Code == tc.code && f.File == tc.wantFile {
					got = &rep.Findings[i]
					break
				}
			}
			if got == nil {
				t.Fatalf("no %s on %s; findings: %s", tc.code, tc.wantFile, summarize(rep.Findings))
			}
			if got.Server != "n1" || (tc.code == "index-mismatch" && got.Stream != "EVENTS") {
				t.Errorf("finding names server %q stream %q", got.Server, got.Stream)
			}
			if tc.kind != "" && got.Kind != tc.kind {
				t.Errorf("kind %q, want %q", got.Kind, tc.kind)
			}
			if tc.seq != 0 && got.Seq != tc.seq {
				t.Errorf("seq %d, want %d", got.Seq, tc.seq)
			}
			if tc.offset >= 0 && (got.Offset == nil || *got.Offset != tc.offset) {
				t.Errorf("offset %v, want %d", got.Offset, tc.offset)
			}
			if tc.lost != nil && (len(got.Ranges) != 1 || got.Ranges[0] != *tc.lost) {
				t.Errorf("lost ranges %v, want %v", got.Ranges, *tc.lost)
			}
			// Everything else in the bundle is still read: the other streams
			// of every server are there.
			if len(rep.Streams) < 4 {
				t.Errorf("only %d streams after one bad file", len(rep.Streams))
			}
		})
	}
}

func summarize(fs []report.Finding) string {
	var s []string
	for _, f := range fs {
		off := "-"
		if f.Offset != nil {
			off = fmt.Sprint(*f.Offset)
		}
		s = append(s, fmt.Sprintf("%s/%s %s@%s seq %d ranges %v: %s", f.Code, f.Kind, f.File, off, f.Seq, f.Ranges, f.Message))
	}
	return "\n  " + strings.Join(s, "\n  ")
}

// TestNamesFoundByContent renames every folder and file of a real bundle to
// names that say nothing (as volume claims and support tooling do): the
// servers are still named, from their log banners and captures, each store
// tied to its server by its own raft and meta state.
func TestNamesFoundByContent(t *testing.T) {
	src := bundlesDir + "/v2.15.2-flat/bundle"
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		// store-n1 -> vol-0, n1.log -> 1.txt, n1-jsz.json -> 2.json, …
		name := fmt.Sprintf("%d.txt", i)
		if strings.HasSuffix(e.Name(), ".json") {
			name = fmt.Sprintf("%d.json", i)
		}
		if e.IsDir() {
			name = fmt.Sprintf("vol-%d", i)
			copied := copyTree(t, filepath.Join(src, e.Name()))
			if err := os.Rename(copied, filepath.Join(dst, name)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]bool{}
	for _, st := range rep.Streams {
		for _, d := range st.OnDisk {
			stores[d.Server] = true
		}
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !stores[n] {
			t.Errorf("no store attributed to %s; servers %v, notes %v", n, names(rep.Servers), rep.Notes)
		}
	}
	for _, s := range rep.Servers {
		if s.NameSource == "unknown" {
			t.Errorf("server %s not named", s.Name)
		}
	}
	for _, f := range rep.Findings {
		if f.Severity == report.Critical {
			t.Errorf("critical %s: %s", f.Code, f.Message)
		}
	}
}
