package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// walBlockRe is a raft WAL block of a bundle: <store>/<sys>/_js_/<group>/msgs/N.blk.
var walBlockRe = regexp.MustCompile(`(?:^|/)_js_/[^/\s]+/msgs/\d+\.blk$`)

// walOffsetRe finds "<raft WAL block> at offset N" in a message or evidence.
var walOffsetRe = regexp.MustCompile(`(\S*/_js_/[^/\s]+/msgs/\d+\.blk) at offset (\d+)`)

// walPlace is one raft WAL offset an analyze report names.
type walPlace struct {
	file string // relative to the bundle
	off  int64
	what string // the finding, for messages
}

// walPlaces lists every raft WAL offset in the report's findings: the
// finding's file and offset, and "<file> at offset N" in its message and
// evidence.
func walPlaces(rep *report.Report) []walPlace {
	var out []walPlace
	seen := map[walPlace]bool{}
	add := func(p walPlace) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, f := range rep.Findings {
		what := f.Code + ": " + f.Message
		if f.Offset != nil && walBlockRe.MatchString(f.File) {
			add(walPlace{f.File, *f.Offset, what})
		}
		for _, s := range append([]string{f.Message}, f.Evidence...) {
			for _, m := range walOffsetRe.FindAllStringSubmatch(s, -1) {
				n, _ := strconv.ParseInt(m[2], 10, 64)
				add(walPlace{m[1], n, what})
			}
		}
	}
	return out
}

// dumpWALOffsets runs dump wal --json on a WAL block and returns the
// offsets of its lines, and of its error lines apart.
func dumpWALOffsets(t *testing.T, file string) (lines, errs map[int64]bool) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"dump", "wal", "--json", file}, &out, &errb); code != exitOK {
		t.Fatalf("dump wal %s: exit %d: %s", file, code, errb.String())
	}
	lines, errs = map[int64]bool{}, map[int64]bool{}
	for _, m := range checkDumpLines(t, file, out.Bytes()) {
		off, ok := m["offset"].(float64)
		if !ok {
			continue
		}
		lines[int64(off)] = true
		if m["record"] == "error" {
			errs[int64(off)] = true
		}
	}
	return lines, errs
}

