package analysis

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// The corruption matrix: every file kind the analyzer reads, taken from a
// committed real-server bundle, broken by every damage kind, each on a
// fresh copy. A cell passes when the damaged file is located (a finding or
// note naming it, with a byte offset for a binary file) or when it is listed
// as harmless with the reason; panics, memory over matrixMemLimit and a
// changed input fail it too.

// matrixKind is one file kind: where to find a small real specimen.
type matrixKind struct {
	name   string
	bundle string // under bundlesDir
	file   string // inside the bundle; "" for the bundle file itself (an archive)
	binary bool   // a located damage must carry a byte offset
	// lenOff is the offset of a length or count field ("garbage length"),
	// magic the bytes a wrong magic writes at offset 0.
	lenOff int
	magic  []byte
}

const (
	mxFlat      = "v2.15.2-flat/bundle"
	mxLifecycle = "lifecycle-v2.12.1/bundle"
	sysJS       = "store-n1/$SYS/_js_/"
	streamGrp   = sysJS + "S-R3F-sxFOw9Rf/"
	metaGrp     = sysJS + "_meta_/"
	mxEvents    = "store-n1/$G/streams/EVENTS/"
)

// indexMagic is index.db's first byte: written at offset 0 of a file of
// another kind, it is "a file of the wrong kind".
var indexMagic = []byte{0x2a, 0x02}

var matrixKinds = []matrixKind{
	{name: "block plain", bundle: mxFlat, file: mxEvents + "msgs/1.blk", binary: true, lenOff: 0, magic: []byte("cmp\x02")},
	{name: "block S2", bundle: mxFlat, file: "store-n3/$G/streams/LOGS/msgs/6.blk", binary: true, lenOff: 5, magic: []byte("cmq\x01")},
	{name: "block tombstones", bundle: mxLifecycle, file: "store-lc-0/APP/streams/PURGED/msgs/1.blk", binary: true, lenOff: 0, magic: indexMagic},
	{name: "index.db", bundle: mxFlat, file: mxEvents + "msgs/index.db", binary: true, lenOff: 2, magic: []byte{0x16, 0x02}},
	{name: "meta.inf", bundle: mxFlat, file: mxEvents + "meta.inf", lenOff: -1, magic: []byte("[")},
	{name: "meta.sum", bundle: mxFlat, file: mxEvents + "meta.sum", lenOff: -1, magic: []byte("z")},
	{name: "o.dat", bundle: mxFlat, file: mxEvents + "obs/AUDIT/o.dat", binary: true, lenOff: 2, magic: indexMagic},
	{name: "consumer meta.inf", bundle: mxFlat, file: mxEvents + "obs/AUDIT/meta.inf", lenOff: -1, magic: []byte("[")},
	{name: "consumer meta.sum", bundle: mxFlat, file: mxEvents + "obs/AUDIT/meta.sum", lenOff: -1, magic: []byte("z")},
	{name: "peers.idx", bundle: mxFlat, file: streamGrp + "peers.idx", binary: true, lenOff: 4, magic: indexMagic},
	{name: "tav.idx", bundle: mxFlat, file: streamGrp + "tav.idx", binary: true, lenOff: 0, magic: indexMagic},
	{name: "commit.idx", bundle: mxFlat, file: metaGrp + "commit.idx", binary: true, lenOff: 0, magic: indexMagic},
	{name: "raft WAL block", bundle: mxFlat, file: streamGrp + "msgs/1.blk", binary: true, lenOff: 0, magic: []byte("cmp\x02")},
	{name: "raft snapshot", bundle: mxFlat, file: "store-n3/$SYS/_js_/C-R3F-eJ3WKFZf/snapshots/snap.1.7", binary: true, lenOff: 16, magic: indexMagic},
	{name: "raft snapshot _meta_", bundle: mxFlat, file: metaGrp + "snapshots/snap.1.11", binary: true, lenOff: 16, magic: indexMagic},
	{name: "capture /jsz", bundle: mxFlat, file: "n1-jsz.json", lenOff: -1, magic: []byte("[")},
	{name: "capture /raftz", bundle: mxFlat, file: "n1-raftz.json", lenOff: -1, magic: []byte("[")},
	{name: "capture /healthz", bundle: mxFlat, file: "n1-healthz.json", lenOff: -1, magic: []byte("[")},
	{name: "capture /varz", bundle: mxFlat, file: "n1-varz.json", lenOff: -1, magic: []byte("[")},
	{name: "natscli request lines", bundle: mxLifecycle, file: "natscli/server-request-jetstream.jsonl", lenOff: -1, magic: []byte("[")},
	{name: "log", bundle: mxFlat, file: "n1.log", lenOff: -1, magic: []byte("X")},
	{name: "audit archive", bundle: "audit-gather-v2.15.2/bundle.zip", binary: true, lenOff: 18, magic: []byte("PX")},
}

