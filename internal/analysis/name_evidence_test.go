package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// Stores that no path names, in clusters whose groups all span the same
// peers (so no raft peer set tells them apart): committed real-server
// bundles copied with every store folder renamed to a meaningless path,
// and either only the logs or only the captures kept beside them. Each
// source of truth is tried alone, so each can fail on its own.

// meaningless are the store paths the copies use, one per server index:
// flat, deep, and one folder deeper than the others.
var meaningless = []string{"store-a/jetstream", "x/y/z/jetstream", "nested/one/deeper/q/jetstream", "store-d/jetstream", "store-e/jetstream"}

// evidenceCopy copies fixture with each store at store(i) and only the
// logs (part "log") or only the captures (part "capture") kept, at paths
// naming no server.
func evidenceCopy(t *testing.T, fixture, keep string, store func(i int) string) string {
	return rearranged(t, fixture, func(i int, part string) string {
		switch {
		case part == "store":
			return store(i)
		case part == "log" && keep == "log":
			return fmt.Sprintf("logs/%d.log", i)
		case strings.HasPrefix(part, "capture:") && keep == "capture":
			return fmt.Sprintf("monitor/%d/%s.json", i, strings.TrimPrefix(part, "capture:"))
		}
		return ""
	})
}

// storeNames maps each store path of r to its server's name and source.
func storeNames(r *report.Report) map[string]string {
	out := map[string]string{}
	for _, st := range r.Streams {
		for _, d := range st.OnDisk {
			dir := d.Path[:strings.Index(d.Path, "/"+st.Account+"/streams/")]
			for _, s := range r.Servers {
				if s.Name == d.Server {
					out[dir] = s.Name + " (" + s.NameSource + ")"
				}
			}
		}
	}
	return out
}

// findingsOf lists r's findings as code, severity, server and asset.
func findingsOf(r *report.Report) []string {
	var out []string
	for _, f := range r.Findings {
		servers := append([]string(nil), f.Servers...)
		slices.Sort(servers)
		out = append(out, fmt.Sprintf("%s %s %s [%s] %s/%s %s", f.Code, f.Severity, f.Server, strings.Join(servers, " "), f.Account, f.Stream, f.Group))
	}
	slices.Sort(out)
	return out
}

// The logs' Store Directory lines: df-2's store sat under vol/store/
// jetstream, the other two under store/jetstream. A copy whose df-2 store
// keeps the tail df-2 printed (vol/store/jetstream) under a meaningless
// folder is df-2's by its log alone; the other two end like both other
// logs' lines equally and stay unnamed, with a note saying so. df-2's
// findings are those of the copy whose stores keep their committed paths.
func TestStoreNamedByStoreDirectory(t *testing.T) {
	for _, fx := range []string{"diskfull-v2.15.3", "diskfull-v2.12.15"} {
		t.Run(fx, func(t *testing.T) {
			committed := readPlacement(t, fx).Servers
			store := func(i int) string {
				if committed[i].Name == "df-2" {
					return "mnt/pv-7f3a/vol/store/jetstream"
				}
				return strings.Replace(meaningless[i], "jetstream", "store/jetstream", 1)
			}
			want := analyze(t, evidenceCopy(t, fx, "log", func(i int) string { return committed[i].Store }))
			rep := analyze(t, evidenceCopy(t, fx, "log", store))
			got := storeNames(rep)
			if n := got["mnt/pv-7f3a/vol/store/jetstream"]; n != "df-2 (store)" {
				t.Errorf("the store under vol/store/jetstream is %q, want df-2 (store); notes %q", n, rep.Notes)
			}
			for i, s := range committed {
				dir := store(i)
				if s.Name == "df-2" {
					continue
				}
				if n := got[dir]; !strings.HasPrefix(n, "unnamed-") {
					t.Errorf("store %s (%s's) is %q, want a placeholder: its path ends like df-0's and df-1's Store Directory alike", dir, s.Name, n)
				}
				if !slices.ContainsFunc(rep.Notes, func(n string) bool {
					return strings.HasPrefix(n, "store "+dir+": not named by") && strings.Contains(n, "log: the Store Directory lines of df-0, df-1 end like its path equally")
				}) {
					t.Errorf("no note says why %s stays unnamed: %q", dir, rep.Notes)
				}
			}
			// df-2's own findings (jetstream-disabled, its store-corrupt);
			// the replica-gap that names df-0 and df-1 as holding what
			// df-2 lacks needs their stores named
			// (TestStoreNamedByBothSources).
			own := func(r *report.Report) []string {
				var out []string
				for _, f := range findingsOf(r) {
					if strings.Contains(f, "df-2") && !strings.Contains(f, "df-0") && !strings.Contains(f, "df-1") && !strings.Contains(f, "unnamed-") {
						out = append(out, f)
					}
				}
				return out
			}
			if w, g := own(want), own(rep); !slices.Equal(w, g) || len(w) == 0 {
				t.Errorf("df-2's findings differ:\n committed paths %q\n renamed %q", w, g)
			}
		})
	}
}

