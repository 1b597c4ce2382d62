package analysis

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// countingFS counts the opens of every file through a bundle's FS.
type countingFS struct {
	fs.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

// Stat and ReadDir go to the wrapped FS as they are (they read no content).
func (c *countingFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }
func (c *countingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(c.FS, name)
}

// loadCounting loads the bundle at p with every open of a file counted; it
// also returns the bundle's FS as it was, to read without counting.
func loadCounting(t *testing.T, p string) (*Model, map[string]int, fs.FS) {
	t.Helper()
	b, err := bundle.Open(p, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	plain := b.FS
	cfs := &countingFS{FS: plain, opens: map[string]int{}}
	b.FS = cfs
	return Load(b), cfs.opens, plain
}

// TestStreamBlocksReadOnce: a full analysis of every committed bundle with
// stores opens each stream's message blocks once (figures, window digests
// and liveness come from the same read), except the blocks the replica
// comparison reads again because copies differ there, and only those.
func TestStreamBlocksReadOnce(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			m, opens, plain := loadCounting(t, fx.forms[0])
			reread := map[string]bool{} // blocks holding a sequence where copies differ
			mayReread := map[string]bool{}
			for _, st := range m.Streams {
				if st.Comparison == nil {
					continue
				}
				for _, d := range st.Comparison.Diverged {
					for _, c := range st.Comparison.Copies {
						for _, f := range blocksHolding(t, plain, c, d.Range) {
							reread[f] = true
						}
					}
				}
				// A window that one copy holds fewer messages of (a replica
				// behind) has another count: it is read again to tell a gap
				// from divergence (scaledown-v2.12.1: a departed replica).
				for _, cv := range st.Comparison.Coverage {
					win := report.Range{First: cv.First / digestWindow * digestWindow, Last: (cv.Last/digestWindow+1)*digestWindow - 1}
					for _, c := range st.Comparison.Copies {
						for _, f := range blocksHolding(t, plain, c, win) {
							mayReread[f] = true
						}
					}
				}
			}
			blocks := 0
			for name, n := range opens {
				if !strings.Contains(name, "/streams/") || !strings.HasSuffix(name, ".blk") {
					continue
				}
				blocks++
				want := 1
				if reread[name] {
					want = 2
				}
				if n != want && !(mayReread[name] && n == 2) {
					t.Errorf("%s opened %d times, want %d", name, n, want)
				}
			}
			if blocks == 0 && len(m.Streams) > 0 && len(m.Streams[0].Copies) > 0 && !encrypted(fx) {
				t.Errorf("no stream block opened")
			}
		})
	}
}

