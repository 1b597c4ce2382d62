package analysis

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// These tests feed the analyzer committed real-server bundles re-arranged
// the way people ship them (other folder layouts, archive forms, log
// envelopes, capture encodings) and require the same analysis as the
// bundle as committed: the analyzer must find everything by content.

// placement is where a fixture's want.json says each server's parts are.
type placement struct {
	Servers    []placed `json:"servers"`
	Standalone []placed `json:"standalone_servers"`
}

type placed struct {
	Name     string            `json:"name"`
	Store    string            `json:"store_dir"`
	Log      string            `json:"log"`
	Captures map[string]string `json:"captures"`
}

func readPlacement(t *testing.T, fixtureName string) placement {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundlesDir, fixtureName, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p placement
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p.Servers = append(p.Servers, p.Standalone...)
	return p
}

// copyInto copies file or folder src to dst (dst's parents created).
func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst, b)
		return
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyTree(t, src), dst); err != nil {
		t.Fatal(err)
	}
}

// rearranged lays a fixture's parts out anew: place gives, per server index
// and part ("store", "log", "capture:<kind>"), the path in the new bundle
// ("" leaves the part out). Store paths name the jetstream folder itself.
// What belongs to no server (natscli output of the whole cluster) is
// copied as it is.
func rearranged(t *testing.T, fixtureName string, place func(i int, part string) string) string {
	t.Helper()
	src := filepath.Join(bundlesDir, fixtureName, "bundle")
	dst := t.TempDir()
	servers := readPlacement(t, fixtureName).Servers
	owned := map[string]bool{}
	for _, s := range servers {
		for _, p := range append([]string{s.Store, s.Log}, slices.Collect(maps.Values(s.Captures))...) {
			owned[strings.SplitN(p, "/", 2)[0]] = true
		}
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !owned[e.Name()] {
			copyInto(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
		}
	}
	for i, s := range servers {
		parts := map[string]string{"store": s.Store, "log": s.Log}
		for kind, p := range s.Captures {
			parts["capture:"+kind] = p
		}
		for part, from := range parts {
			if from == "" {
				continue
			}
			if to := place(i, part); to != "" {
				copyInto(t, filepath.Join(src, from), filepath.Join(dst, to))
			}
		}
	}
	return dst
}

// summary is what a re-arrangement must not change.
type qaSum struct {
	Servers  []string // name peer-id cluster version
	Figures  []string // server account > stream: figures, from the blocks and /jsz
	Findings []string
	Events   []string // timeline events per server and source kind
}

func qaSummary(r *report.Report) qaSum {
	var s qaSum
	for _, sv := range r.Servers {
		s.Servers = append(s.Servers, fmt.Sprintf("%s %s %s %s", sv.Name, sv.PeerID, sv.Cluster, sv.Version))
	}
	for _, st := range r.Streams {
		for _, d := range st.OnDisk {
			s.Figures = append(s.Figures, fmt.Sprintf("disk %s %s > %s: %d..%d n=%d b=%d del=%d", d.Server, st.Account, st.Name, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted))
		}
		for _, d := range st.Captured {
			s.Figures = append(s.Figures, fmt.Sprintf("jsz %s %s > %s: %d..%d n=%d b=%d del=%d", d.Server, st.Account, st.Name, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted))
		}
	}
	for _, f := range r.Findings {
		s.Findings = append(s.Findings, fmt.Sprintf("%s %s %s %s/%s %s", f.Code, f.Severity, f.Server, f.Account, f.Stream, f.Group))
	}
	count := map[string]int{}
	for _, e := range r.Timeline {
		n := e.Count
		if n == 0 {
			n = 1
		}
		count[e.Server+" "+e.Source] += n
	}
	for k, n := range count {
		s.Events = append(s.Events, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(s.Servers)
	sort.Strings(s.Figures)
	sort.Strings(s.Findings)
	sort.Strings(s.Events)
	return s
}

// sameAnalysis runs the analyzer on the committed bundle and on path and
// reports every difference in their summaries; the bundle at path must not
// change.
func sameAnalysis(t *testing.T, fixtureName, path string, skipEvents bool) {
	t.Helper()
	before := treeDigest(t, path)
	want := qaSummary(analyze(t, filepath.Join(bundlesDir, fixtureName, "bundle")))
	rep := analyze(t, path)
	got := qaSummary(rep)
	if after := treeDigest(t, path); after != before {
		t.Errorf("bundle changed by the analysis")
	}
	diff := func(what string, w, g []string) {
		if strings.Join(w, "\n") != strings.Join(g, "\n") {
			t.Errorf("%s differ:\n committed %q\n rearranged %q\n notes %q", what, w, g, rep.Notes)
		}
	}
	diff("servers", want.Servers, got.Servers)
	diff("figures", want.Figures, got.Figures)
	diff("findings", want.Findings, got.Findings)
	if !skipEvents {
		diff("timeline", want.Events, got.Events)
	}
}

var qaFixtures = []string{"v2.10.22-per-server", "v2.15.2-flat", "lifecycle-v2.12.1", "orphan-v2.15.2", "v2.10.22-incident-phantom-peers", "rename-v2.15.2", "scaledown-v2.12.1"}

// anonymousR3 are the fixtures whose stores, under paths naming no server,
// are compared with names aside (sameFiguresNamesAside): lifecycle-v2.12.1's
// standalone store has no raft state to tie to its log or captures (its
// clustered stores, every group R3 over the same peers, are named by the
// raftz captures, name_evidence.go).
var anonymousR3 = map[string]bool{"lifecycle-v2.12.1": true}

// unnamedStoresLoseFindings are fixtures where unnamed stores lose findings;
// they are tried in the nested layout only. None since the raftz captures
// name stores (rename-v2.15.2 lost asset-lost, scaledown-v2.12.1 replica-gap).
var unnamedStoresLoseFindings = map[string]bool{}

func TestRearrangedLayouts(t *testing.T) {
	layouts := map[string]func(i int, part string) string{
		// every store under volumes/<pvc-uuid>/jetstream, logs and captures
		// in their own trees, no server name in any path
		"volumes": func(i int, part string) string {
			switch {
			case part == "store":
				return fmt.Sprintf("volumes/pvc-%08x-1f2e-4c1d-9a0b-%012x/jetstream", 0x5eed0000+i*7919, i*104729)
			case part == "log":
				return fmt.Sprintf("logs/pod-%c.log", 'a'+i)
			default:
				return fmt.Sprintf("captures/10.0.0.%d/%s.json", 11+i, strings.TrimPrefix(part, "capture:"))
			}
		},
		// the store root given as the folder holding jetstream/
		"parent": func(i int, part string) string {
			switch {
			case part == "store":
				return fmt.Sprintf("pv/%d/jetstream", i)
			case part == "log":
				return fmt.Sprintf("logs/%d/server.log", i)
			default:
				return fmt.Sprintf("captures/%d/%s.json", i, strings.TrimPrefix(part, "capture:"))
			}
		},
		// under nested top folders, the way an archive's folder comes
		"nested": func(i int, part string) string {
			top := "support-2026-12-01/bundle/"
			switch {
			case part == "store":
				return fmt.Sprintf(top+"host%d/var/lib/nats/jetstream", i)
			case part == "log":
				return fmt.Sprintf(top+"host%d/var/log/nats.log", i)
			default:
				return fmt.Sprintf(top+"host%d/monitor/%s", i, strings.TrimPrefix(part, "capture:"))
			}
		},
	}
	for _, fx := range qaFixtures {
		for name, place := range layouts {
			if name != "nested" && unnamedStoresLoseFindings[fx] {
				continue
			}
			t.Run(fx+"/"+name, func(t *testing.T) {
				path := rearranged(t, fx, place)
				if name != "nested" && anonymousR3[fx] {
					sameFiguresNamesAside(t, fx, path)
					return
				}
				sameAnalysis(t, fx, path, false)
			})
		}
	}
}

// packTree writes the files under dir as a tar (gzipped when gz) or a zip,
// each entry named by name(rel) (slash-separated rel).
func packTree(t testing.TB, dir string, asZip, gz bool, name func(string) string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw *zip.Writer
	var tw *tar.Writer
	var gw *gzip.Writer
	switch {
	case asZip:
		zw = zip.NewWriter(&buf)
	case gz:
		gw = gzip.NewWriter(&buf)
		tw = tar.NewWriter(gw)
	default:
		tw = tar.NewWriter(&buf)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		n := name(filepath.ToSlash(rel))
		if zw != nil {
			w, err := zw.Create(n)
			if err != nil {
				return err
			}
			_, err = w.Write(data)
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil && tw != nil {
		err = tw.Close()
	}
	if err == nil && gw != nil {
		err = gw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestArchiveForms(t *testing.T) {
	same := func(rel string) string { return rel }
	top := func(rel string) string { return "nats-support-20261201/cluster/" + rel }
	back := func(rel string) string { return strings.ReplaceAll(rel, "/", `\`) }
	for _, fx := range qaFixtures {
		src := filepath.Join(bundlesDir, fx, "bundle")
		forms := map[string]func(dir string) string{
			"plain.tar": func(dir string) string {
				return writeFile(t, filepath.Join(dir, "support.tar"), packTree(t, src, false, false, same))
			},
			"top-folders.tgz": func(dir string) string {
				return writeFile(t, filepath.Join(dir, "support.tgz"), packTree(t, src, false, true, top))
			},
			"no-suffix": func(dir string) string {
				return writeFile(t, filepath.Join(dir, "upload-7731"), packTree(t, src, false, true, top))
			},
			"zip-in-tgz": func(dir string) string {
				inner := writeFile(t, filepath.Join(t.TempDir(), "x", "cluster.zip"), packTree(t, src, true, false, same))
				return writeFile(t, filepath.Join(dir, "outer.tar.gz"), packTree(t, filepath.Dir(inner), false, true, same))
			},
			"backslash.zip": func(dir string) string {
				return writeFile(t, filepath.Join(dir, "win.zip"), packTree(t, src, true, false, back))
			},
		}
		for name, make := range forms {
			t.Run(fx+"/"+name, func(t *testing.T) {
				sameAnalysis(t, fx, make(t.TempDir()), false)
			})
		}
	}
}

// logLineTime reads the server's own stamp of a log line
// ("[pid] YYYY/MM/DD hh:mm:ss.uuuuuu [LVL] …"), as UTC.
func logLineTime(line string) (time.Time, bool) {
	_, rest, ok := strings.Cut(line, "] ")
	if !ok || len(rest) < 26 {
		return time.Time{}, false
	}
	ts, err := time.Parse("2006/01/02 15:04:05.000000", rest[:26])
	return ts, err == nil
}

// rewrapLogs rewrites every server log of a copied fixture, line by line
// (wrap gets the line and its server stamp, zero when it has none), or as
// a whole file (whole, which may write several files).
func rewrapLogs(t *testing.T, fixtureName string, whole func(t *testing.T, path string, lines []string)) string {
	t.Helper()
	dir := copyTree(t, filepath.Join(bundlesDir, fixtureName, "bundle"))
	for _, s := range readPlacement(t, fixtureName).Servers {
		p := filepath.Join(dir, s.Log)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		whole(t, p, lines)
	}
	return dir
}

func perLine(wrap func(line string, ts time.Time) string) func(t *testing.T, path string, lines []string) {
	return func(t *testing.T, path string, lines []string) {
		var b strings.Builder
		var last time.Time
		for _, l := range lines {
			if ts, ok := logLineTime(l); ok {
				last = ts
			}
			b.WriteString(wrap(l, last))
		}
		writeFile(t, path, []byte(b.String()))
	}
}

func TestLogForms(t *testing.T) {
	gz := func(t *testing.T, b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	forms := map[string]func(t *testing.T, path string, lines []string){
		"docker-json": perLine(func(l string, ts time.Time) string {
			b, _ := json.Marshal(map[string]string{"log": l, "stream": "stderr", "time": ts.Format(time.RFC3339Nano)})
			return string(b) + "\n"
		}),
		"kubectl-prefix-timestamps": perLine(func(l string, ts time.Time) string {
			return "[pod/nats-x/nats] " + ts.Format("2006-01-02T15:04:05.000000000Z") + " " + l
		}),
		"crlf": perLine(func(l string, _ time.Time) string {
			return strings.TrimSuffix(l, "\n") + "\r\n"
		}),
		// rsyslog or journald forwarding the server's stderr lines whole
		"syslog-3164": perLine(func(l string, ts time.Time) string {
			return "<30>" + ts.Format(time.Stamp) + " node-7 nats-server[1]: " + l
		}),
		// logrotate's names: the oldest third gzipped, the middle one plain
		"rotated-gz": func(t *testing.T, path string, lines []string) {
			n := len(lines) / 3
			writeFile(t, path+".2.gz", gz(t, []byte(strings.Join(lines[:n], ""))))
			writeFile(t, path+".1", []byte(strings.Join(lines[n:2*n], "")))
			writeFile(t, path, []byte(strings.Join(lines[2*n:], "")))
		},
	}
	for _, fx := range qaFixtures {
		for name, form := range forms {
			t.Run(fx+"/"+name, func(t *testing.T) {
				sameAnalysis(t, fx, rewrapLogs(t, fx, form), false)
			})
		}
		// the banner rotated away: the log's first lines gone, so fewer
		// events, but every server, figure and finding as before
		if strings.HasPrefix(fx, "rename-") {
			continue // the cut takes the old name's banner, the only sign of the rename
		}
		t.Run(fx+"/no-banner", func(t *testing.T) {
			cut := func(t *testing.T, path string, lines []string) {
				writeFile(t, path, []byte(strings.Join(lines[len(lines)/4:], "")))
			}
			sameAnalysis(t, fx, rewrapLogs(t, fx, cut), true)
		})
	}
}

// rewriteCaptures re-encodes every JSON capture of a copied fixture (a
// file outside the stores holding one or more JSON documents): enc gets
// the documents and returns the file's new bytes.
func rewriteCaptures(t *testing.T, fixtureName string, enc func(docs []json.RawMessage) []byte) string {
	t.Helper()
	dir := copyTree(t, filepath.Join(bundlesDir, fixtureName, "bundle"))
	stores := map[string]bool{}
	for _, s := range readPlacement(t, fixtureName).Servers {
		if s.Store != "" {
			stores[filepath.Join(dir, s.Store)] = true
		}
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if stores[p] || d.Name() == "streams" || d.Name() == "_js_" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 || (b[0] != '{' && b[0] != '[') {
			return err
		}
		var docs []json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(b))
		for dec.More() {
			var doc json.RawMessage
			if dec.Decode(&doc) != nil {
				return nil // not JSON throughout (a log line starts with "[pid]")
			}
			docs = append(docs, doc)
		}
		if len(docs) == 0 {
			return nil
		}
		n++
		return os.WriteFile(p, enc(docs), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s: no capture rewritten", fixtureName)
	}
	return dir
}

func TestCaptureForms(t *testing.T) {
	each := func(sep string, f func(json.RawMessage) []byte) func([]json.RawMessage) []byte {
		return func(docs []json.RawMessage) []byte {
			var out [][]byte
			for _, d := range docs {
				out = append(out, f(d))
			}
			return append(bytes.Join(out, []byte(sep)), '\n')
		}
	}
	compact := func(d json.RawMessage) []byte {
		var b bytes.Buffer
		_ = json.Compact(&b, d)
		return b.Bytes()
	}
	pretty := func(d json.RawMessage) []byte {
		var b bytes.Buffer
		_ = json.Indent(&b, d, "", "  ")
		return b.Bytes()
	}
	forms := map[string]func([]json.RawMessage) []byte{
		"compact-ndjson":      each("\n", compact),
		"pretty-concatenated": each("\n", pretty),
		"json-array": func(docs []json.RawMessage) []byte {
			if len(docs) == 1 {
				return compact(docs[0])
			}
			return append(append([]byte("["), each(",\n", pretty)(docs)...), ']')
		},
		"bom": func(docs []json.RawMessage) []byte {
			return append([]byte("\xef\xbb\xbf"), each("\n", pretty)(docs)...)
		},
		"crlf-pretty": func(docs []json.RawMessage) []byte {
			return bytes.ReplaceAll(each("\n", pretty)(docs), []byte("\n"), []byte("\r\n"))
		},
	}
	for _, fx := range append(qaFixtures, "incident-000-captures") {
		for name, form := range forms {
			t.Run(fx+"/"+name, func(t *testing.T) {
				sameAnalysis(t, fx, rewriteCaptures(t, fx, form), false)
			})
		}
	}
}

// TestSingleStoreBundle: one server's store alone, given as the jetstream
// folder itself or as the folder above it, holds that server's streams
// with the figures the whole bundle gives them, and raises no finding the
// whole bundle does not.
func TestSingleStoreBundle(t *testing.T) {
	for _, fx := range qaFixtures {
		whole := analyze(t, filepath.Join(bundlesDir, fx, "bundle"))
		s := readPlacement(t, fx).Servers[0]
		wantFigures := map[string]bool{}
		for _, st := range whole.Streams {
			for _, d := range st.OnDisk {
				if d.Server == s.Name {
					wantFigures[fmt.Sprintf("%s > %s: %d..%d n=%d b=%d del=%d", st.Account, st.Name, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted)] = true
				}
			}
		}
		wholeFindings := map[string]bool{}
		for _, f := range whole.Findings {
			wholeFindings[f.Code+" "+f.Account+"/"+f.Stream] = true
		}
		src := filepath.Join(bundlesDir, fx, "bundle", s.Store)
		for _, form := range []string{"jetstream", "parent"} {
			t.Run(fx+"/"+form, func(t *testing.T) {
				root := t.TempDir()
				bundle := filepath.Join(root, "jetstream")
				if form == "parent" {
					bundle = root
				}
				copyInto(t, src, filepath.Join(root, "jetstream"))
				before := treeDigest(t, root)
				rep := analyze(t, bundle)
				if treeDigest(t, root) != before {
					t.Error("bundle changed by the analysis")
				}
				got := map[string]bool{}
				for _, st := range rep.Streams {
					for _, d := range st.OnDisk {
						got[fmt.Sprintf("%s > %s: %d..%d n=%d b=%d del=%d", st.Account, st.Name, d.FirstSeq, d.LastSeq, d.Messages, d.Bytes, d.Deleted)] = true
					}
				}
				for k := range wantFigures {
					if !got[k] {
						t.Errorf("%s: not found; have %v", k, got)
					}
				}
				if len(got) != len(wantFigures) {
					t.Errorf("%d stream copies, want %d: %v", len(got), len(wantFigures), got)
				}
				for _, f := range rep.Findings {
					if !wholeFindings[f.Code+" "+f.Account+"/"+f.Stream] {
						t.Errorf("finding the whole bundle has not: %s %s %s: %s", f.Code, f.Severity, f.Server, f.Message)
					}
				}
			})
		}
	}
}

// sameFiguresNamesAside compares the figures and findings of the committed
// bundle and path with every server name left out. It is for stores no
// content ties to one server: in lifecycle-v2.12.1 every group is R3 over
// the same three peers, so a store under a path naming no server cannot be
// told from the other two (they are called unnamed-N, with a note).
func sameFiguresNamesAside(t *testing.T, fixtureName, path string) {
	t.Helper()
	blind := func(r *report.Report) qaSum {
		for i := range r.Streams {
			for j := range r.Streams[i].OnDisk {
				r.Streams[i].OnDisk[j].Server = ""
			}
			r.Streams[i].Captured = nil
		}
		for i := range r.Findings {
			r.Findings[i].Server = ""
		}
		return qaSummary(r)
	}
	want := blind(analyze(t, filepath.Join(bundlesDir, fixtureName, "bundle")))
	got := blind(analyze(t, path))
	if strings.Join(want.Figures, "\n") != strings.Join(got.Figures, "\n") {
		t.Errorf("figures differ:\n committed %q\n rearranged %q", want.Figures, got.Figures)
	}
	if strings.Join(want.Findings, "\n") != strings.Join(got.Findings, "\n") {
		t.Errorf("findings differ:\n committed %q\n rearranged %q", want.Findings, got.Findings)
	}
}

// TestThinCaptures: captures holding less, as people take them: /jsz with
// ?accounts=true only (no stream detail) and /raftz of one account only
// (the all-accounts page dropped). The stores give the same figures and no
// finding appears that the full captures do not give.
func TestThinCaptures(t *testing.T) {
	dropStreamDetail := func(docs []json.RawMessage) []byte {
		var out [][]byte
		for _, d := range docs {
			var v any
			if json.Unmarshal(d, &v) != nil {
				out = append(out, d)
				continue
			}
			var walk func(any)
			walk = func(x any) {
				switch x := x.(type) {
				case map[string]any:
					delete(x, "stream_detail")
					for _, c := range x {
						walk(c)
					}
				case []any:
					for _, c := range x {
						walk(c)
					}
				}
			}
			walk(v)
			b, _ := json.Marshal(v)
			out = append(out, b)
		}
		return append(bytes.Join(out, []byte("\n")), '\n')
	}
	for _, fx := range qaFixtures {
		t.Run(fx+"/jsz-accounts-only", func(t *testing.T) {
			path := rewriteCaptures(t, fx, dropStreamDetail)
			sameDisk(t, fx, path)
			for _, f := range qaSummary(analyze(t, path)).Figures {
				if strings.HasPrefix(f, "jsz ") {
					t.Errorf("stream detail still read: %s", f)
				}
			}
		})
		t.Run(fx+"/raftz-one-account", func(t *testing.T) {
			path := copyTree(t, filepath.Join(bundlesDir, fx, "bundle"))
			for _, s := range readPlacement(t, fx).Servers {
				if p, ok := s.Captures["raftz"]; ok {
					if err := os.Remove(filepath.Join(path, p)); err != nil {
						t.Fatal(err)
					}
				}
			}
			sameDisk(t, fx, path)
		})
	}
}

// sameDisk: path gives the committed bundle's servers, figures from the
// blocks, and findings, any of them missing nothing and adding nothing.
func sameDisk(t *testing.T, fixtureName, path string) {
	t.Helper()
	want := qaSummary(analyze(t, filepath.Join(bundlesDir, fixtureName, "bundle")))
	rep := analyze(t, path)
	got := qaSummary(rep)
	disk := func(fs []string) (out []string) {
		for _, f := range fs {
			if strings.HasPrefix(f, "disk ") {
				out = append(out, f)
			}
		}
		return out
	}
	for what, pair := range map[string][2][]string{
		"servers":  {want.Servers, got.Servers},
		"figures":  {disk(want.Figures), disk(got.Figures)},
		"findings": {want.Findings, got.Findings},
	} {
		if strings.Join(pair[0], "\n") != strings.Join(pair[1], "\n") {
			t.Errorf("%s differ:\n committed %q\n thinned %q\n notes %q", what, pair[0], pair[1], rep.Notes)
		}
	}
}