// checkWALPlaces analyzes the directory bundle dir and holds every raft WAL
// offset its findings name to an offset dump wal prints for that file (an
// error line's when errorsOnly). It returns the places checked.
func checkWALPlaces(t *testing.T, dir string, errorsOnly bool) []walPlace {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal(runCLI(t, "analyze", "--format", "json", dir), &rep); err != nil {
		t.Fatal(err)
	}
	places := walPlaces(&rep)
	dumped := map[string][2]map[int64]bool{}
	for _, p := range places {
		d, ok := dumped[p.file]
		if !ok {
			l, e := dumpWALOffsets(t, filepath.Join(dir, filepath.FromSlash(p.file)))
			d = [2]map[int64]bool{l, e}
			dumped[p.file] = d
		}
		want := d[0]
		if errorsOnly {
			want = d[1]
		}
		if !want[p.off] {
			t.Errorf("%s: analyze names offset %d of %s, which dump wal prints no line at (error lines at %v)\n  finding: %s",
				filepath.Base(dir), p.off, p.file, keys(d[1]), p.what)
		}
	}
	return places
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAnalyzeWALOffsetsAreDumpOffsets: every raft WAL offset an analyze
// finding names, in every committed directory bundle, is one dump wal prints
// for that file; and on a copy of a real v2.12.1 bundle whose _meta_ WAL has
// three records damaged (frame intact, checksums recomputed as the server
// does: an op's JSON broken, an entry size past the record, a pindex that is
// not the record's sequence), the three findings name the offsets of
// dump wal's error lines.
func TestAnalyzeWALOffsetsAreDumpOffsets(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(bundles, "*", "bundle"))
	perturbed, _ := filepath.Glob(filepath.Join("../../testdata/perturbed", "*", "bundle"))
	for _, dir := range append(dirs, perturbed...) {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		checkWALPlaces(t, dir, false)
	}

	dir := copyBundle(t, filepath.Join(bundles, "lifecycle-v2.12.1", "bundle"))
	const meta = "store-lc-1/SYS/_js_/_meta_"
	snapIdx := uint64(11) // snapshots/snap.1.11: ops at or below it are compacted
	if _, err := os.Stat(filepath.Join(dir, meta, "snapshots", "snap.1.11")); err != nil {
		t.Fatal(err)
	}
	blk := filepath.Join(dir, meta, "msgs", "1.blk")
	used := map[uint64]bool{}
	// An op's JSON broken in the middle (a control byte inside a string).
	resealWAL(t, blk, "_meta_-1", func(seq uint64, ae *raftlog.AppendEntry, payload []byte) bool {
		if used[seq] || ae.Index() <= snapIdx || len(ae.Entries) == 0 || ae.Entries[0].Type != raftlog.EntryNormal || len(ae.Entries[0].Data) < 40 {
			return false
		}
		e := ae.Entries[0]
		payload[e.DataOffset+int64(len(e.Data))/2] = 0x01
		used[seq] = true
		return true
	})
	// The first entry's size running past the record.
	resealWAL(t, blk, "_meta_-1", func(seq uint64, ae *raftlog.AppendEntry, payload []byte) bool {
		if used[seq] || len(ae.Entries) == 0 {
			return false
		}
		binary.LittleEndian.PutUint32(payload[ae.Entries[0].Offset:], 0x7fffff00)
		used[seq] = true
		return true
	})
	// pindex+1 no longer the record's sequence.
	resealWAL(t, blk, "_meta_-1", func(seq uint64, ae *raftlog.AppendEntry, payload []byte) bool {
		if used[seq] || ae.Index() <= snapIdx {
			return false
		}
		binary.LittleEndian.PutUint64(payload[32:], ae.PIndex+100)
		used[seq] = true
		return true
	})
	var got []string
	for _, p := range checkWALPlaces(t, dir, true) {
		if strings.HasPrefix(p.file, meta+"/") {
			got = append(got, fmt.Sprintf("%d %s", p.off, p.what))
		}
	}
	for _, want := range []string{"JSON", "runs past the end", "holds raft index"} {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, want)
		}
		if !found {
			t.Errorf("no finding at an offset of %s says %q; got %q", meta+"/msgs/1.blk", want, got)
		}
	}
}

// resealWAL damages the first live record of the raft WAL block p that
// damage accepts: damage gets the record's append entry decoded with its
// payload at offset 0 and changes the payload in place (same length); the
// record's checksum is then computed again as nats-server computes it
// (HH64 keyed by "<group>-<block index>" over seq, ts, subject, headers
// and payload), so the frame holds and only the append entry is damaged.
func resealWAL(t *testing.T, p, key string, damage func(seq uint64, ae *raftlog.AppendEntry, payload []byte) bool) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	br, err := storeparse.NewBlockReader(p, bytes.NewReader(b), int64(len(b)), key)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := br.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no record to damage", path.Base(p))
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Tombstone || r.Erased {
			continue
		}
		ae, err := raftlog.DecodeAppendEntry(p, 0, r.Data)
		if err != nil {
			continue
		}
		end := r.Offset + int64(r.Len) - natsfmt.ChecksumLen
		payload := b[end-int64(len(r.Data)) : end]
		if !damage(r.Seq, ae, payload) {
			continue
		}
		rec := b[r.Offset : r.Offset+int64(r.Len)]
		sum, _ := natsfmt.RecordChecksum(binfmt.NewHH64(key), natsfmt.ParseRecordHeader(rec), rec)
		binary.LittleEndian.PutUint64(b[end:], sum)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
}
