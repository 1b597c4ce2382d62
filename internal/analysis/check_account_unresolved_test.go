package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/accounts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

const (
	shopKey    = "AB3JFVN2GAHMC2X5Y7W7H3MUGMWCMB4KQZEU4FYSQJL36WK7ZZYV37KT"
	billingKey = "ABP5MJVNAZEUSDRPODAUZE3DCETNFAMMVNWWIDJ6RZRNIOCS7DP2Z56O"
)

// operatorModel is three servers in operator mode as the operator fixtures
// show them: a's resolver folder in the bundle holds SHOP's JWT and an
// expired BILLING JWT, and nothing in its log says a lookup failed; b logged
// the lookup of BILLING failing and its /healthz said so; c failed, then
// its /healthz said ok. Each holds a copy of BILLING's INVOICES.
func operatorModel() *model.Model {
	t0 := time.Date(2026, 12, 7, 4, 47, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	m := &model.Model{Accounts: map[string]*model.Account{}}
	for _, n := range []string{"a", "b", "c"} {
		m.Servers = append(m.Servers, &model.Server{ID: model.ServerID(n), Name: n, PeerID: natsfmt.PeerID(n), Alive: true,
			Sources: map[string]bool{"log": true, "healthz": true, "store": true}})
	}
	m.Accounts[shopKey] = &model.Account{Key: shopKey, Name: "SHOP", NameSource: "JWT a/jwt/" + shopKey + ".jwt",
		JWTs: []model.AccountJWT{{Path: "a/jwt/" + shopKey + ".jwt", Server: "a", Dir: "a/jwt", Name: "SHOP", IssuedAt: at(-3600), JetStream: true}}}
	m.Accounts[billingKey] = &model.Account{Key: billingKey, Name: "BILLING", NameSource: "JWT a/jwt/" + billingKey + ".jwt",
		JWTs: []model.AccountJWT{{Path: "a/jwt/" + billingKey + ".jwt", Server: "a", Dir: "a/jwt", Name: "BILLING", IssuedAt: at(-3600),
			Expires: at(-60), JetStream: true}}}
	ev := func(s float64, server, source, kind, account, text string, line int) model.TimelineEvent {
		return model.TimelineEvent{Time: at(s), Server: model.ServerID(server), Source: source, Kind: kind, Account: account, Text: text,
			File: server + ".log", Line: line}
	}
	m.Timeline = []model.TimelineEvent{
		ev(0, "a", "log", "start", "", "Starting nats-server", 1),
		ev(0, "b", "log", "start", "", "Starting nats-server", 1),
		ev(0, "c", "log", "start", "", "Starting nats-server", 1),
		ev(1, "b", "log", "account-lookup-failed", billingKey, "Account ["+billingKey+"] lookup for stream create failed: account jwt not found", 135),
		ev(1.2, "c", "log", "account-lookup-failed", billingKey, "Account ["+billingKey+"] lookup for stream create failed: account jwt not found", 140),
		ev(8, "b", "log", "healthcheck-failed", "", `Healthcheck failed: "JetStream can not lookup account \"`+billingKey+`\": account jwt not found"`, 150),
		ev(9, "a", "log", "stream-leader", shopKey, "JetStream cluster new stream leader for '"+shopKey+" > ORDERS'", 90),
		ev(12, "b", "healthz", "healthcheck-failed", "", `healthz: unavailable: JetStream can not lookup account "`+billingKey+`": account jwt not found`, 0),
		ev(13, "c", "healthz", "healthcheck-ok", "", "healthz: ok", 0),
	}
	m.Timeline[7].File, m.Timeline[8].File = "captures/b/healthz.json", "captures/c/healthz.json"
	var copies []*model.StreamCopy
	for _, n := range []string{"a", "b", "c"} {
		copies = append(copies, &model.StreamCopy{Server: model.ServerID(n), Path: n + "/data/jetstream/" + billingKey + "/streams/INVOICES",
			FirstSeq: 1, LastSeq: 15, Messages: 15})
	}
	m.Streams = []*model.Stream{{Account: billingKey, Name: "INVOICES", Replicas: 3, Copies: copies, AssignedTo: []model.ServerID{"a", "b", "c"}}}
	return m
}

func TestAccountUnresolvedModel(t *testing.T) {
	m := operatorModel()
	fs := runCheck(accounts.CheckAccountUnresolved, m)
	by := map[string]report.Finding{}
	for _, f := range fs {
		by[f.Server] = f
	}
	if len(fs) != 3 {
		t.Fatalf("%d findings, want one on each of a, b, c: %+v", len(fs), fs)
	}
	b := by["b"]
	if b.Severity != report.Critical || b.Kind != "not-in-resolver" || b.Account != billingKey || b.AccountName != "BILLING" ||
		b.Stream != "INVOICES" || b.Messages == nil || *b.Messages != 15 || b.Since == nil || !b.Since.Equal(m.Timeline[3].Time) {
		t.Errorf("b: %+v", b)
	}
	if want := "BILLING (" + billingKey + ")"; !strings.Contains(b.Message, want) || !strings.Contains(b.Message, "not lost") {
		t.Errorf("b's message lacks %q or 'not lost': %s", want, b.Message)
	}
	ev := strings.Join(b.Evidence, "\n")
	for _, want := range []string{"first failure: b.log line 135", "last failure: captures/b/healthz.json", "on disk: INVOICES, 15 messages, sequences 1-15 (its folder under the account's key in b's store)"} {
		if !strings.Contains(ev, want) {
			t.Errorf("b's evidence lacks %q:\n%s", want, ev)
		}
	}
	if !slices.Equal(b.TimelineRefs, []int{3, 5, 7}) {
		t.Errorf("b's timeline refs %v, want its failures 3, 5, 7", b.TimelineRefs)
	}
	// a: no failure logged, its resolver folder's JWT expired.
	a := by["a"]
	if a.Severity != report.Warning || a.Kind != "expired" || !strings.Contains(strings.Join(a.Evidence, "\n"), "expired at 2026-12-07T04:46:00Z") {
		t.Errorf("a: %+v", a)
	}
	// c: failed, then its /healthz said ok.
	c := by["c"]
	if c.Severity != report.Warning || !strings.Contains(c.Message, "holds it again") {
		t.Errorf("c: %+v", c)
	}
	for _, f := range fs {
		if f.RemedyID != "account-jwt-restore" {
			t.Errorf("%s: remedy %q", f.Server, f.RemedyID)
		}
	}
	if !slices.ContainsFunc(b.RemedySteps, func(s report.RemedyStep) bool {
		return slices.Contains(s.Commands, "nsc push --account BILLING")
	}) {
		t.Errorf("b's remedy does not push BILLING: %+v", b.RemedySteps)
	}

	// Nothing failed and every JWT current: nothing raised.
	m = operatorModel()
	m.Timeline = m.Timeline[:3]
	m.Accounts[billingKey].JWTs[0].Expires = time.Time{}
	if fs := runCheck(accounts.CheckAccountUnresolved, m); len(fs) != 0 {
		t.Errorf("healthy operator model: %+v", fs)
	}
	// Without the JWT in a's folder (it holds SHOP's only): a still has
	// the resolver evidence, not-in-resolver.
	m = operatorModel()
	m.Timeline = m.Timeline[:3]
	delete(m.Accounts, billingKey)
	fs = runCheck(accounts.CheckAccountUnresolved, m)
	if len(fs) != 1 || fs[0].Server != "a" || fs[0].Kind != "not-in-resolver" || fs[0].AccountName != "" || fs[0].Severity != report.Warning {
		t.Errorf("JWT missing from a's folder: %+v", fs)
	}
}

// TestAccountNamesOnEveryFinding: Build gives every finding about a named
// account its name, beside the key in its message (not inside a quoted log
// line or a path).
func TestAccountNamesOnEveryFinding(t *testing.T) {
	m := operatorModel()
	fs := []report.Finding{{Code: "asset-lost", Account: shopKey, Stream: "ORDERS",
		Message:  "stream " + shopKey + " > ORDERS is in no store",
		Evidence: []string{"a log line 3: \"Account [" + shopKey + "] lookup\"", "path a/data/jetstream/" + shopKey + "/streams/ORDERS"}}}
	nameAccounts(m, fs)
	f := fs[0]
	if f.AccountName != "SHOP" || f.Message != "stream SHOP ("+shopKey+") > ORDERS is in no store" {
		t.Errorf("named: %+v", f)
	}
	if strings.Contains(strings.Join(f.Evidence, "\n"), "SHOP") {
		t.Errorf("a quoted log line or a path was changed: %v", f.Evidence)
	}
	if got := f.AccountLabel(); got != "SHOP ("+shopKey+")" {
		t.Errorf("label %q", got)
	}
	// Twice is once.
	nameAccounts(m, fs)
	if strings.Count(fs[0].Message, "SHOP") != 1 {
		t.Errorf("named twice: %s", fs[0].Message)
	}
}

// operatorFixture is an operator fixture's want.json expect.
type operatorFixture struct {
	Variant       string              `json:"variant"`
	Unresolved    string              `json:"unresolved"`
	StreamsOnDisk map[string][]string `json:"streams_on_disk"`
	StreamsInJSZ  map[string][]string `json:"streams_in_jsz"`
	Healthz       map[string]struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"healthz"`
	Accounts []struct {
		Name, PubKey string
		Streams      []string
	} `json:"accounts"`
	IssuerFiles []string `json:"issuer_files"`
	Remedy      *struct {
		Proven    bool              `json:"proven"`
		Restarted bool              `json:"restarted"`
		Messages  map[string]uint64 `json:"messages_after"`
		Before    map[string]uint64 `json:"messages_before"`
	} `json:"remedy"`
}

func operatorFixtures(t *testing.T, variant string) map[string]operatorFixture {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(bundlesDir, "operator-*"))
	out := map[string]operatorFixture{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "want.json"))
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			ServerVersion string          `json:"server_version"`
			Expect        operatorFixture `json:"expect"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		if w.Expect.Variant == variant {
			out[d] = w.Expect
		}
	}
	if len(out) < 2 {
		t.Fatalf("%d operator fixtures of variant %s, want one per release line (2.12, 2.15)", len(out), variant)
	}
	return out
}

