package rehearse

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// requiredRelease is the release $JSF_NATS_SERVER is (CI builds it).
const requiredRelease = "2.15.2"

// serverBin is the nats-server of release v the real-server tests start:
// for 2.15.2 $JSF_NATS_SERVER, else the fixture generator's cache
// ($JSF_GEN_CACHE or ~/.cache/jsforensics-gen, bin/v<release>). Without
// one the test is skipped, unless it is 2.15.2 and $JSF_REQUIRE_NATS_SERVER
// is set (CI).
func serverBin(t *testing.T, v string) string {
	t.Helper()
	p := ""
	if v == requiredRelease {
		p = os.Getenv("JSF_NATS_SERVER")
	}
	if p == "" {
		cache := os.Getenv("JSF_GEN_CACHE")
		if home, err := os.UserHomeDir(); cache == "" && err == nil {
			cache = filepath.Join(home, ".cache", "jsforensics-gen")
		}
		p = filepath.Join(cache, "bin", "v"+v, "nats-server")
	}
	if _, err := os.Stat(p); err != nil {
		if v == requiredRelease && os.Getenv("JSF_REQUIRE_NATS_SERVER") != "" {
			t.Fatalf("no nats-server at %q ($JSF_NATS_SERVER)", p)
		}
		t.Skipf("no nats-server v%s: set JSF_NATS_SERVER, or install it as testdata/gen does", v)
	}
	return p
}

