package analysis

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// gatherNow is the time of the small gather archives the audit checks'
// tests build.
var gatherNow = time.Date(2026, 11, 30, 1, 42, 34, 0, time.UTC)

// gatherServer is one server of a small gather archive: a healthy 2.15.2
// server that requires authentication, unless changed by the test.
func gatherServer(name string) model.GatherServer {
	return model.GatherServer{Name: name,
		Varz: []capture.Capture{{Kind: capture.KindVarz, File: name + "/variables/0001.json", Line: 1,
			Varz: &capture.Varz{ServerName: name, Version: "2.15.2", Now: gatherNow, Cores: 2, CPU: 10, Mem: 100 << 20, AuthRequired: true}}},
		Jsz: []capture.Capture{{Kind: capture.KindJsz, File: name + "/jetstream_info/0001.json", Line: 1,
			Jsz: &capture.Jsz{HAAssets: 3, Meta: &capture.MetaCluster{Leader: "n1", ClusterSize: 3}}}},
		Healthz: []capture.Capture{{Kind: capture.KindHealthz, File: name + "/health/0001.json", Line: 1,
			Healthz: &capture.Healthz{Status: "ok", StatusCode: 200}}},
		Gatewayz: []capture.Capture{{Kind: capture.KindGatewayz, File: name + "/gateways/0001.json", Line: 1,
			Gatewayz: &capture.Gatewayz{Outbound: map[string]capture.RemoteGatewayz{}, Inbound: map[string][]capture.RemoteGatewayz{}}}},
		Leafz: []capture.Capture{{Kind: capture.KindLeafz, File: name + "/leafs/0001.json", Line: 1, Leafz: &capture.Leafz{}}},
		Accountz: []capture.Capture{{Kind: capture.KindAccountz, File: name + "/account_info/0001.json", Line: 1,
			Account: &capture.AccountInfo{AccountName: "A", ClientCnt: 2, SubCnt: 10}}},
	}
}

// accountLimits gives account A on server s of g a JWT with these limits
// and counts.
func accountLimits(g *model.Gather, s int, conns, conn, subs, sub int64) {
	ai := &capture.AccountInfo{AccountName: "A", ClientCnt: conns, SubCnt: subs, Claim: &capture.AccountClaim{}}
	ai.Claim.Nats.Limits = capture.AccountLimits{Conn: conn, Subs: sub, LeafNodeConn: -1}
	g.Clusters[0].Servers[s].Accountz[0].Account = ai
}

// gatherModel is a model holding one gather archive of cluster "c" with
// servers n1, n2, n3 (gatherServer), after change has altered them.
func gatherModel(change func(g *model.Gather)) *model.Model {
	g := model.Gather{Dir: ".", Clusters: []model.GatherCluster{{Name: "c",
		Servers: []model.GatherServer{gatherServer("n1"), gatherServer("n2"), gatherServer("n3")}}}}
	if change != nil {
		change(&g)
	}
	return &model.Model{Gathers: []model.Gather{g}}
}

// streamInfo is the stream info of replica server of stream S in account A.
func streamInfo(server string, st capture.StreamState, cfg capture.StreamConfig) capture.AuditStream {
	return capture.AuditStream{Account: "A", Stream: "S", Server: server, Cluster: "c", File: server + "/stream_info/0001.json",
		Info: &capture.StreamDetail{Name: "S", State: st, Config: &cfg, Cluster: &capture.ClusterInfo{Leader: "n1"}}}
}

// auditVerdict runs one audit check over m as Build does and returns its
// outcome and findings.
func auditVerdict(t *testing.T, c check.Check, m *model.Model) (report.CheckOutcome, []report.Finding) {
	t.Helper()
	fs, outs := runChecks(m, []check.Check{c}, defaultSettings(), nil)
	if len(outs) != 1 {
		t.Fatalf("%d outcomes", len(outs))
	}
	return outs[0], fs
}