// notAlone are the codes no layout raises by itself, nor an account a
// server cannot look up (its streams are on disk).
var notAlone = []string{"meta-split", "peer-unknown", "orphan-risk", "asset-lost"}

// TestOperatorModeIsNoIncident: a healthy cluster in operator mode (3
// servers, accounts by public key, a full resolver) raises none of
// meta-split, peer-unknown, orphan-risk, asset-lost, account-unresolved,
// nothing critical; its streams are keyed by public key (the /jsz name
// claim is no second account), and each account is named by its JWT.
func TestOperatorModeIsNoIncident(t *testing.T) {
	for dir, x := range operatorFixtures(t, "healthy") {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := bundle.Open(filepath.Join(dir, "bundle"), bundle.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			m := LoadWith(b, Options{})
			rep := analyze(t, filepath.Join(dir, "bundle"))
			for _, f := range rep.Findings {
				if slices.Contains(notAlone, f.Code) || f.Code == string(report.CodeAccountUnresolved) || f.Severity == report.Critical {
					t.Errorf("%s %s (%s): %s", f.Severity, f.Code, f.Server, f.Message)
				}
			}
			want := 0
			for _, a := range x.Accounts {
				if len(a.Streams) == 0 {
					continue
				}
				if got := m.AccountName(a.PubKey); got != a.Name {
					t.Errorf("account %s named %q, its JWT says %q", a.PubKey, got, a.Name)
				}
				for _, s := range a.Streams {
					want++
					if m.Stream(a.PubKey, s) == nil {
						t.Errorf("stream %s > %s not in the model", a.PubKey, s)
					}
				}
			}
			if len(m.Streams) != want {
				t.Errorf("%d streams in the model, the fixture made %d", len(m.Streams), want)
			}
		})
	}
}

