package bundle

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path"
	"sort"
	"strings"
	"testing"
)

// Real captures written by v2.15.2 servers and natscli, committed by the
// capture package; read here, never modified.
const (
	realCapturesDir = "../../capture/testdata/real/v2.15.2-scratch"
	auditZip        = "../../capture/testdata/audit-gather-v2.15.2.zip"
	realStoresDir   = "../../storeparse/testdata/stores"
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

func TestRealCaptures(t *testing.T) {
	if _, err := os.Stat(realCapturesDir); err != nil {
		t.Skip(err)
	}
	b, err := Open(realCapturesDir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ents, _ := os.ReadDir(realCapturesDir)
	if len(b.Captures) != len(ents) || len(b.Stores) != 0 || len(b.Logs) != 0 || len(b.Problems) != 0 {
		t.Fatalf("%d captures of %d files, stores %v, logs %v, problems %v", len(b.Captures), len(ents), b.Stores, b.Logs, b.Problems)
	}
	for _, c := range b.Captures {
		if want := kindFromName(c.Path); c.Kind != want {
			t.Errorf("%s: kind %s, want %s", c.Path, c.Kind, want)
		}
		lines := strings.HasSuffix(c.Path, ".jsonl")
		if lines != (c.Shape == "lines") || lines != c.Wrapped {
			t.Errorf("%s: shape %s wrapped %v", c.Path, c.Shape, c.Wrapped)
		}
		if lines && strings.Join(c.Servers, ",") != "s1,s2,s3" {
			t.Errorf("%s: servers %v", c.Path, c.Servers)
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
		t.Skip(err)
	}
	defer zr.Close()
	f, err := zr.Open(auditManifestSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var idx map[string][]auditTag
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
// content to their capture kinds.
var auditKinds = map[string]string{
	"health": KindHealthz, "variables": KindVarz, "jetstream_info": KindJsz,
	"account_jetstream_info": KindJszAccount, "stream_info": KindStreamInfo,
}

func checkAudit(t *testing.T, b *Bundle, prefix string, tags map[string]map[string]string) {
	t.Helper()
	if len(b.Stores) != 0 {
		t.Errorf("audit archive taken for stores: %v", storeDirs(b))
	}
	n := 0
	for p, tg := range tags {
		kind, ok := auditKinds[tg["artifact_type"]]
		if !ok {
			continue
		}
		n++
		c := captureAt(b, path.Join(prefix, p))
		if c == nil {
			t.Errorf("%s (%s) not found", p, tg["artifact_type"])
			continue
		}
		if c.Kind != kind || strings.Join(c.Servers, ",") != tg["server"] || c.NameCandidates[0] != tg["server"] {
			t.Errorf("%s: kind %s servers %v candidates %v, want %s %s", p, c.Kind, c.Servers, c.NameCandidates, kind, tg["server"])
		}
	}
	if n < 9 {
		t.Errorf("only %d artifacts checked", n)
	}
	kinds := map[string]int{}
	for _, c := range b.Captures {
		kinds[c.Kind]++
	}
	if kinds[KindAuditManifest] != 1 || kinds[KindAuditMetadata] != 1 {
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

func TestRealStores(t *testing.T) {
	if _, err := os.Stat(realStoresDir); err != nil {
		t.Skip(err)
	}
	b, err := Open(realStoresDir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ents, _ := os.ReadDir(realStoresDir)
	var want []string
	for _, e := range ents {
		want = append(want, e.Name()+"/jetstream")
	}
	sort.Strings(want)
	if got := storeDirs(b); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stores %v, want %v", got, want)
	}
	for _, st := range b.Stores {
		streams, _ := os.ReadDir(realStoresDir + "/" + st.Dir + "/$G/streams")
		var names []string
		for _, s := range streams {
			names = append(names, s.Name())
		}
		if len(st.Accounts) != 1 || st.Accounts[0].Name != "$G" || strings.Join(st.Accounts[0].Streams, ",") != strings.Join(names, ",") || st.SysAccount != "" {
			t.Errorf("%s: %+v", st.Dir, st)
		}
		if len(st.Captures) != 1 || st.Captures[0] != path.Dir(st.Dir)+"/jsz.json" {
			t.Errorf("%s: capture hints %v", st.Dir, st.Captures)
		}
	}
}

// A bundle that is itself a store root takes its name candidates from its
// own path.
func TestBundleIsStore(t *testing.T) {
	dir := realStoresDir + "/v2.12.1/jetstream"
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	b, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.Stores) != 1 || b.Stores[0].Dir != "." || b.Stores[0].NameCandidates[0] != "v2.12.1" {
		t.Fatalf("stores %+v", b.Stores)
	}
}
