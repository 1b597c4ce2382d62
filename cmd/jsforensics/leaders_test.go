package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestOverviewOneMetaLeader: no committed fixture ends with two meta
// groups in one JetStream domain, so each overview marks at most one meta
// leader per domain (the domains-* fixtures one in each of two): on
// acked-lost-v2.15.2, whose first /jsz (before the loss) named ack-2 and
// whose last, twenty seconds later, ack-0, that is ack-0; its raft groups
// table says when each capture named which leader, and when the last was
// answered.
func TestOverviewOneMetaLeader(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		var r report.Report
		if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json"), &r); err != nil {
			t.Fatal(err)
		}
		var leaders []string
		for _, row := range report.OverviewTable(&r).Rows {
			if row[3] == "*" {
				leaders = append(leaders, strings.Fields(row[0])[0])
			}
		}
		// Each JetStream domain runs a meta group of its own
		// (domains-*: a hub and a leaf domain, want.json expect.domains):
		// one leader per domain.
		var w struct {
			Expect struct {
				Domains map[string]string `json:"domains"`
			} `json:"expect"`
		}
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "want.json")); err == nil {
			_ = json.Unmarshal(b, &w)
		}
		perDomain := map[string][]string{}
		for _, l := range leaders {
			perDomain[w.Expect.Domains[l]] = append(perDomain[w.Expect.Domains[l]], l)
		}
		for d, ls := range perDomain {
			if len(ls) > 1 {
				t.Errorf("%s: the overview marks %d meta leaders in domain %q: %v", dir, len(ls), d, ls)
			}
		}
		if len(w.Expect.Domains) > 0 && len(perDomain) != 2 {
			t.Errorf("%s: meta leaders %v, want one in each of the two domains", dir, leaders)
		}
		if filepath.Base(filepath.Dir(dir)) != "acked-lost-v2.15.2" {
			continue
		}
		if strings.Join(leaders, ",") != "ack-0" {
			t.Errorf("%s: meta leader %v, want ack-0 (the last captures')", dir, leaders)
		}
		g := report.GroupsTable(&r)
		rows := 0
		for _, row := range g.Rows {
			if row[0] != "_meta_" {
				continue
			}
			rows++
			if !strings.Contains(row[6], "ack-2 (yeLBjR8k) (jsz 2026-12-01T12:00:54Z)") || !strings.HasPrefix(row[10], "2026-12-01T12:01:14.") {
				t.Errorf("%s: _meta_ row %q: leader %q, captured %q", dir, row[2], row[6], row[10])
			}
		}
		if rows != 3 {
			t.Errorf("%s: %d _meta_ rows, want 3", dir, rows)
		}
	}
}