// TestAccountUnresolvedFixtures: on the real servers' bundles of an account
// whose JWT was removed from the resolver (operator-unresolved-*) or expired
// (operator-expired-*), one critical account-unresolved per server whose
// /healthz said it could not look the account up, naming the account by key
// (and by name where the bundle holds its JWT), its streams on disk, and
// none of meta-split, peer-unknown, orphan-risk, asset-lost. The remedy's
// run on those servers brought every stream back.
func TestAccountUnresolvedFixtures(t *testing.T) {
	for _, variant := range []string{"unresolved", "expired"} {
		for dir, x := range operatorFixtures(t, variant) {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				// The premise, as the servers said it.
				var failing []string
				for srv, h := range x.Healthz {
					if strings.Contains(h.Error, `can not lookup account "`+x.Unresolved+`"`) {
						failing = append(failing, srv)
					}
				}
				slices.Sort(failing)
				if len(failing) == 0 || x.Remedy == nil || !x.Remedy.Proven {
					t.Fatalf("fixture: healthz %+v, remedy %+v", x.Healthz, x.Remedy)
				}
				rep := analyze(t, filepath.Join(dir, "bundle"))
				var got []string
				for _, f := range rep.Findings {
					if slices.Contains(notAlone, f.Code) {
						t.Errorf("%s %s (%s): %s", f.Severity, f.Code, f.Server, f.Message)
					}
					if f.Code != string(report.CodeAccountUnresolved) {
						continue
					}
					got = append(got, f.Server)
					if f.Account != x.Unresolved || f.Severity != report.Critical || f.Kind != "not-in-resolver" || f.RemedyID != "account-jwt-restore" {
						t.Errorf("%s: %+v", f.Server, f)
					}
					wantName := ""
					if len(x.IssuerFiles) > 0 {
						wantName = "BILLING" // the JWT as issued is in the bundle
					}
					if f.AccountName != wantName || wantName != "" && !strings.Contains(f.Message, "BILLING ("+x.Unresolved+")") {
						t.Errorf("%s: account name %q, want %q: %s", f.Server, f.AccountName, wantName, f.Message)
					}
					for _, s := range x.StreamsOnDisk[f.Server] {
						name := strings.TrimPrefix(s, x.Unresolved+"/")
						if !strings.Contains(f.Message, name) {
							t.Errorf("%s: its stream %s on disk not named: %s", f.Server, name, f.Message)
						}
					}
					if !strings.Contains(f.Message, "not lost") {
						t.Errorf("%s: %s", f.Server, f.Message)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, failing) {
					t.Errorf("account-unresolved on %v, the servers that said so: %v", got, failing)
				}
				for k, n := range x.Remedy.Before {
					if x.Remedy.Messages[k] != n {
						t.Errorf("remedy run: %s has %d messages, %d before", k, x.Remedy.Messages[k], n)
					}
				}
			})
		}
	}
}

