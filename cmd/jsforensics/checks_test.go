package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"

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

// TestChecksJSON: checks --json prints one JSON array, an element per
// registered check in the list's order, with every setting under the key
// --set takes.
func TestChecksJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"checks", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got []map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON array: %v", err)
	}
	if len(got) != len(analysis.Checks) {
		t.Fatalf("%d checks, want %d", len(got), len(analysis.Checks))
	}
	for i, c := range got {
		for _, k := range []string{"code", "severity", "description", "settings"} {
			if _, ok := c[k]; !ok {
				t.Errorf("check %d has no %q: %v", i, k, c)
			}
		}
	}
	var checks []checkJSON
	if err := json.Unmarshal(out.Bytes(), &checks); err != nil {
		t.Fatal(err)
	}
	for i, c := range checks {
		if c.Code != analysis.Checks[i].Code || c.Severity != string(analysis.Checks[i].Severity) || c.Description != analysis.Checks[i].Description || len(c.Settings) != len(analysis.Checks[i].Settings) {
			t.Errorf("check %d: %+v", i, c)
		}
		for _, s := range c.Settings {
			if _, err := parseSettings(map[string]string{s.Key: "1"}); err != nil {
				t.Errorf("setting %s not taken by --set: %v", s.Key, err)
			}
			if s.Unit == "" || s.Description == "" {
				t.Errorf("setting %s: %+v", s.Key, s)
			}
		}
	}
}

// TestChecksWrap: the list fits --width, or the terminal's width, and
// wrapping loses and reorders no word: it reads as the unwrapped list.
func TestChecksWrap(t *testing.T) {
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	unwrapped := string(runCLI(t, "checks", "--width", "0"))
	long := 0
	for _, l := range strings.Split(unwrapped, "\n") {
		long = max(long, utf8.RuneCountInString(l))
	}
	if long <= 100 {
		t.Fatalf("the unwrapped list is at most %d wide: nothing to wrap", long)
	}
	fits := func(what, out string, width int) {
		t.Helper()
		for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("%s: line %d is %d wide: %q", what, i+1, n, l)
			}
		}
		if words(out) != words(unwrapped) {
			t.Errorf("%s: wrapped, the list does not read as unwrapped", what)
		}
	}
	for _, w := range []int{48, 60, 80, 100, 140} {
		fits(fmt.Sprintf("--width %d", w), string(runCLI(t, "checks", "--width", strconv.Itoa(w))), w)
	}
	fits("off a terminal", string(runCLI(t, "checks")), defaultWidth)

	// On a terminal: its width.
	master, slave := openPTY(t)
	defer master.Close()
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 72}); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&screen, master); close(done) }()
	var errb bytes.Buffer
	code := run([]string{"checks"}, slave, &errb)
	slave.Close()
	<-done
	if code != exitOK {
		t.Fatalf("on a terminal: exit %d: %s", code, errb.String())
	}
	fits("a terminal of 72 columns", strings.ReplaceAll(screen.String(), "\r\n", "\n"), 72)

	var errb2 bytes.Buffer
	if code := run([]string{"checks", "--width", "10"}, io.Discard, &errb2); code != exitUnknown {
		t.Errorf("--width 10: exit %d", code)
	}
}

func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		in          string
		first, rest int
		want        []string
	}{
		{"a bb ccc dddd", 6, 6, []string{"a bb", "ccc", "dddd"}},
		{"a bb ccc dddd", 8, 4, []string{"a bb ccc", "dddd"}},
		{"aaaa bb cc", 4, 5, []string{"aaaa", "bb cc"}},
		{"a.very_long_key=1 x", 8, 8, []string{"a.very_long_key=1", "x"}},
		{"  spaces   collapse ", 0, 0, []string{"spaces collapse"}},
		{"one line", 8, 8, []string{"one line"}},
		{"", 10, 10, []string{""}},
	} {
		if got := wrapWords(strings.Fields(tc.in), tc.first, tc.rest); !slices.Equal(got, tc.want) {
			t.Errorf("wrapWords(%q, %d, %d) = %q, want %q", tc.in, tc.first, tc.rest, got, tc.want)
		}
	}
}
