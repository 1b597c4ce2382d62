package analysis

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// Damage to the container is not damage to the store: archives of real
// bundles (the committed ones, and the orphan bundle packed here the way
// zip and tar tools pack it) are damaged by small functions; what the archive
// cannot deliver is archive damage in the notes, never a store-corrupt
// finding, and the bundle's real findings stay.

// packDir packs the files of a committed directory bundle, as Go's zip and
// tar writers do (zip entries with data descriptors, like most tools).
func packDir(t testing.TB, dir, kind string) []byte {
	return packTree(t, dir, kind == "zip", true, func(rel string) string { return rel })
}

// zipEnd finds the end of central directory record: its offset, and the
// directory's offset and size.
func zipEnd(t *testing.T, b []byte) (end, dir, size int) {
	t.Helper()
	end = bytes.LastIndex(b, []byte("PK\x05\x06"))
	if end < 0 {
		t.Fatal("no end of central directory record")
	}
	return end, int(binary.LittleEndian.Uint32(b[end+16:])), int(binary.LittleEndian.Uint32(b[end+12:]))
}

// zeroCentralDirectory wipes the central directory.
func zeroCentralDirectory(t *testing.T) func([]byte) []byte {
	return func(b []byte) []byte {
		b = bytes.Clone(b)
		_, dir, size := zipEnd(t, b)
		clear(b[dir : dir+size])
		return b
	}
}

// shiftLocalOffsets moves every local header offset the directory gives
// one byte on.
func shiftLocalOffsets(t *testing.T) func([]byte) []byte {
	return func(b []byte) []byte {
		b = bytes.Clone(b)
		_, dir, size := zipEnd(t, b)
		for i := dir; i+46 <= dir+size; {
			if string(b[i:i+4]) != "PK\x01\x02" {
				t.Fatalf("no central header at %d", i)
			}
			off := binary.LittleEndian.Uint32(b[i+42:])
			binary.LittleEndian.PutUint32(b[i+42:], off+1)
			i += 46 + int(binary.LittleEndian.Uint16(b[i+28:])+binary.LittleEndian.Uint16(b[i+30:])+binary.LittleEndian.Uint16(b[i+32:]))
		}
		return b
	}
}

// flipInEntry flips one bit in the middle of the compressed data of the
// first entry whose name ends in suffix, and says which entry.
func flipInEntry(t *testing.T, suffix string, name *string) func([]byte) []byte {
	return func(b []byte) []byte {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if !strings.HasSuffix(f.Name, suffix) || f.CompressedSize64 < 16 {
				continue
			}
			off, err := f.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Clone(b)
			b[off+int64(f.CompressedSize64/2)] ^= 0x10
			*name = f.Name
			return b
		}
		t.Fatalf("no entry ending in %s", suffix)
		return nil
	}
}

func cutHalf(b []byte) []byte { return bytes.Clone(b[:len(b)/2]) }

// findingKeys lists what identifies each finding.
func findingKeys(r *report.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s %s %s %s", f.Code, f.Severity, f.Server, f.Stream, f.File))
	}
	sort.Strings(out)
	return out
}

