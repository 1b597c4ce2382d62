package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestRedactText: names are replaced where they are whole words, the same
// name by the same token everywhere; subjects are hashed whole, the
// server's own subjects keep their prefix; absolute directories and the
// bundle path become tokens; file names, versions, endpoints and figures
// stay. Redacting the same report twice gives the same tokens.
func TestRedactText(t *testing.T) {
	r := sampleReport()
	r.Bundle = "/home/ops/acme-case/bundle"
	r.Timeline[0].Text = "Using configuration file: /srv/acme/nats-0.conf for $G > ORDERS on orders.new, $JS.API.STREAM.INFO.ORDERS; ORDERS2 kept; v2.10.22 index.db /jsz e.g. this"
	r.Notes = append(r.Notes, "read /home/ops/acme-case/bundle/nats-0")
	a, err := Redact(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Redact(sampleReportWith(r))
	if err != nil {
		t.Fatal(err)
	}
	got := a.Timeline[0].Text
	stream, acc := a.Streams[0].Name, a.Streams[0].Account
	if !regexp.MustCompile(`^stream-[0-9a-f]{4,}$`).MatchString(stream) || !regexp.MustCompile(`^acc-[0-9a-f]{4,}$`).MatchString(acc) {
		t.Fatalf("tokens %q %q", stream, acc)
	}
	for _, want := range []string{acc + " > " + stream, "$JS.API.STREAM.INFO." + stream, "ORDERS2 kept", "v2.10.22 index.db /jsz e.g. this", "/nats-0.conf", "path-"} {
		if !strings.Contains(got, want) {
			t.Errorf("redacted text lacks %q: %s", want, got)
		}
	}
	for _, gone := range []string{"acme", "orders.new", "> ORDERS", ".ORDERS;", "$G"} {
		if strings.Contains(got, gone) || strings.Contains(a.Bundle, gone) || strings.Contains(strings.Join(a.Notes, " "), gone) {
			t.Errorf("%q left in %q / %q / %q", gone, got, a.Bundle, a.Notes)
		}
	}
	if a.Findings[0].Stream != stream || a.Findings[0].Account != acc {
		t.Errorf("finding names %s > %s, the stream %s > %s", a.Findings[0].Account, a.Findings[0].Stream, acc, stream)
	}
	if a.Servers[0].Name != "nats-0" || a.Servers[0].PeerID != "S1Nunr6R" || a.Streams[0].OnDisk[0].Messages != 8 {
		t.Errorf("servers or figures changed: %+v %+v", a.Servers[0], a.Streams[0].OnDisk[0])
	}
	if b.Timeline[0].Text != got || b.Bundle != a.Bundle {
		t.Errorf("second redaction differs: %q vs %q", b.Timeline[0].Text, got)
	}
	if r.Streams[0].Name != "ORDERS" {
		t.Error("Redact changed its input")
	}
}

// sampleReportWith returns a fresh copy of r's content (Redact must not
// depend on the pointer it was given).
func sampleReportWith(r *Report) *Report {
	c := *r
	return &c
}

// TestRedactClustersAndValues: cluster names become tokens in the servers'
// field and where the text names a cluster (a banner, varz, the meta leader
// as logged, a gateway), but a cluster named by a plain word leaves that
// word elsewhere; the payload values an acked-lost finding and a history
// quote become tokens, the same value the same token everywhere.
func TestRedactClustersAndValues(t *testing.T) {
	r := sampleReport()
	r.Servers[0].Cluster = "new"
	r.Servers = append(r.Servers, Server{Name: "e-1", Cluster: "nats", Sources: []string{"log"}})
	r.Timeline = append(r.Timeline,
		TimelineEvent{Time: r.Timeline[0].Time, Server: "nats-0", Text: "  Cluster:  new"},
		TimelineEvent{Time: r.Timeline[0].Time, Server: "nats-0", Text: "JetStream cluster new metadata leader: e-1/nats"},
		TimelineEvent{Time: r.Timeline[0].Time, Server: "nats-0", Text: `Creating outbound gateway connection to "nats"; a new leader`},
		TimelineEvent{Time: r.Timeline[0].Time, Server: "e-1", Text: "varz: e-1 version 2.15.2 cluster nats, started 2026-11-30T01:00:00Z"},
		TimelineEvent{Time: r.Timeline[0].Time, Server: "e-1", Text: "Cluster name is nats"},
	)
	r.Findings = append(r.Findings, Finding{Code: "acked-lost", Severity: Critical, Account: "$G", Stream: "ORDERS",
		Message:  `2 publish(es) are held by no copy of $G > ORDERS: "card 4111-1111" (seq 7), "{\"amount\":5}"`,
		Evidence: []string{`lost values: "card 4111-1111" (seq 7), "{\"amount\":5}"`, `"card 4111-1111" (process 3): acknowledged between the held "acct 17" (seq 6) and the end`, `nats-0 nats-0.log:3: "not a value"`},
		Remedy:   "nats stream info ORDERS"})
	r.Diagnosis[0].Summary += `; lost "card 4111-1111"`
	r.Histories = []ClientHistory{{File: "client/history.edn", Buckets: []HistoryBucket{{LostValues: []string{`"card 4111-1111" (seq 7)`, `"{\"amount\":5}"`}}}}}

	a, err := Redact(r)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteText(&text, a); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"4111", "amount", "acct 17", "Cluster:  new", "cluster nats", "e-1/nats", `"nats"`, "name is nats"} {
		if strings.Contains(string(raw), gone) || strings.Contains(text.String(), gone) {
			t.Errorf("%q left in the redacted report", gone)
		}
	}
	newTok, natsTok := a.Servers[0].Cluster, a.Servers[len(a.Servers)-1].Cluster
	if !regexp.MustCompile(`^cluster-[0-9a-f]{4,}$`).MatchString(newTok) || !regexp.MustCompile(`^cluster-[0-9a-f]{4,}$`).MatchString(natsTok) || newTok == natsTok {
		t.Fatalf("cluster tokens %q %q", newTok, natsTok)
	}
	n := len(a.Timeline)
	for i, want := range []string{
		"  Cluster:  " + newTok,
		"JetStream cluster new metadata leader: e-1/" + natsTok, // "new" here is the log's word
		`Creating outbound gateway connection to "` + natsTok + `"; a new leader`,
		"varz: e-1 version 2.15.2 cluster " + natsTok + ", started 2026-11-30T01:00:00Z",
		"Cluster name is " + natsTok,
	} {
		if got := a.Timeline[n-5+i].Text; got != want {
			t.Errorf("timeline:\n got %q\nwant %q", got, want)
		}
	}
	f := a.Findings[len(a.Findings)-1]
	if f.Remedy != "nats stream info "+a.Streams[0].Name {
		t.Errorf("a cluster named nats changed the command: %q", f.Remedy)
	}
	vals := regexp.MustCompile(`"val-[0-9a-f]{4,}"`).FindAllString(f.Message, -1)
	if len(vals) != 2 || vals[0] == vals[1] {
		t.Fatalf("message %q: want two value tokens", f.Message)
	}
	card := vals[0]
	for _, s := range []string{f.Evidence[0], f.Evidence[1], a.Diagnosis[0].Summary, a.Histories[0].Buckets[0].LostValues[0]} {
		if !strings.Contains(s, card) {
			t.Errorf("%q lacks the token %s of the same value", s, card)
		}
	}
	if !strings.Contains(f.Evidence[1], "(seq 6)") || strings.Count(f.Evidence[1], `"val-`) != 2 {
		t.Errorf("the held value's evidence: %q", f.Evidence[1])
	}
	if !strings.HasSuffix(f.Evidence[2], `"not a value"`) {
		t.Errorf("a log line's quote was taken for a value: %q", f.Evidence[2])
	}
}

// TestRedactAccountName: an account's JWT name (account_name) is redacted
// like its key, in the field and in every text that says "NAME (KEY)".
func TestRedactAccountName(t *testing.T) {
	const key = "ABP5MJVNAZEUSDRPODAUZE3DCETNFAMMVNWWIDJ6RZRNIOCS7DP2Z56O"
	r := sampleReport()
	r.Findings = append(r.Findings, Finding{Code: "account-unresolved", Severity: Critical, Server: "nats-0", Account: key, AccountName: "BILLING",
		Message: "nats-0 cannot look up account BILLING (" + key + ")"})
	a, err := Redact(r)
	if err != nil {
		t.Fatal(err)
	}
	f := a.Findings[len(a.Findings)-1]
	if f.AccountName == "BILLING" || f.Account == key || strings.Contains(f.Message, "BILLING") || strings.Contains(f.Message, key) {
		t.Errorf("not redacted: %+v", f)
	}
	if !strings.Contains(f.Message, f.AccountName+" ("+f.Account+")") {
		t.Errorf("the label lost its form: %q (name %q, account %q)", f.Message, f.AccountName, f.Account)
	}
}