// treeSum hashes every file's path, mode and content under root.
func treeSum(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", p, info.Mode(), info.Size())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// leftRunning lists the processes whose command line names dir.
func leftRunning(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			out = append(out, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// restartRecord is what the generator recorded of its own restart on a copy
// of the bundle (want.json expect).
type restartRecord struct {
	Expect struct {
		Orphans []struct {
			Server, Account, Stream string
		} `json:"orphans_deleted"`
		OrphanConsumers []struct {
			Server, Account, Stream, Consumer string
		} `json:"orphan_consumers_deleted"`
		StreamsAfter map[string][]string `json:"streams_after"`
		Restart      []struct {
			Server     string   `json:"server"`
			Started    bool     `json:"started"`
			MetaLeader string   `json:"meta_leader"`
			Streams    []string `json:"streams"`
			Log        []string `json:"log"`
		} `json:"restart"`
	} `json:"expect"`
}

// TestRehearsalMatchesGeneratorRestart: on fixtures whose generator
// restarted the real servers on a copy and recorded what they did, the
// rehearsal sees the same: the folders each server deleted, which servers
// started or stopped on a fatal line, the streams each serves; every
// statement of the report is held; the bundle is byte-identical after; no
// server is left running and the scratch folder is gone.
func TestRehearsalMatchesGeneratorRestart(t *testing.T) {
	// orphan-v2.15.2.tar.gz is that bundle packed one folder deeper: the
	// same bundle in another form gives the same rehearsal.
	for _, name := range []string{"orphan-v2.10.22", "orphan-v2.15.2", "orphan-v2.15.2.tar.gz", "metasnap-v2.11.17", "metasnap-v2.12.1", "metasnap-v2.14.10", "metasnap-v2.15.2"} {
		t.Run(name, func(t *testing.T) {
			name, packed := strings.CutSuffix(name, ".tar.gz")
			bin := serverBin(t, name[strings.LastIndex(name, "-v")+2:])
			t.Parallel()
			root := filepath.Join("..", "..", "testdata", "bundles", name)
			var want restartRecord
			b, err := os.ReadFile(filepath.Join(root, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			bundlePath := filepath.Join(root, "bundle")
			if packed {
				bundlePath = packTarGz(t, bundlePath, "support/"+name)
			}
			sum := treeSum(t, bundlePath)
			tmp := t.TempDir()
			r, err := Run(context.Background(), bundlePath, Options{ServerBin: bin, TempDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			if got := treeSum(t, bundlePath); got != sum {
				t.Errorf("the bundle changed")
			}
			if left := leftRunning(r.Sandbox.Dir); len(left) > 0 {
				t.Errorf("servers left running: %v", left)
			}
			if _, err := os.Stat(r.Sandbox.Dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("scratch folder %s left: %v", r.Sandbox.Dir, err)
			}

			var gotDeleted, wantDeleted []string
			for _, d := range r.Deleted {
				gotDeleted = append(gotDeleted, strings.Join([]string{d.Server, d.Account, d.Stream, d.Consumer}, "/"))
			}
			for _, o := range want.Expect.Orphans {
				wantDeleted = append(wantDeleted, strings.Join([]string{o.Server, o.Account, o.Stream, ""}, "/"))
			}
			for _, o := range want.Expect.OrphanConsumers {
				wantDeleted = append(wantDeleted, strings.Join([]string{o.Server, o.Account, o.Stream, o.Consumer}, "/"))
			}
			sort.Strings(gotDeleted)
			sort.Strings(wantDeleted)
			if strings.Join(gotDeleted, " ") != strings.Join(wantDeleted, " ") {
				t.Errorf("deleted:\n got %v\nwant %v (the generator's restart)", gotDeleted, wantDeleted)
			}

			served := map[string][]string{}
			for _, s := range r.Streams {
				served[s.Server] = append(served[s.Server], s.Account+" > "+s.Name)
			}
			wantServed := want.Expect.StreamsAfter
			if len(want.Expect.Restart) > 0 {
				wantServed = map[string][]string{}
				for _, rs := range want.Expect.Restart {
					var srv report.RehearsalServer
					for _, s := range r.Servers {
						if s.Name == rs.Server {
							srv = s
						}
					}
					if srv.Started != rs.Started {
						t.Errorf("%s: started %v, the generator's restart %v (fatal %v)", rs.Server, srv.Started, rs.Started, srv.Fatal)
					}
					if !rs.Started {
						fatal := ""
						for _, l := range rs.Log {
							if strings.Contains(l, "[FTL]") {
								fatal = l[strings.Index(l, "[FTL]"):]
							}
						}
						if srv.Fatal == nil || fatal == "" || !strings.HasSuffix(*srv.Fatal, fatal) {
							t.Errorf("%s: fatal %v, the generator's restart logged %q", rs.Server, srv.Fatal, fatal)
						}
					}
					if len(rs.Streams) > 0 {
						wantServed[rs.Server] = rs.Streams
					}
				}
			}
			leaders := map[string]bool{}
			for _, rs := range want.Expect.Restart {
				if rs.Started {
					leaders[rs.MetaLeader] = true
				}
			}
			if len(leaders) == 1 {
				got := ""
				if r.MetaLeader != nil {
					got = *r.MetaLeader
				}
				for l := range leaders {
					// A leader is elected among equals: which one is chance;
					// that there is one, or none, is not.
					if (l == "") != (got == "") {
						t.Errorf("meta leader %q, the generator's restart %q", got, l)
					}
				}
			}
			for srv, ss := range wantServed {
				sort.Strings(ss)
				got := served[srv]
				sort.Strings(got)
				if strings.Join(got, ",") != strings.Join(ss, ",") {
					t.Errorf("%s serves %v, the generator's restart %v", srv, got, ss)
				}
			}

			if len(r.Statements) == 0 {
				t.Fatalf("no statement of the report to hold")
			}
			for _, s := range r.Statements {
				if s.Held == nil || !*s.Held {
					t.Errorf("statement %s %s %q: %v (%s)", s.Finding, s.Server, s.Statement, s.Held, s.Observed)
				}
			}
		})
	}
}

// TestRehearsalStopsOnCancel: cancelled while the servers run (Ctrl-C or
// --timeout), the rehearsal stops every server it started and removes its
// scratch folder.
func TestRehearsalStopsOnCancel(t *testing.T) {
	bin := serverBin(t, requiredRelease)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	tmp := t.TempDir()
	polls := 0
	_, err := Run(ctx, filepath.Join("..", "..", "testdata", "bundles", "orphan-v2.15.2", "bundle"), Options{
		ServerBin: bin, TempDir: tmp, Watch: time.Minute,
		Progress: func(msg string) {
			if strings.Contains(msg, "servers up") {
				if polls++; polls == 2 {
					cancel(errors.New("interrupt"))
				}
			}
		},
	})
	if err == nil || !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("err = %v, want the cancel's cause", err)
	}
	if left := leftRunning(tmp); len(left) > 0 {
		t.Errorf("servers left running: %v", left)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("scratch left in %s: %v", tmp, ents)
	}
}

// packTarGz writes dir as a .tar.gz whose entries sit under prefix.
func packTarGz(t *testing.T, dir, prefix string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(filepath.Join(prefix, rel))
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRehearsalNothingObservedIsAnError: a binary that answers --version
// and then exits at once, saying nothing, leaves nothing to judge: the
// rehearsal is an error (exit 3), not a run with no finding; nothing is
// left behind.
func TestRehearsalNothingObservedIsAnError(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "nats-server")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nats-server: v2.15.2'; exit 0; fi\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	_, err := Run(context.Background(), filepath.Join("..", "..", "testdata", "bundles", "orphan-v2.15.2", "bundle"),
		Options{ServerBin: bin, TempDir: tmp, Watch: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "nothing could be observed") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("scratch left in %s: %v", tmp, ents)
	}
}
