package main

// Tests of the generator's own helpers, on bytes real servers wrote
// (the committed bundles). They need no running server.

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const bundles = "../bundles"

// Every committed want.json names servers whose peer_id the real server
// reported; nodeID must reproduce it from the name.
func TestNodeIDMatchesServers(t *testing.T) {
	wants, _ := filepath.Glob(filepath.Join(bundles, "*", "want.json"))
	n := 0
	for _, w := range wants {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		var want Want
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		for _, s := range want.Servers {
			if s.PeerID == "" {
				continue
			}
			n++
			if got := nodeID(s.Name); got != s.PeerID {
				t.Errorf("%s: nodeID(%q) = %q, server said %q", w, s.Name, got, s.PeerID)
			}
		}
	}
	if n < 9 {
		t.Fatalf("only %d servers with peer ids found under %s", n, bundles)
	}
}

// The five phantom ids are those of shared/incidents/000.
func TestIncident000Flips(t *testing.T) {
	want := []string{`"kCGheKT`, "cnr4t3eg", "cnrtu3eg", "yrzKKR@u", "yrzKKRBt"}
	for i, f := range incident000Flips {
		b := []byte(nodeID(f.Server))
		b[f.Index] ^= 1 << f.Bit
		if string(b) != want[i] {
			t.Errorf("flip %d of %s = %q, want %q", i, f.Server, b, want[i])
		}
	}
}

func realPeersIdx(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundles, "v2.15.2-flat", "bundle", "store-n1", "$SYS", "_js_", "_meta_", "peers.idx"))
	if err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	return b
}

func TestAddPeers(t *testing.T) {
	in := realPeersIdx(t)
	n := binary.LittleEndian.Uint32(in[4:8])
	extra := []string{`"kCGheKT`, "yrzKKR@u"}
	out, err := addPeers(in, extra, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(out[0:4]); got != 10 {
		t.Errorf("cluster size %d, want 10", got)
	}
	if got := binary.LittleEndian.Uint32(out[4:8]); got != n+2 {
		t.Errorf("count %d, want %d", got, n+2)
	}
	if len(out) != len(in)+16 {
		t.Errorf("len %d, want %d", len(out), len(in)+16)
	}
	if !bytes.Equal(out[8:8+8*n], in[8:8+8*n]) {
		t.Error("original ids changed")
	}
	if got := string(out[8+8*n : 8+8*n+16]); got != strings.Join(extra, "") {
		t.Errorf("appended ids %q", got)
	}
	if !bytes.Equal(out[8+8*(n+2):], in[8+8*n:]) {
		t.Error("domainExt trailer not preserved")
	}
	// Truncated copies of the real file must be refused, not misread.
	for _, cut := range []int{0, 7, 8 + 8*int(n) - 1} {
		if _, err := addPeers(in[:cut], extra, 10); err == nil {
			t.Errorf("truncated to %d bytes: no error", cut)
		}
	}
}

func TestKubectlCopies(t *testing.T) {
	log, err := os.ReadFile(filepath.Join(bundles, "v2.15.2-flat", "bundle", "n1.log"))
	if err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	lines := splitLines(log)
	ts := splitLines(kubectlTimestamps(log))
	pre := splitLines(kubectlPodPrefix(log, "n1"))
	if len(ts) != len(lines) || len(pre) != len(lines) || len(lines) == 0 {
		t.Fatalf("line counts: log %d, timestamps %d, prefix %d", len(lines), len(ts), len(pre))
	}
	for i, l := range lines {
		stamp, rest, ok := strings.Cut(ts[i], " ")
		if !ok || rest != l {
			t.Fatalf("timestamps line %d: %q", i, ts[i])
		}
		got, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if own, ok := logLineTime(l); ok && !got.Equal(own.Add(137*time.Microsecond)) {
			t.Errorf("line %d: stamp %v, log time %v", i, got, own)
		}
		if pre[i] != "[pod/n1/nats] "+l {
			t.Fatalf("prefix line %d: %q", i, pre[i])
		}
	}
}

func TestArchivesDeterministic(t *testing.T) {
	tree := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	if _, err := os.Stat(tree); err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.zip"), filepath.Join(dir, "b.zip")
	if err := writeZip(tree, a); err != nil {
		t.Fatal(err)
	}
	if err := writeZip(tree, b); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("two zips of the same tree differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(ab), int64(len(ab)))
	if err != nil {
		t.Fatal(err)
	}
	es, err := listTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != len(es) {
		t.Fatalf("zip has %d entries, tree %d", len(zr.File), len(es))
	}
	for i, f := range zr.File {
		name := es[i].rel
		if es[i].isDir {
			name += "/"
		}
		if f.Name != name {
			t.Fatalf("entry %d: %q, want %q", i, f.Name, name)
		}
	}
	tg := filepath.Join(dir, "a.tar.gz")
	if err := writeTarGz(tree, tg); err != nil {
		t.Fatal(err)
	}
	tg2 := filepath.Join(dir, "b.tar.gz")
	if err := writeTarGz(tree, tg2); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(tg)
	y, _ := os.ReadFile(tg2)
	if !bytes.Equal(x, y) {
		t.Error("two tar.gz of the same tree differ")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "1.5GiB": 3 << 29, "2GB": 2e9, "1000": 1000, "10B": 10} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "x1MB", "lots"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q): no error", bad)
		}
	}
}

