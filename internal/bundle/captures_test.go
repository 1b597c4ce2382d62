package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
)

// Real captures and stores, all from the generator's bundles
// (../../testdata/bundles, testdata/gen), read here and never modified. The
// tests below lay copies of their files out in other ways in temporary
// folders.
var (
	auditZip = filepath.Join(bundlesDir, "audit-gather-v2.15.2", "bundle.zip")
	// incidentLines is the incident-000 thread's `nats server request
	// jetstream` output, one compact envelope per line, as posted.
	incidentLines = filepath.Join(bundlesDir, "incident-000-captures", "bundle", "nats-server-request-jetstream.txt")
)

func kindFromName(name string) string {
	switch {
	case strings.Contains(name, "jsz"), strings.Contains(name, "jetstream"):
		return KindJsz
	case strings.Contains(name, "raft"):
		return KindRaftz
	case strings.Contains(name, "health"):
		return KindHealthz
	case strings.Contains(name, "varz"):
		return KindVarz
	}
	return ""
}

// fixtureByName returns the committed bundle of that name.
func fixtureByName(t *testing.T, name string) fixture {
	t.Helper()
	for _, fx := range fixtures(t) {
		if fx.name == name {
			return fx
		}
	}
	t.Fatalf("no bundle %s under %s", name, bundlesDir)
	return fixture{}
}

