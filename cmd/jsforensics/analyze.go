package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/bundle"
)

type analyzeOptions struct {
	reportFlags
	set      map[string]string // check settings, "code.key" -> value
	only     []string
	skip     []string
	timeline string
	events   string
	quiet    bool
	keys     keyFlags // jetstream keys (crypt.go); never printed
	limits   bundle.Limits
}

func newAnalyzeCmd(stdout, stderr io.Writer) *cobra.Command {
	var o analyzeOptions
	c := &cobra.Command{
		Use:   "analyze BUNDLE",
		Short: "Analyze a support bundle (directory, .zip, .tar.gz) and report what happened",
		Long: `Analyze reads a support bundle offline and reports servers, raft groups, streams,
a timeline, and findings with evidence and remedies.

` + exitCodes,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(args[0], stdout, stderr)
		},
	}
	addReportFlags(c, &o.reportFlags)
	c.Flags().StringToStringVar(&o.set, "set", nil, "override a check's threshold, code.key=value (jsforensics checks lists them)")
	c.Flags().StringSliceVar(&o.only, "only", nil, "run only these checks (codes, comma-separated)")
	c.Flags().StringSliceVar(&o.skip, "skip", nil, "leave these checks out (codes, comma-separated)")
	c.Flags().StringVar(&o.timeline, "timeline", "runs", "log events in the timeline: runs (state changes in full, routine repetition as runs) or full (every event)")
	c.Flags().StringVar(&o.events, "events", "", "also write every log event to this file (- for stdout), one JSON object a line; never inside the bundle")
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "draw no progress on stderr (drawn only when stderr is a terminal)")
	o.keys.add(c)
	addLimitFlags(c, &o.limits)
	return c
}

func (o *analyzeOptions) run(path string, stdout, stderr io.Writer) (runErr error) {
	guard, err := newInputGuard(path)
	if err != nil {
		return err
	}
	format, ropts, err := o.prepare(stdout, guard)
	if err != nil {
		return err
	}
	if err := guard.refuse("--events", o.events); err != nil {
		return err
	}
	if err := checkOutput("--events", o.events, o.force); err != nil {
		return err
	}
	if o.events == stdoutName && (o.output == "" || o.output == stdoutName) {
		return fmt.Errorf("--events - and the report would both go to stdout: give -o FILE for one of them")
	}
	if o.events != "" && o.events != stdoutName && o.output != "" && o.output != stdoutName && sameTarget(o.events, o.output) {
		return fmt.Errorf("--events %s and -o %s are one file", o.events, o.output)
	}
	if err := guard.refuseDir("--tmpdir", o.limits.TempDir); err != nil {
		return err
	}
	settings, err := parseSettings(o.set)
	if err != nil {
		return err
	}
	opts := analysis.Options{ToolVersion: version, Settings: settings, Only: o.only, Skip: o.skip, Limits: o.limits}
	if opts.Keys, err = o.keys.resolve(); err != nil {
		return err
	}
	switch o.timeline {
	case "runs":
	case "full":
		opts.Timeline.Full = true
	default:
		return fmt.Errorf("unknown --timeline %q (runs, full)", o.timeline)
	}
	if o.events != "" {
		ef, err := createOutput(o.events)
		if err != nil {
			return err
		}
		ew := bufio.NewWriterSize(ef.writerOr(stdout), 1<<20)
		opts.Timeline.Events = ew
		// The events file is complete only when the analysis is: on an
		// error nothing is left under its name.
		defer func() {
			werr := ew.Flush()
			if runErr != nil && !errors.As(runErr, new(exitError)) && werr == nil {
				werr = runErr
			}
			if ef != nil {
				werr = ef.finish(werr)
			}
			if werr != nil && werr != runErr {
				fmt.Fprintf(stderr, "jsforensics: --events %s: %v\n", o.events, werr)
				if runErr == nil {
					runErr = werr
				}
			}
		}()
	}
	if p := newProgress(stderr, o.quiet); p != nil {
		opts.Progress = p
		defer p.close()
	}
	rep, err := analysis.Run(path, opts)
	if err != nil {
		return err
	}
	return o.emit(rep, format, ropts, stdout, stderr)
}
