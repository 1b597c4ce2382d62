package analysis

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// damageBundle is the committed real-server bundle FuzzDamagedBundle damages:
// small (1 MiB, 159 files) and holding every file kind the analyzer reads:
// message blocks, index.db, meta.inf/meta.sum, consumer o.dat, raft WAL,
// peers.idx, tav.idx, commit.idx, snapshots, /jsz /raftz /varz captures, logs.
const damageBundle = "v2.15.2-flat"

// runBudget bounds one analysis of the damaged copy. The undamaged bundle
// takes well under a second; the budget is wide because the fuzzing machine
// is shared and loaded.
const runBudget = 30 * time.Second

// A damageKind is one way a file is broken.
type damageKind uint8

const (
	damageFlip      damageKind = iota // one bit flipped
	damageTruncate                    // cut to a shorter length, possibly 0
	damageZero                        // a range set to zero bytes
	damageRandom                      // content replaced by random bytes
	damageDelete                      // file removed
	damageDirectory                   // an empty directory in the file's place
	damageDouble                      // content written twice in a row
	damageCopy                        // a second file with the same content beside it
	damageKinds

	// damageEmptied is not drawn by the fuzzer: it marks a file that
	// truncation or an empty random replacement left with no bytes.
	damageEmptied = damageKinds
)

func (k damageKind) String() string {
	return [...]string{"flip", "truncate", "zero", "random", "delete", "directory", "double", "copy", "emptied"}[k]
}

// A damage is one decoded fuzz operation: kind applied to file (an index
// into the sorted file list), with two parameters whose meaning depends on
// the kind.
type damage struct {
	file int
	kind damageKind
	a, b uint16
}

// damageOpSize is the bytes one damage takes in the fuzz input:
// file, kind, a (2 bytes), b (2 bytes).
const damageOpSize = 6

// maxDamages bounds the damages one input applies, to keep each execution
// short; more than a handful of broken files finds nothing new.
const maxDamages = 8

// decodeDamages reads the fuzz input as a list of damages.
func decodeDamages(data []byte, files int) []damage {
	var ds []damage
	for len(data) >= damageOpSize && len(ds) < maxDamages {
		ds = append(ds, damage{
			file: int(data[0]) % files,
			kind: damageKind(data[1] % byte(damageKinds)),
			a:    uint16(data[2])<<8 | uint16(data[3]),
			b:    uint16(data[4])<<8 | uint16(data[5]),
		})
		data = data[damageOpSize:]
	}
	return ds
}

func (d damage) encode() []byte {
	return []byte{byte(d.file), byte(d.kind), byte(d.a >> 8), byte(d.a), byte(d.b >> 8), byte(d.b)}
}

// scaled maps a to an offset in [0, n): a fraction a/65536 of n, so the
// same parameter reaches every part of a file of any size.
func scaled(a uint16, n int) int { return int(uint64(a) * uint64(n) >> 16) }

// fileState is what one file of the damaged copy becomes; a file with no
// state is a hard link to the pristine copy.
type fileState struct {
	data    []byte
	deleted bool
	dir     bool
}

// apply applies d to the content in st (a file, not deleted) and returns
// the path of a new sibling file for damageCopy, or "".
func (d damage) apply(st *fileState, rel string) (sibling string) {
	b := st.data
	switch d.kind {
	case damageFlip:
		if len(b) > 0 {
			b[scaled(d.a, len(b))] ^= 1 << (d.b % 8)
		}
	case damageTruncate:
		st.data = b[:scaled(d.a, len(b))]
	case damageZero:
		if len(b) > 0 {
			from := scaled(d.a, len(b))
			clear(b[from:min(len(b), from+int(d.b)+1)])
		}
	case damageRandom:
		rng := rand.New(rand.NewPCG(uint64(d.a), uint64(d.b)))
		st.data = make([]byte, int(d.b))
		for i := range st.data {
			st.data[i] = byte(rng.Uint32())
		}
	case damageDelete:
		st.deleted = true
	case damageDirectory:
		st.dir = true
	case damageDouble:
		st.data = append(slices.Clip(b), b...)
	case damageCopy:
		return copyName(rel, int(d.a))
	}
	return ""
}

// copyName names a duplicate of rel that the analyzer still takes for the
// same kind of file: a numbered message block gets another number, anything
// else a suffix before its extension.
func copyName(rel string, n int) string {
	dir, base := path.Split(rel)
	if num, ok := strings.CutSuffix(base, ".blk"); ok {
		if i, err := strconv.Atoi(num); err == nil {
			return dir + strconv.Itoa(i+1+n%16) + ".blk"
		}
	}
	ext := path.Ext(base)
	return dir + strings.TrimSuffix(base, ext) + "-copy" + ext
}

