package storeparse

import (
	"io/fs"
	"os"
	"path"
	"reflect"
	"sync"
	"testing"
)

// TestDigestsAgreeWithLive: on every stream of every committed store, the
// one-read products of the scan agree with each other and with the figures:
// the live ranges hold exactly State.Msgs sequences from FirstSeq to
// LastSeq; reading every live message back (Live.Messages) and summing its
// digests per window gives the window digests of the scan wherever no
// removal left a window dirty; and the window digests do not depend on how
// many blocks are read at once.
func TestDigestsAgreeWithLive(t *testing.T) {
	for _, kept := range []int{digestCacheMax, 0} {
		checkDigestsAgree(t, kept)
	}
}

// checkDigestsAgree is TestDigestsAgreeWithLive with at most kept digests
// kept for removals: with none, every window a removal touched must be
// dirty, for the comparison to read it.
func checkDigestsAgree(t *testing.T, kept int) {
	defer func(m int) { digestCacheMax = m }(digestCacheMax)
	digestCacheMax = kept
	streams, dirty := 0, 0
	for _, bs := range allStores(t) {
		fsys := os.DirFS(bs.Root)
		for _, dir := range streamDirs(t, bs.Root) {
			seq, err := ScanStream(fsys, dir, ScanOptions{DigestWindow: 8, Workers: 1, SkipConsumers: true})
			if err != nil || seq.Encrypted {
				continue
			}
			par, err := ScanStream(fsys, dir, ScanOptions{DigestWindow: 8, Workers: 4, SkipConsumers: true})
			if err != nil {
				t.Fatal(err)
			}
			streams++
			name := bs.String() + " " + dir
			if !reflect.DeepEqual(seq.Windows(), par.Windows()) {
				t.Errorf("%s: windows differ with 1 and 4 workers (digests kept %d)", name, kept)
			}
			var n, lo, hi uint64
			for r := range seq.Live().Ranges() {
				if n > 0 && r.First <= hi+1 {
					t.Errorf("%s: ranges not ascending and apart at %v", name, r)
				}
				if n == 0 {
					lo = r.First
				}
				hi = r.Last
				n += r.Last - r.First + 1
			}
			if n != seq.State.Msgs || (n > 0 && (lo != seq.State.FirstSeq || hi != seq.State.LastSeq)) {
				t.Errorf("%s: live ranges hold %d sequences %d..%d, state %+v", name, n, lo, hi, seq.State)
			}
			read := map[uint64]WindowDigest{}
			count := uint64(0)
			err = seq.Live().Messages(fsys, 0, ^uint64(0), func(s, d uint64) {
				w := read[s/8]
				w.Window, w.Sum, w.Count = s/8, w.Sum+d, w.Count+1
				read[s/8] = w
				count++
			})
			if err != nil {
				t.Fatal(err)
			}
			if count != seq.State.Msgs {
				t.Errorf("%s: Messages gave %d, state holds %d", name, count, seq.State.Msgs)
			}
			for _, w := range seq.Windows() {
				if w.Dirty {
					dirty++
				}
				if !w.Dirty && read[w.Window] != w {
					t.Errorf("%s: window %d scanned %+v, read back %+v", name, w.Window, w, read[w.Window])
				}
			}
		}
	}
	if streams == 0 {
		t.Fatal("no stream scanned")
	}
	// The stores hold removals after the read (KV history, tombstones,
	// max_bytes): without kept digests some window must be dirty.
	if kept == 0 && dirty == 0 {
		t.Error("no window marked dirty without kept digests")
	}
	if kept > 0 && dirty > 0 {
		t.Errorf("%d windows dirty with digests kept", dirty)
	}
}

// TestMessagesAgreeWithLive: on every stream of every committed store, the
// message records ScanOptions.Messages hands over (block by block, in
// order) are the same whatever the number of blocks read at once, ascend
// within each block, and, kept where Live holds them, are exactly the live
// messages read back by Live.Messages, digests included: what the replica
// comparison merges in lockstep and then cuts to the live messages.
func TestMessagesAgreeWithLive(t *testing.T) {
	type rec struct{ seq, digest uint64 }
	streams := 0
	for _, bs := range allStores(t) {
		fsys := os.DirFS(bs.Root)
		for _, dir := range streamDirs(t, bs.Root) {
			var runs [2][][]rec
			var scans [2]*StreamScan
			for k, workers := range []int{1, 4} {
				opts := ScanOptions{Workers: workers, SkipConsumers: true, Messages: func(seqs, digests []uint64) {
					var blk []rec
					for i := range seqs {
						if i > 0 && seqs[i] <= seqs[i-1] {
							t.Errorf("%s: sequence %d after %d in one block", dir, seqs[i], seqs[i-1])
						}
						blk = append(blk, rec{seqs[i], digests[i]})
					}
					runs[k] = append(runs[k], blk)
				}}
				sc, err := ScanStream(fsys, dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				scans[k] = sc
			}
			if scans[0].Encrypted {
				continue
			}
			streams++
			if !reflect.DeepEqual(runs[0], runs[1]) {
				t.Errorf("%s: the records handed over depend on the workers", dir)
			}
			if len(runs[0]) != len(scans[0].Blocks) {
				t.Errorf("%s: %d calls for %d blocks", dir, len(runs[0]), len(scans[0].Blocks))
			}
			live := map[uint64]bool{}
			for r := range scans[0].Live().Ranges() {
				for s := r.First; s <= r.Last; s++ {
					live[s] = true
				}
			}
			var got, want []rec
			for _, blk := range runs[0] {
				for _, r := range blk {
					if live[r.seq] {
						got = append(got, r)
					}
				}
			}
			if err := scans[0].Live().Messages(fsys, 0, ^uint64(0), func(seq, d uint64) { want = append(want, rec{seq, d}) }); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %d live records handed over, %d live messages read back, or they differ", dir, len(got), len(want))
			}
		}
	}
	if streams == 0 {
		t.Fatal("no stream scanned")
	}
}

// countOpens counts the opens of every file of an fs.FS.
type countOpens struct {
	fs.FS
	mu sync.Mutex // a scan opens blocks from more than one goroutine
	n  map[string]int
}

func (c *countOpens) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

// TestScanFromHead: on every stream of every committed store, a scan handed
// the folder's head (ReadHead, read first) gives what a scan of its own
// gives, and meta.inf and meta.sum are opened once in all.
func TestScanFromHead(t *testing.T) {
	streams := 0
	for _, bs := range allStores(t) {
		for _, dir := range streamDirs(t, bs.Root) {
			fsys := &countOpens{FS: os.DirFS(bs.Root), n: map[string]int{}}
			whole, err := ScanStream(fsys, dir, ScanOptions{SkipFirstTS: true})
			if err != nil {
				continue
			}
			clear(fsys.n)
			h, err := ReadHead(fsys, dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if h.Name() != whole.Name {
				t.Errorf("%s: head names %q, the scan %q", dir, h.Name(), whole.Name)
			}
			got, err := ScanStream(fsys, dir, ScanOptions{SkipFirstTS: true, Head: h})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, whole) {
				t.Errorf("%s: the scan from its head differs", dir)
			}
			for _, f := range []string{"meta.inf", "meta.sum"} {
				if n := fsys.n[path.Join(dir, f)]; n > 1 {
					t.Errorf("%s/%s opened %d times", dir, f, n)
				}
			}
			streams++
		}
	}
	if streams == 0 {
		t.Fatal("no stream scanned")
	}
}
