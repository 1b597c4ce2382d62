package analysis

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// TestCaptureTiedToLogBanner: a bundle of logs and bare /raftz answers whose
// file names say nothing (as kubectl and support scripts leave them). Each
// raftz carries only its raft node id; the server it belongs to is the one
// whose log banner logs that Node id (and whose name hashes to it), never an
// invented extra server.
func TestCaptureTiedToLogBanner(t *testing.T) {
	src := bundlesDir + "/v2.15.2-leader-kill-debug/bundle"
	dst := t.TempDir()
	files := map[string]string{
		"dbg-0.log":                "logs/0.txt",
		"kubectl/dbg-1.prefix.log": "logs/1.txt",
		"dbg-2.log":                "logs/2.txt",
		"dbg-0-raftz.json":         "captures/a.json",
		"dbg-1-raftz.json":         "captures/b.json",
		"dbg-2-raftz.json":         "captures/c.json",
	}
	for from, to := range files {
		b, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep := analyze(t, dst)
	if got := names(rep.Servers); strings.Join(got, ",") != "dbg-0,dbg-1,dbg-2" {
		t.Fatalf("servers %v, want dbg-0,dbg-1,dbg-2; notes %v", got, rep.Notes)
	}
	raftzViews := map[string][]string{}
	for _, g := range rep.Groups {
		if g.Name != "_meta_" {
			continue
		}
		for _, v := range g.Views {
			if v.Source == "raftz" {
				raftzViews[v.Server] = v.Peers
			}
		}
	}
	for _, n := range []string{"dbg-0", "dbg-1", "dbg-2"} {
		peers, ok := raftzViews[n]
		if !ok {
			t.Errorf("no raftz meta view attributed to %s; views %v", n, raftzViews)
			continue
		}
		if !slices.Contains(peers, natsfmt.PeerID(n)) {
			t.Errorf("raftz meta view of %s: peers %v lack its own id %s", n, peers, natsfmt.PeerID(n))
		}
	}
	for _, note := range rep.Notes {
		if strings.Contains(note, "not named by any source") {
			t.Errorf("note: %s", note)
		}
	}
}