// pristineTree is one copy of the bundle that every execution links to.
type pristineTree struct {
	root  string
	dirs  []string // relative, slash-separated, parents first
	files []string // relative, slash-separated, sorted
}

func newPristineTree(tb testing.TB, src string) *pristineTree {
	tb.Helper()
	p := &pristineTree{root: tb.TempDir()}
	err := filepath.WalkDir(src, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, name)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				p.dirs = append(p.dirs, rel)
			}
			return os.MkdirAll(filepath.Join(p.root, rel), 0o755)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		p.files = append(p.files, rel)
		return os.WriteFile(filepath.Join(p.root, rel), b, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(p.files)
	return p
}

// damaged builds in dst the pristine tree with ds applied: undamaged files
// are hard links (cheap, and a write through one would show in the digest),
// damaged ones new files. It returns the damaged files with the last damage
// kind of each, and the content each damaged file now has.
func (p *pristineTree) damaged(t *testing.T, dst string, ds []damage) (hit map[string]damageKind, content map[string][]byte) {
	t.Helper()
	states := map[string]*fileState{}
	hit = map[string]damageKind{}
	var copies []string
	for _, d := range ds {
		rel := p.files[d.file]
		st := states[rel]
		if st == nil {
			b, err := os.ReadFile(filepath.Join(p.root, rel))
			if err != nil {
				t.Fatal(err)
			}
			st = &fileState{data: b}
			states[rel] = st
		}
		if st.deleted || st.dir {
			continue // nothing left to damage
		}
		if sib := d.apply(st, rel); sib != "" && !slices.Contains(p.files, sib) && !slices.Contains(copies, sib) {
			copies = append(copies, sib)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, sib)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, sib), st.data, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if d.kind != damageCopy {
			hit[rel] = d.kind
		}
	}
	for rel, st := range states {
		if len(st.data) == 0 && hit[rel] != damageDelete && hit[rel] != damageDirectory {
			hit[rel] = damageEmptied
		}
		// A damage that changed nothing (zeros over zeros, a cut at the
		// end) leaves nothing to name.
		if orig, err := os.ReadFile(filepath.Join(p.root, rel)); err == nil && !st.deleted && !st.dir && bytes.Equal(orig, st.data) {
			delete(states, rel)
			delete(hit, rel)
		}
	}
	for _, dir := range p.dirs {
		if err := os.MkdirAll(filepath.Join(dst, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range p.files {
		st, target := states[rel], filepath.Join(dst, rel)
		var err error
		switch {
		case st == nil:
			err = os.Link(filepath.Join(p.root, rel), target)
		case st.deleted:
		case st.dir:
			err = os.Mkdir(target, 0o755)
		default:
			err = os.WriteFile(target, st.data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	content = map[string][]byte{}
	for rel, st := range states {
		content[rel] = st.data
	}
	return hit, content
}

// bundleDigest hashes every path, type and content under root.
func bundleDigest(t *testing.T, root string) map[string]string {
	t.Helper()
	digest := map[string]string{}
	err := filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, name)
		if d.IsDir() {
			digest[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		digest[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// named reports whether some finding or note of rep names the file rel.
func namesFile(rep *report.Report, rel string) bool {
	for _, f := range rep.Findings {
		if strings.Contains(f.File, rel) || strings.Contains(f.Message, rel) || slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, rel) }) {
			return true
		}
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, rel) {
			return true
		}
	}
	return false
}

// mustBeNamed reports whether damage of kind to the file rel must be named
// by a finding or a note. Left out: damage no decoder can see in general (a
// consumer's o.dat, peers.idx and tav.idx have no checksum, so a flipped or
// zeroed byte can decode to another valid state; a changed log line or JSON
// string is still a line or a document, a capture cut after its last brace
// still decodes, and a doubled one reads as its first copy), a deleted file
// (a store without a block leaves no trace of it), and a raft WAL's meta.inf
// and meta.sum, which nats-server writes and never reads back (v2.15.2
// filestore.go newFileStoreWithCreated).
func mustBeNamed(rel string, kind damageKind) bool {
	if kind == damageCopy || kind == damageDelete {
		return false
	}
	unchecked := kind == damageFlip || kind == damageZero
	switch damagedFileKind(rel) {
	case "block":
		// An empty block is also what the server leaves when it opens a
		// new one; only index.db tells the loss, and it may be damaged too.
		return kind != damageEmptied
	case "raft WAL block":
		return kind != damageEmptied
	case "index.db", "raft WAL index.db", "raft snapshot",
		"meta.inf", "meta.sum", "consumer meta.inf", "consumer meta.sum", "commit.idx":
		return true
	case "consumer o.dat", "peers.idx":
		return !unchecked
	case "tav.idx":
		return !unchecked && kind != damageTruncate
	case "log":
		return kind == damageDirectory || kind == damageEmptied
	}
	if strings.HasPrefix(damagedFileKind(rel), "capture ") {
		return kind == damageZero || kind == damageRandom || kind == damageDirectory || kind == damageEmptied
	}
	return false
}

// namesDamage reports whether rep names the damaged file rel, whose
// pristine content was orig and damaged content now. A meta.inf changed only
// in the fields the blame cannot compare (Created is each server's own,
// metadata gains server keys) reads as a changed meta.sum, which names the
// same stream folder; any other change must name meta.inf itself. For a
// consumer the analysis does not tell which of the two changed (the
// finding names meta.sum and the hash meta.inf has), so the pair counts.
func namesDamage(rep *report.Report, rel string, orig, now []byte) bool {
	if namesFile(rep, rel) {
		return true
	}
	dir, ok := strings.CutSuffix(rel, "/meta.inf")
	if !ok || !namesFile(rep, dir+"/meta.sum") {
		return false
	}
	if strings.Contains(rel, "/obs/") {
		return true
	}
	var before, after map[string]json.RawMessage
	if json.Unmarshal(orig, &before) != nil || json.Unmarshal(now, &after) != nil {
		return false
	}
	for _, k := range []string{"Created", "metadata"} {
		delete(before, k)
		delete(after, k)
	}
	return maps.EqualFunc(before, after, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
}

// FuzzDamagedBundle damages a whole real bundle: the input chooses which
// files to break and how (see damage), applied to a hard-linked copy. The
// analysis must not panic (a guard catching one is a note, and fails),
// must finish within runBudget, must leave the copy byte-identical, and must
// name each damaged file that mustBeNamed says it can see.
func FuzzDamagedBundle(f *testing.F) {
	p := newPristineTree(f, filepath.Join(bundlesDir, damageBundle, "bundle"))
	if len(p.files) > 256 {
		f.Fatalf("%s has %d files; a damage names its file in one byte", damageBundle, len(p.files))
	}
	index := func(suffix string) int {
		for i, rel := range p.files {
			if strings.HasSuffix(rel, suffix) {
				return i
			}
		}
		f.Fatalf("no file ending in %s in %s", suffix, damageBundle)
		return 0
	}
	seeds := []string{"ORDERS/msgs/1.blk", "ORDERS/msgs/index.db", "ORDERS/meta.inf", "PROC/o.dat",
		"_meta_/peers.idx", "_meta_/tav.idx", "_meta_/commit.idx", "_meta_/msgs/2.blk", "n1-jsz.json", "n1-raftz.json", "n1.log"}
	for _, s := range seeds {
		for k := range damageKinds {
			f.Add(damage{file: index(s), kind: k, a: 0x8000, b: 3}.encode())
		}
	}
	// Several files at once: a store's block and its index, and the
	// capture that describes it.
	f.Add(slices.Concat(damage{file: index("ORDERS/msgs/1.blk"), kind: damageTruncate}.encode(),
		damage{file: index("ORDERS/msgs/index.db"), kind: damageRandom, a: 1, b: 200}.encode(),
		damage{file: index("n1-jsz.json"), kind: damageZero, a: 0x4000, b: 1000}.encode()))

	f.Fuzz(func(t *testing.T, data []byte) {
		ds := decodeDamages(data, len(p.files))
		dir := t.TempDir()
		hit, content := p.damaged(t, dir, ds)
		before := bundleDigest(t, dir)

		type result struct {
			rep *report.Report
			err error
		}
		done := make(chan result, 1)
		go func() {
			rep, err := Run(dir, Options{})
			done <- result{rep, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(runBudget):
			t.Fatalf("%s: analysis not done after %v", p.describe(ds), runBudget)
		}
		if res.err != nil {
			t.Fatalf("%s: %v", p.describe(ds), res.err)
		}
		for _, n := range res.rep.Notes {
			if strings.Contains(n, "internal error") || strings.Contains(n, "not run") {
				t.Errorf("%s: %s", p.describe(ds), n)
			}
		}
		after := bundleDigest(t, dir)
		if !maps.Equal(before, after) {
			t.Errorf("%s: the bundle changed during analysis", p.describe(ds))
		}
		for rel, kind := range hit {
			orig, err := os.ReadFile(filepath.Join(p.root, rel))
			if err != nil {
				t.Fatal(err)
			}
			if kind == damageDouble && onlyTombstones(rel, orig) {
				// A tombstone read twice is the same deletion to the
				// server: its rebuild only adds the sequence to the
				// deleted set again (filestore.go
				// rebuildStateFromBufLocked). Nothing changes, nothing to
				// name (corpus raft-wal-block-doubled).
				continue
			}
			if checksumBlind(rel, orig, content[rel]) {
				// The record checksum covers sequence, time, subject,
				// header and payload bytes, not the lengths that split
				// them (filestore.go writeMsgRecord): a flipped subject
				// length moves the boundary and the checksum still holds.
				// The server serves the message under the shifted
				// subject; nothing in the block tells (corpus
				// block-subject-length-flip: "tmp.y" read as "tmp.").
				continue
			}
			if mustBeNamed(rel, kind) && !namesDamage(res.rep, rel, orig, content[rel]) {
				t.Errorf("%s: %s (%s): no finding or note names it", p.describe(ds), rel, kind)
			}
		}
	})
}

// onlyTombstones reports whether the block rel, with content b, holds
// tombstones and nothing else.
func onlyTombstones(rel string, b []byte) bool {
	if !strings.HasSuffix(rel, ".blk") {
		return false
	}
	key := path.Base(path.Dir(path.Dir(rel))) + "-" + strings.TrimSuffix(path.Base(rel), ".blk")
	br, err := storeparse.NewBlockReader(rel, bytes.NewReader(b), int64(len(b)), key)
	if err != nil {
		return false
	}
	n := 0
	for {
		r, err := br.Next()
		if err == io.EOF {
			return n > 0
		}
		if err != nil || !r.Tombstone {
			return false
		}
		n++
	}
}

// checksumBlind reports whether the block rel, once orig and now damaged,
// decodes to the same records under valid checksums, with the same bytes
// split otherwise between subject, header and payload.
func checksumBlind(rel string, orig, now []byte) bool {
	if !strings.HasSuffix(rel, ".blk") || bytes.Equal(orig, now) || len(orig) != len(now) {
		return false
	}
	key := path.Base(path.Dir(path.Dir(rel))) + "-" + strings.TrimSuffix(path.Base(rel), ".blk")
	a, err1 := storeparse.NewBlockReader(rel, bytes.NewReader(orig), int64(len(orig)), key)
	b, err2 := storeparse.NewBlockReader(rel, bytes.NewReader(now), int64(len(now)), key)
	if err1 != nil || err2 != nil {
		return false
	}
	shifted := false
	for {
		ra, ea := a.Next()
		rb, eb := b.Next()
		if ea == io.EOF && eb == io.EOF {
			return shifted
		}
		if ea != nil || eb != nil || !ra.ChecksumOK || !rb.ChecksumOK || ra.Seq != rb.Seq || ra.TS != rb.TS || ra.Offset != rb.Offset || ra.Len != rb.Len {
			return false
		}
		wa := slices.Concat(ra.Subject, ra.Header, ra.Data)
		wb := slices.Concat(rb.Subject, rb.Header, rb.Data)
		if !bytes.Equal(wa, wb) {
			return false
		}
		shifted = shifted || !bytes.Equal(ra.Subject, rb.Subject)
	}
}

// describe lists ds with the files they break, for failure messages.
func (p *pristineTree) describe(ds []damage) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s(%d,%d)", d.kind, p.files[d.file], d.a, d.b))
	}
	return strings.Join(parts, "; ")
}

// damagedFileKind names the kind of file rel is, as far as mustBeNamed
// tells kinds apart; "" for files the analyzer does not read.
func damagedFileKind(rel string) string {
	base := path.Base(rel)
	switch {
	case strings.HasSuffix(base, ".log"):
		return "log"
	case strings.HasSuffix(base, ".json"):
		return "capture " + base[strings.LastIndexByte(base[:len(base)-len(".json")], '-')+1:]
	case strings.Contains(rel, "/_js_/") && strings.Contains(rel, "/snapshots/"):
		return "raft snapshot"
	case strings.Contains(rel, "/_js_/") && strings.HasSuffix(base, ".blk"):
		return "raft WAL block"
	case strings.Contains(rel, "/_js_/") && (base == "index.db" || base == "meta.inf" || base == "meta.sum"):
		return "raft WAL " + base
	case strings.HasSuffix(base, ".blk"):
		return "block"
	case strings.Contains(rel, "/obs/"):
		return "consumer " + base
	}
	return base
}
