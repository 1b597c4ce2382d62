package storeparse

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIndexVersions(t *testing.T) {
	wantVer := map[string]byte{"v2.10.22": 1, "v2.12.1": 3, "v2.15.2": 4}
	for v, ver := range wantVer {
		d := readJSZ(t, v)
		for _, st := range d.AccountDetails[0].Streams {
			p := filepath.Join("testdata/stores", v, "jetstream/$G/streams", st.Name, "msgs/index.db")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			x, err := ParseIndex(p, b, st.Name)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if x.Version != ver || !x.ChecksumOK || x.Trailing != 0 {
				t.Errorf("%s: version %d checksum %v trailing %d", p, x.Version, x.ChecksumOK, x.Trailing)
			}
			var dels uint64
			for _, blk := range x.Blocks {
				dels += uint64(blk.Deleted.Len())
				if uint64(blk.Deleted.Len()) != blk.NumDeleted {
					t.Errorf("%s: %v holds %d", p, blk, blk.Deleted.Len())
				}
			}
			if dels != st.State.NumDeleted || x.Msgs != st.State.Msgs || x.Bytes != st.State.Bytes {
				t.Errorf("%s: %d msgs %d bytes %d deleted, /jsz %+v", p, x.Msgs, x.Bytes, dels, st.State)
			}
			if _, err := ParseIndex(p, b, "wrong"); err == nil {
				t.Errorf("%s: wrong key accepted", p)
			}
		}
	}
}

func TestOrdersDeleteMap(t *testing.T) {
	// ORDERS: seq 2 deleted, seq 3 securely erased (see testdata/stores).
	for _, v := range storeVersions(t) {
		sc := scanFixture(t, v, "ORDERS")
		got := sc.Blocks[0].Deleted()
		if len(got) != 1 || got[0] != (SeqRange{2, 3}) {
			t.Errorf("%s: blocks delete map %v, want 2-3", v, got)
		}
		ib, _ := sc.Index.Block(1)
		if s := ib.Deleted.Seqs(0); len(s) != 2 || s[0] != 2 || s[1] != 3 {
			t.Errorf("%s: index.db delete map %v", v, s)
		}
		if sc.Blocks[0].Tombstones != 2 || sc.Blocks[0].Erased != 1 {
			t.Errorf("%s: %d tombstones %d erased", v, sc.Blocks[0].Tombstones, sc.Blocks[0].Erased)
		}
	}
}

func BenchmarkScanStreamFixtures(b *testing.B) {
	fsys := os.DirFS("testdata/stores/v2.15.2/jetstream")
	var size int64
	for _, st := range []string{"ORDERS", "KV_cfg-1", "PLAIN"} {
		m, _ := filepath.Glob("testdata/stores/v2.15.2/jetstream/$G/streams/" + st + "/msgs/*.blk")
		for _, f := range m {
			fi, _ := os.Stat(f)
			size += fi.Size()
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, st := range []string{"ORDERS", "KV_cfg-1", "PLAIN"} {
			if _, err := ScanStream(fsys, "$G/streams/"+st, ScanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkScanStream scans every stream folder under $JSF_BIG_STORE (a
// jetstream root, an account folder's streams/, or one stream folder).
func BenchmarkScanStream(b *testing.B) {
	root := os.Getenv("JSF_BIG_STORE")
	if root == "" {
		b.Skip("JSF_BIG_STORE not set")
	}
	var dirs []string
	var size int64
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "msgs" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		if !d.IsDir() && filepath.Ext(p) == ".blk" {
			fi, _ := d.Info()
			size += fi.Size()
		}
		return nil
	})
	fsys := os.DirFS(root)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range dirs {
			sc, err := ScanStream(fsys, d, ScanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(sc.State.Msgs), "msgs")
		}
	}
}
