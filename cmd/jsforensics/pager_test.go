package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// onTerminal runs the CLI with stdout on a pseudo-terminal of 100 columns
// and returns the exit code, what reached the terminal (newlines as
// written) and stderr.
func onTerminal(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		// Read until the slave is closed (EIO): the pty's buffer is small
		// and a report printed directly would block on it.
		_, _ = io.Copy(&screen, master)
		close(done)
	}()
	var errb bytes.Buffer
	code := run(args, slave, &errb)
	slave.Close()
	<-done
	return code, strings.ReplaceAll(screen.String(), "\r\n", "\n"), errb.String()
}

// TestPager: on a terminal the report goes through $PAGER and nothing of it
// is printed besides; piped, with --no-pager, or when the pager cannot
// start, it is printed directly. analyze and render alike.
func TestPager(t *testing.T) {
	t.Setenv("NO_COLOR", "1") // the paged report is then the plain one of 100 columns
	dir := filepath.Join(bundles, "scaledown-v2.12.1", "bundle")
	want := string(fileOut(t, "analyze", dir, "--width", "100"))
	saved := filepath.Join(t.TempDir(), "report.json")
	runCLI(t, "analyze", dir, "--format", "json", "-o", saved)
	paged := filepath.Join(t.TempDir(), "paged")
	t.Setenv("PAGER", "cat > "+paged)

	for _, cmd := range [][]string{{"analyze", dir}, {"render", saved}} {
		os.Remove(paged)
		code, screen, stderr := onTerminal(t, cmd...)
		if !reportExit(code, stderr) {
			t.Fatalf("%v on a terminal: exit %d: %s", cmd, code, stderr)
		}
		got, err := os.ReadFile(paged)
		if err != nil {
			t.Fatalf("%v on a terminal: the pager did not run: %v", cmd, err)
		}
		if string(got) != want {
			t.Errorf("%v: the pager was given %d bytes, not the %d-byte report", cmd, len(got), len(want))
		}
		if screen != "" {
			t.Errorf("%v: besides the pager, the terminal got %q", cmd, firstLine(screen))
		}

		os.Remove(paged)
		code, screen, stderr = onTerminal(t, append(cmd, "--no-pager")...)
		if !reportExit(code, stderr) {
			t.Fatalf("%v --no-pager: exit %d: %s", cmd, code, stderr)
		}
		if _, err := os.Stat(paged); err == nil {
			t.Errorf("%v --no-pager: the pager ran", cmd)
		}
		if screen != want {
			t.Errorf("%v --no-pager: the terminal got %d bytes, not the %d-byte report", cmd, len(screen), len(want))
		}
	}

	// Piped: a pipe is no terminal.
	os.Remove(paged)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var piped bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&piped, r); close(done) }()
	var errb bytes.Buffer
	code := run([]string{"analyze", dir}, w, &errb)
	w.Close()
	<-done
	if !reportExit(code, errb.String()) {
		t.Fatalf("piped: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(paged); err == nil {
		t.Error("piped: the pager ran")
	}
	if piped.String() != want {
		t.Errorf("piped: got %d bytes, not the %d-byte report", piped.Len(), len(want))
	}

	// A pager that is not there: printed directly.
	for _, p := range []string{"/nonexistent/pager", "no-such-pager-jsf -R", "cat"} {
		t.Setenv("PAGER", p)
		code, screen, stderr := onTerminal(t, "analyze", dir)
		if !reportExit(code, stderr) || screen != want {
			t.Errorf("PAGER=%q: exit %d, the terminal got %d bytes, not the %d-byte report (stderr %q)", p, code, len(screen), len(want), stderr)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestPagerCommand(t *testing.T) {
	for _, tc := range []struct {
		env  *string
		want string
	}{
		{nil, "less -FRX"},
		{ptr("most"), "most"},
		{ptr(" less -S "), "less -S"},
		{ptr(""), ""},
		{ptr("cat"), ""},
	} {
		t.Setenv("PAGER", "") // restored after the test
		if tc.env == nil {
			os.Unsetenv("PAGER")
		} else {
			t.Setenv("PAGER", *tc.env)
		}
		if got := pagerCommand(); got != tc.want {
			t.Errorf("PAGER %v: pager %q, want %q", tc.env, got, tc.want)
		}
	}
}

func ptr(s string) *string { return &s }
