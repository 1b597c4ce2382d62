package storeparse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// The stores under testdata/stores were written by real nats-server
// binaries (one single-node server per version); jsz.json is what that
// server's /jsz said right before it was stopped with SIGTERM.

type jszDoc struct {
	AccountDetails []struct {
		Name    string `json:"name"`
		Streams []struct {
			Name  string `json:"name"`
			State struct {
				Msgs       uint64 `json:"messages"`
				Bytes      uint64 `json:"bytes"`
				FirstSeq   uint64 `json:"first_seq"`
				LastSeq    uint64 `json:"last_seq"`
				NumDeleted uint64 `json:"num_deleted"`
			} `json:"state"`
			Consumers []struct {
				Name      string  `json:"name"`
				AckFloor  SeqPair `json:"ack_floor"`
				Delivered SeqPair `json:"delivered"`
				AckPend   int     `json:"num_ack_pending"`
			} `json:"consumer_detail"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

func storeVersions(t testing.TB) []string {
	ents, err := os.ReadDir("testdata/stores")
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, e := range ents {
		vs = append(vs, e.Name())
	}
	if len(vs) == 0 {
		t.Fatal("no fixture stores")
	}
	return vs
}

func readJSZ(t testing.TB, v string) jszDoc {
	var d jszDoc
	b, err := os.ReadFile(filepath.Join("testdata/stores", v, "jsz.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func figures(s State) State {
	s.FirstTS, s.LastTS = 0, 0
	return s
}

func TestScanStreamMatchesJSZ(t *testing.T) {
	for _, v := range storeVersions(t) {
		d := readJSZ(t, v)
		fsys := os.DirFS(filepath.Join("testdata/stores", v, "jetstream"))
		n := 0
		for _, acc := range d.AccountDetails {
			for _, st := range acc.Streams {
				n++
				t.Run(v+"/"+st.Name, func(t *testing.T) {
					sc, err := ScanStream(fsys, path.Join(acc.Name, "streams", st.Name), ScanOptions{})
					if err != nil {
						t.Fatal(err)
					}
					want := State{Msgs: st.State.Msgs, Bytes: st.State.Bytes, FirstSeq: st.State.FirstSeq, LastSeq: st.State.LastSeq, NumDeleted: st.State.NumDeleted}
					if got := figures(sc.State); got != want {
						t.Errorf("state %+v, /jsz says %+v", got, want)
					}
					if len(sc.Problems) != 0 {
						t.Errorf("problems in a clean store: %v", sc.Problems)
					}
					if !sc.MetaSumOK || sc.Meta == nil || sc.Meta.Name != st.Name {
						t.Errorf("meta: sum ok %v, meta %+v", sc.MetaSumOK, sc.Meta)
					}
					if sc.Index == nil || !sc.Index.ChecksumOK {
						t.Fatalf("index.db not decoded: %+v", sc.Index)
					}
					// index.db was written at clean stop: it says what /jsz said.
					if sc.Index.Msgs != st.State.Msgs || sc.Index.FirstSeq != st.State.FirstSeq || sc.Index.LastSeq != st.State.LastSeq {
						t.Errorf("index.db %d msgs %d..%d, /jsz %+v", sc.Index.Msgs, sc.Index.FirstSeq, sc.Index.LastSeq, st.State)
					}
					// Only limit removals (no tombstone) may separate blocks and index.db.
					if (len(sc.Mismatches) > 0) != (sc.IndexRemoved > 0) {
						t.Errorf("mismatches %v with %d index-only deletes", sc.Mismatches, sc.IndexRemoved)
					}
					if len(sc.Consumers) != len(st.Consumers) {
						t.Fatalf("%d consumers, /jsz has %d", len(sc.Consumers), len(st.Consumers))
					}
					for i, c := range st.Consumers {
						got := sc.Consumers[i]
						if got.Name != c.Name || !got.MetaSumOK || got.State == nil {
							t.Fatalf("consumer %+v", got)
						}
						if got.State.AckFloor.Stream != c.AckFloor.Stream || got.State.Delivered != (SeqPair{c.Delivered.Consumer, c.Delivered.Stream}) || len(got.State.Pending) != c.AckPend {
							t.Errorf("consumer state %+v, /jsz ack floor %+v delivered %+v pending %d", got.State, c.AckFloor, c.Delivered, c.AckPend)
						}
					}
				})
			}
		}
		if n == 0 {
			t.Fatalf("%s: jsz.json lists no streams", v)
		}
	}
}

// TestBundles checks ScanStream against want.json of every generated bundle.
func TestBundles(t *testing.T) {
	root := "../testdata/bundles"
	ents, _ := os.ReadDir(root)
	ran := 0
	for _, e := range ents {
		wb, err := os.ReadFile(filepath.Join(root, e.Name(), "want.json"))
		if err != nil {
			continue
		}
		var want struct {
			Servers []struct {
				Name     string `json:"name"`
				StoreDir string `json:"store_dir"`
				Streams  []struct {
					Account    string `json:"account"`
					Name       string `json:"name"`
					FirstSeq   uint64 `json:"first_seq"`
					LastSeq    uint64 `json:"last_seq"`
					Messages   uint64 `json:"messages"`
					Bytes      uint64 `json:"bytes"`
					NumDeleted uint64 `json:"num_deleted"`
				} `json:"streams"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(wb, &want); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		for _, srv := range want.Servers {
			if srv.StoreDir == "" {
				continue
			}
			fsys := os.DirFS(filepath.Join(root, e.Name(), "bundle", filepath.FromSlash(srv.StoreDir)))
			for _, st := range srv.Streams {
				dir := path.Join(st.Account, "streams", st.Name)
				if _, err := fs.Stat(fsys, dir); err != nil {
					continue // memory storage or not placed on this server
				}
				ran++
				sc, err := ScanStream(fsys, dir, ScanOptions{})
				if err != nil {
					t.Errorf("%s/%s/%s: %v", e.Name(), srv.Name, st.Name, err)
					continue
				}
				if exists(fsys, path.Join(dir, "meta.key")) {
					// Encrypted at rest: nothing to count without the key,
					// and the scan must say why.
					if !sc.Encrypted || findProblem(sc, path.Join(dir, "meta.inf"), binfmt.ErrEncrypted) == nil {
						t.Errorf("%s/%s/%s: meta.key present but encrypted %v, problems %v", e.Name(), srv.Name, st.Name, sc.Encrypted, sc.Problems)
					}
					continue
				}
				got := figures(sc.State)
				w := State{Msgs: st.Messages, Bytes: st.Bytes, FirstSeq: st.FirstSeq, LastSeq: st.LastSeq, NumDeleted: st.NumDeleted}
				if got != w {
					t.Errorf("%s/%s/%s: scan %+v, want %+v (problems %v)", e.Name(), srv.Name, st.Name, got, w, sc.Problems)
				}
			}
		}
	}
	if ran == 0 {
		t.Skip("no directory bundles with file streams under testdata/bundles yet")
	}
	t.Logf("%d streams checked", ran)
}

// copyStream copies a fixture stream folder into a temp dir and returns an
// fs.FS rooted there and the stream dir inside it.
func copyStream(t *testing.T, v, stream string) (string, string) {
	t.Helper()
	src := filepath.Join("testdata/stores", v, "jetstream", "$G", "streams", stream)
	dst := filepath.Join(t.TempDir(), stream)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst, "."
}

type recInfo struct {
	off int64
	len int
	seq uint64
}

func records(t testing.TB, file, key string) []recInfo {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	br, _ := NewBlockReader(file, strings.NewReader(string(b)), int64(len(b)), key)
	var out []recInfo
	for {
		r, err := br.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("fixture block unreadable: %v", err)
		}
		out = append(out, recInfo{r.Offset, r.Len, r.Seq})
	}
}