// TestDigestsOnlyWhereCopiesMeet: copies of streams no other clustered store
// holds sum no message digests in their scan, and every compared copy has
// them (summed in a second read otherwise). A folder another store holds
// empty still has digests summed: the inventory cannot tell.
func TestDigestsOnlyWhereCopiesMeet(t *testing.T) {
	skipped, compared := 0, 0
	for _, fx := range fixtures(t) {
		b, err := bundle.Open(fx.forms[0], bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		m := Load(b)
		b.Close()
		for _, st := range m.Streams {
			clustered := 0
			for _, c := range st.Copies {
				if c.Clustered && !c.Encrypted {
					clustered++
				}
			}
			for _, c := range st.Copies {
				switch {
				case c.Encrypted:
				case clustered >= 2 && c.Clustered && c.noDigests:
					t.Errorf("%s: %s on %s: compared without digests", fx.name, st.Name, c.Path)
				case c.noDigests:
					skipped++
				case st.Comparison != nil:
					compared++
				}
			}
		}
	}
	if skipped == 0 || compared == 0 {
		t.Errorf("%d copies without digests, %d compared: the fixtures no longer show both", skipped, compared)
	}
}

// blocksHolding names the blocks of copy c holding a message in r.
func blocksHolding(t *testing.T, fsys fs.FS, c *StreamCopy, r report.Range) []string {
	t.Helper()
	ents, err := fs.ReadDir(fsys, path.Join(c.Path, "msgs"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".blk") {
			continue
		}
		name := path.Join(c.Path, "msgs", e.Name())
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		br, err := storeparse.NewBlockReader(name, strings.NewReader(string(b)), int64(len(b)), "")
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := br.Next()
			if err != nil && rec.Len == 0 {
				break
			}
			if !rec.Tombstone && rec.Seq >= r.First && rec.Seq <= r.Last {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// TestReplicaComparisonWindowIndependent: the findings on the bundle whose
// replicas diverge are the same whatever the window size, from one sequence
// per window (every sequence drilled into) to windows wider than the stream.
func TestReplicaComparisonWindowIndependent(t *testing.T) {
	p := bundlesDir + "/membership-v2.12.1/bundle"
	defer func(w uint64) { digestWindow = w }(digestWindow)
	var first []report.Finding
	for _, w := range []uint64{storeparse.DefaultDigestWindow, 1, 7, 64, 1 << 30} {
		digestWindow = w
		var got []report.Finding
		for _, f := range analyze(t, p).Findings {
			if f.Code == "replica-divergence" || f.Code == "replica-gap" {
				f.TimelineRefs = nil
				got = append(got, f)
			}
		}
		if first == nil {
			first = got
			if len(got) != 1 || got[0].Code != "replica-divergence" || len(got[0].Ranges) != 1 || got[0].Ranges[0] != (report.Range{First: 1, Last: 186}) ||
				!strings.Contains(strings.Join(got[0].Evidence, "\n"), "content differs between n1,n3 | n2,n4,n5") {
				b, _ := json.MarshalIndent(got, "", " ")
				t.Fatalf("window %d: %s", w, b)
			}
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Errorf("window %d gives other findings:\n%+v\nwant\n%+v", w, got, first)
		}
	}
}

// Cutting records out of a replica's block, at record boundaries (a small
// function on a copy of real-server state): the replica then lacks them as a
// lagging or damaged replica would. index.db is removed so the copy is what
// the server rebuilds from its blocks, with no index-mismatch.
const (
	flatBundle  = bundlesDir + "/v2.15.2-flat/bundle"
	ordersBlock = "$G/streams/ORDERS/msgs/1.blk"
)

// cutRecords removes from the block at p the message records for which cut
// says so, keeping every other record byte for byte.
func cutRecords(t *testing.T, p string, cut func(seq uint64) bool) (removed []uint64) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	br, err := storeparse.NewBlockReader(p, strings.NewReader(string(b)), int64(len(b)), "")
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for {
		r, err := br.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !r.Tombstone && !r.Erased && r.Seq != 0 && cut(r.Seq) {
			removed = append(removed, r.Seq)
			continue
		}
		out = append(out, b[r.Offset:r.Offset+int64(r.Len)]...)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(filepath.Dir(p), "index.db")); err != nil {
		t.Fatal(err)
	}
	return removed
}

func gapFindings(rep *report.Report) []report.Finding {
	var out []report.Finding
	for _, f := range rep.Findings {
		if f.Code == "replica-gap" {
			out = append(out, f)
		}
	}
	return out
}

// TestReplicaBehindIsAGap: an R3 replica holding 1..N while the two others
// hold 1..M is reported as behind, with the sequences only two copies hold,
// the servers holding them and whether the lagging server is up.
func TestReplicaBehindIsAGap(t *testing.T) {
	if gaps := gapFindings(analyze(t, flatBundle)); len(gaps) != 0 {
		t.Fatalf("healthy bundle: %+v", gaps)
	}
	dir := copyTree(t, flatBundle)
	removed := cutRecords(t, filepath.Join(dir, "store-n2", filepath.FromSlash(ordersBlock)), func(seq uint64) bool { return seq > 50 })
	if len(removed) == 0 {
		t.Fatal("nothing cut")
	}
	gaps := gapFindings(analyze(t, dir))
	if len(gaps) != 1 {
		t.Fatalf("want one gap finding, got %+v", gaps)
	}
	g := gaps[0]
	last := removed[len(removed)-1]
	if g.Kind != "behind" || g.Server != "n2" || g.Stream != "ORDERS" || g.Ranges[len(g.Ranges)-1].Last != last ||
		g.Ranges[0].First != 51 || !reflect.DeepEqual(g.Servers, []string{"n1", "n3"}) {
		t.Errorf("finding: %+v (cut %v)", g, removed)
	}
	for _, want := range []string{"2 full copies", "among the 3 current replicas", "n2 is down"} {
		if !strings.Contains(g.Message, want) {
			t.Errorf("message lacks %q: %s", want, g.Message)
		}
	}
	if !strings.HasPrefix(g.Remedy, "Save first: only 2 copies of those sequences exist (n1, n3): copy those stream folders out and do not remove or peer-remove") ||
		!strings.Contains(g.Remedy, "Start n2") {
		t.Errorf("remedy: %s", g.Remedy)
	}
}

// TestReplicaHoleIsAGap: a replica lacking messages inside its own range,
// with no deletion recorded, is reported as a hole.
func TestReplicaHoleIsAGap(t *testing.T) {
	dir := copyTree(t, flatBundle)
	removed := cutRecords(t, filepath.Join(dir, "store-n3", filepath.FromSlash(ordersBlock)), func(seq uint64) bool { return seq == 20 || seq == 21 })
	if !reflect.DeepEqual(removed, []uint64{20, 21}) {
		t.Fatalf("cut %v", removed)
	}
	gaps := gapFindings(analyze(t, dir))
	if len(gaps) != 1 || gaps[0].Kind != "hole" || gaps[0].Server != "n3" || !reflect.DeepEqual(gaps[0].Ranges, []report.Range{{First: 20, Last: 21}}) {
		t.Fatalf("%+v", gaps)
	}
	if !strings.Contains(gaps[0].Message, "2 full copies") {
		t.Errorf("message: %s", gaps[0].Message)
	}
	warnedBefore(t, gaps[0].Remedy, "nats stream cluster peer-remove ORDERS n3", "only 2 copies", "do not remove or peer-remove those servers",
		"deletes n3's copy", "copy n3's stream folder out", "dump blk FILE --json")
}

// resealPayload overwrites the payload of record r (read from block b) with
// other bytes and stores the checksum nats-server computes for it: HH64 of
// seq and ts, subject, headers and payload, keyed by "<stream>-<block>".
func resealPayload(b []byte, r storeparse.Record, key string) {
	end := r.Offset + int64(r.Len) - 8 // the checksum's offset
	payload := b[end-int64(len(r.Data)) : end]
	for i := range payload {
		payload[i] = 'x'
	}
	var seqTS [16]byte
	binary.LittleEndian.PutUint64(seqTS[:], r.Seq)
	binary.LittleEndian.PutUint64(seqTS[8:], uint64(r.TS))
	h := binfmt.NewHH64(key)
	for _, part := range [][]byte{seqTS[:], r.Subject, r.Header, payload} {
		h.Write(part)
	}
	binary.LittleEndian.PutUint64(b[end:], h.Sum64())
}