// TestUndecodableJWTIsUnread: a file that looks like a JWT but whose
// payload is no JSON of claims is listed as unread with why, never dropped.
func TestUndecodableJWTIsUnread(t *testing.T) {
	dir := t.TempDir()
	// header {"alg":"ed25519-nkey"}, payload "not json", signature "sig".
	if err := os.WriteFile(filepath.Join(dir, "ABROKEN.jwt"), []byte("eyJhbGciOiJlZDI1NTE5LW5rZXkifQ.bm90IGpzb24.c2ln\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, dir)
	if rep.Coverage == nil || !slices.ContainsFunc(rep.Coverage.Unread, func(u report.UnreadFile) bool {
		return u.Path == "ABROKEN.jwt" && strings.Contains(u.Reason, "does not decode")
	}) {
		t.Errorf("unread: %+v", rep.Coverage)
	}
}

// TestAccountUnresolvedPartialBundles: the unresolved fixture with parts
// left out, as bundles come: without the captures the logs tell it, without
// the logs the /healthz captures, without either only the resolver folders
// (a warning: no server said so, but none can load the account's streams
// at its start). Each way, a finding on every server holding the account's
// streams, and none of meta-split, peer-unknown, orphan-risk, asset-lost.
func TestAccountUnresolvedPartialBundles(t *testing.T) {
	src := filepath.Join(bundlesDir, "operator-unresolved-v2.12.15", "bundle")
	for _, tc := range []struct {
		name     string
		drop     func(rel string) bool
		severity report.Severity
	}{
		{"no captures", func(rel string) bool { return strings.HasPrefix(rel, "captures/") }, report.Critical},
		{"no logs", func(rel string) bool { return strings.HasSuffix(rel, ".log") }, report.Critical},
		{"stores and resolvers only", func(rel string) bool {
			return strings.HasPrefix(rel, "captures/") || strings.HasSuffix(rel, ".log")
		}, report.Warning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir()
			err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(src, p)
				if tc.drop(filepath.ToSlash(rel)) {
					return nil
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze(t, dst)
			var on []string
			for _, f := range rep.Findings {
				if slices.Contains(notAlone, f.Code) {
					t.Errorf("%s %s (%s): %s", f.Severity, f.Code, f.Server, f.Message)
				}
				if f.Code != string(report.CodeAccountUnresolved) {
					continue
				}
				on = append(on, f.Server)
				if f.Severity != tc.severity || f.Kind != "not-in-resolver" || f.AccountName != "BILLING" {
					t.Errorf("%s: %s %s %q: %s", f.Server, f.Severity, f.Kind, f.AccountName, f.Message)
				}
			}
			slices.Sort(on)
			if !slices.Equal(on, []string{"op-0", "op-1", "op-2"}) {
				t.Errorf("account-unresolved on %v, want every server", on)
			}
		})
	}
}
