package analysis

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestEmptyStreamFolders: thousands of empty stream folders (as a restore
// stopped halfway leaves them) are what nats-server makes of them, a warning
// per folder at start and nothing else: one collapsed warning with the
// count and max_examples examples, no orphan-risk (the server never loads
// the stream, so never deletes it), no critical.
func TestEmptyStreamFolders(t *testing.T) {
	const n = 2000
	dir := emptyFolders(t, n)
	for _, limit := range []float64{10, 3} {
		rep, err := Run(dir, Options{Settings: map[string]float64{"store-corrupt.max_examples": limit}})
		if err != nil {
			t.Fatal(err)
		}
		var empty []report.Finding
		for _, f := range rep.Findings {
			if f.Severity == report.Critical {
				t.Errorf("critical %s on %s: %s", f.Code, f.File, f.Message)
			}
			if f.Code == "store-corrupt" && f.Kind == "missing" {
				empty = append(empty, f)
			}
		}
		if len(empty) != 1 {
			t.Fatalf("%d missing findings, want 1 collapsed: %s", len(empty), summarize(empty))
		}
		f := empty[0]
		if f.Count != n || f.Severity != report.Warning || len(f.Evidence) != int(limit)+1 {
			t.Errorf("collapsed finding: count %d severity %s, %d evidence lines (want %d, %s, %d): %v", f.Count, f.Severity, len(f.Evidence), n, report.Warning, int(limit)+1, f.Evidence)
		}
	}
}

// TestStreamFolderWithoutMeta: a folder whose blocks are there but whose
// meta.inf is gone is still critical (the server skips it and serves none of
// its messages), named once, and not an orphan: the server never loads it.
func TestStreamFolderWithoutMeta(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(eventsDir), "meta.inf")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var missing int
	for _, f := range rep.Findings {
		switch {
		case f.Code == "orphan-risk" && f.Stream == "EVENTS":
			t.Errorf("orphan-risk for a stream the server never loads: %s", f.Message)
		case f.Code == "store-corrupt" && f.File == eventsDir+"/meta.inf":
			missing++
			if f.Severity != report.Critical || f.Kind != "missing" {
				t.Errorf("%s %s, want critical missing", f.Severity, f.Kind)
			}
		}
	}
	if missing != 1 {
		t.Errorf("%d findings on the missing meta.inf, want 1: %s", missing, summarize(rep.Findings))
	}
}

// TestSnapshotNameDisagrees: a snapshot renamed to a newer term and index
// than it holds (snap.3.13 holding term 1, index 11) is what the server
// would pick as newest: the disagreement is a finding on that file.
func TestSnapshotNameDisagrees(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	snaps := filepath.Join(dir, "store-n1", "$SYS", "_js_", "_meta_", "snapshots")
	if err := os.Rename(filepath.Join(snaps, "snap.1.11"), filepath.Join(snaps, "snap.3.13")); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "store-n1/$SYS/_js_/_meta_/snapshots/snap.3.13"
	for _, f := range rep.Findings {
		if f.Code == "store-corrupt" && f.File == want && f.Offset != nil && strings.Contains(f.Message, "holds term 1 index 11") {
			return
		}
	}
	t.Errorf("no store-corrupt on %s saying what it holds: %s", want, summarize(rep.Findings))
}

// TestOrphansCollapsed: 30 real streams (n1's EVENTS linked into accounts
// the meta state never heard of) are 30 orphans of one cause on n1: one
// finding with the count and max_examples of them as evidence.
func TestOrphansCollapsed(t *testing.T) {
	const n = 30
	rep, err := Run(realStreams(t, n), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var orphans []report.Finding
	for _, f := range rep.Findings {
		if f.Code == "orphan-risk" {
			orphans = append(orphans, f)
		}
	}
	if len(orphans) != 1 || orphans[0].Count != n || orphans[0].Server != "n1" || len(orphans[0].Evidence) < 11 {
		t.Fatalf("want one orphan-risk on n1 counting %d, got %s", n, summarize(orphans))
	}
	if !strings.Contains(strings.Join(orphans[0].Evidence, "|"), "and 20 more") {
		t.Errorf("evidence does not say how many more: %q", orphans[0].Evidence)
	}
}

// TestEmptyFoldersMatchServer: on the emptyfolders-* fixtures, where real
// servers were started on stores with empty stream folders, the analysis
// names exactly the folders each server's log warned of ("Missing stream
// metafile"), as warnings that say the server skips them and deletes
// nothing, which is what it did: the folders were still there after the
// start, and the served streams were what they had been.
func TestEmptyFoldersMatchServer(t *testing.T) {
	n := 0
	for _, fx := range fixtures(t) {
		if !strings.HasPrefix(fx.name, "emptyfolders-") {
			continue
		}
		n++
		t.Run(fx.name, func(t *testing.T) {
			var x struct {
				Account       string              `json:"account"`
				Made          map[string][]string `json:"made"`
				Warned        map[string][]string `json:"warned"`
				LeftAfter     map[string][]string `json:"left_after"`
				StreamsBefore map[string]string   `json:"streams_before"`
				StreamsAfter  map[string]string   `json:"streams_after"`
			}
			if err := json.Unmarshal(fx.want.Expect, &x); err != nil {
				t.Fatal(err)
			}
			// The oracle itself: what the finding's wording relies on.
			for srv, made := range x.Made {
				if !slices.Equal(sorted(made), sorted(x.LeftAfter[srv])) {
					t.Fatalf("%s: the server removed empty folders (made %v, left %v); the finding says it deletes none", srv, made, x.LeftAfter[srv])
				}
			}
			if !maps.Equal(x.StreamsBefore, x.StreamsAfter) {
				t.Fatalf("served streams changed across the start: %v, then %v", x.StreamsBefore, x.StreamsAfter)
			}
			rep := analyze(t, fx.forms[0])
			got := map[string][]string{}
			for _, f := range rep.Findings {
				if f.Severity == report.Critical || f.Code == "orphan-risk" {
					t.Errorf("%s %s: %s", f.Severity, f.Code, f.Message)
				}
				if f.Code != "store-corrupt" || f.Kind != "missing" {
					continue
				}
				if f.Severity != report.Warning || !strings.Contains(f.Message, "skips it") || !strings.Contains(f.Message, "none deleted") {
					t.Errorf("%s: %s", f.Severity, f.Message)
				}
				_, folder, ok := strings.Cut(path.Dir(f.File), "/"+f.Server+"/jetstream/"+x.Account+"/streams/")
				if !ok {
					t.Errorf("finding on %s, not a stream folder of %s", f.File, f.Server)
					continue
				}
				got[f.Server] = append(got[f.Server], folder)
			}
			for srv := range got {
				got[srv] = sorted(got[srv])
			}
			if !maps.EqualFunc(got, x.Warned, slices.Equal[[]string]) {
				t.Errorf("empty folders named %v, the servers warned of %v", got, x.Warned)
			}
		})
	}
	if n == 0 {
		t.Fatal("no emptyfolders-* fixture")
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
