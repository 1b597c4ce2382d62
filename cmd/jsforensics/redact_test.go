package main

import (
	"bytes"
	"encoding/json"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// secrets are the names a redacted report must not hold: every account,
// stream and consumer name of the report, and the subjects the streams'
// own meta.inf configure (with a wildcard's literal prefix).
func secrets(t *testing.T, dir string, rep *report.Report) []string {
	t.Helper()
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}
	for _, st := range rep.Streams {
		add(st.Account)
		add(st.Name)
		for _, d := range st.OnDisk {
			for _, c := range d.Consumers {
				add(c.Name)
			}
		}
	}
	for _, f := range rep.Findings {
		add(f.Account)
		add(f.Stream)
		add(f.Consumer)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "meta.inf" || !strings.Contains(filepath.ToSlash(p), "/streams/") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := storeparse.ParseStreamMeta(p, b)
		if err != nil {
			return nil // a consumer's meta.inf or a broken one: no subjects
		}
		for _, s := range m.Subjects {
			add(s)
			if i := strings.IndexAny(s, "*>"); i > 0 {
				add(s[:i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	return out
}

// xlsxText is every cell of every sheet, one a line.
func xlsxText(t *testing.T, b []byte) string {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			sb.WriteString(strings.Join(r, "\n") + "\n")
		}
	}
	return sb.String()
}

// TestRedact: on fixtures with streams, consumers, subjects and findings,
// no account, stream, consumer name or configured subject appears (as a
// word) in the
// redacted report in any format, nor the bundle's path; the findings, their
// figures and every number of the report are unchanged, and server names,
// peer ids, codes and times stay as they were.
func TestRedact(t *testing.T) {
	for _, b := range []string{"v2.10.22-per-server", "rename-v2.15.2", "acked-lost-v2.15.2", "orphan-v2.15.2", "acked-lost-jepsen-v2.15.2"} {
		t.Run(b, func(t *testing.T) {
			dir := filepath.Join(bundles, b, "bundle")
			plainJSON := runCLI(t, "analyze", dir, "--format", "json")
			var plain report.Report
			if err := json.Unmarshal(plainJSON, &plain); err != nil {
				t.Fatal(err)
			}
			names := secrets(t, dir, &plain)
			if len(names) < 3 {
				t.Fatalf("fixture holds too few names to test: %v", names)
			}
			var clusters []string
			for _, s := range plain.Servers {
				if s.Cluster != "" && !slices.Contains(clusters, s.Cluster) {
					clusters = append(clusters, s.Cluster)
				}
			}
			// The payloads the report quotes: a history's lost values, as %q wrote them.
			var values []string
			for _, h := range plain.Histories {
				for _, bk := range h.Buckets {
					for _, v := range bk.LostValues {
						if q, err := strconv.QuotedPrefix(v); err == nil {
							values = append(values, q)
						}
					}
				}
			}
			if b == "acked-lost-jepsen-v2.15.2" && (len(values) == 0 || len(clusters) == 0) {
				t.Fatalf("the Jepsen fixture quotes %d values and names %d clusters", len(values), len(clusters))
			}
			for _, f := range outputFormats {
				out := fileOut(t, "analyze", dir, "--format", f.name, "--redact")
				text := string(out)
				if f.name == "xlsx" {
					text = xlsxText(t, out)
				}
				for _, n := range append(names, dir, bundles) {
					// As a whole word: "APP" may stay in "HAPPENED".
					if regexp.MustCompile(`(^|[^A-Za-z0-9_$-])` + regexp.QuoteMeta(n) + `($|[^A-Za-z0-9_$-])`).MatchString(text) {
						t.Errorf("--format %s --redact holds %q", f.name, n)
					}
				}
				text = html.UnescapeString(text)
				for _, c := range clusters {
					// Where the report names a cluster: "Cluster:  C", "cluster C,", "n1/C", "C" quoted.
					if m := regexp.MustCompile(`(?i:cluster)(:| name is)?\s+` + regexp.QuoteMeta(c) + `\b|/` + regexp.QuoteMeta(c) + `($|[^A-Za-z0-9_$/-])|"` + regexp.QuoteMeta(c) + `"`).FindString(text); m != "" {
						t.Errorf("--format %s --redact names cluster %q: %q", f.name, c, m)
					}
				}
				for _, v := range values {
					if strings.Contains(text, v) {
						t.Errorf("--format %s --redact holds the payload %s", f.name, v)
					}
				}
			}
			var red any
			if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json", "--redact"), &red); err != nil {
				t.Fatal(err)
			}
			var orig any
			if err := json.Unmarshal(plainJSON, &orig); err != nil {
				t.Fatal(err)
			}
			sameFigures(t, "report", orig, red)
		})
	}
}

// keptStrings are the fields redaction leaves as they are.
var keptStrings = map[string]bool{"server": true, "peer_id": true, "peer": true, "code": true, "severity": true,
	"time": true, "until": true, "since": true, "kind": true, "source": true, "outcome": true, "leader": true, "voted_for": true}

// sameFigures walks two JSON values side by side: the same shape, every
// number and boolean equal, and the kept strings equal.
func sameFigures(t *testing.T, at string, a, b any) {
	t.Helper()
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			t.Errorf("%s: shape differs", at)
			return
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok {
				t.Errorf("%s.%s missing", at, k)
				continue
			}
			if s, isStr := x.(string); isStr && keptStrings[k] && s != y {
				t.Errorf("%s.%s: %q became %v", at, k, s, y)
			}
			sameFigures(t, at+"."+k, x, y)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			if at == "report.notes" && ok && len(bv) == len(av)+1 { // the note saying it is redacted
				bv = bv[:len(av)]
			} else {
				t.Errorf("%s: %d items became %v", at, len(av), b)
				return
			}
		}
		for i := range av {
			sameFigures(t, at, av[i], bv[i])
		}
	case float64, bool:
		if a != b {
			t.Errorf("%s: %v became %v", at, a, b)
		}
	}
}

