package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestDamageClasses applies each fixed-place damage to a copy of the
// committed v2.15.2-flat store of n1 (ORDERS: 60 messages, its one block
// ending in 17 tombstones) and checks what it cut.
func TestDamageClasses(t *testing.T) {
	src := filepath.Join("..", "bundles", "v2.15.2-flat", "bundle", "store-n1")
	for _, tc := range []struct {
		class      string
		cutSeq     uint64
		kept, cut  int
		wantRecord bool // the cut falls on a record start
	}{
		{"torn-mid-record", 30, 0, 17, false},
		{"cut-record-boundary", 41, 0, 17, true},
		{"cut-in-tombstones", 3, 2, 15, true},
	} {
		t.Run(tc.class, func(t *testing.T) {
			root := t.TempDir()
			if err := copyTree(src, root); err != nil {
				t.Fatal(err)
			}
			d, err := damageStream(root, "$G", "ORDERS", tc.class)
			if err != nil {
				t.Fatal(err)
			}
			if d.CutSeq != tc.cutSeq || d.TombstonesKept != tc.kept || d.TombstonesCut != tc.cut {
				t.Errorf("%+v, want cut in seq %d, %d tombstones kept, %d cut", d, tc.cutSeq, tc.kept, tc.cut)
			}
			fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(d.File)))
			if err != nil || fi.Size() != d.SizeAfter || d.SizeAfter >= d.SizeBefore {
				t.Fatalf("%s: %v size %v, damage says %d of %d", d.File, err, fi, d.SizeAfter, d.SizeBefore)
			}
			recs, _, err := blockRecords(filepath.Join(root, filepath.FromSlash(d.File)))
			if tc.wantRecord != (err == nil) {
				t.Errorf("records after the cut: %d, %v (cut on a record boundary: %v)", len(recs), err, tc.wantRecord)
			}
		})
	}
	// The drawn classes stay inside the block and name what they did.
	rng := rand.New(rand.NewSource(7))
	for _, class := range perturbClasses {
		root := t.TempDir()
		if err := copyTree(src, root); err != nil {
			t.Fatal(err)
		}
		stream := "ORDERS"
		if class == "block-removed" {
			stream = "LOGS" // several sealed blocks on n3 only
			root = t.TempDir()
			if err := copyTree(filepath.Join("..", "bundles", "v2.15.2-flat", "bundle", "store-n3"), root); err != nil {
				t.Fatal(err)
			}
		}
		d, err := damageAt(root, "$G", stream, class, rng)
		if err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(d.File))); (err == nil) == d.Removed {
			t.Errorf("%s: %s removed %v, stat %v", class, d.File, d.Removed, err)
		}
	}
}