func modify(t *testing.T, file string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func findProblem(sc *StreamScan, file string, sentinel error) *binfmt.CorruptError {
	for _, p := range sc.Problems {
		var ce *binfmt.CorruptError
		if errors.As(p, &ce) && ce.File == file && errors.Is(ce, sentinel) {
			return ce
		}
	}
	return nil
}

func TestCorruptions(t *testing.T) {
	const v, stream = "v2.15.2", "PLAIN"
	base := filepath.Join("testdata/stores", v, "jetstream", "$G", "streams", stream, "msgs")
	recs1 := records(t, filepath.Join(base, "1.blk"), stream+"-1")
	recs2 := records(t, filepath.Join(base, "2.blk"), stream+"-2")
	mid := recs1[len(recs1)/2]
	// A live record of the last block, away from both ends.
	tail := recs2[len(recs2)/3]

	t.Run("payload bit flip", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		modify(t, filepath.Join(dir, "msgs/1.blk"), func(b []byte) []byte {
			b[mid.off+int64(mid.len)-9] ^= 0x10 // last payload byte
			return b
		})
		n := 0
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{Visit: func(BlockInfo, *Record) error { n++; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		ce := findProblem(sc, "msgs/1.blk", binfmt.ErrChecksum)
		if ce == nil || ce.Offset != mid.off || ce.Seq != mid.seq {
			t.Fatalf("want checksum error at %d seq %d, got %v", mid.off, mid.seq, sc.Problems)
		}
		if n != len(recs1)+len(recs2) {
			t.Errorf("visited %d records, want %d: reading must continue past a bad checksum", n, len(recs1)+len(recs2))
		}
		// The server truncates the block there: the rest of block 1 is lost.
		if len(sc.Lost) != 1 || sc.Lost[0].First != mid.seq {
			t.Errorf("lost %v, want a range from %d", sc.Lost, mid.seq)
		}
	})
	t.Run("length bit flip", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		modify(t, filepath.Join(dir, "msgs/1.blk"), func(b []byte) []byte {
			b[mid.off+2] ^= 0x01 // rl += 65536: overruns, but intact records follow
			return b
		})
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ce := findProblem(sc, "msgs/1.blk", binfmt.ErrFormat)
		if ce == nil || ce.Offset != mid.off {
			t.Fatalf("want a format error at %d, got %v", mid.off, sc.Problems)
		}
		if sc.Blocks[0].Torn {
			t.Errorf("corruption in the middle reported as a torn tail")
		}
		if !strings.Contains(ce.Error(), fmt.Sprintf("next intact record at offset %d (seq %d)", mid.off+int64(mid.len), mid.seq+1)) {
			t.Errorf("error does not name the next intact record: %v", ce)
		}
		// index.db knows block 1's last sequence: the loss is named exactly.
		ib, _ := sc.Index.Block(1)
		if len(sc.Lost) != 1 || sc.Lost[0] != (SeqRange{mid.seq, ib.LastSeq}) {
			t.Errorf("lost %v, want %d-%d", sc.Lost, mid.seq, ib.LastSeq)
		}
	})
	t.Run("truncated mid-record", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		modify(t, filepath.Join(dir, "msgs/2.blk"), func(b []byte) []byte { return b[:tail.off+int64(tail.len)/2] })
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ce := findProblem(sc, "msgs/2.blk", binfmt.ErrTruncated)
		if ce == nil || ce.Offset != tail.off || !sc.Blocks[1].Torn {
			t.Fatalf("want a torn tail at %d, got %v", tail.off, sc.Problems)
		}
		ib, _ := sc.Index.Block(2)
		if len(sc.Lost) != 1 || sc.Lost[0] != (SeqRange{tail.seq, ib.LastSeq}) {
			t.Errorf("lost %v, want %d-%d", sc.Lost, tail.seq, ib.LastSeq)
		}
		if len(sc.Mismatches) == 0 {
			t.Errorf("index.db claims more than the blocks hold but no mismatch was listed")
		}
		if sc.State.LastSeq != tail.seq-1 {
			t.Errorf("last seq %d, want %d", sc.State.LastSeq, tail.seq-1)
		}
	})
	t.Run("zeroed tail", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		modify(t, filepath.Join(dir, "msgs/2.blk"), func(b []byte) []byte {
			clear(b[tail.off:])
			return b
		})
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ce := findProblem(sc, "msgs/2.blk", binfmt.ErrTruncated)
		if ce == nil || ce.Offset != tail.off || !sc.Blocks[1].Torn {
			t.Fatalf("want a torn (zeroed) tail at %d, got %v", tail.off, sc.Problems)
		}
	})
	t.Run("meta.sum mismatch", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		modify(t, filepath.Join(dir, "meta.sum"), func(b []byte) []byte {
			b[0] = "01"[(b[0]-'0'+1)%2] // still hex, now wrong
			return b
		})
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.MetaSumOK || findProblem(sc, "meta.sum", binfmt.ErrChecksum) == nil {
			t.Fatalf("want a meta.sum checksum error, got %v", sc.Problems)
		}
	})
	t.Run("garbage index.db", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		want := scanFixture(t, v, stream).State
		modify(t, filepath.Join(dir, "msgs/index.db"), func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i*7 + 3)
			}
			return b
		})
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Index != nil || findProblem(sc, "msgs/index.db", binfmt.ErrChecksum) == nil {
			t.Fatalf("want an index.db checksum error, got %v", sc.Problems)
		}
		// Without index.db only the blocks (and max_bytes) count.
		if sc.IndexRemoved != 0 || sc.BlocksOnly.Msgs-sc.LimitRemoved != sc.State.Msgs || sc.State.LastSeq != want.LastSeq {
			t.Errorf("state %+v, blocks only %+v", sc.State, sc.BlocksOnly)
		}
	})
	t.Run("index.db ahead of blocks", func(t *testing.T) {
		dir, d := copyStream(t, v, stream)
		// Cut the last block at a record boundary: index.db now claims more.
		modify(t, filepath.Join(dir, "msgs/2.blk"), func(b []byte) []byte { return b[:tail.off] })
		sc, err := ScanStream(os.DirFS(dir), d, ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range sc.Mismatches {
			if m.Scope == "stream" && m.Field == "last_seq" && m.Blocks == fmt.Sprint(tail.seq-1) {
				found = true
			}
		}
		if !found {
			t.Errorf("no last_seq mismatch in %v", sc.Mismatches)
		}
		if sc.State.LastSeq != tail.seq-1 || sc.indexCurrent() {
			t.Errorf("state %+v", sc.State)
		}
	})
}

