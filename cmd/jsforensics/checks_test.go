package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis"
)

// TestChecksListsEveryCheck: `jsforensics checks` names every registered
// check with its severity, and every setting with the flag that sets it.
func TestChecksListsEveryCheck(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"checks"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for _, c := range analysis.Checks {
		if !strings.Contains(out.String(), c.Code) {
			t.Errorf("%s not listed", c.Code)
		}
		for _, s := range c.Settings {
			if !strings.Contains(out.String(), "--set "+c.Code+"."+s.Key+"=") {
				t.Errorf("setting %s.%s not listed", c.Code, s.Key)
			}
		}
	}
}

// TestSetOverridesAndRefuses: --set reaches the checks (the report's check
// outcomes come back) and an unknown key or a non-number is a tool error.
func TestSetOverridesAndRefuses(t *testing.T) {
	b := bundles + "/v2.10.22-per-server/bundle"
	var out, errb bytes.Buffer
	if rc := run([]string{"analyze", "--format", "json", "--set", "meta-no-leader.persist=5", b}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	var rep struct {
		Checks []struct{ Code, Outcome string } `json:"checks"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != len(analysis.Checks) {
		t.Errorf("report lists %d check outcomes, want %d", len(rep.Checks), len(analysis.Checks))
	}
	for _, args := range [][]string{{"--set", "meta-no-leader.nope=1"}, {"--set", "meta-no-leader.persist=soon"}} {
		out.Reset()
		errb.Reset()
		if rc := run(append(append([]string{"analyze"}, args...), b), &out, &errb); rc != exitUnknown || !strings.Contains(errb.String(), "jsforensics:") {
			t.Errorf("%v: rc %d, want %d and an error (%s)", args, rc, exitUnknown, errb.String())
		}
	}
}

// TestOnlyAndSkip: --only runs just the named checks, --skip leaves them
// out (the incident's critical findings go with them), an unknown code is a
// tool error.
func TestOnlyAndSkip(t *testing.T) {
	b := bundles + "/incident-000-captures/bundle"
	codes := func(args ...string) (map[string]bool, int) {
		var out, errb bytes.Buffer
		rc := run(append(append([]string{"analyze", "--format", "json"}, args...), b), &out, &errb)
		var rep struct {
			Checks   []struct{ Code string } `json:"checks"`
			Findings []struct{ Code string } `json:"findings"`
		}
		got := map[string]bool{}
		if rc == exitUnknown && strings.Contains(errb.String(), "jsforensics:") {
			return got, rc
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Checks {
			got["check:"+c.Code] = true
		}
		for _, f := range rep.Findings {
			got[f.Code] = true
		}
		return got, rc
	}
	got, rc := codes("--only", "peer-id-corrupt")
	if rc != exitCritical || !got["peer-id-corrupt"] || got["quorum-unreachable"] || len(got) != 2 {
		t.Errorf("--only peer-id-corrupt: rc %d, %v", rc, got)
	}
	got, _ = codes("--skip", "peer-id-corrupt,quorum-unreachable")
	if got["peer-id-corrupt"] || got["quorum-unreachable"] || got["check:peer-id-corrupt"] || !got["meta-no-leader"] {
		t.Errorf("--skip: %v", got)
	}
	if _, rc := codes("--only", "no-such-check"); rc != exitUnknown {
		t.Errorf("unknown code: rc %d, want %d", rc, exitUnknown)
	}
}

// TestChecksJSON: checks --json prints one line per registered check, with
// every setting under the key --set takes.
func TestChecksJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"checks", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(analysis.Checks) {
		t.Fatalf("%d lines, want %d", len(lines), len(analysis.Checks))
	}
	for i, l := range lines {
		var c checkJSON
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if c.Code != analysis.Checks[i].Code || c.Severity == "" || c.Description == "" || len(c.Settings) != len(analysis.Checks[i].Settings) {
			t.Errorf("line %d: %+v", i, c)
		}
		for _, s := range c.Settings {
			if _, err := parseSettings(map[string]string{s.Key: "1"}); err != nil {
				t.Errorf("setting %s not taken by --set: %v", s.Key, err)
			}
		}
	}
}