// TestFilters: --stream, --account and --server keep only what concerns
// them, timeline references still point at the events they pointed at,
// and render of the saved report narrows the same way.
func TestFilters(t *testing.T) {
	dir := filepath.Join(bundles, "rename-v2.15.2", "bundle")
	full := decode(t, runCLI(t, "analyze", dir, "--format", "json"))
	saved := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(saved, runCLI(t, "analyze", dir, "--format", "json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		keep func(*testing.T, *report.Report)
	}{
		{[]string{"--stream", "ORDERS"}, func(t *testing.T, r *report.Report) {
			if len(r.Streams) != 1 || r.Streams[0].Name != "ORDERS" {
				t.Errorf("streams %+v", r.Streams)
			}
			for _, g := range r.Groups {
				if g.Kind == "meta" || !strings.HasPrefix(g.Asset, "ORDERS") {
					t.Errorf("group %s (%s) kept", g.Name, g.Asset)
				}
			}
			for _, e := range r.Timeline {
				if e.Stream != "ORDERS" && !strings.Contains(e.Group, "-R") {
					t.Errorf("event %+v kept", e)
				}
			}
		}},
		{[]string{"--account", "NOPE"}, func(t *testing.T, r *report.Report) {
			if len(r.Streams)+len(r.Groups)+len(r.Findings)+len(r.Timeline)+len(r.Diagnosis) != 0 {
				t.Errorf("an unknown account kept %d streams, %d groups, %d findings", len(r.Streams), len(r.Groups), len(r.Findings))
			}
		}},
		{[]string{"--server", "js-1"}, func(t *testing.T, r *report.Report) {
			if len(r.Servers) != 1 || r.Servers[0].Name != "js-1" {
				t.Errorf("servers %+v", r.Servers)
			}
			for _, e := range r.Timeline {
				if e.Server != "js-1" {
					t.Errorf("event of %s kept", e.Server)
				}
			}
			for _, st := range r.Streams {
				for _, d := range st.OnDisk {
					if d.Server != "js-1" {
						t.Errorf("%s copy of %s kept", d.Server, st.Name)
					}
				}
			}
			if len(r.Findings) == 0 || len(r.Findings) == len(full.Findings) {
				t.Errorf("%d of %d findings kept", len(r.Findings), len(full.Findings))
			}
			for _, f := range r.Findings {
				if f.Code == "server-renamed" && f.Server != "js-1" {
					t.Errorf("server-renamed of %s kept", f.Server)
				}
			}
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out := runCLI(t, append([]string{"analyze", dir, "--format", "json"}, tc.args...)...)
			r := decode(t, out)
			tc.keep(t, r)
			// Every reference still names an event its finding named before.
			before := map[string]map[string]bool{}
			for _, f := range full.Findings {
				k := f.Code + "|" + f.Server + "|" + f.Peer + "|" + f.Message
				before[k] = map[string]bool{}
				for _, ref := range f.TimelineRefs {
					before[k][eventKey(full.Timeline[ref])] = true
				}
			}
			index := map[string]int{}
			for i, e := range full.Timeline {
				index[eventKey(e)] = i
			}
			for _, f := range r.Findings {
				was := before[f.Code+"|"+f.Server+"|"+f.Peer+"|"+f.Message]
				for _, ref := range f.TimelineRefs {
					if ref < 0 || ref >= len(r.Timeline) || !was[eventKey(r.Timeline[ref])] {
						t.Fatalf("%s: ref %d is not an event the finding named", f.Code, ref)
					}
				}
			}
			for _, c := range r.Diagnosis {
				for _, i := range c.Findings {
					if i < 0 || i >= len(r.Findings) {
						t.Fatalf("cause names finding %d of %d", i, len(r.Findings))
					}
				}
				for _, ref := range c.TimelineRefs {
					if _, ok := index[eventKey(r.Timeline[ref])]; !ok {
						t.Errorf("cause ref %d is no event of the full report", ref)
					}
				}
			}
			if got := runCLI(t, append([]string{"render", saved, "--format", "json"}, tc.args...)...); !bytes.Equal(got, out) {
				t.Error("render of the saved report narrows differently")
			}
		})
	}
}

func decode(t *testing.T, b []byte) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func eventKey(e report.TimelineEvent) string {
	return e.Time.String() + "|" + e.Server + "|" + e.Kind + "|" + e.Text
}
