package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/report"
)

func init() { topCommands = append(topCommands, newRenderCmd) }

// reportFlags say how a report is written: analyze and render share them,
// so render of a saved JSON report prints what analyze printed.
type reportFlags struct {
	format  string
	output  string
	verbose bool
	filter  report.Selection
	redact  bool
}

func addReportFlags(c *cobra.Command, f *reportFlags) {
	c.Flags().StringVar(&f.format, "format", "text", "output format: "+formatNames())
	c.Flags().StringVarP(&f.output, "output", "o", "", "write the report to this file instead of stdout (required for xlsx on a terminal)")
	c.Flags().BoolVar(&f.verbose, "verbose", false, "under every finding its own timeline excerpt in full (by default each event is shown once, under the cause it explains)")
	c.Flags().StringSliceVar(&f.filter.Servers, "server", nil, "report only what concerns these servers (names, comma-separated)")
	c.Flags().StringSliceVar(&f.filter.Accounts, "account", nil, "report only what concerns these accounts")
	c.Flags().StringSliceVar(&f.filter.Streams, "stream", nil, "report only what concerns these streams (NAME or ACCOUNT/NAME)")
	c.Flags().BoolVar(&f.redact, "redact", false, "hash account, stream and consumer names, subjects and paths (the same name, the same token) to share the report; server names, ids and figures stay")
}

// prepare checks the flags before any work: the format exists and a
// binary one is not written to a terminal.
func (f *reportFlags) prepare(stdout io.Writer) (outputFormat, renderOptions, error) {
	format, err := lookupFormat(f.format)
	if err != nil {
		return outputFormat{}, renderOptions{}, err
	}
	o := renderOptions{verbose: f.verbose}
	if f.output == "" {
		o.terminal = terminalOf(stdout)
		if o.is && format.binary {
			return outputFormat{}, renderOptions{}, fmt.Errorf("--format %s is not for a terminal: give -o FILE", format.name)
		}
	}
	return format, o, nil
}

// emit narrows and redacts rep as the flags say, writes it, and returns
// exitCritical when what it wrote holds a critical finding.
func (f *reportFlags) emit(rep *report.Report, format outputFormat, o renderOptions, stdout io.Writer) error {
	rep = f.filter.Apply(rep)
	if f.redact {
		var err error
		if rep, err = report.Redact(rep); err != nil {
			return err
		}
	}
	out := stdout
	var file *os.File
	if f.output != "" {
		var err error
		if file, err = os.Create(f.output); err != nil {
			return err
		}
		out = file
	}
	bw := bufio.NewWriter(out)
	err := format.write(bw, rep, o)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if rep.CountBySeverity()[report.Critical] > 0 {
		return exitError{code: exitCritical}
	}
	return nil
}

func newRenderCmd(stdout, _ io.Writer) *cobra.Command {
	var f reportFlags
	c := &cobra.Command{
		Use:   "render REPORT.json",
		Short: "Render a saved JSON report (analyze --format json) in another format, narrowed or redacted",
		Long: `Render reads a report saved with analyze --format json and writes it as analyze
would have: the same bytes for the same format and flags.

Exit codes: 0 no critical finding, 1 the tool failed, 3 critical findings.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			format, o, err := f.prepare(stdout)
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
			return f.emit(rep, format, o, stdout)
		},
	}
	addReportFlags(c, &f)
	return c
}
