package raftlog_test

// The test harness: every test here runs on files real nats-server binaries
// wrote. Two sources of servers:
//
//   - testdata/real/<version>/<server>/: the raft folders (_js_/<group>) of
//     3-server clusters of v2.10.22, v2.12.1 and v2.15.2, with each server's
//     /raftz and /jsz captures and startup banner (see testdata/real/README.md);
//   - ../testdata/bundles/<name>/: the generator's bundles, with want.json.
//
// Each becomes a serverCase with what the server itself said (captures),
// which the decoded files are checked against.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	Size  int
	Term  uint64
	Peers []string // sorted, including self
}

type serverCase struct {
	label   string // for t.Run
	cluster string // servers with the same cluster label share a meta layer
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
}

type raftzDoc map[string]map[string]struct {
	ID    string `json:"id"`
	Size  int    `json:"size"`
	Term  uint64 `json:"term"`
	Peers map[string]struct {
		Name string `json:"name"`
	} `json:"peers"`
}

type jszDoc struct {
	Accounts []struct {
		Name    string `json:"name"`
		Streams []struct {
			Name      string `json:"name"`
			RaftGroup string `json:"stream_raft_group"`
			Consumers []struct {
				Name string `json:"name"`
			} `json:"consumer_detail"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

func loadRealServers(t testing.TB) []*serverCase {
	t.Helper()
	var out []*serverCase
	vers, _ := filepath.Glob("testdata/real/v*")
	for _, vdir := range vers {
		ver := filepath.Base(vdir)
		var cs []*serverCase
		var union []streamWant
		srvs, _ := filepath.Glob(filepath.Join(vdir, "*.raftz.json"))
		for _, rz := range srvs {
			name := strings.TrimSuffix(filepath.Base(rz), ".raftz.json")
			sc := &serverCase{label: ver + "/" + name, cluster: ver, name: name,
				js: os.DirFS(filepath.Join(vdir, name)), groups: map[string]groupWant{}, banner: map[string]string{}}
			var doc raftzDoc
			mustJSON(t, rz, &doc)
			for _, groups := range doc {
				for g, rg := range groups {
					gw := groupWant{Size: rg.Size, Term: rg.Term, Peers: []string{rg.ID}}
					for id := range rg.Peers {
						gw.Peers = append(gw.Peers, id)
					}
					sort.Strings(gw.Peers)
					sc.groups[g] = gw
					if g == "_meta_" {
						sc.peerID = rg.ID
						m := gw
						sc.meta = &m
					}
				}
			}
			var jz jszDoc
			mustJSON(t, filepath.Join(vdir, name+".jsz.json"), &jz)
			for _, a := range jz.Accounts {
				for _, s := range a.Streams {
					sw := streamWant{Account: a.Name, Name: s.Name, Group: s.RaftGroup}
					for _, c := range s.Consumers {
						sw.Consumers = append(sw.Consumers, c.Name)
					}
					union = append(union, sw)
				}
			}
			if b, err := os.ReadFile(filepath.Join(vdir, name+".banner.log")); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					for _, k := range []string{"Name", "Node"} {
						if _, v, ok := strings.Cut(line, "[INF]   "+k+":"); ok {
							sc.banner[k] = strings.TrimSpace(v)
						}
					}
				}
			}
			cs = append(cs, sc)
		}
		union = dedupStreams(union)
		for _, sc := range cs {
			sc.streams = union
		}
		out = append(out, cs...)
	}
	return out
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

func mustJSON(t testing.TB, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// allServers returns the real fixtures and the generator's bundles.
func allServers(t testing.TB) []*serverCase {
	out := loadRealServers(t)
	out = append(out, loadBundleServers(t)...)
	if len(out) == 0 {
		t.Skip("no fixtures")
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
			off := r.Offset + 22 + int64(len(r.Subject))
			ae, err := raftlog.DecodeAppendEntry(blk, off, slices.Clone(r.Data))
			recs = append(recs, walRecord{file: blk, rec: r, ae: ae, err: err})
		}
	}
	return recs, tombs
}

func blkIndex(p string) int {
	n := 0
	for _, c := range strings.TrimSuffix(path.Base(p), ".blk") {
		n = n*10 + int(c-'0')
	}
	return n
}

func fsReadFile(sc *serverCase, name string) ([]byte, error) { return fs.ReadFile(sc.js, name) }
