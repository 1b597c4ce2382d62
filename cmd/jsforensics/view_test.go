package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jsforensics/jsforensics/report"
)

// TestEventsUseReportNames: --events writes each event with the report's
// field names (time, server, …), the server by name.
func TestEventsUseReportNames(t *testing.T) {
	dir := filepath.Join(bundles, "v2.15.2-supercluster-split", "bundle")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	runCLI(t, "analyze", dir, "--events", events, "-o", filepath.Join(t.TempDir(), "r.txt"))
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{"old-0": true, "old-1": true, "old-2": true, "new-0": true, "new-1": true, "new-2": true}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		for _, k := range []string{"time", "kind", "source", "text"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("line %d lacks %q: %s", lines, k, sc.Text())
			}
		}
		for k := range m {
			if k != strings.ToLower(k) {
				t.Fatalf("line %d: key %q is not the report's: %s", lines, k, sc.Text())
			}
		}
		if s, _ := m["server"].(string); s != "" && !names[s] {
			t.Errorf("line %d: server %q is no server name", lines, s)
		}
	}
	if lines == 0 {
		t.Fatal("no events written")
	}
}

// TestTimeWindow: --since and --until keep the timeline events of their
// window in every format, a duration counts back from the last event, and
// a bad value is refused before any work.
func TestTimeWindow(t *testing.T) {
	dir := filepath.Join(bundles, "v2.15.2-supercluster-split", "bundle")
	var full report.Report
	if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json"), &full); err != nil {
		t.Fatal(err)
	}
	last := full.Timeline[len(full.Timeline)-1].Time
	since := last.Add(-30 * time.Second)
	for _, args := range [][]string{{"--since", "30s"}, {"--since", since.Format(time.RFC3339Nano)}} {
		var rep report.Report
		if err := json.Unmarshal(runCLI(t, append([]string{"analyze", dir, "--format", "json"}, args...)...), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Timeline) == 0 || len(rep.Timeline) >= len(full.Timeline) {
			t.Errorf("%v: %d of %d events kept", args, len(rep.Timeline), len(full.Timeline))
		}
		for _, e := range rep.Timeline {
			end := e.Time
			if e.Until != nil {
				end = *e.Until
			}
			if end.Before(since) {
				t.Errorf("%v: event at %v before the window", args, e.Time)
			}
		}
		if len(rep.Findings) != len(full.Findings) {
			t.Errorf("%v: %d findings, want all %d (the window narrows the timeline)", args, len(rep.Findings), len(full.Findings))
		}
	}
	text := string(runCLI(t, "analyze", dir, "--until", "1h", "--width", "0"))
	if !strings.Contains(text, "TIMELINE (0 events)") {
		t.Errorf("--until an hour before the last event kept events:\n%s", text[strings.Index(text, "TIMELINE"):])
	}
	for _, args := range [][]string{{"--since", "yesterday"}, {"--until", "-5m"}, {"--since", "1m", "--until", "5m"},
		{"--since", "2026-11-30T02:00:00Z", "--until", "2026-11-30T01:00:00Z"}, {"--width", "10"}, {"--width", "-3"}, {"--brief", "--format", "json"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"analyze", dir}, args...), &out, &errb); code != exitUnknown || errb.Len() == 0 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, %d bytes out: want refused", args, code, errb.String(), out.Len())
		}
	}
}

// TestBrief: --brief prints the diagnosis and the first steps, nothing of
// the findings, tables or timeline.
func TestBrief(t *testing.T) {
	dir := filepath.Join(bundles, "v2.15.2-supercluster-split", "bundle")
	out := string(runCLI(t, "analyze", dir, "--brief"))
	if !strings.Contains(out, "WHAT HAPPENED, WHAT TO DO FIRST\n1. CRITICAL ") || !strings.Contains(out, "first: ") {
		t.Errorf("--brief lacks the diagnosis:\n%s", out)
	}
	for _, not := range []string{"FINDINGS", "TIMELINE", "Overview", "remedy:"} {
		if strings.Contains(out, not) {
			t.Errorf("--brief prints %q:\n%s", not, out)
		}
	}
	md := string(runCLI(t, "analyze", dir, "--brief", "--format", "markdown"))
	if !strings.Contains(md, "## What happened") || strings.Contains(md, "## Findings") {
		t.Errorf("--brief markdown:\n%s", md)
	}
}

// TestNamesBesideIds: every table shows a known peer id with its name,
// the leader marked, and each server's view of a group once.
func TestNamesBesideIds(t *testing.T) {
	dir := filepath.Join(bundles, "v2.15.2-supercluster-split", "bundle")
	var rep report.Report
	if err := json.Unmarshal(runCLI(t, "analyze", dir, "--format", "json"), &rep); err != nil {
		t.Fatal(err)
	}
	groups := report.GroupsTable(&rep)
	perServer := map[string]int{}
	for _, row := range groups.Rows {
		perServer[row[0]+" "+strings.TrimSuffix(row[2], "*")]++
		for _, s := range rep.Servers {
			for _, cell := range row[6:9] {
				for _, w := range strings.Fields(cell) {
					if strings.Trim(w, "()*") == s.PeerID && !strings.Contains(cell, s.Name+" ("+s.PeerID+")") {
						t.Errorf("%s: id %s without its name %s", row[0], s.PeerID, s.Name)
					}
				}
			}
		}
	}
	for k, n := range perServer {
		if n != 1 {
			t.Errorf("%s: %d rows, want one view a server", k, n)
		}
	}
	text := string(runCLI(t, "analyze", dir, "--width", "0"))
	for _, want := range []string{"old-0 (bV6xXTAf)*", "Overview (* meta leader)", "3 (raftz); 4 (peers.idx)"} {
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(text, "│", " ")), " "), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	ov := report.OverviewTable(&rep)
	for _, row := range ov.Rows {
		if strings.HasPrefix(row[0], "old-0 ") && row[3] != "*" {
			t.Errorf("overview: old-0 not marked meta leader: %q", row)
		}
	}
}

// TestPageFormatsRefusedOnATerminal: html, like xlsx, is written to a
// file, not dumped on a terminal; the text report takes the terminal's
// width.
func TestPageFormatsRefusedOnATerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 91}); err != nil {
		t.Fatal(err)
	}
	if tty := terminalOf(slave); !tty.is || tty.width != 91 {
		t.Fatalf("a terminal of 91 columns taken for %+v", tty)
	}
	dir := filepath.Join(bundles, "v2.15.2-flat", "bundle")
	for _, format := range []string{"html", "xlsx"} {
		var errb bytes.Buffer
		if code := run([]string{"analyze", dir, "--format", format}, slave, &errb); code != exitUnknown || !strings.Contains(errb.String(), "not for a terminal") {
			t.Errorf("%s on a terminal: exit %d, %q", format, code, errb.String())
		}
	}
}

// openPTY opens a pseudo-terminal pair, or skips where there is none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	return m, s
}