// matrixDamage is one damage kind, applied to a copy of the file at p.
type matrixDamage struct {
	name  string
	apply func(k matrixKind, p string) error
}

func damageBytes(f func(k matrixKind, b []byte) []byte) func(matrixKind, string) error {
	return func(k matrixKind, p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, f(k, b), 0o644)
	}
}

func flipAt(where func(n int) int) func(matrixKind, []byte) []byte {
	return func(_ matrixKind, b []byte) []byte {
		if len(b) > 0 {
			b[where(len(b))] ^= 1
		}
		return b
	}
}

var matrixDamages = []matrixDamage{
	{"flip first byte", damageBytes(flipAt(func(int) int { return 0 }))},
	{"flip middle byte", damageBytes(flipAt(func(n int) int { return n / 2 }))},
	{"flip last byte", damageBytes(flipAt(func(n int) int { return n - 1 }))},
	{"truncated to 0", damageBytes(func(_ matrixKind, b []byte) []byte { return nil })},
	{"truncated to half", damageBytes(func(_ matrixKind, b []byte) []byte { return b[:len(b)/2] })},
	{"last byte missing", damageBytes(func(_ matrixKind, b []byte) []byte { return b[:max(len(b)-1, 0)] })},
	{"last quarter zeroed", damageBytes(func(_ matrixKind, b []byte) []byte { clear(b[len(b)-len(b)/4:]); return b })},
	{"garbage length", damageBytes(func(k matrixKind, b []byte) []byte {
		off := k.lenOff
		if off < 0 {
			off = len(b) / 3
		}
		for i := off; i < off+4 && i < len(b); i++ {
			b[i] = 0xff
		}
		return b
	})},
	{"wrong magic", damageBytes(func(k matrixKind, b []byte) []byte {
		if len(b) < len(k.magic) {
			return k.magic
		}
		copy(b, k.magic)
		return b
	})},
	{"64 MiB random", func(_ matrixKind, p string) error { return os.WriteFile(p, randomBytes(), 0o644) }},
	{"directory", func(_ matrixKind, p string) error {
		if err := os.Remove(p); err != nil {
			return err
		}
		return os.Mkdir(p, 0o755)
	}},
	{"duplicated content", damageBytes(func(_ matrixKind, b []byte) []byte { return append(b, b...) })},
}

var random64 []byte

// randomBytes is one 64 MiB buffer of random bytes, made once.
func randomBytes() []byte {
	if random64 == nil {
		random64 = make([]byte, 64<<20)
		r := rand.New(rand.NewChaCha8([32]byte{11}))
		for i := 0; i+8 <= len(random64); i += 8 {
			v := r.Uint64()
			for j := range 8 {
				random64[i+j] = byte(v >> (8 * j))
			}
		}
	}
	return random64
}

