package storeparse

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"
)

// indexVersion is the index.db format each nats-server version writes.
var indexVersion = map[string]byte{"2.10.22": 1, "2.10.27": 1, "2.11.17": 2, "2.12.1": 3, "2.12.4": 3, "2.12.15": 3, "2.14.10": 4, "2.15.2": 4, "2.15.3": 4}

func TestIndexVersions(t *testing.T) {
	seen := map[byte]int{}
	for _, bs := range allStores(t) {
		if bs.Encrypted {
			continue // sealed: see TestScanStreamMatchesJSZ
		}
		ver, ok := indexVersion[bs.Version]
		if !ok {
			t.Fatalf("%s: no index.db version known for nats-server %q", bs, bs.Version)
		}
		for _, dir := range streamDirs(t, bs.Root) {
			acc, name := path.Dir(path.Dir(dir)), path.Base(dir)
			p := filepath.Join(bs.Root, filepath.FromSlash(dir), "msgs", "index.db")
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) && (bs.Live || bs.Stopped) {
				continue // copied from a running server, or killed: never written
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 && (bs.Disabled || bs.StoreFilled) {
				continue // written at the stop on a full disk (diskfull-*, streamfull-*)
			}
			x, err := ParseIndex(p, b, name)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			seen[x.Version]++
			want := ver
			if bs.Offline[acc+"/"+name] {
				// Kept offline by the older release: index.db as the
				// newer one wrote it.
				want = indexVersion[bs.FromVersion]
			}
			if x.Version != want || !x.ChecksumOK || x.Trailing != 0 {
				t.Errorf("%s: version %d (want %d) checksum %v trailing %d", p, x.Version, want, x.ChecksumOK, x.Trailing)
			}
			var dels uint64
			for _, blk := range x.Blocks {
				dels += uint64(blk.Deleted.Len())
				if uint64(blk.Deleted.Len()) != blk.NumDeleted {
					t.Errorf("%s: %v holds %d", p, blk, blk.Deleted.Len())
				}
			}
			if _, err := ParseIndex(p, b, "wrong"); err == nil {
				t.Errorf("%s: wrong key accepted", p)
			}
			w, ok := findWant(bs, acc, name)
			if !ok {
				continue // a server that was down: no /jsz
			}
			if bs.KeptCut[acc+"/"+name] || bs.Cut[acc+"/"+name] {
				// index.db from before the generator's cut (see
				// TestScanStreamMatchesJSZ), or what a release that keeps
				// an R1 stream's last sequence wrote of it at its restart:
				// /jsz then counts the cut as deletes.
				continue
			}
			if bs.Live && x.LastSeq < w.LastSeq {
				continue // written before the last messages (see TestScanStreamMatchesJSZ)
			}
			if dels != w.NumDeleted || x.Msgs != w.Messages || x.Bytes != w.Bytes || x.FirstSeq != w.FirstSeq || x.LastSeq != w.LastSeq {
				t.Errorf("%s: %d msgs %d bytes %d..%d %d deleted, /jsz %+v", p, x.Msgs, x.Bytes, x.FirstSeq, x.LastSeq, dels, w.state())
			}
		}
	}
	for _, v := range indexVersion {
		if seen[v] == 0 {
			t.Errorf("no index.db version %d among the bundles (seen %v)", v, seen)
		}
	}
	t.Logf("index.db files by version: %v", seen)
}

// ordersDeleted is what HealthyWorkload (testdata/gen/workload.go) removes
// from ORDERS: seq 2 and 5 deleted, seq 3 securely erased, subject
// orders.cancelled (message i goes to subjects[i%4], index 2) purged.
func ordersDeleted() []uint64 {
	var out []uint64
	for seq := uint64(1); seq <= 60; seq++ {
		if seq == 2 || seq == 3 || seq == 5 || seq%4 == 2 {
			out = append(out, seq)
		}
	}
	return out
}

