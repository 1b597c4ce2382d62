package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// bundlesDir holds the bundles real nats-server clusters wrote
// (testdata/gen), each with a want.json derived from live captures.
const bundlesDir = "../../testdata/bundles"

type wantFile struct {
	Scenario string       `json:"scenario"`
	Layout   string       `json:"layout"`
	Servers  []wantServer `json:"servers"`
	// StoppedServers are servers the scenario killed before the capture
	// (testdata/gen membership-v2.12.1): their stores and logs are in the
	// bundle, but they answered no monitoring endpoint, so no captures.
	StoppedServers []wantServer `json:"stopped_servers"`
	// StandaloneServers run without a cluster beside the cluster
	// (testdata/gen lifecycle-v2.12.1): their stores and logs are in the
	// bundle like any server's.
	StandaloneServers []wantServer `json:"standalone_servers"`
	// Renamed servers (testdata/gen rename-*): their logs' first banner
	// has the old name (old -> new) and its id.
	Expect struct {
		Renamed map[string]string `json:"renamed"`
		OldIDs  map[string]string `json:"old_ids"`
	} `json:"expect"`
}

type wantServer struct {
	Name     string            `json:"name"`
	PeerID   string            `json:"peer_id"`
	Cluster  string            `json:"cluster"`
	StoreDir string            `json:"store_dir"`
	Log      string            `json:"log"`
	Captures map[string]string `json:"captures"` // kind (maybe with a "-…" qualifier) → path
}

// fixture is one committed bundle: its want file and its sources.
type fixture struct {
	name    string
	want    wantFile
	sources []string // bundle/, bundle.zip, bundle.tar.gz: those present
}

func fixtures(t *testing.T) []fixture {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "*", "want.json"))
	if len(dirs) == 0 {
		t.Skipf("no real bundles under %s yet", bundlesDir)
	}
	var out []fixture
	for _, w := range dirs {
		dir := filepath.Dir(w)
		fx := fixture{name: filepath.Base(dir)}
		data, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &fx.want); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		for _, s := range []string{"bundle", "bundle.zip", "bundle.tar.gz", "bundle.tgz", "bundle.tar"} {
			if _, err := os.Stat(filepath.Join(dir, s)); err == nil {
				fx.sources = append(fx.sources, filepath.Join(dir, s))
			}
		}
		if len(fx.sources) == 0 {
			t.Fatalf("%s: no bundle next to want.json", dir)
		}
		out = append(out, fx)
	}
	return out
}

// layouts returns the fixture in every layout: its own sources plus a
// directory, a zip and a tar.gz re-packed from the first source's files.
func layouts(t *testing.T, fx fixture) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range fx.sources {
		out["given "+filepath.Base(s)] = s
	}
	b, err := Open(fx.sources[0], Limits{})
	if err != nil {
		t.Fatalf("%s: %v", fx.sources[0], err)
	}
	defer b.Close()
	tmp := t.TempDir()
	dir, zipPath, tgzPath := filepath.Join(tmp, "dir"), filepath.Join(tmp, "b.zip"), filepath.Join(tmp, "b.tar.gz")
	var zbuf, tbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	gw := gzip.NewWriter(&tbuf)
	tw := tar.NewWriter(gw)
	err = fs.WalkDir(b.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, err := zw.Create(p + "/"); err != nil {
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: fi.ModTime()}); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755)
		}
		data, err := fs.ReadFile(b.FS, p)
		if err != nil {
			return err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p, Method: zip.Deflate, Modified: fi.ModTime()})
		if err != nil {
			return err
		}
		w.Write(data)
		if err := tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Size: int64(len(data)), Mode: 0o644, ModTime: fi.ModTime()}); err != nil {
			return err
		}
		tw.Write(data)
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(path.Dir(p))), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []io.Closer{zw, tw, gw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(zipPath, zbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tgzPath, tbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out["repacked dir"], out["repacked zip"], out["repacked tar.gz"] = dir, zipPath, tgzPath
	return out
}

func TestRealBundles(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			var golden []byte
			names := []string{}
			lays := layouts(t, fx)
			for n := range lays {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, lay := range names {
				b, err := Open(lays[lay], Limits{})
				if err != nil {
					t.Fatalf("%s: %v", lay, err)
				}
				checkAgainstWant(t, lay, b, fx.want)
				b.Path, b.Archive = "", ""
				got, _ := json.MarshalIndent(b, "", "  ")
				b.Close()
				if golden == nil {
					golden = got
				} else if d := cmp.Diff(string(golden), string(got)); d != "" {
					t.Errorf("%s: inventory differs from %s (-first +this):\n%s", lay, names[0], d)
				}
			}
			goldenFile := filepath.Join("testdata", "golden", fx.name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(goldenFile), 0o755)
				if err := os.WriteFile(goldenFile, append(golden, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldenFile)
			if os.IsNotExist(err) {
				// A bundle the generator added after the goldens were made:
				// the want.json checks above still ran.
				t.Logf("no %s yet (run with -update to pin this inventory)", goldenFile)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(golden)+"\n"); d != "" {
				t.Errorf("inventory differs from %s (-want +got):\n%s", goldenFile, d)
			}
		})
	}
}

