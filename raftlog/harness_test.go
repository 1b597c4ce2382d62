package raftlog_test

// The test harness: every test here runs on files real nats-server binaries
// wrote, the generator's bundles under ../testdata/bundles/<name>/ (made by
// testdata/gen, with want.json derived from the servers' own captures): the
// directory bundles read in place, the archive bundles (bundle.zip) read
// in memory with archive/zip.
//
// Each server with a raft folder ($SYS/_js_) becomes a serverCase with what
// the server itself said (captures, startup banner), which the decoded files
// are checked against.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

type streamWant struct {
	Account, Name, Group string
	Consumers            []string
}

type groupWant struct {
	Size   int
	Term   uint64
	Peers  []string // sorted, including self
	Leader bool     // the server said it led the group
}

type serverCase struct {
	label   string // <bundle>/<server>, for messages
	bundle  string // the bundle's name: servers of one bundle share a meta layer
	version string // the server's version (its /varz), e.g. "2.12.1"
	name    string
	peerID  string // what the server reported as its own id
	js      fs.FS  // the _js_ folder
	groups  map[string]groupWant
	meta    *groupWant
	// streams the whole cluster reports (union over its servers' /jsz).
	streams []streamWant
	// banner maps "Name" and "Node" from the startup banner, when present.
	banner map[string]string
	// expect is the bundle's scenario expectation (nil: healthy);
	// clusterIDs the peer ids of all servers of the bundle.
	expect     json.RawMessage
	clusterIDs []string
	// disabled: its JetStream was off at the captures (want.json
	// jetstream_disabled): /raftz {}, no live view to compare with.
	disabled bool
}

func dedupStreams(in []streamWant) []streamWant {
	slices.SortFunc(in, func(a, b streamWant) int {
		return strings.Compare(a.Account+"\x00"+a.Name, b.Account+"\x00"+b.Name)
	})
	var out []streamWant
	for _, s := range in {
		if n := len(out); n > 0 && out[n-1].Account == s.Account && out[n-1].Name == s.Name {
			// A consumer is listed by the servers hosting it (R1 on one).
			out[n-1].Consumers = append(out[n-1].Consumers, s.Consumers...)
			continue
		}
		s.Consumers = slices.Clone(s.Consumers)
		out = append(out, s)
	}
	for i := range out {
		sort.Strings(out[i].Consumers)
		out[i].Consumers = slices.Compact(out[i].Consumers)
	}
	return out
}

// allServers returns the servers of the generator's bundles.
func allServers(t testing.TB) []*serverCase {
	out := loadBundleServers(t)
	if len(out) == 0 {
		t.Fatal("no bundle server under ../testdata/bundles")
	}
	return out
}

func groupsOf(t testing.TB, sc *serverCase) []string {
	t.Helper()
	ents, err := fs.ReadDir(sc.js, ".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func readFS(t testing.TB, fsys fs.FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshotOf returns the group's newest snapshot file name ("" if none).
func snapshotOf(fsys fs.FS, group string) (string, uint64, uint64) {
	ents, _ := fs.ReadDir(fsys, path.Join(group, "snapshots"))
	var best string
	var bt, bi uint64
	for _, e := range ents {
		term, idx, ok := raftlog.ParseSnapshotName(e.Name())
		if ok && (best == "" || term > bt || term == bt && idx > bi) {
			best, bt, bi = path.Join(group, "snapshots", e.Name()), term, idx
		}
	}
	return best, bt, bi
}

// walRecord is one WAL record with its decoded append entry.
type walRecord struct {
	file string
	rec  storeparse.Record
	ae   *raftlog.AppendEntry
	err  error
	raw  []byte // the whole record as stored
}

// readWAL frames every block of the group's WAL with storeparse and decodes
// each non-tombstone record as an append entry. Tombstoned indexes are
// returned separately.
func readWAL(t testing.TB, fsys fs.FS, group string) (recs []walRecord, tombs map[uint64]bool) {
	t.Helper()
	tombs = map[uint64]bool{}
	blks, _ := fs.Glob(fsys, path.Join(group, "msgs", "*.blk"))
	sort.Slice(blks, func(i, j int) bool { return blkIndex(blks[i]) < blkIndex(blks[j]) })
	for _, blk := range blks {
		b := readFS(t, fsys, blk)
		key := group + "-" + strings.TrimSuffix(path.Base(blk), ".blk")
		br, err := storeparse.NewBlockReader(blk, bytes.NewReader(b), int64(len(b)), key)
		if err != nil {
			t.Fatal(err)
		}
		for {
			r, err := br.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: framing: %v", blk, err)
				if !errors.Is(err, binfmt.ErrChecksum) {
					break
				}
			}
			if r.Tombstone {
				tombs[r.Seq] = true
				continue
			}
			if r.Erased {
				continue
			}
			wr := raftlog.DecodeWALRecord(blk, walFrame(&r, br.Compressed()), slices.Clone(r.Data))
			var raw []byte
			if !br.Compressed() {
				raw = slices.Clone(b[r.Offset : r.Offset+int64(r.Len)])
			}
			recs = append(recs, walRecord{file: blk, rec: r, ae: wr.Entry, err: wr.Err, raw: raw})
		}
	}
	return recs, tombs
}

// walFrame is what the framing reader says of a record, as the WAL record
// reader takes it (internal/analysis.DecodeWALRecord outside tests).
func walFrame(r *storeparse.Record, compressed bool) raftlog.WALFrame {
	return raftlog.WALFrame{Offset: r.Offset, Len: r.Len, Seq: r.Seq, TS: r.TS, SubjectLen: len(r.Subject),
		HasHeaders: r.HasHeaders, HeaderLen: len(r.Header), Erased: r.Erased, Tombstone: r.Tombstone,
		ChecksumOK: r.ChecksumOK, Compressed: compressed}
}

func blkIndex(p string) int {
	n := 0
	for _, c := range strings.TrimSuffix(path.Base(p), ".blk") {
		n = n*10 + int(c-'0')
	}
	return n
}

func fsReadFile(sc *serverCase, name string) ([]byte, error) { return fs.ReadFile(sc.js, name) }