// Both sources together on diskfull-v2.15.3: df-2's store by its log's
// Store Directory, df-0's by an entry its raftz stamped, and then df-1's,
// the one server left without a store whose Store Directory ends like its
// path: every store is named as under its committed path, and the
// findings are the same (the replica-gap on df-2 among them).
func TestStoreNamedByBothSources(t *testing.T) {
	fx := "diskfull-v2.15.3"
	committed := readPlacement(t, fx).Servers
	store := func(i int) string {
		if committed[i].Name == "df-2" {
			return "mnt/pv-7f3a/vol/store/jetstream"
		}
		return strings.Replace(meaningless[i], "jetstream", "store/jetstream", 1)
	}
	both := func(store func(int) string) string {
		return rearranged(t, fx, func(i int, part string) string {
			switch {
			case part == "store":
				return store(i)
			case part == "log":
				return fmt.Sprintf("logs/%d.log", i)
			}
			return fmt.Sprintf("monitor/%d/%s.json", i, strings.TrimPrefix(part, "capture:"))
		})
	}
	want := analyze(t, both(func(i int) string { return committed[i].Store }))
	rep := analyze(t, both(store))
	got := storeNames(rep)
	for i, s := range committed {
		if n := got[store(i)]; !strings.HasPrefix(n, s.Name+" ") {
			t.Errorf("store %s (%s's) is %q; notes %q", store(i), s.Name, n, rep.Notes)
		}
	}
	if w, g := findingsOf(want), findingsOf(rep); !slices.Equal(w, g) {
		t.Errorf("findings differ:\n committed paths %q\n renamed %q", w, g)
	}
}

// The raftz captures: each server stamps the WAL entries it stores with
// its own clock, and /raftz reports its WAL's first and last entry with
// that time; a store holding such an entry at that very time is that
// server's. In lifecycle-v2.12.1 and orphan-v2.15.2 every store so named
// is named as the committed bundle names it and the findings are the
// same; in diskfull-v2.15.3 only df-0's store holds an entry a capture
// stamped (df-1's WAL was compacted past it, df-2 captured none) and the
// others stay unnamed with a note.
func TestStoreNamedByRaftz(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		named   []string // servers whose store the captures name
		// sameFindings: every clustered store is named, so the findings
		// are those under the committed paths.
		sameFindings bool
	}{
		{"lifecycle-v2.12.1", []string{"lc-0", "lc-1", "lc-2"}, true},
		{"orphan-v2.15.2", []string{"nats-0", "nats-1", "nats-2"}, true},
		{"diskfull-v2.15.3", []string{"df-0"}, false},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			committed := readPlacement(t, tc.fixture).Servers
			store := func(i int) string {
				if committed[i].Name == "solo" {
					// A standalone server has no raft state to tie to a
					// capture; its store keeps its committed path.
					return committed[i].Store
				}
				return meaningless[i]
			}
			want := analyze(t, evidenceCopy(t, tc.fixture, "capture", func(i int) string { return committed[i].Store }))
			path := evidenceCopy(t, tc.fixture, "capture", store)
			rep := analyze(t, path)
			got, wantNames := storeNames(rep), storeNames(want)
			for i, s := range committed {
				if s.Name == "solo" {
					continue
				}
				n := got[store(i)]
				switch {
				case slices.Contains(tc.named, s.Name):
					if !strings.HasPrefix(n, s.Name+" ") || !strings.HasPrefix(wantNames[s.Store], s.Name+" ") {
						t.Errorf("store %s (%s's) is %q (%q under its committed path); notes %q", store(i), s.Name, n, wantNames[s.Store], rep.Notes)
					}
				case !strings.HasPrefix(n, "unnamed-"):
					t.Errorf("store %s (%s's) is %q, want a placeholder", store(i), s.Name, n)
				case !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "store "+store(i)+": not named by") }):
					t.Errorf("no note says why %s stays unnamed: %q", store(i), rep.Notes)
				}
			}
			if tc.sameFindings {
				if w, g := findingsOf(want), findingsOf(rep); !slices.Equal(w, g) {
					t.Errorf("findings differ:\n committed paths %q\n renamed %q", w, g)
				}
			}
		})
	}
}
