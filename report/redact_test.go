package report

import (
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
