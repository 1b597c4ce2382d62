package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/report"
)

// reportFlags say how a report is written: analyze and render share them,
// so render of a saved JSON report prints what analyze printed.
type reportFlags struct {
	format  string
	output  string
	verbose bool
	filter  report.Selection
	redact  bool
	force   bool
	width   int
	brief   bool
	since   string
	until   string
	noPager bool
}

// defaultWidth is the text report's width off a terminal (a file, a pipe):
// wide enough for the tables, narrow enough to read in a ticket or a pager.
const defaultWidth = 100

func addReportFlags(c *cobra.Command, f *reportFlags) {
	c.Flags().StringVar(&f.format, "format", "text", "output format: "+formatNames())
	c.Flags().StringVarP(&f.output, "output", "o", "", "write the report to this file instead of stdout, - for stdout (required for xlsx on a terminal); never inside the input")
	c.Flags().BoolVar(&f.force, "force", false, "replace output files that exist")
	c.Flags().BoolVar(&f.verbose, "verbose", false, "under every finding its own timeline excerpt in full (by default each event is shown once, under the cause it explains)")
	c.Flags().StringSliceVar(&f.filter.Servers, "server", nil, "report only what concerns these servers (names, comma-separated)")
	c.Flags().StringSliceVar(&f.filter.Accounts, "account", nil, "report only what concerns these accounts")
	c.Flags().StringSliceVar(&f.filter.Streams, "stream", nil, "report only what concerns these streams: ACCOUNT/NAME, 'ACCOUNT > NAME', or NAME when one account has it")
	addWidthFlag(c, &f.width, "fit the text report to")
	c.Flags().BoolVar(&f.brief, "brief", false, "print only what happened and what to do first (text and markdown)")
	c.Flags().StringVar(&f.since, "since", "", "keep the timeline from this time: RFC 3339 (2026-11-30T01:40:00Z) or a duration before the bundle's last event (10m)")
	c.Flags().StringVar(&f.until, "until", "", "keep the timeline up to this time: RFC 3339 or a duration before the bundle's last event")
	c.Flags().BoolVar(&f.noPager, "no-pager", false, "on a terminal, print the report directly instead of through $PAGER (default "+defaultPager+")")
	c.Flags().BoolVar(&f.redact, "redact", false, "hash account, stream, consumer and cluster names, subjects, paths and the message payloads the report quotes (the same name, the same token) to share the report; server names, ids and figures stay")
}

// minWidth is the narrowest --width: a timeline line's time and server.
const minWidth = 40

// addWidthFlag adds --width (-1 when not given) to c; what says what is
// fitted ("fit the text report to").
func addWidthFlag(c *cobra.Command, width *int, what string) {
	*width = -1
	c.Flags().Var(widthFlag{width}, "width", fmt.Sprintf("%s this many columns, 0 for no limit (default: the terminal's width, or %d off a terminal)", what, defaultWidth))
}

// widthFlag is --width's value. Not given, it is -1, which the help does
// not print as a default: the help says what the default is.
type widthFlag struct{ p *int }

func (w widthFlag) String() string {
	if w.p == nil || *w.p == -1 {
		return ""
	}
	return strconv.Itoa(*w.p)
}

func (w widthFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number of columns", s)
	}
	*w.p = n
	return nil
}

func (w widthFlag) Type() string { return "int" }

// checkWidth refuses a --width too narrow to lay anything out.
func checkWidth(width int) error {
	if width != -1 && (width < 0 || width > 0 && width < minWidth) {
		return fmt.Errorf("--width %d: give at least %d columns, or 0 for no limit", width, minWidth)
	}
	return nil
}

// prepare checks the flags before any work: the format exists, a binary
// one is not written to a terminal, and the output is not inside the input
// (guard) nor replaces a file without --force.
func (f *reportFlags) prepare(stdout io.Writer, guard *inputGuard) (outputFormat, renderOptions, error) {
	format, err := lookupFormat(f.format)
	if err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	if err := guard.refuse("-o", f.output); err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	if err := checkOutput("-o", f.output, f.force); err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	if err := checkWidth(f.width); err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	if err := checkStreamFlags(f.filter.Streams); err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	if f.brief && format.name != "text" && format.name != "markdown" {
		return outputFormat{}, renderOptions{}, fmt.Errorf("--brief is for --format text and markdown, not %s", format.name)
	}
	if _, err := report.ParseWindow(f.since, f.until); err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	o := renderOptions{verbose: f.verbose, brief: f.brief}
	if f.output == "" || f.output == stdoutName {
		o.terminal = terminalOf(stdout)
		if o.is && (format.binary || format.page) {
			return outputFormat{}, renderOptions{}, fmt.Errorf("--format %s is not for a terminal: give -o FILE", format.name)
		}
	}
	switch {
	case f.width >= 0:
		o.width = f.width
	case !o.is || o.width == 0:
		o.width = defaultWidth
	}
	return format, o, nil
}

// emit narrows and redacts rep as the flags say, writes it (through the
// pager on a terminal), and returns the exit code of what it wrote
// (report.Status) as an exitError unless ok.
func (f *reportFlags) emit(rep *report.Report, format outputFormat, o renderOptions, stdout, stderr io.Writer) error {
	w, err := report.ParseWindow(f.since, f.until)
	if err != nil {
		return err
	}
	sel := f.filter
	if sel.Since, sel.Until, err = w.Resolve(rep); err != nil {
		return err
	}
	if sel.Streams, err = resolveStreamFlags(rep, sel.Streams, sel.Accounts); err != nil {
		return err
	}
	rep = sel.Apply(rep)
	if f.redact {
		var err error
		if rep, err = report.Redact(rep); err != nil {
			return err
		}
	}
	file, err := createOutput(f.output)
	if err != nil {
		return err
	}
	out := file.writerOr(stdout)
	var pager *pagerProc
	if tty, ok := stdout.(*os.File); ok && file == nil && o.is && !f.noPager {
		if command := pagerCommand(); command != "" {
			if p, err := startPager(command, tty, stderr); err == nil {
				pager, out = p, p
			}
		}
	}
	bw := bufio.NewWriter(out)
	err = format.write(bw, rep, o)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if pager != nil {
		pager.wait()
	}
	if file != nil {
		err = file.finish(err)
	}
	if err != nil {
		return err
	}
	if code := int(rep.Status()); code != exitOK {
		return exitError{code: code}
	}
	return nil
}

func newRenderCmd(stdout io.Writer) *cobra.Command {
	var f reportFlags
	c := &cobra.Command{
		Use:   "render REPORT.json",
		Short: "Render a saved JSON report (analyze --format json) in another format, narrowed or redacted",
		Long: `Render reads a report saved with analyze --format json and writes it as analyze
would have: the same bytes for the same format and flags.

` + exitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			guard, err := newInputGuard(args[0])
			if err != nil {
				return err
			}
			format, o, err := f.prepare(stdout, guard)
			if err != nil {
				return err
			}
			in, err := os.Open(args[0])
			if err != nil {
				return err
			}
			rep, err := report.ReadJSON(bufio.NewReader(in))
			in.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			return f.emit(rep, format, o, stdout, cmd.ErrOrStderr())
		},
	}
	addReportFlags(c, &f)
	return c
}