// matrixHarmless are the cells where the damage changes nothing a reader of
// the bundle could be told, with the reason.
var matrixHarmless = map[string]string{
	"audit archive/garbage length":             "the first entry's local header size field: a zip is read through its central directory, whose sizes the reader uses (the local one matters only when the directory is lost, and then the CRC-32 still checks the entry)",
	"audit archive/duplicated content":         "the archive written twice: its end record and directory describe the second copy, which is read intact; the first is leading bytes, as a self-extracting stub is",
	"block tombstones/duplicated content":      "the same tombstone twice deletes the same sequence twice, a no-op for the server and for the scan",
	"capture /jsz/duplicated content":          "the same response twice in one file reads as that server's answer twice (as natscli writes one line per answer): the facts are the same",
	"capture /raftz/duplicated content":        "the same response twice in one file reads as that server's answer twice (as natscli writes one line per answer): the facts are the same",
	"capture /healthz/duplicated content":      "the same response twice in one file reads as that server's answer twice (as natscli writes one line per answer): the facts are the same",
	"capture /varz/duplicated content":         "the same response twice in one file reads as that server's answer twice (as natscli writes one line per answer): the facts are the same",
	"natscli request lines/duplicated content": "the same response twice in one file reads as that server's answer twice (as natscli writes one line per answer): the facts are the same",
	"capture /healthz/flip middle byte":        "a flipped bit in text that still parses changes one character of a value or line; captured JSON and logs carry no checksum that could tell it",
	"natscli request lines/flip middle byte":   "a flipped bit in text that still parses changes one character of a value or line; captured JSON and logs carry no checksum that could tell it",
	"log/flip first byte":                      "a flipped bit in text that still parses changes one character of a value or line; captured JSON and logs carry no checksum that could tell it",
	"log/flip middle byte":                     "a flipped bit in text that still parses changes one character of a value or line; captured JSON and logs carry no checksum that could tell it",
	"log/wrong magic":                          "a log has no magic: an X in place of the first character is a line that does not parse, counted among the lines of no known kind",
	"tav.idx/truncated to half":                "8 bytes, a term and no vote, is what a server that has not voted in its term writes (v2.10.22 followers do)",
	"tav.idx/flip first byte":                  "term 1 read as 0 under the group's term-1 entries: what every version writes when it learns its term by catching up (raft.go processAppendEntry writes tav.idx for new entries only), and a healthy v2.10.22 follower was seen holding term 0; nothing tells it from a real term (a note says so)",
	"tav.idx/wrong magic":                      "tav.idx has no magic: the 2 bytes written read as term 554, which a server cut off from its peers reaches by its own elections; nothing tells it from a real term",
	"log/last byte missing":                    "the last line still reads whole; only its newline is gone",
	"log/truncated to half":                    "a log ends where it ends: the lines before the cut are read, nothing says more were written",
	"log/duplicated content":                   "the same lines twice read as the same events, merged into one",
	"natscli request lines/last byte missing":  "the last line still decodes whole; only its newline is gone",
}

// matrixKnownMiss are cells not located yet; the test fails when one is
// located (take it off the list) as when a cell not listed is missed.
var matrixKnownMiss = map[string]string{}

const matrixMemLimit = 256 << 20

type matrixCounts struct{ cells, located, harmless, missed int }

// TestCorruptionMatrix runs every file kind × damage kind. With -short it
// runs the same cells (there is one specimen per kind); the table of counts
// is logged for the README.
func TestCorruptionMatrix(t *testing.T) {
	perKind := map[string]*matrixCounts{}
	copies := map[string]string{} // bundle -> one working copy, restored after each cell
	for _, k := range matrixKinds {
		if copies[k.bundle] == "" {
			copies[k.bundle] = matrixCopy(t, k.bundle)
		}
		n := &matrixCounts{}
		perKind[k.name] = n
		for _, d := range matrixDamages {
			cell := k.name + "/" + d.name
			t.Run(cell, func(t *testing.T) {
				n.cells++
				verdict := runMatrixCell(t, copies[k.bundle], k, d)
				_, harmless := matrixHarmless[cell]
				_, known := matrixKnownMiss[cell]
				switch {
				case verdict == "" && harmless:
					n.located++
					t.Errorf("listed harmless (%s) but located: take it off the list", matrixHarmless[cell])
				case verdict == "":
					n.located++
					if known {
						t.Errorf("listed as a known miss but located: take it off the list")
					}
				case harmless:
					n.harmless++
				case known:
					n.missed++
					t.Logf("known miss (%s): %s", matrixKnownMiss[cell], verdict)
				default:
					n.missed++
					t.Errorf("missed: %s", verdict)
				}
			})
		}
	}
	// Damage to one file kind costs the same whatever the damage: one
	// severity per kind (the issue found index.db critical when emptied,
	// a warning when cut).
	for _, k := range matrixKinds {
		seen := map[string]bool{}
		for _, s := range matrixSeverities[k.name] {
			seen[s[strings.LastIndex(s, ": ")+2:]] = true
		}
		if len(seen) > 1 {
			t.Errorf("severities of %s disagree: %s", k.name, strings.Join(matrixSeverities[k.name], ", "))
		}
	}
	// The table docs/development.md shows.
	var total matrixCounts
	table := "| file kind | cells | located | harmless | missed | severity |\n|---|---|---|---|---|---|\n"
	for _, k := range matrixKinds {
		n := perKind[k.name]
		sev := "-"
		if s := matrixSeverities[k.name]; len(s) > 0 {
			sev = s[0][strings.LastIndex(s[0], ": ")+2:]
		}
		table += fmt.Sprintf("| %s | %d | %d | %d | %d | %s |\n", k.name, n.cells, n.located, n.harmless, n.missed, sev)
		total.cells, total.located, total.harmless, total.missed = total.cells+n.cells, total.located+n.located, total.harmless+n.harmless, total.missed+n.missed
	}
	table += fmt.Sprintf("| **all** (%d kinds × %d damages) | %d | %d | %d | %d | |\n", len(matrixKinds), len(matrixDamages), total.cells, total.located, total.harmless, total.missed)
	t.Logf("corruption matrix:\n%s", table)
}

