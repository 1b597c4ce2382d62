package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// A report written to a terminal goes through a pager, as git's and gh's
// output does: $PAGER, else less -FRX (-F quits at once when the report
// fits on one screen, -R passes the colours, -X leaves the report on the
// screen afterwards). Never when stdout is not a terminal, nor with
// --no-pager; a pager that cannot start leaves the report printed directly.

// defaultPager is the pager when $PAGER is not set.
const defaultPager = "less -FRX"

// pagerCommand is the pager to run: $PAGER, or defaultPager when it is not
// set; "" when $PAGER turns paging off (empty or cat, as git reads it).
func pagerCommand() string {
	p, ok := os.LookupEnv("PAGER")
	if !ok {
		return defaultPager
	}
	p = strings.TrimSpace(p)
	if p == "cat" {
		return ""
	}
	return p
}

// pagerProc is a running pager: what is written to it is what it shows.
type pagerProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	// signals holds SIGINT and SIGQUIT while the pager runs: they are the
	// pager's to handle (less quits a search on ^C), and this process must
	// not die under it and leave the terminal to two readers.
	signals chan os.Signal
	closed  bool
}

// startPager starts command (a shell command line, as git runs $PAGER) with
// its output on tty. An error means no pager runs: the caller writes to
// tty itself.
func startPager(command string, tty *os.File, stderr io.Writer) (*pagerProc, error) {
	var cmd *exec.Cmd
	if strings.ContainsAny(command, "|&;<>()$`\\\"' \t*?[#~=%") {
		sh, err := exec.LookPath("sh")
		if err != nil {
			return nil, err
		}
		// The first word must exist: a shell would start and fail with 127,
		// after the report was handed to it and lost.
		if name := strings.Fields(command)[0]; !strings.ContainsAny(name, "=$`\"'\\") {
			if _, err := exec.LookPath(name); err != nil {
				return nil, err
			}
		}
		cmd = exec.Command(sh, "-c", command)
	} else {
		path, err := exec.LookPath(command)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(path)
	}
	cmd.Stdout = tty
	cmd.Stderr = stderr
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		// For a $PAGER of plain less, as git sets it.
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p := &pagerProc{cmd: cmd, in: in, signals: make(chan os.Signal, 1)}
	signal.Notify(p.signals, os.Interrupt, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		signal.Stop(p.signals)
		in.Close()
		return nil, err
	}
	return p, nil
}

// Write hands p to the pager. Once the pager has quit (the reader is done
// with it), the rest is dropped without an error: the report was seen as
// far as its reader wanted.
func (p *pagerProc) Write(b []byte) (int, error) {
	if p.closed {
		return len(b), nil
	}
	n, err := p.in.Write(b)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)) {
		p.closed = true
		return len(b), nil
	}
	return n, err
}

// wait closes the pager's input and waits for the reader to quit it. How
// the pager exits is its own affair (less exits 0 however it is quit).
func (p *pagerProc) wait() {
	p.in.Close()
	_ = p.cmd.Wait()
	signal.Stop(p.signals)
}