// plainSnapshot must recognise every raft snapshot the encrypting servers
// wrote (they are not encrypted), refuse every other file of those stores
// (encrypted blocks, key files, ...) and refuse a snapshot whose header was
// broken.
func TestPlainSnapshotEncryptedBundle(t *testing.T) {
	for _, name := range []string{"encrypted-v2.15.2", "encrypted-aes-v2.12.1"} {
		t.Run(name, func(t *testing.T) { plainSnapshotsOf(t, name) })
	}
}

func plainSnapshotsOf(t *testing.T, name string) {
	root := filepath.Join(bundles, name)
	wb, err := os.ReadFile(filepath.Join(root, "want.json"))
	if err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	var want struct {
		Expect EncryptedExpect `json:"expect"`
	}
	if err := json.Unmarshal(wb, &want); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range want.Expect.PlaintextSnapshots {
		listed[p] = true
	}
	var snaps, others int
	tree := filepath.Join(root, "bundle")
	err = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.Contains(filepath.ToSlash(p), "/data/jetstream/") {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		rel = filepath.ToSlash(rel)
		isSnap := filepath.Base(filepath.Dir(p)) == "snapshots"
		if got := plainSnapshot(p); got != isSnap {
			t.Errorf("%s: plainSnapshot = %v", rel, got)
		}
		if isSnap {
			snaps++
			if !listed[rel] {
				t.Errorf("%s: not in expect.plaintext_snapshots", rel)
			}
			b, _ := os.ReadFile(p)
			b[8] ^= 0xff // index no longer matches the name
			bad := filepath.Join(t.TempDir(), "snapshots", filepath.Base(p))
			if err := writeFileAll(bad, b); err != nil {
				t.Fatal(err)
			}
			if plainSnapshot(bad) {
				t.Errorf("%s with a broken index: still plain", rel)
			}
		} else {
			others++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if snaps == 0 || snaps != len(listed) || others == 0 {
		t.Fatalf("%d snapshots (want.json lists %d), %d other files", snaps, len(listed), others)
	}
}

// The natscli outputs bundled by lifecycle-v2.12.1 are what want.json says:
// one {server, data} JSON object per line, one line per cluster server.
func TestLifecycleNatscliFiles(t *testing.T) {
	root := filepath.Join(bundles, "lifecycle-v2.12.1")
	wb, err := os.ReadFile(filepath.Join(root, "want.json"))
	if err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	var want struct {
		Servers []WantServer    `json:"servers"`
		Expect  LifecycleExpect `json:"expect"`
	}
	if err := json.Unmarshal(wb, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Expect.Natscli) != 4 {
		t.Fatalf("%d natscli commands in want.json", len(want.Expect.Natscli))
	}
	for _, c := range want.Expect.Natscli {
		b, err := os.ReadFile(filepath.Join(root, "bundle", filepath.FromSlash(c.File)))
		if err != nil {
			t.Fatal(err)
		}
		lines := splitLines(b)
		if len(lines) != c.Lines || c.Lines != 3 {
			t.Errorf("%s: %d lines, want.json says %d", c.File, len(lines), c.Lines)
		}
		seen := map[string]bool{}
		for i, l := range lines {
			var r struct {
				Server struct {
					Name    string `json:"name"`
					Cluster string `json:"cluster"`
				} `json:"server"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil || len(r.Data) == 0 {
				t.Errorf("%s line %d: %v", c.File, i+1, err)
				continue
			}
			if r.Server.Cluster != "life" {
				t.Errorf("%s line %d: cluster %q", c.File, i+1, r.Server.Cluster)
			}
			seen[r.Server.Name] = true
		}
		for _, s := range want.Servers {
			if s.Cluster == "life" && !seen[s.Name] {
				t.Errorf("%s: no line from %s", c.File, s.Name)
			}
		}
	}
}

// flipMetaSnapshot changes exactly one bit of a copy of a real meta
// snapshot, inside its payload (not the header, peer state or checksum),
// and records it; the committed metasnap bundles hold such flips.
func TestFlipMetaSnapshot(t *testing.T) {
	src := filepath.Join(bundles, "v2.15.2-flat/bundle/store-n1")
	orig, err := os.ReadFile(filepath.Join(metaDir(src), "snapshots", "snap.1.11"))
	if err != nil {
		t.Skipf("committed bundle missing: %v", err)
	}
	root := t.TempDir()
	if err := copyTree(metaDir(src), metaDir(root)); err != nil {
		t.Fatal(err)
	}
	f, err := flipMetaSnapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.File)))
	if err != nil {
		t.Fatal(err)
	}
	var diff []int
	for i := range orig {
		if orig[i] != got[i] {
			diff = append(diff, i)
		}
	}
	if len(diff) != 1 || diff[0] != f.Offset || orig[f.Offset]^got[f.Offset] != 1<<f.Bit {
		t.Fatalf("bytes changed %v, recorded offset %d bit %d", diff, f.Offset, f.Bit)
	}
	lps := int(binary.LittleEndian.Uint32(orig[16:]))
	if f.DataOffset != 20+lps || f.Offset < f.DataOffset || f.Offset >= len(orig)-8 {
		t.Errorf("flip at %d, payload is %d..%d", f.Offset, 20+lps, len(orig)-8)
	}
	if after, _ := os.ReadFile(filepath.Join(metaDir(src), "snapshots", "snap.1.11")); !bytes.Equal(after, orig) {
		t.Error("the committed bundle was changed")
	}
}