// matrixCopy copies a bundle (a folder, or an archive file into a folder of
// its own) and returns the folder.
func matrixCopy(t *testing.T, bundle string) string {
	src := filepath.Join(bundlesDir, bundle)
	if fi, err := os.Stat(src); err != nil || fi.IsDir() {
		return copyTree(t, src)
	}
	root := t.TempDir()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, filepath.Base(src)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// runMatrixCell damages one file of the working copy at root, analyzes it
// and puts the file back; it returns "" when the damage is located, else
// what was seen instead. Memory, panics and a changed input fail the test
// directly.
func runMatrixCell(t *testing.T, root string, k matrixKind, d matrixDamage) string {
	rel, open := k.file, root
	if k.file == "" {
		rel = filepath.Base(k.bundle)
		open = filepath.Join(root, rel)
	}
	target := filepath.Join(root, filepath.FromSlash(rel))
	orig, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if err := d.apply(k, target); err != nil {
		t.Fatal(err)
	}
	before := treeDigest(t, root)
	var rep *report.Report
	var runErr error
	peak := measurePeak(func() { rep, runErr = Run(open, Options{}) })
	if d.name == "64 MiB random" {
		// A file read whole costs about its size (68 MiB measured for
		// index.db, meta.inf, o.dat, snapshots), not a multiple (up to 207
		// MiB before); 2x leaves the collector its slack.
		t.Logf("heap grew by %d MiB at most", peak>>20)
		if peak > 2*64<<20 {
			t.Errorf("heap grew by %d MiB for a 64 MiB file: more than twice its size", peak>>20)
		}
	}
	if peak > matrixMemLimit {
		t.Errorf("heap grew by %d MiB (limit %d MiB)", peak>>20, matrixMemLimit>>20)
	}
	if after := treeDigest(t, root); after != before {
		t.Errorf("the bundle changed while analyzed")
	}
	if runErr != nil {
		// A bundle that cannot be opened at all: the error must name it.
		if strings.Contains(runErr.Error(), rel) && (!k.binary || strings.Contains(runErr.Error(), "offset")) {
			return ""
		}
		return fmt.Sprintf("error %v", runErr)
	}
	for _, note := range rep.Notes {
		if strings.Contains(note, "internal error") {
			t.Errorf("panic: %s", note)
		}
	}
	// A directory in place of a file has no bytes to point into.
	if sev, ok := locatedSeverity(rep, rel, k.binary && d.name != "directory"); ok {
		matrixSeverities[k.name] = append(matrixSeverities[k.name], d.name+": "+string(sev))
		return ""
	}
	return fmt.Sprintf("nothing names %s with an offset; notes %q; findings: %s", rel, rep.Notes, summarize(rep.Findings))
}

// locatedSeverity says whether a finding or note names file (with a byte
// offset when binary), and the highest severity of the findings that do
// ("note" when only a note does).
func locatedSeverity(rep *report.Report, file string, binary bool) (report.Severity, bool) {
	var sev report.Severity
	for _, f := range rep.Findings {
		if f.File == file || strings.Contains(f.Message, file) || slicesContains(f.Evidence, file) {
			if (!binary || f.Offset != nil) && (sev == "" || f.Severity.Rank() < sev.Rank()) {
				sev = f.Severity
			}
		}
	}
	if sev != "" {
		return sev, true
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, file) && (!binary || strings.Contains(n, "offset")) {
			return "note", true
		}
	}
	return "", false
}

// matrixSeverities collects, per file kind, the severity each damage got.
var matrixSeverities = map[string][]string{}

func slicesContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// treeDigest hashes every path, mode and content under root.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %v %d\n", p, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// measurePeak runs f and returns by how much the heap (live and unswept
// objects, sampled every millisecond) grew at most meanwhile.
func measurePeak(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				read()
			}
		}
	}()
	f()
	close(done)
	<-stopped
	read()
	return peak.Load() - min(base, peak.Load())
}