// wantVerdict fails t unless the check's outcome is want ("passed",
// "skipped", or the severity of its findings: "warning", "critical").
func wantVerdict(t *testing.T, c check.Check, m *model.Model, want string) []report.Finding {
	t.Helper()
	o, fs := auditVerdict(t, c, m)
	got := o.Outcome
	if got == check.OutcomeFailed {
		got = ""
		for _, f := range fs {
			if f.Code != c.Code {
				t.Errorf("%s raised %s", c.Code, f.Code)
			}
			if got == "" || f.Severity == report.Critical {
				got = string(f.Severity)
			}
		}
	}
	if got != want {
		t.Errorf("%s (%s): %s (%s), want %s; findings %+v", c.Code, c.NatscliCode, got, o.Reason, want, fs)
	}
	if c.CoveredBy == nil {
		for _, f := range fs {
			wantRemedy(t, c, f)
		}
	}
	if o.NatscliCode != c.NatscliCode || c.NatscliCode == "" {
		t.Errorf("%s: outcome natscli_code %q, check's %q", c.Code, o.NatscliCode, c.NatscliCode)
	}
	return fs
}

// natscliAnswer is the part of `nats audit analyze --json` (natscli
// v0.5.0) read here.
type natscliAnswer struct {
	Checks []struct {
		Check struct {
			Code string `json:"code"`
		} `json:"check"`
		Outcome  string `json:"outcome_string"`
		Examples struct {
			Examples []string `json:"examples"`
			Error    string   `json:"error"`
		} `json:"examples"`
	} `json:"checks"`
}

// TestAuditChecksAgreeWithNatscli: on each fixture that is a gather
// archive, every natscli check implemented here gives natscli's outcome
// as recorded beside it (natscli-analyze.json: natscli v0.5.0 `nats audit
// analyze --json --max-examples=0` on the archive), with as many findings
// (or covered ones) as natscli gave examples. Checks natscli ran that are
// not implemented here are listed, not failed.
func TestAuditChecksAgreeWithNatscli(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/bundles/audit-*")
	if err != nil || len(dirs) < 2 {
		t.Fatalf("gather archives %v: %v", dirs, err)
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(dir + "/natscli-analyze.json")
		if err != nil {
			t.Fatal(err)
		}
		var ans natscliAnswer
		if err := json.Unmarshal(b, &ans); err != nil {
			t.Fatal(err)
		}
		agreeWithNatscli(t, dir, analyze(t, dir+"/bundle.zip"), ans, false)
	}
}

// agreeWithNatscli fails t unless every natscli check of report rep gives
// natscli's answer ans (see TestAuditChecksAgreeWithNatscli); with loose,
// a check may instead skip for lack of the answers it reads.
func agreeWithNatscli(t *testing.T, dir string, rep *report.Report, ans natscliAnswer, loose bool) {
	t.Helper()
	{
		byNatscli := map[string]report.CheckOutcome{}
		for _, o := range rep.Checks {
			if o.NatscliCode != "" {
				byNatscli[o.NatscliCode] = o
			}
		}
		severities := map[string][]report.Severity{}
		for _, f := range rep.Findings {
			severities[f.Code] = append(severities[f.Code], f.Severity)
		}
		var missingCodes []string
		for _, nc := range ans.Checks {
			o, ok := byNatscli[nc.Check.Code]
			if !ok {
				missingCodes = append(missingCodes, nc.Check.Code)
				continue
			}
			delete(byNatscli, nc.Check.Code)
			want := map[string]string{"PASS": check.OutcomePassed, "WARN": check.OutcomeFailed, "FAIL": check.OutcomeFailed, "SKIP": check.OutcomeSkipped}[nc.Outcome]
			if loose && o.Outcome == check.OutcomeSkipped && strings.HasPrefix(o.Reason, "the loose captures hold no ") {
				continue
			}
			if nc.Check.Code == "ACCOUNTS_001" && nc.Outcome == "PASS" && o.Outcome == check.OutcomeFailed && envelopedAccountInfo(t, dir) {
				// natscli v0.5.0 decodes each account info as a bare
				// server.AccountInfo, but its gather writes them in the
				// system API's envelope ({"server":…,"data":…}): it finds
				// no JWT claim and passes every archive. Ours reads the
				// data; the findings stand.
				t.Logf("%s ACCOUNTS_001: natscli passes (it reads no claim), ours %s", dir, o.Outcome)
				continue
			}
			if o.Outcome != want {
				t.Errorf("%s %s (%s): %s (%s), natscli %s %v", dir, nc.Check.Code, o.Code, o.Outcome, o.Reason, nc.Outcome, nc.Examples.Examples)
				continue
			}
			if want != check.OutcomeFailed {
				continue
			}
			sev := report.Warning
			if nc.Outcome == "FAIL" {
				sev = report.Critical
			}
			got := severities[o.Code]
			// CLUSTER_002 compares the servers in Go map order, one example
			// per neighbouring pair that differs: its count varies.
			// SERVER_002 gives one example per version; here it is one
			// finding with one evidence line per version.
			if nc.Check.Code == "SERVER_002" {
				n := 0
				for _, f := range rep.Findings {
					if f.Code == o.Code {
						n += len(f.Evidence)
					}
				}
				if len(got) != 1 || n != len(nc.Examples.Examples) {
					t.Errorf("%s %s: %d findings with %d evidence lines, natscli %d examples", dir, nc.Check.Code, len(got), n, len(nc.Examples.Examples))
				}
			}
			if len(got) != len(nc.Examples.Examples) && len(o.CoveredBy) == 0 && nc.Check.Code != "CLUSTER_002" && nc.Check.Code != "SERVER_002" {
				t.Errorf("%s %s: %d findings, natscli %d examples %v", dir, nc.Check.Code, len(got), len(nc.Examples.Examples), nc.Examples.Examples)
			}
			top := report.Severity("")
			for _, s := range got {
				if top == "" || s == report.Critical {
					top = s
				}
			}
			if len(got) > 0 && top != sev {
				t.Errorf("%s %s: findings of severity %s, natscli %s", dir, nc.Check.Code, top, nc.Outcome)
			}
		}
		for code := range byNatscli {
			t.Errorf("%s: check with natscli code %s, which natscli did not run", dir, code)
		}
		if len(missingCodes) > 0 {
			t.Logf("%s: natscli checks not implemented: %v", dir, missingCodes)
		}
	}
}

