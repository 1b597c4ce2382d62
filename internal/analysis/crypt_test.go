package analysis

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// The encrypted fixtures (v2.15.2 chacha, v2.12.1 aes) analyzed with the
// servers' key (want.json expect.key), with none, and with a wrong one.

type encryptedFixture struct {
	fixture
	key string
}

// fixtureKeys is the key of an encrypted fixture, none for a plain one.
func fixtureKeys(t *testing.T, fx fixture) []string {
	t.Helper()
	if !encrypted(fx) {
		return nil
	}
	var exp struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(fx.want.Expect, &exp); err != nil || exp.Key == "" {
		t.Fatalf("%s: want.json expect has no key: %v", fx.name, err)
	}
	return []string{exp.Key}
}

func encryptedFixtures(t *testing.T) []encryptedFixture {
	t.Helper()
	var out []encryptedFixture
	for _, fx := range fixtures(t) {
		if keys := fixtureKeys(t, fx); keys != nil {
			out = append(out, encryptedFixture{fx, keys[0]})
		}
	}
	if len(out) < 2 {
		t.Fatalf("want the two encrypted fixtures (chacha and aes), found %d", len(out))
	}
	return out
}

// committed is each server's /raftz commit index per group ("server group").
func (fx encryptedFixture) committed(t *testing.T) map[string]uint64 {
	t.Helper()
	var w struct {
		Servers []struct {
			Name   string `json:"name"`
			Groups map[string]struct {
				Committed uint64 `json:"committed"`
			} `json:"groups"`
		} `json:"servers"`
	}
	b, err := os.ReadFile(filepath.Join(bundlesDir, fx.name, "want.json"))
	if err != nil || json.Unmarshal(b, &w) != nil {
		t.Fatalf("%s: want.json: %v", fx.name, err)
	}
	out := map[string]uint64{}
	for _, s := range w.Servers {
		for g, v := range s.Groups {
			out[s.Name+" "+g] = v.Committed
		}
	}
	return out
}

func analyzeKeys(t *testing.T, path string, keys ...string) *report.Report {
	t.Helper()
	rep, err := Run(path, Options{ToolVersion: "test", Keys: keys})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// rendered is the report in every text form, for "the key is nowhere".
func rendered(t *testing.T, rep *report.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, w := range []func(*bytes.Buffer, *report.Report) error{
		func(b *bytes.Buffer, r *report.Report) error { return report.WriteJSON(b, r) },
		func(b *bytes.Buffer, r *report.Report) error { return report.WriteText(b, r) },
		func(b *bytes.Buffer, r *report.Report) error { return report.WriteMarkdown(b, r) },
	} {
		if err := w(&b, rep); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestEncryptedWithKey: with the key every copy is read from its blocks
// (their figures equal /jsz: TestOfflineFiguresEqualLiveServers reads these
// fixtures with their keys); nothing is found (the clusters were healthy);
// the raft WALs are read as for a plain store (the commit index they carry
// is /raftz's); the notes say each store was opened; the key appears
// nowhere in the report.
func TestEncryptedWithKey(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		for _, form := range fx.forms {
			t.Run(fx.name+"/"+filepath.Base(form), func(t *testing.T) {
				rep := analyzeKeys(t, form, fx.key)
				// The figures equal /jsz: TestOfflineFiguresEqualLiveServers,
				// which reads these fixtures with their keys.
				for _, st := range rep.Streams {
					for _, d := range st.OnDisk {
						if d.Source != "blocks" {
							t.Errorf("%s %s: source %q, want blocks", d.Server, st.Name, d.Source)
						}
					}
				}
				for _, s := range fx.want.Servers {
					opened := false
					for _, nt := range rep.Notes {
						opened = opened || strings.HasPrefix(nt, s.Name+": store encrypted at rest") && strings.Contains(nt, "key files open with the key given")
					}
					if !opened {
						t.Errorf("%s: no note that its store was opened: %q", s.Name, rep.Notes)
					}
				}
				for _, f := range rep.Findings {
					t.Errorf("finding on a healthy encrypted cluster read with its key: %s %s %s: %s", f.Code, f.Kind, f.Server, f.Message)
				}
				// The raft WALs are read: the highest commit index their
				// entries carry, over the servers, is the group's commit in
				// /raftz, and no server's exceeds its own /raftz commit. (A
				// WAL compacted after its snapshot holds only a tombstone, and
				// a follower's last entry carries the commit of its sending.)
				committed := fx.committed(t)
				for _, g := range rep.Groups {
					var best, want uint64
					for _, v := range g.Views {
						if v.Source != "peers.idx" {
							continue
						}
						w := committed[v.Server+" "+g.Name]
						want = max(want, w)
						best = max(best, v.Commit)
						if v.Commit > w {
							t.Errorf("group %s on %s: commit %d from the WAL, /raftz %d", g.Name, v.Server, v.Commit, w)
						}
					}
					if best != want || want == 0 {
						t.Errorf("group %s: highest commit from the WALs %d, /raftz %d", g.Name, best, want)
					}
				}
				if b := rendered(t, rep); bytes.Contains(b, []byte(fx.key)) {
					t.Error("the key is in the report")
				}
			})
		}
	}
}

// TestEncryptedWithoutKey: without a key, each server gets one statement
// of what could not be read (naming each stream it holds), its copies are
// "sealed" (not empty figures), and nothing else is found: no replica gap,
// no orphan, no damage.
func TestEncryptedWithoutKey(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			checkSealed(t, fx, analyzeKeys(t, fx.forms[0]), "no key was given")
		})
	}
}