func TestOrdersDeleteMap(t *testing.T) {
	want := ordersDeleted()
	n := 0
	for _, b := range []string{"v2.10.22-per-server", "v2.12.1-archive", "v2.15.2-flat"} {
		for _, bs := range storesOf(t, b) {
			if _, ok := findWant(bs, "$G", "ORDERS"); !ok {
				continue
			}
			n++
			var erased []uint64
			var hdrs, big int
			sc, err := ScanStream(os.DirFS(bs.Root), "$G/streams/ORDERS", ScanOptions{Visit: func(_ BlockInfo, r *Record) error {
				switch {
				case r.Erased:
					erased = append(erased, r.Seq)
					if len(r.Subject) != 0 || r.HasHeaders {
						t.Errorf("%s: erased record %d keeps subject %q", bs, r.Seq, r.Subject)
					}
				case r.Tombstone:
				case r.Seq%3 == 0:
					// Every third message carries Nats-Msg-Id and X-Trace.
					if !r.HasHeaders || !bytes.Contains(r.Header, []byte(fmt.Sprintf("Nats-Msg-Id: order-%d\r\n", r.Seq))) {
						t.Errorf("%s: seq %d headers %v %q", bs, r.Seq, r.HasHeaders, r.Header)
					}
					hdrs++
				case r.HasHeaders:
					t.Errorf("%s: seq %d has headers %q", bs, r.Seq, r.Header)
				}
				if len(r.Data) >= 10*1024 {
					big++ // message 30, 10 KB, purged yet still in the block
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, blk := range sc.Blocks {
				for _, r := range blk.Deleted() {
					for q := r.First; q <= r.Last; q++ {
						got = append(got, q)
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: blocks delete map %v, want %v", bs, got, want)
			}
			var idx []uint64
			for _, ib := range sc.Index.Blocks {
				idx = append(idx, ib.Deleted.Seqs(0)...)
			}
			if !slices.Equal(idx, want) {
				t.Errorf("%s: index.db delete map %v", bs, idx)
			}
			// Every removal wrote a tombstone; the secure erase overwrote seq 3.
			tombs := 0
			for _, blk := range sc.Blocks {
				tombs += blk.Tombstones
			}
			if tombs != len(want) || !slices.Equal(erased, []uint64{3}) || hdrs == 0 || big != 1 {
				t.Errorf("%s: %d tombstones (want %d), erased %v, %d header records, %d big", bs, tombs, len(want), erased, hdrs, big)
			}
		}
	}
	if n != 9 {
		t.Fatalf("%d ORDERS copies in the healthy bundles, want 9", n)
	}
}

// TestKVHistoryRemovals: bucket "settings" (history 1) of the phantom-peers
// bundle had keys written more than once; the older revisions are removed
// by max_msgs_per_subject, which writes no tombstone: only index.db knows.
func TestKVHistoryRemovals(t *testing.T) {
	n := 0
	for _, bs := range storesOf(t, "v2.10.22-incident-phantom-peers") {
		w, ok := findWant(bs, "$G", "KV_settings")
		if !ok {
			continue
		}
		n++
		last := map[string]uint64{} // subject -> newest revision in the blocks
		subj := map[uint64]string{} // every revision in the blocks
		fsys := os.DirFS(bs.Root)
		sc, err := ScanStream(fsys, "$G/streams/KV_settings", ScanOptions{Visit: func(_ BlockInfo, r *Record) error {
			if !r.Tombstone && !r.Erased {
				last[string(r.Subject)] = r.Seq
				subj[r.Seq] = string(r.Subject)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		var superseded uint64
		for q, s := range subj {
			if last[s] != q {
				superseded++
			}
		}
		if sc.Meta.MaxMsgsPerSubject != 1 || superseded == 0 {
			t.Fatalf("%s: max_msgs_per_subject %d, %d superseded revisions", bs, sc.Meta.MaxMsgsPerSubject, superseded)
		}
		if sc.IndexRemoved != superseded || sc.State.Msgs != uint64(len(last)) || figures(sc.State) != w.state() {
			t.Errorf("%s: %d removed by index.db, %d superseded; %d msgs for %d keys; state %+v, /jsz %+v",
				bs, sc.IndexRemoved, superseded, sc.State.Msgs, len(last), figures(sc.State), w.state())
		}
		// Ignoring index.db, every revision in the blocks counts.
		raw, err := ScanStream(fsys, "$G/streams/KV_settings", ScanOptions{IgnoreIndex: true})
		if err != nil {
			t.Fatal(err)
		}
		if raw.State.Msgs != uint64(len(subj)) || raw.IndexRemoved != 0 {
			t.Errorf("%s: ignoring index.db %d msgs, blocks hold %d", bs, raw.State.Msgs, len(subj))
		}
	}
	if n == 0 {
		t.Fatal("no KV_settings in the phantom-peers bundle")
	}
}

// BenchmarkScanStreamFixtures scans every stream of the v2.15.2-flat bundle.
func BenchmarkScanStreamFixtures(b *testing.B) {
	type stream struct {
		fsys fs.FS
		dir  string
	}
	var streams []stream
	var size int64
	for _, bs := range storesOf(b, "v2.15.2-flat") {
		fsys := os.DirFS(bs.Root)
		for _, d := range streamDirs(b, bs.Root) {
			streams = append(streams, stream{fsys, d})
			m, _ := fs.Glob(fsys, d+"/msgs/*.blk")
			for _, f := range m {
				fi, err := fs.Stat(fsys, f)
				if err != nil {
					b.Fatal(err)
				}
				size += fi.Size()
			}
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range streams {
			if _, err := ScanStream(s.fsys, s.dir, ScanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
