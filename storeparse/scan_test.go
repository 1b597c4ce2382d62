package storeparse

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

func figures(s State) State {
	s.FirstTS, s.LastTS = 0, 0
	return s
}

func (w wantStream) state() State {
	return State{Msgs: w.Messages, Bytes: w.Bytes, FirstSeq: w.FirstSeq, LastSeq: w.LastSeq, NumDeleted: w.NumDeleted}
}

// jszStream returns the stream of account acc named name in a /jsz capture.
func (d jszDoc) stream(acc, name string) (st jszStreamDetail, ok bool) {
	for _, a := range d.AccountDetails {
		if a.Name != acc && a.ID != acc {
			continue
		}
		for _, s := range a.Streams {
			if s.Name == name {
				return s, true
			}
		}
	}
	return st, false
}

func findWant(bs bundleStore, acc, name string) (wantStream, bool) {
	for _, w := range bs.Streams {
		if w.Account == acc && w.Name == name {
			return w, true
		}
	}
	return wantStream{}, false
}

// TestScanStreamMatchesJSZ scans every stream folder of every committed
// bundle and compares it with what that server's /jsz said right before it
// was stopped (want.json, and the /jsz capture for consumers).
func TestScanStreamMatchesJSZ(t *testing.T) {
	checked, consumers, staleIndex := 0, 0, 0
	for _, bs := range allStores(t) {
		fsys := os.DirFS(bs.Root)
		var jsz jszDoc
		if bs.JSZ != "" {
			jsz = readJSZ(t, bs.JSZ)
		}
		seen := map[string]bool{}
		for _, dir := range streamDirs(t, bs.Root) {
			acc, name := path.Dir(path.Dir(dir)), path.Base(dir)
			t.Run(bs.String()+"/"+name, func(t *testing.T) {
				sc, err := ScanStream(fsys, dir, ScanOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if bs.Encrypted || exists(fsys, path.Join(dir, "meta.key")) {
					// Encrypted at rest: nothing to count without the key,
					// and the scan must say why.
					if !bs.Encrypted || !sc.Encrypted || findProblem(sc, path.Join(dir, "meta.inf"), binfmt.ErrEncrypted) == nil {
						t.Errorf("want.json encrypted %v, scan encrypted %v, problems %v", bs.Encrypted, sc.Encrypted, sc.Problems)
					}
					return
				}
				if bs.KeptCut[acc+"/"+name] {
					// The cut is still on disk: the scan must say the
					// block ends before index.db, and not trust it.
					seen[acc+"/"+name] = true
					// A server killed before the cut (ahead-*-cut's
					// standalone one) left no index.db to contradict it:
					// then no problem, and still not current.
					noIndex := len(sc.Problems) == 0 && strings.HasSuffix(bs.Bundle, "-cut")
					if !noIndex && (len(sc.Problems) != 1 || !errors.Is(sc.Problems[0], binfmt.ErrTruncated)) || sc.indexCurrent() {
						t.Errorf("cut block: problems %v, index.db taken as current %v", sc.Problems, sc.indexCurrent())
					}
					return
				}
				if len(sc.Problems) != 0 && !((bs.Disabled || bs.StoreFilled) && onlyEmptyIndex(sc)) {
					t.Errorf("problems in a store a real server wrote: %v", sc.Problems)
				}
				if !sc.MetaSumOK || sc.Meta == nil || sc.Meta.Name != name {
					t.Errorf("meta: sum ok %v, meta %+v", sc.MetaSumOK, sc.Meta)
				}
				if bs.MetaStopped {
					seen[acc+"/"+name] = true // listed, with no consumer
				}
				if bs.Stopped || bs.Disabled || bs.Offline[acc+"/"+name] || bs.MetaStopped {
					// killed before the captures, JetStream off, or a
					// release that does not serve the stream: no /jsz to
					// compare with
					return
				}
				w, ok := findWant(bs, acc, name)
				if !ok {
					// A stream of an account the server could not look up:
					// untouched on disk, it holds what /jsz said before.
					u, unserved := findWant(bundleStore{Streams: bs.Unserved}, acc, name)
					if !unserved {
						t.Fatalf("stream folder %s not in want.json (the server's /jsz)", dir)
					}
					seen[acc+"/"+name] = true
					checked++
					if got := figures(sc.State); got != u.state() || len(sc.Consumers) != len(u.Consumers) {
						t.Errorf("unloaded stream: state %+v, %d consumers; /jsz before: %+v, %d consumers", got, len(sc.Consumers), u.state(), len(u.Consumers))
					}
					return
				}
				seen[acc+"/"+name] = true
				checked++
				if got := figures(sc.State); got != w.state() {
					t.Errorf("state %+v, /jsz says %+v", got, w.state())
				}
				x := sc.Index
				switch {
				case x == nil && bs.Live && !exists(fsys, path.Join(dir, "msgs/index.db")):
					// Copied from a running server that had not written
					// index.db yet: the blocks alone hold the state.
					staleIndex++
				case x == nil && bs.StoreFilled:
					// The stream's store filled: the server wrote a 0-byte
					// index.db at its stop (streamfull-*); the blocks alone
					// hold the state, and it equals /jsz.
					staleIndex++
				case x == nil || !x.ChecksumOK:
					t.Fatalf("index.db not decoded: %+v", x)
				case x.Msgs == w.Messages && x.Bytes == w.Bytes && x.FirstSeq == w.FirstSeq && x.LastSeq == w.LastSeq:
					// index.db was written at the clean stop: it says what
					// /jsz said. Only removals that write no tombstone
					// (limits: max_bytes, KV history) may separate it from
					// the blocks, and then the scan applies them.
					if (len(sc.Mismatches) > 0) != (sc.IndexRemoved > 0) {
						t.Errorf("mismatches %v with %d index-only deletes", sc.Mismatches, sc.IndexRemoved)
					}
				case bs.Live:
					// Copied while the server ran: index.db is older than
					// the blocks. nats-server sees it is stale and rebuilds
					// from the blocks; so must the scan.
					staleIndex++
					if sc.indexCurrent() || sc.IndexRemoved != 0 || len(sc.Mismatches) == 0 || x.LastSeq > w.LastSeq || x.Msgs > w.Messages {
						t.Errorf("stale index.db (%d msgs %d..%d) taken as current %v, %d index deletes applied, mismatches %v",
							x.Msgs, x.FirstSeq, x.LastSeq, sc.indexCurrent(), sc.IndexRemoved, sc.Mismatches)
					}
				default:
					t.Errorf("index.db %d msgs %d bytes %d..%d, /jsz %+v", x.Msgs, x.Bytes, x.FirstSeq, x.LastSeq, w.state())
				}
				js, ok := jsz.stream(acc, name)
				if !ok {
					t.Fatalf("%s not in the /jsz capture %s", dir, bs.JSZ)
				}
				loaded := slices.DeleteFunc(slices.Clone(sc.Consumers), func(cs ConsumerScan) bool { return slices.Contains(bs.Missing, cs.Name) })
				if len(loaded) != len(js.Consumers) || len(js.Consumers) != len(w.Consumers) {
					t.Fatalf("%d consumer folders, /jsz has %d (want.json %d)", len(sc.Consumers), len(js.Consumers), len(w.Consumers))
				}
				for _, c := range js.Consumers {
					i := slices.IndexFunc(sc.Consumers, func(cs ConsumerScan) bool { return cs.Name == c.Name })
					if i < 0 {
						t.Fatalf("consumer %s has no folder", c.Name)
					}
					got := sc.Consumers[i]
					if !got.MetaSumOK || got.Meta == nil || got.State == nil {
						t.Fatalf("consumer %+v", got)
					}
					consumers++
					if got.State.AckFloor.Stream != c.AckFloor.Stream || got.State.Delivered != c.Delivered || len(got.State.Pending) != c.AckPend {
						t.Errorf("consumer %s state %+v, /jsz ack floor %+v delivered %+v pending %d", c.Name, got.State, c.AckFloor, c.Delivered, c.AckPend)
					}
				}
			})
		}
		if !bs.Encrypted && !bs.Stopped {
			for _, w := range bs.Streams {
				if !seen[w.Account+"/"+w.Name] {
					t.Errorf("%s: /jsz lists %s > %s, the store has no folder for it", bs, w.Account, w.Name)
				}
			}
		}
	}
	if checked == 0 || consumers == 0 {
		t.Fatalf("%d streams, %d consumers compared", checked, consumers)
	}
	t.Logf("%d streams and %d consumers compared with /jsz (%d with index.db older than the blocks or not yet written)", checked, consumers, staleIndex)
}

// copyDir copies the folder src into a temp dir and returns the copy.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
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

// badRecordOnly checks that a record failing its checksum (framing intact)
// at seq in block blk costs that record only: the figures are what the
// blocks still hold, index.db (which rightly counts the record) agrees, and
// what a rebuild would drop (the block from seq on) is kept apart.
func badRecordOnly(t *testing.T, sc, ref *StreamScan, seq uint64, blk uint32) {
	t.Helper()
	if len(sc.Problems) != 1 {
		t.Errorf("one damage, %d problems: %v", len(sc.Problems), sc.Problems)
	}
	if len(sc.Lost) != 0 || sc.LostUnknown {
		t.Errorf("lost %v (unknown %v): nothing but the bad record is lost", sc.Lost, sc.LostUnknown)
	}
	if len(sc.Unreadable) != 1 || sc.Unreadable[0] != (SeqRange{First: seq, Last: seq}) {
		t.Errorf("unreadable %v, want %d", sc.Unreadable, seq)
	}
	want := ref.State
	want.Msgs--
	if got := figures(sc.State); got.Msgs != want.Msgs || got.FirstSeq != want.FirstSeq || got.LastSeq != want.LastSeq || got.NumDeleted != want.NumDeleted {
		t.Errorf("state %+v, want the healthy %+v less one message", got, figures(want))
	}
	// (the healthy copy's mismatches are index-only deletes by limits)
	if !slices.Equal(sc.Mismatches, ref.Mismatches) || !sc.indexCurrent() || sc.IndexRemoved != ref.IndexRemoved {
		t.Errorf("index.db counts the bad record rightly, yet mismatches %v (healthy %v, current %v)", sc.Mismatches, ref.Mismatches, sc.indexCurrent())
	}
	ib, _ := sc.Index.Block(blk)
	if len(sc.RebuildLost) != 1 || sc.RebuildLost[0] != (SeqRange{First: seq, Last: ib.LastSeq}) || sc.RebuildLostMsgs != ib.LastSeq-seq {
		t.Errorf("a rebuild would lose %v (%d intact), want %d-%d (%d intact)", sc.RebuildLost, sc.RebuildLostMsgs, seq, ib.LastSeq, ib.LastSeq-seq)
	}
}

func scanDir(t testing.TB, dir string) *StreamScan {
	t.Helper()
	sc, err := ScanStream(os.DirFS(dir), ".", ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestCorruptions breaks copies of the LOGS stream of each healthy bundle
// (one per nats-server version), with blocks 7 and 8 stored decompressed
// (see logsCopy): block 8 is a plain block in the middle of the stream,
// block 10 the last block, plain as the server wrote it.
func TestCorruptions(t *testing.T) {
	for _, bs := range logsStores(t) {
		t.Run(bs.Version, func(t *testing.T) { corruptions(t, bs) })
	}
}

func corruptions(t *testing.T, bs bundleStore) {
	base, _ := logsCopy(t, bs)
	ref := scanDir(t, base)
	recs1 := records(t, filepath.Join(base, "msgs/8.blk"), "LOGS-8")
	recs2 := records(t, filepath.Join(base, "msgs/10.blk"), "LOGS-10")
	all := 0
	for _, b := range ref.Blocks {
		all += b.Records
	}
	mid := recs1[len(recs1)/2]
	// A live record of the last block, away from both ends.
	tail := recs2[len(recs2)/3]

	t.Run("payload bit flip", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/8.blk"), func(b []byte) []byte {
			b[mid.off+int64(mid.len)-9] ^= 0x10 // last payload byte
			return b
		})
		n := 0
		sc, err := ScanStream(os.DirFS(dir), ".", ScanOptions{Visit: func(BlockInfo, *Record) error { n++; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		ce := findProblem(sc, "msgs/8.blk", binfmt.ErrChecksum)
		if ce == nil || ce.Offset != mid.off || ce.Seq != mid.seq {
			t.Fatalf("want checksum error at %d seq %d, got %v", mid.off, mid.seq, sc.Problems)
		}
		if n != all {
			t.Errorf("visited %d records, want %d: reading must continue past a bad checksum", n, all)
		}
		badRecordOnly(t, sc, ref, mid.seq, 8)
	})
	t.Run("payload bit flip in the last block", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/10.blk"), func(b []byte) []byte {
			b[tail.off+int64(tail.len)-9] ^= 0x10
			return b
		})
		sc := scanDir(t, dir)
		ce := findProblem(sc, "msgs/10.blk", binfmt.ErrChecksum)
		if ce == nil || ce.Offset != tail.off || ce.Seq != tail.seq {
			t.Fatalf("want checksum error at %d seq %d, got %v", tail.off, tail.seq, sc.Problems)
		}
		badRecordOnly(t, sc, ref, tail.seq, 10)
	})
	t.Run("length bit flip", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/8.blk"), func(b []byte) []byte {
			b[mid.off+2] ^= 0x01 // rl += 65536: overruns, but intact records follow
			return b
		})
		sc := scanDir(t, dir)
		ce := findProblem(sc, "msgs/8.blk", binfmt.ErrFormat)
		if ce == nil || ce.Offset != mid.off {
			t.Fatalf("want a format error at %d, got %v", mid.off, sc.Problems)
		}
		if sc.Blocks[2].Index != 8 || sc.Blocks[2].Torn {
			t.Errorf("corruption in the middle reported as a torn tail")
		}
		if !strings.Contains(ce.Error(), fmt.Sprintf("next intact record at offset %d (seq %d)", mid.off+int64(mid.len), mid.seq+1)) {
			t.Errorf("error does not name the next intact record: %v", ce)
		}
		// index.db knows block 8's last sequence: the loss is named exactly.
		ib, _ := sc.Index.Block(8)
		if len(sc.Lost) != 1 || sc.Lost[0] != (SeqRange{First: mid.seq, Last: ib.LastSeq}) {
			t.Errorf("lost %v, want %d-%d", sc.Lost, mid.seq, ib.LastSeq)
		}
	})
	t.Run("truncated mid-record", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/10.blk"), func(b []byte) []byte { return b[:tail.off+int64(tail.len)/2] })
		sc := scanDir(t, dir)
		last := len(sc.Blocks) - 1
		ce := findProblem(sc, "msgs/10.blk", binfmt.ErrTruncated)
		if ce == nil || ce.Offset != tail.off || !sc.Blocks[last].Torn {
			t.Fatalf("want a torn tail at %d, got %v", tail.off, sc.Problems)
		}
		ib, _ := sc.Index.Block(10)
		if len(sc.Lost) != 1 || sc.Lost[0] != (SeqRange{First: tail.seq, Last: ib.LastSeq}) {
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
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/10.blk"), func(b []byte) []byte {
			clear(b[tail.off:])
			return b
		})
		sc := scanDir(t, dir)
		ce := findProblem(sc, "msgs/10.blk", binfmt.ErrTruncated)
		if ce == nil || ce.Offset != tail.off || !sc.Blocks[len(sc.Blocks)-1].Torn {
			t.Fatalf("want a torn (zeroed) tail at %d, got %v", tail.off, sc.Problems)
		}
	})
	t.Run("meta.sum mismatch", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "meta.sum"), func(b []byte) []byte {
			b[0] = "01"[(b[0]-'0'+1)%2] // still hex, now wrong
			return b
		})
		sc := scanDir(t, dir)
		if sc.MetaSumOK || findProblem(sc, "meta.sum", binfmt.ErrChecksum) == nil {
			t.Fatalf("want a meta.sum checksum error, got %v", sc.Problems)
		}
	})
	t.Run("garbage index.db", func(t *testing.T) {
		dir := copyDir(t, base)
		modify(t, filepath.Join(dir, "msgs/index.db"), func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i*7 + 3)
			}
			return b
		})
		sc := scanDir(t, dir)
		if sc.Index != nil || findProblem(sc, "msgs/index.db", binfmt.ErrChecksum) == nil {
			t.Fatalf("want an index.db checksum error, got %v", sc.Problems)
		}
		// Without index.db only the blocks and max_bytes count. Here the
		// messages index.db alone marked deleted were max_bytes removals,
		// so applying max_bytes again gives what the server had.
		if ref.IndexRemoved == 0 {
			t.Fatal("the fixture has no index-only (limit) removal")
		}
		if sc.IndexRemoved != 0 || sc.BlocksOnly.Msgs-sc.LimitRemoved != sc.State.Msgs || sc.LimitRemoved != ref.IndexRemoved || figures(sc.State) != figures(ref.State) {
			t.Errorf("state %+v (%d removed by limits), blocks only %+v; with index.db %+v (%d removed)", sc.State, sc.LimitRemoved, sc.BlocksOnly, ref.State, ref.IndexRemoved)
		}
	})
	t.Run("index.db ahead of blocks", func(t *testing.T) {
		dir := copyDir(t, base)
		// Cut the last block at a record boundary: index.db now claims more.
		modify(t, filepath.Join(dir, "msgs/10.blk"), func(b []byte) []byte { return b[:tail.off] })
		sc := scanDir(t, dir)
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

// TestBundleRaftWALs scans every raft group WAL in the bundles: a WAL is a
// filestore named after its group (checksum keys "<group>-N").
func TestBundleRaftWALs(t *testing.T) {
	recs, wals := 0, 0
	for _, bs := range allStores(t) {
		fsys := os.DirFS(bs.Root)
		groups, _ := fs.Glob(fsys, "*/_js_/*")
		for _, g := range groups {
			if _, err := fs.Stat(fsys, g+"/msgs"); err != nil {
				continue // memory-storage group: no WAL on disk
			}
			wals++
			sc, err := ScanStream(fsys, g, ScanOptions{Visit: func(_ BlockInfo, r *Record) error {
				if !r.ChecksumOK {
					t.Errorf("%s %s: seq %d checksum", bs, g, r.Seq)
				}
				if !r.Tombstone && !r.Erased && len(r.Subject) != 0 {
					t.Errorf("%s %s: WAL record %d has subject %q", bs, g, r.Seq, r.Subject)
				}
				recs++
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if exists(fsys, path.Join(g, "meta.key")) {
				if !bs.Encrypted || !sc.Encrypted || findProblem(sc, path.Join(g, "meta.inf"), binfmt.ErrEncrypted) == nil {
					t.Errorf("%s %s: meta.key present but encrypted %v, problems %v", bs, g, sc.Encrypted, sc.Problems)
				}
				continue
			}
			if (len(sc.Problems) != 0 && !((bs.Disabled || bs.StoreFilled) && onlyEmptyIndex(sc))) || !sc.MetaSumOK || sc.Name != path.Base(g) {
				t.Errorf("%s %s: problems %v meta.sum ok %v name %q", bs, g, sc.Problems, sc.MetaSumOK, sc.Name)
			}
		}
	}
	if wals == 0 {
		t.Fatal("no raft WALs in the bundles")
	}
	t.Logf("%d WALs, %d records", wals, recs)
}

// TestEmptiedBlock empties a block file (0 bytes, as a failed copy or a
// full disk leaves it): a plain and an S2 block of LOGS, and the tombstone
// block of a purged stream. Each is one problem on that block naming what
// index.db says it held, not only a difference with index.db.
func TestEmptiedBlock(t *testing.T) {
	for _, bs := range logsStores(t) {
		base, _ := logsCopy(t, bs)
		for _, n := range []uint32{8, 9} { // 8 plain (decompressed by logsCopy), 9 S2 as written
			t.Run(fmt.Sprintf("%s/LOGS/%d.blk", bs.Version, n), func(t *testing.T) {
				dir := copyDir(t, base)
				blk := fmt.Sprintf("msgs/%d.blk", n)
				modify(t, filepath.Join(dir, blk), func([]byte) []byte { return nil })
				sc := scanDir(t, dir)
				ib, _ := sc.Index.Block(n)
				ce := findProblem(sc, blk, binfmt.ErrTruncated)
				if ce == nil || ce.Offset != 0 || ce.Seq != ib.FirstSeq || len(sc.Problems) != 1 {
					t.Fatalf("want one truncation of %s at 0 seq %d, got %v", blk, ib.FirstSeq, sc.Problems)
				}
				if want := (SeqRange{First: ib.FirstSeq, Last: ib.LastSeq}); len(sc.Lost) != 1 || sc.Lost[0] != want {
					t.Errorf("lost %v, want %v", sc.Lost, want)
				}
			})
		}
	}
	t.Run("tombstones", func(t *testing.T) {
		src := filepath.Join(bundlesRoot, "lifecycle-v2.12.1/bundle/store-lc-0/APP/streams/PURGED")
		dir := copyDir(t, src)
		if sc := scanDir(t, dir); sc.Blocks[0].Tombstones == 0 || len(sc.Problems) != 0 {
			t.Fatalf("fixture: block 1 of PURGED holds %d tombstones, problems %v", sc.Blocks[0].Tombstones, sc.Problems)
		}
		modify(t, filepath.Join(dir, "msgs/1.blk"), func([]byte) []byte { return nil })
		sc := scanDir(t, dir)
		if ce := findProblem(sc, "msgs/1.blk", binfmt.ErrTruncated); ce == nil || !strings.Contains(ce.Error(), "tombstones") {
			t.Errorf("want the emptied tombstone block reported, got %v", sc.Problems)
		}
	})
}