func checkAgainstWant(t *testing.T, lay string, b *Bundle, w wantFile) {
	t.Helper()
	if len(b.Problems) != 0 {
		t.Errorf("%s: problems in a healthy bundle: %v", lay, b.Problems)
	}
	stores := map[string]*Store{}
	for i := range b.Stores {
		stores[b.Stores[i].Dir] = &b.Stores[i]
	}
	logs := map[string]*Log{}
	for i := range b.Logs {
		logs[b.Logs[i].Path] = &b.Logs[i]
	}
	wantStores := map[string]bool{}
	formerName := map[string]string{}
	for old, now := range w.Expect.Renamed {
		formerName[now] = old
	}
	// named: a log names the server by its name or, renamed, by its old one.
	named := func(name, want string) bool { return name == want || name != "" && name == formerName[want] }
	// A stopped server's store and log are held to the same checks as a
	// live one's; it answered no endpoint, so its store must hint no
	// capture at all (the live servers' captures are not its own).
	for _, s := range w.StoppedServers {
		if st := stores[s.StoreDir]; st != nil && len(st.Captures) != 0 {
			t.Errorf("%s: store %s of stopped server %s hints captures %v", lay, st.Dir, s.Name, st.Captures)
		}
	}
	all := append(append(append([]wantServer{}, w.Servers...), w.StoppedServers...), w.StandaloneServers...)
	for _, s := range all {
		if s.StoreDir != "" {
			wantStores[s.StoreDir] = true
			st := stores[s.StoreDir]
			if st == nil {
				t.Errorf("%s: server %s: store %s not found (stores: %v)", lay, s.Name, s.StoreDir, storeDirs(b))
				continue
			}
			if len(st.NameCandidates) == 0 || st.NameCandidates[0] != s.Name {
				t.Errorf("%s: store %s: name candidates %v, want %s first", lay, st.Dir, st.NameCandidates, s.Name)
			}
			if s.Log != "" && !contains(st.Logs, s.Log) {
				t.Errorf("%s: store %s: log hints %v lack %s", lay, st.Dir, st.Logs, s.Log)
			}
			for _, l := range st.Logs {
				if lg := logs[l]; lg != nil && lg.Name != "" && !named(lg.Name, s.Name) {
					t.Errorf("%s: store %s of %s hints log %s of server %s", lay, st.Dir, s.Name, l, lg.Name)
				}
			}
			for _, c := range st.Captures {
				if cp := captureAt(b, c); cp != nil && len(cp.Servers) > 0 && !contains(cp.Servers, s.Name) {
					t.Errorf("%s: store %s of %s hints capture %s of servers %v", lay, st.Dir, s.Name, c, cp.Servers)
				}
			}
		}
		for kind, p := range s.Captures {
			k := kindOfWantKey(kind)
			cp := captureAt(b, p)
			if k == "" {
				// One account's detail is no answer capture.Decode reads.
				if cp != nil {
					t.Errorf("%s: %s taken for a %s capture", lay, p, cp.Kind)
				}
				continue
			}
			if cp == nil {
				t.Errorf("%s: server %s: capture %s not found", lay, s.Name, p)
				continue
			}
			if cp.Kind != k {
				t.Errorf("%s: capture %s: kind %s, want %s", lay, p, cp.Kind, k)
			}
			if st := stores[s.StoreDir]; st != nil && !contains(st.Captures, p) {
				t.Errorf("%s: store %s: capture hints %v lack %s", lay, st.Dir, st.Captures, p)
			}
		}
		if s.Log != "" {
			lg := logs[s.Log]
			if lg == nil {
				t.Errorf("%s: server %s: log %s not found (logs: %v)", lay, s.Name, s.Log, logPaths(b))
				continue
			}
			if !named(lg.Name, s.Name) || (s.PeerID != "" && lg.Node != s.PeerID && lg.Node != w.Expect.OldIDs[lg.Name]) {
				t.Errorf("%s: log %s banner says %s/%s, want %s/%s", lay, s.Log, lg.Name, lg.Node, s.Name, s.PeerID)
			}
			if len(lg.NameCandidates) == 0 || !named(lg.NameCandidates[0], s.Name) {
				t.Errorf("%s: log %s: name candidates %v, want %s first", lay, s.Log, lg.NameCandidates, s.Name)
			}
		}
	}
	for dir := range stores {
		if !wantStores[dir] {
			t.Errorf("%s: %s taken for a store", lay, dir)
		}
	}
}