// TestEncryptedWrongKey: a key that is not the store's is a note per
// server ("key does not open this store's stream keys"), and the store is
// treated as without a key: never as damaged.
func TestEncryptedWrongKey(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			const wrong = "jsf-test-not-the-key"
			rep := analyzeKeys(t, fx.forms[0], wrong)
			checkSealed(t, fx, rep, "the key given does not open it")
			for _, s := range fx.want.Servers {
				found := false
				for _, nt := range rep.Notes {
					found = found || strings.HasPrefix(nt, s.Name+": the key given does not open this store's stream keys")
				}
				if !found {
					t.Errorf("%s: no wrong-key note in %q", s.Name, rep.Notes)
				}
			}
			if b := rendered(t, rep); bytes.Contains(b, []byte(wrong)) {
				t.Error("the key is in the report")
			}
		})
	}
}

func checkSealed(t *testing.T, fx encryptedFixture, rep *report.Report, why string) {
	t.Helper()
	per := map[string]int{}
	for _, f := range rep.Findings {
		if f.Code != "store-corrupt" || f.Kind != "encrypted" || f.Severity != report.Warning {
			t.Errorf("unexpected finding %s %s %s %s: %s", f.Code, f.Kind, f.Severity, f.Server, f.Message)
			continue
		}
		per[f.Server]++
		if !strings.Contains(f.Message, why) {
			t.Errorf("%s: message does not say %q: %s", f.Server, why, f.Message)
		}
		for _, s := range fx.want.Servers {
			if s.Name != f.Server {
				continue
			}
			for _, ws := range s.Streams {
				if !strings.Contains(f.Message, ws.Name) {
					t.Errorf("%s: statement does not name stream %s: %s", f.Server, ws.Name, f.Message)
				}
			}
		}
		if strings.Contains(f.Remedy, "restart") || !strings.Contains(f.Remedy, "Do not start a server on a copy of the config from a bundle") {
			t.Errorf("%s: remedy %q", f.Server, f.Remedy)
		}
	}
	for _, s := range fx.want.Servers {
		if per[s.Name] != 1 {
			t.Errorf("%s: %d encrypted statements, want 1", s.Name, per[s.Name])
		}
	}
	for _, st := range rep.Streams {
		for _, d := range st.OnDisk {
			if d.Source != report.SourceSealed {
				t.Errorf("%s %s: source %q, want %q", d.Server, st.Name, d.Source, report.SourceSealed)
			}
		}
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "sealed") {
		t.Error("text report does not show the copies as sealed")
	}
}

// TestRemediesStartOnlyWithTheKey: in a bundle with encrypted stores
// (read from the fixture, without its key), a remedy that starts a server
// says to start it only on its own config with the store's key; other
// remedies and the sealed statement's own are left as they are; a bundle
// without encrypted stores gets no caveat.
func TestRemediesStartOnlyWithTheKey(t *testing.T) {
	fx := encryptedFixtures(t)[0]
	m := LoadWith(openFixture(t, fx.forms[0]), Options{})
	if len(m.EncryptedStores) != len(fx.want.Servers) {
		t.Fatalf("encrypted stores %v, want the %d servers", m.EncryptedStores, len(fx.want.Servers))
	}
	start := "Keep the stream folder. Start " + fx.want.Servers[0].Name + ": once up, it catches up from the stream leader."
	other := "copy the file out first"
	fs := []report.Finding{{Remedy: start}, {Remedy: other}, {Remedy: remedy.SealedRemedy}}
	remedy.GuardRemedies(m, fs)
	if !strings.HasPrefix(fs[0].Remedy, start) || !strings.Contains(fs[0].Remedy, "never on a copy from a bundle") || !strings.Contains(fs[0].Remedy, fx.want.Servers[0].Name) {
		t.Errorf("start remedy: %q", fs[0].Remedy)
	}
	if fs[1].Remedy != other || fs[2].Remedy != remedy.SealedRemedy {
		t.Errorf("other remedies changed: %q, %q", fs[1].Remedy, fs[2].Remedy)
	}
	plain := &model.Model{}
	fs = []report.Finding{{Remedy: start}}
	remedy.GuardRemedies(plain, fs)
	if fs[0].Remedy != start {
		t.Errorf("caveat without encrypted stores: %q", fs[0].Remedy)
	}
}

func openFixture(t *testing.T, p string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Open(p, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
