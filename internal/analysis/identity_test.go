package analysis

import (
	"fmt"
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

// TestHealthzByServerFolder: a /healthz answer names no server; in the
// layout a support engineer makes by hand (store-N/{data/jetstream,
// nats.log, monitoring/healthz.json}, N not the server's name) it belongs
// to the server whose store and log its folder holds. One in a folder the
// stores of several servers share stays unattributed, and says so.
func TestHealthzByServerFolder(t *testing.T) {
	const fx = "v2.10.22-per-server"
	servers := readPlacement(t, fx).Servers
	// The first server's healthz says JetStream is off: the finding that
	// follows names the server the answer was given to.
	off := []byte(`{"status":"unavailable","status_code":503,"error":"JetStream not enabled (10076)"}`)

	t.Run("own folder", func(t *testing.T) {
		place := storeNLayout("")
		dir := rearranged(t, fx, place)
		writeFile(t, filepath.Join(dir, place(0, "capture:healthz")), off)
		rep := analyze(t, dir)
		for _, n := range rep.Notes {
			if strings.Contains(n, "not attributed") {
				t.Errorf("note: %s", n)
			}
		}
		for _, s := range rep.Servers {
			if !slices.Contains(s.Sources, "healthz") {
				t.Errorf("%s: sources %v lack its healthz", s.Name, s.Sources)
			}
		}
		var disabled []string
		for _, f := range rep.Findings {
			if f.Code == "jetstream-disabled" {
				disabled = append(disabled, f.Server)
			}
		}
		if want := servers[0].Name; strings.Join(disabled, ",") != want {
			t.Errorf("jetstream-disabled on %v, want on %s alone (whose folder %s holds the answer)", disabled, want, place(0, "capture:healthz"))
		}
	})

	t.Run("shared folder", func(t *testing.T) {
		const shared = "rack/monitoring/healthz.json"
		dir := rearranged(t, fx, func(i int, part string) string {
			d := fmt.Sprintf("rack/pv%d/", i)
			switch {
			case part == "store":
				return d + "jetstream"
			case part == "log":
				return d + "nats.log"
			case part == "capture:healthz":
				if i == 0 {
					return shared
				}
				return ""
			default:
				return d + "monitoring/" + strings.TrimPrefix(part, "capture:") + ".json"
			}
		})
		writeFile(t, filepath.Join(dir, shared), off)
		rep := analyze(t, dir)
		if got := names(rep.Servers); len(got) != len(servers) {
			t.Fatalf("servers %v, want %d; notes %q", got, len(servers), rep.Notes)
		}
		noted := false
		for _, n := range rep.Notes {
			noted = noted || strings.Contains(n, shared) && strings.Contains(n, "not attributed")
		}
		if !noted {
			t.Errorf("no note that %s is not attributed; notes %q", shared, rep.Notes)
		}
		for _, s := range rep.Servers {
			if slices.Contains(s.Sources, "healthz") {
				t.Errorf("%s was given the healthz of a folder three servers share", s.Name)
			}
		}
		for _, f := range rep.Findings {
			if f.Code == "jetstream-disabled" {
				t.Errorf("jetstream-disabled on %s from an unattributed answer", f.Server)
			}
		}
	})
}