func TestArchiveDamageIsNotStoreDamage(t *testing.T) {
	orphanDir := bundlesDir + "/orphan-v2.10.22/bundle"
	orphanZip, orphanTgz := packDir(t, orphanDir, "zip"), packDir(t, orphanDir, "tar.gz")
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	archiveZip := read(bundlesDir + "/v2.12.1-archive/bundle.zip")
	archiveTgz := read(bundlesDir + "/v2.12.1-archive/bundle.tar.gz")
	auditZip := read(bundlesDir + "/audit-gather-v2.15.2/bundle.zip")
	var flipped string
	tests := []struct {
		name   string
		ext    string
		intact []byte
		damage func([]byte) []byte
		// same: the findings equal the intact archive's (every entry is
		// still read); else torn: at least one file is not delivered.
		same bool
		note string // in some bundle note
	}{
		{"v2.12.1-archive zip, central directory zeroed", "zip", archiveZip, zeroCentralDirectory(t), true, "central directory unreadable (end record at offset"},
		{"audit-gather zip, central directory zeroed", "zip", auditZip, zeroCentralDirectory(t), true, "central directory unreadable (end record at offset"},
		{"orphan zip, central directory zeroed", "zip", orphanZip, zeroCentralDirectory(t), true, "entries read by scanning local headers"},
		{"v2.12.1-archive zip, local offsets wrong", "zip", archiveZip, shiftLocalOffsets(t), true, "read intact from its local header at offset"},
		{"orphan zip, local offsets wrong", "zip", orphanZip, shiftLocalOffsets(t), true, "read intact from its local header at offset"},
		{"orphan zip, one block's data flipped", "zip", orphanZip, flipInEntry(t, ".blk", &flipped), false, "unreadable after"},
		{"v2.12.1-archive tar.gz cut in half", "tar.gz", archiveTgz, cutHalf, false, "of the tar stream"},
		{"orphan tar.gz cut in half", "tar.gz", orphanTgz, cutHalf, false, "of the tar stream"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			intactPath := filepath.Join(dir, fmt.Sprintf("intact%d.%s", i, tc.ext))
			damagedPath := filepath.Join(dir, fmt.Sprintf("damaged%d.%s", i, tc.ext))
			damaged := tc.damage(tc.intact)
			if err := os.WriteFile(intactPath, tc.intact, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(damagedPath, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			want := analyze(t, intactPath)
			b, err := bundle.Open(damagedPath, bundle.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got := Build(Load(b), Checks, nil)
			undelivered := b.NotDelivered() // a zip read in place meets its damage while loading
			b.Close()

			if !hasNote(got, "archive damage") || !hasNote(got, tc.note) {
				t.Errorf("no archive damage note with %q in %v", tc.note, got.Notes)
			}
			for _, f := range got.Findings {
				for _, u := range undelivered {
					if f.File == u {
						t.Errorf("finding %s about %s, a file the archive did not deliver: %s", f.Code, u, f.Message)
					}
				}
				if f.Code == "store-corrupt" || f.Code == "index-mismatch" {
					t.Errorf("the archive's damage taken for store damage: %s %s: %s", f.Code, f.File, f.Message)
				}
			}
			if tc.same {
				if len(undelivered) != 0 {
					t.Errorf("files not delivered: %v", undelivered)
				}
				if g, w := findingKeys(got), findingKeys(want); strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Errorf("findings differ from the intact archive's:\n got %v\nwant %v", g, w)
				}
				if len(got.Streams) != len(want.Streams) || len(got.Servers) != len(want.Servers) {
					t.Errorf("%d streams %d servers, intact %d %d", len(got.Streams), len(got.Servers), len(want.Streams), len(want.Servers))
				}
				return
			}
			if len(undelivered) == 0 {
				t.Fatalf("no file marked not delivered; notes %v", got.Notes)
			}
			if flipped != "" && tc.ext == "zip" && !contains(undelivered, flipped) {
				t.Errorf("%s not marked undelivered: %v", flipped, undelivered)
			}
			// The real findings survive wherever the files they rest on were
			// delivered.
			gotKeys := map[string]bool{}
			for _, k := range findingKeys(got) {
				gotKeys[k] = true
			}
			for _, f := range want.Findings {
				if f.Code != "orphan-risk" || !delivered(f.File, undelivered) || !strings.Contains(tc.name, "zip") {
					continue
				}
				if k := fmt.Sprintf("%s %s %s %s %s", f.Code, f.Severity, f.Server, f.Stream, f.File); !gotKeys[k] {
					t.Errorf("real finding lost: %s", k)
				}
			}
		})
	}
}

func hasNote(r *report.Report, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// delivered says whether nothing under p (a file or a folder) was lost.
func delivered(p string, undelivered []string) bool {
	for _, u := range undelivered {
		if u == p || strings.HasPrefix(u, p+"/") {
			return false
		}
	}
	return true
}