// fixtureFS returns the files of a committed bundle: its bundle/ folder, or
// its bundle.zip read with archive/zip.
func fixtureFS(t *testing.T, fx fixture) fs.FS {
	t.Helper()
	src := fx.sources[0]
	if fi, err := os.Stat(src); err == nil && fi.IsDir() {
		return os.DirFS(src)
	}
	if !strings.HasSuffix(src, ".zip") {
		t.Fatalf("%s: neither a folder nor a zip", src)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// copyTree copies the tree under root of fsys to dst.
func copyTree(t *testing.T, fsys fs.FS, root, dst string) {
	t.Helper()
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		out := filepath.Join(dst, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// auditAnswers returns the envelopes of the audit archive by artifact
// folder ("health", "variables", …), each list in server order.
func auditAnswers(t *testing.T) map[string][][]byte {
	t.Helper()
	zr, err := zip.OpenReader(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := slices.Clone(zr.File)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	out := map[string][][]byte{}
	for _, f := range files {
		if !strings.HasPrefix(f.Name, "capture/clusters/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		art := path.Base(path.Dir(f.Name))
		out[art] = append(out[art], b)
	}
	return out
}

// TestRealCaptures: a folder of loose captures only. The HTTP answers of
// v2.15.2-flat ("<server>-<endpoint>.json"), the incident thread's natscli
// request lines, and the audit archive's envelopes of /healthz, /varz and
// /jsz as `nats server request` prints them (one compact line per server).
func TestRealCaptures(t *testing.T) {
	dir := t.TempDir()
	flat := fixtureByName(t, "v2.15.2-flat")
	ffs := fixtureFS(t, flat)
	httpFiles := 0
	for _, s := range flat.want.Servers {
		for _, p := range s.Captures {
			b, err := fs.ReadFile(ffs, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, path.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
			httpFiles++
		}
	}
	lineServers := map[string]string{}
	b, err := os.ReadFile(incidentLines)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(incidentLines)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lineServers[filepath.Base(incidentLines)] = "nats-0,nats-1,nats-2,nats-3,nats-4"
	for art, name := range map[string]string{"health": "req-health.jsonl", "variables": "req-varz.jsonl", "jetstream_info": "req-jetstream.jsonl"} {
		var jl bytes.Buffer
		for _, env := range auditAnswers(t)[art] {
			if err := json.Compact(&jl, env); err != nil {
				t.Fatal(err)
			}
			jl.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), jl.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		lineServers[name] = "aud-0,aud-1,aud-2"
	}
	b2, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	ents, _ := os.ReadDir(dir)
	if httpFiles < 15 || len(b2.Captures) != len(ents) || len(b2.Stores) != 0 || len(b2.Logs) != 0 || len(b2.Problems) != 0 {
		t.Fatalf("%d captures of %d files (%d HTTP), stores %v, logs %v, problems %v", len(b2.Captures), len(ents), httpFiles,
			b2.Stores, b2.Logs, b2.Problems)
	}
	for _, c := range b2.Captures {
		if want := kindFromName(c.Path); c.Kind != want {
			t.Errorf("%s: kind %s, want %s", c.Path, c.Kind, want)
		}
		servers, lines := lineServers[c.Path]
		if lines != (c.Shape == "lines") || lines != c.Wrapped {
			t.Errorf("%s: shape %s wrapped %v", c.Path, c.Shape, c.Wrapped)
		}
		if lines && strings.Join(c.Servers, ",") != servers {
			t.Errorf("%s: servers %v, want %s", c.Path, c.Servers, servers)
		}
		if srv, _, _ := strings.Cut(c.Path, "-"); !lines && (len(c.NameCandidates) == 0 || c.NameCandidates[0] != srv) {
			t.Errorf("%s: name candidates %v, want %s first", c.Path, c.NameCandidates, srv)
		}
		if c.Kind == KindVarz && !lines && (len(c.Servers) != 1 || !strings.HasPrefix(c.Path, c.Servers[0]+"-")) {
			t.Errorf("%s: servers %v", c.Path, c.Servers)
		}
	}
}

// auditTags reads the manifest of the real audit archive independently.
func auditTags(t *testing.T) map[string]map[string]string {
	zr, err := zip.OpenReader(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open("capture/misc/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var idx map[string][]struct{ Name, Value string }
	if err := json.NewDecoder(f).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for p, tags := range idx {
		out[p] = map[string]string{}
		for _, tg := range tags {
			out[p][tg.Name] = tg.Value
		}
	}
	return out
}

// auditKinds maps the audit artifact types this package recognises by
// content (those capture.Decode reads) to their capture kinds.
var auditKinds = map[string]string{
	"health": KindHealthz, "variables": KindVarz, "jetstream_info": KindJsz,
}

func checkAudit(t *testing.T, b *Bundle, prefix string, tags map[string]map[string]string) {
	t.Helper()
	if len(b.Stores) != 0 {
		t.Errorf("audit archive taken for stores: %v", storeDirs(b))
	}
	n := map[string]int{}
	for p, tg := range tags {
		kind, ok := auditKinds[tg["artifact_type"]]
		if !ok {
			continue
		}
		n[kind]++
		c := captureAt(b, path.Join(prefix, p))
		if c == nil {
			t.Errorf("%s (%s) not found", p, tg["artifact_type"])
			continue
		}
		if c.Kind != kind || strings.Join(c.Servers, ",") != tg["server"] || c.NameCandidates[0] != tg["server"] {
			t.Errorf("%s: kind %s servers %v candidates %v, want %s %s", p, c.Kind, c.Servers, c.NameCandidates, kind, tg["server"])
		}
	}
	// Every recognised artifact type is in the archive, for each server.
	for _, kind := range auditKinds {
		if n[kind] < 3 {
			t.Errorf("%d %s artifacts checked, want 3 or more: %v", n[kind], kind, n)
		}
	}
	kinds := map[string]int{}
	for _, c := range b.Captures {
		kinds[c.Kind]++
	}
	if kinds[KindAuditManifest] != 1 {
		t.Errorf("kinds %v", kinds)
	}
}

func TestAuditGather(t *testing.T) {
	tags := auditTags(t)
	b, err := Open(auditZip, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkAudit(t, b, ".", tags)
}

// The real audit archive's capture/ folder given as the bundle (the one top
// folder of the unpacked zip): its manifest at misc/manifest.json is the
// archive's, whose capture/ folder is the bundle itself, and its entries
// are tagged as in the zip, stream infos included.
func TestAuditGatherCaptureFolder(t *testing.T) {
	tags := auditTags(t)
	zr, err := zip.OpenReader(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(f.Name, "capture/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := captureAt(b, "misc/manifest.json")
	if m == nil {
		t.Fatal("misc/manifest.json not sniffed as a capture")
	}
	if d, ok := AuditCaptureDir(*m); !ok || d != "." {
		t.Fatalf("AuditCaptureDir = %q, %v; want \".\", true", d, ok)
	}
	streams := 0
	for p, tg := range tags {
		rel := strings.TrimPrefix(p, "capture/")
		if tg["artifact_type"] == "stream_info" {
			if e := b.AuditEntries[rel]; e.Kind != capture.KindStreamInfo || len(e.Decoded) != 1 || e.DecodeErr != nil {
				t.Errorf("%s: not decoded as the stream info its tag says: %+v", rel, e)
			}
			streams++
			continue
		}
		if _, ok := auditKinds[tg["artifact_type"]]; !ok {
			continue
		}
		if c := captureAt(b, rel); c == nil || strings.Join(c.Servers, ",") != tg["server"] {
			t.Errorf("%s: capture %+v, want one of server %s", rel, c, tg["server"])
		}
	}
	if streams != 9 {
		t.Errorf("%d stream infos in the manifest, want 9", streams)
	}
}

// The real audit archive inside a tar.gz, as a bundle would carry it, is
// unpacked one level down.
func TestNestedRealArchive(t *testing.T) {
	tags := auditTags(t)
	data, err := os.ReadFile(auditZip)
	if err != nil {
		t.Fatal(err)
	}
	_, src := sandbox(t)
	file := src + "/outer.tar.gz"
	if err := os.WriteFile(file, gz(t, mkTar(t, []entry{{name: "support/audit.zip", body: data}})), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(file, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkAudit(t, b, "support/audit", tags)
}

// realStores lays out the stores of a healthy bundle of each version as
// <dir>/<server>/jetstream with the server's /jsz next to it as
// <dir>/<server>/jsz.json (copies of the bundles' files).
func realStores(t *testing.T) (dir string, servers map[string]string) {
	t.Helper()
	dir = t.TempDir()
	servers = map[string]string{} // server -> bundle
	for _, name := range []string{"v2.10.22-per-server", "v2.12.1-archive", "v2.15.2-flat"} {
		fx := fixtureByName(t, name)
		fsys := fixtureFS(t, fx)
		for _, s := range fx.want.Servers {
			copyTree(t, fsys, s.StoreDir, filepath.Join(dir, s.Name, "jetstream"))
			b, err := fs.ReadFile(fsys, s.Captures["jsz"])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, s.Name, "jsz.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			servers[s.Name] = name
		}
	}
	return dir, servers
}

// dirNames lists the folders in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
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

func TestRealStores(t *testing.T) {
	dir, servers := realStores(t)
	b, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var want []string
	for s := range servers {
		want = append(want, s+"/jetstream")
	}
	sort.Strings(want)
	if got := storeDirs(b); strings.Join(got, " ") != strings.Join(want, " ") || len(want) != 9 {
		t.Fatalf("stores %v, want %v", got, want)
	}
	for _, st := range b.Stores {
		root := filepath.Join(dir, filepath.FromSlash(st.Dir))
		names := dirNames(t, filepath.Join(root, "$G", "streams"))
		groups := dirNames(t, filepath.Join(root, "$SYS", "_js_"))
		if len(st.Accounts) != 1 || st.Accounts[0].Name != "$G" || strings.Join(st.Accounts[0].Streams, ",") != strings.Join(names, ",") ||
			len(names) == 0 {
			t.Errorf("%s: accounts %+v, want $G with %v", st.Dir, st.Accounts, names)
		}
		if st.SysAccount != "$SYS" || strings.Join(st.Groups, ",") != strings.Join(groups, ",") || !slices.Contains(groups, "_meta_") {
			t.Errorf("%s: system account %q groups %v, want $SYS %v", st.Dir, st.SysAccount, st.Groups, groups)
		}
		if len(st.Captures) != 1 || st.Captures[0] != path.Dir(st.Dir)+"/jsz.json" {
			t.Errorf("%s: capture hints %v", st.Dir, st.Captures)
		}
		if len(st.NameCandidates) == 0 || st.NameCandidates[0] != path.Dir(st.Dir) {
			t.Errorf("%s: name candidates %v", st.Dir, st.NameCandidates)
		}
	}
}

// A bundle that is itself a store root takes its name candidates from its
// own path.
func TestBundleIsStore(t *testing.T) {
	dir, _ := realStores(t)
	b, err := Open(filepath.Join(dir, "js-a", "jetstream"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Stores) != 1 || b.Stores[0].Dir != "." || b.Stores[0].NameCandidates[0] != "js-a" {
		t.Fatalf("stores %+v", b.Stores)
	}
}