// TestLooseCapturesAgreeWithNatscli: the endpoints a gather archive holds,
// captured over HTTP from the same servers right after the gather (the
// loose/ folder beside the archive), judged by natscli's checks as a
// bundle without an archive: each check gives natscli's outcome on the
// archive, or skips saying which answer the loose captures lack.
func TestLooseCapturesAgreeWithNatscli(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/bundles/audit-*/loose")
	if err != nil || len(dirs) < 2 {
		t.Fatalf("loose captures %v: %v", dirs, err)
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "..", "natscli-analyze.json"))
		if err != nil {
			t.Fatal(err)
		}
		var ans natscliAnswer
		if err := json.Unmarshal(b, &ans); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(dir, Options{ToolVersion: "test", LooseAudit: true})
		if err != nil {
			t.Fatal(err)
		}
		// Off by default: the same folder gives no natscli verdict.
		for _, o := range analyze(t, dir).Checks {
			if o.NatscliCode != "" && o.Outcome != check.OutcomeSkipped {
				t.Errorf("%s: %s judged without LooseAudit", dir, o.NatscliCode)
			}
		}
		judged, natscliJudged := 0, 0
		for _, o := range rep.Checks {
			if o.NatscliCode != "" && o.Outcome != check.OutcomeSkipped {
				judged++
			}
		}
		for _, nc := range ans.Checks {
			if nc.Outcome != "SKIP" {
				natscliJudged++
			}
		}
		// /varz, /jsz (streams with their configuration), /healthz,
		// /gatewayz, /leafz and APP's /accountz: every check natscli
		// judged on the archive is judged.
		if judged != natscliJudged || judged < 20 {
			t.Errorf("%s: %d natscli checks judged on loose captures, natscli judged %d on the archive", dir, judged, natscliJudged)
		}
		agreeWithNatscli(t, dir, rep, ans, true)
	}
}

// envelopedAccountInfo says whether the account infos of the gather
// archive in dir are in the system API's envelope, as natscli v0.5.0's
// gather writes them.
func envelopedAccountInfo(t *testing.T, dir string) bool {
	t.Helper()
	zr, err := zip.OpenReader(filepath.Join(dir, "bundle.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	n := 0
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "/account_info/0001.json") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Server json.RawMessage `json:"server"`
			Data   struct {
				AccountName string `json:"account_name"`
			} `json:"data"`
		}
		err = json.NewDecoder(rc).Decode(&env)
		rc.Close()
		if err != nil || len(env.Server) == 0 || env.Data.AccountName == "" {
			return false
		}
		n++
	}
	return n > 0
}
