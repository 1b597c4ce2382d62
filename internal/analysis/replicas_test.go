package analysis

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
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
func loadCounting(t *testing.T, p string) (*model.Model, map[string]int, fs.FS) {
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
// stores opens each stream's message blocks once: figures, liveness and the
// replica comparison (copies read in lockstep) come from the same read, also
// where copies differ. On old main the blocks holding a sequence where
// copies differed were read again (membership-v2.12.1).
func TestStreamBlocksReadOnce(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			m, opens, _ := loadCounting(t, fx.forms[0])
			blocks := 0
			for name, n := range opens {
				if !strings.Contains(name, "/streams/") || !strings.HasSuffix(name, ".blk") {
					continue
				}
				blocks++
				if n != 1 {
					t.Errorf("%s opened %d times, want 1", name, n)
				}
			}
			if blocks == 0 && len(m.Streams) > 0 && len(m.Streams[0].Copies) > 0 && !encrypted(fx) {
				t.Errorf("no stream block opened")
			}
		})
	}
}

// TestLockstepEqualsMessageByMessage: on every committed bundle and damaged
// store (folder form), the divergence the lockstep comparison finds is,
// sequence by sequence, what comparing every live message of every compared
// copy gives (each copy scanned again here and its live messages read whole,
// as the old per-window drill read them where windows differed): the same
// ranges and the same sides. No copy is compared by reading it again, and
// no record is left out for overlapping blocks.
func TestLockstepEqualsMessageByMessage(t *testing.T) {
	var dirs []string
	for _, fx := range fixtures(t) {
		if !encrypted(fx) && strings.HasSuffix(fx.forms[0], "bundle") {
			dirs = append(dirs, fx.forms[0])
		}
	}
	more, _ := filepath.Glob(filepath.Join(perturbedDir, "*", "bundle"))
	dirs = append(dirs, more...)
	compared, diverged := 0, 0
	for _, dir := range dirs {
		b, err := bundle.Open(dir, bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		m := Load(b)
		for _, n := range m.Notes {
			if strings.Contains(n, "were not read together") || strings.Contains(n, "overlap earlier blocks") {
				t.Errorf("%s: %s", dir, n)
			}
		}
		for _, st := range m.Streams {
			if st.Comparison == nil {
				continue
			}
			compared++
			want := liveDivergence(t, b.FS, st.Comparison.Copies)
			diverged += len(want)
			if !reflect.DeepEqual(st.Comparison.Diverged, want) {
				t.Errorf("%s: %s > %s: lockstep %+v, message by message %+v", dir, st.Account, st.Name, st.Comparison.Diverged, want)
			}
		}
		b.Close()
	}
	if compared == 0 || diverged == 0 {
		t.Errorf("%d streams compared, %d diverged spans: the fixtures no longer show both", compared, diverged)
	}
}

// liveDivergence compares the copies message by message: every live message
// of each (a scan of its own, then Live.Messages over every sequence).
func liveDivergence(t *testing.T, fsys fs.FS, copies []*model.StreamCopy) []model.DivergedSpan {
	t.Helper()
	type held struct {
		copy   int
		digest uint64
	}
	bySeq := map[uint64][]held{}
	for j, c := range copies {
		scan, err := storeparse.ScanStream(fsys, c.Path, storeparse.ScanOptions{SkipFirstTS: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := scan.Live().Messages(fsys, 0, ^uint64(0), func(seq, d uint64) { bySeq[seq] = append(bySeq[seq], held{j, d}) }); err != nil {
			t.Fatal(err)
		}
	}
	seqs := make([]uint64, 0, len(bySeq))
	for s := range bySeq {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var out []model.DivergedSpan
	for _, s := range seqs {
		sides := map[uint64]uint64{}
		for _, h := range bySeq[s] {
			sides[h.digest] |= 1 << h.copy
		}
		if len(sides) < 2 {
			continue
		}
		ms := slices.Sorted(maps.Values(sides))
		if n := len(out); n > 0 && out[n-1].Last+1 == s && slices.Equal(out[n-1].Sides, ms) {
			out[n-1].Last = s
			continue
		}
		out = append(out, model.DivergedSpan{Range: report.Range{First: s, Last: s}, Sides: ms})
	}
	return out
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
	if !strings.HasPrefix(g.Remedy, "What this destroys: at its start n2's replica takes the stream leader's state") ||
		!strings.Contains(g.Remedy, "\nSave first: only 2 copies of those sequences exist (n1, n3): copy those stream folders out and do not remove or peer-remove") ||
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

// TestCopyInAnotherFolderReadTogether: a copy whose folder is not named for
// its stream (n1's RECORDS of membership-v2.12.1 moved to another folder
// name on a copy of the real state; its meta.inf still names RECORDS and its
// meta.sum still verifies) is read with the stream's other copies, as its
// head names it: the same divergence as the real state, and every block
// opened once. On old main that copy was scanned without digests and read
// again for them (sumDigests).
func TestCopyInAnotherFolderReadTogether(t *testing.T) {
	src := bundlesDir + "/membership-v2.12.1/bundle"
	dir := copyTree(t, src)
	from := filepath.Join(dir, "n1/data/jetstream/APP/streams/RECORDS")
	if err := os.Rename(from, from+"-moved"); err != nil {
		t.Fatal(err)
	}
	want, _, _ := loadCounting(t, src)
	got, opens, _ := loadCounting(t, dir)
	comparison := func(m *model.Model) *model.ReplicaComparison {
		for _, st := range m.Streams {
			if st.Account == "APP" && st.Name == "RECORDS" {
				return st.Comparison
			}
		}
		return nil
	}
	w, g := comparison(want), comparison(got)
	if w == nil || g == nil || len(w.Diverged) == 0 {
		t.Fatalf("RECORDS compared: real state %v, moved folder %v (or no divergence)", w != nil, g != nil)
	}
	if len(g.Copies) != len(w.Copies) || !reflect.DeepEqual(g.Diverged, w.Diverged) || !reflect.DeepEqual(g.Coverage, w.Coverage) {
		t.Errorf("moved folder: %d copies, diverged %+v, coverage %+v; real state %d, %+v, %+v", len(g.Copies), g.Diverged, g.Coverage, len(w.Copies), w.Diverged, w.Coverage)
	}
	for name, n := range opens {
		if strings.HasSuffix(name, ".blk") && n != 1 {
			t.Errorf("%s opened %d times", name, n)
		}
	}
	for _, n := range got.Notes {
		if strings.Contains(n, "were not read together") {
			t.Errorf("note: %s", n)
		}
	}
}