func scanFixture(t *testing.T, v, stream string) *StreamScan {
	t.Helper()
	sc, err := ScanStream(os.DirFS(filepath.Join("testdata/stores", v, "jetstream")), "$G/streams/"+stream, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestBundleRaftWALs scans every raft group WAL in the directory bundles:
// a WAL is a filestore named after its group (checksum keys "<group>-N").
func TestBundleRaftWALs(t *testing.T) {
	wants, _ := filepath.Glob("../testdata/bundles/*/want.json")
	recs, wals := 0, 0
	for _, w := range wants {
		wb, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Servers []struct {
				StoreDir string `json:"store_dir"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(wb, &want); err != nil {
			t.Fatal(err)
		}
		for _, srv := range want.Servers {
			if srv.StoreDir == "" {
				continue
			}
			fsys := os.DirFS(filepath.Join(filepath.Dir(w), "bundle", filepath.FromSlash(srv.StoreDir)))
			groups, _ := fs.Glob(fsys, "*/_js_/*")
			for _, g := range groups {
				if _, err := fs.Stat(fsys, g+"/msgs"); err != nil {
					continue // memory-storage group: no WAL on disk
				}
				wals++
				sc, err := ScanStream(fsys, g, ScanOptions{Visit: func(_ BlockInfo, r *Record) error {
					if !r.ChecksumOK {
						t.Errorf("%s %s: seq %d checksum", w, g, r.Seq)
					}
					if !r.Tombstone && !r.Erased && len(r.Subject) != 0 {
						t.Errorf("%s %s: WAL record %d has subject %q", w, g, r.Seq, r.Subject)
					}
					recs++
					return nil
				}})
				if err != nil {
					t.Fatal(err)
				}
				if exists(fsys, path.Join(g, "meta.key")) {
					if !sc.Encrypted || findProblem(sc, path.Join(g, "meta.inf"), binfmt.ErrEncrypted) == nil {
						t.Errorf("%s %s: meta.key present but encrypted %v, problems %v", w, g, sc.Encrypted, sc.Problems)
					}
					continue
				}
				if len(sc.Problems) != 0 || !sc.MetaSumOK || sc.Name != path.Base(g) {
					t.Errorf("%s %s: problems %v meta.sum ok %v name %q", w, g, sc.Problems, sc.MetaSumOK, sc.Name)
				}
			}
		}
	}
	if wals == 0 {
		t.Skip("no raft WALs in testdata/bundles yet")
	}
	t.Logf("%d WALs, %d records", wals, recs)
}