// kindOfWantKey maps a want.json capture name (testdata/gen: "jsz",
// "raftz-acc-<acc>", "raftz-group-<g>", "account-jsz-<acc>", …) to the kind
// this package gives such a file, "" for one it does not list.
func kindOfWantKey(key string) string {
	if strings.HasPrefix(key, "account-jsz-") {
		return "" // /jsz?acc=<acc>: one account's detail, which capture does not decode
	}
	k, _, _ := strings.Cut(key, "-")
	return k
}

func captureAt(b *Bundle, p string) *Capture {
	for i := range b.Captures {
		if b.Captures[i].Path == p {
			return &b.Captures[i]
		}
	}
	return nil
}

func storeDirs(b *Bundle) []string {
	var s []string
	for _, st := range b.Stores {
		s = append(s, st.Dir)
	}
	return s
}

func logPaths(b *Bundle) []string {
	var s []string
	for _, l := range b.Logs {
		s = append(s, l.Path)
	}
	return s
}

// hashTree records every file and folder under p (or the file p) with its
// mode, size, modification time and SHA-256.
func hashTree(t *testing.T, p string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(q)
		if err != nil {
			t.Fatal(err)
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(q)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			v += " " + hex.EncodeToString(sum[:])
		}
		out[q] = v
		return nil
	})
	return out
}

// Open, inventory and Close leave every fixture byte-identical.
func TestFixturesUntouched(t *testing.T) {
	for _, fx := range fixtures(t) {
		for _, src := range fx.sources {
			before := hashTree(t, src)
			b, err := Open(src, Limits{})
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			// Read every file through FS as the analysis would.
			fs.WalkDir(b.FS, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					fs.ReadFile(b.FS, p)
				}
				return nil
			})
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			after := hashTree(t, src)
			if d := cmp.Diff(before, after); d != "" {
				t.Errorf("%s changed:\n%s", src, d)
			}
			if len(before) == 0 {
				t.Errorf("%s: nothing hashed", src)
			}
		}
	}
}
