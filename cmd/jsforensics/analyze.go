package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/bundle"
)

func init() { topCommands = append(topCommands, newAnalyzeCmd) }

type analyzeOptions struct {
	reportFlags
	set      map[string]string // check settings, "code.key" -> value
	only     []string
	skip     []string
	timeline string
	events   string
	quiet    bool
	keys     []string // jetstream keys (crypt.go); never printed
	limits   bundle.Limits
}

func newAnalyzeCmd(stdout, stderr io.Writer) *cobra.Command {
	var o analyzeOptions
	c := &cobra.Command{
		Use:   "analyze BUNDLE",
		Short: "Analyze a support bundle (directory, .zip, .tar.gz) and report what happened",
		Long: `Analyze reads a support bundle offline and reports servers, raft groups, streams,
a timeline, and findings with evidence and remedies.

Exit codes: 0 no critical finding, 1 the tool failed, 3 critical findings.`,
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
	c.Flags().StringVar(&o.events, "events", "", "also write every log event to this file, one JSON object a line")
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "draw no progress on stderr (drawn only when stderr is a terminal)")
	c.Flags().StringArrayVar(&o.keys, "key", nil, keyFlagHelp+"; give it again for prev_encryption_key")
	addLimitFlags(c, &o.limits)
	return c
}

func (o *analyzeOptions) run(path string, stdout, stderr io.Writer) error {
	format, ropts, err := o.prepare(stdout)
	if err != nil {
		return err
	}
	settings, err := parseSettings(o.set)
	if err != nil {
		return err
	}
	opts := analysis.Options{ToolVersion: version, Settings: settings, Only: o.only, Skip: o.skip, Limits: o.limits, Keys: jetstreamKeys(o.keys)}
	switch o.timeline {
	case "runs":
	case "full":
		opts.Timeline.Full = true
	default:
		return fmt.Errorf("unknown --timeline %q (runs, full)", o.timeline)
	}
	if o.events != "" {
		ef, err := os.Create(o.events)
		if err != nil {
			return err
		}
		ew := bufio.NewWriterSize(ef, 1<<20)
		opts.Timeline.Events = ew
		defer func() {
			if err := ew.Flush(); err != nil {
				fmt.Fprintf(stderr, "jsforensics: --events %s: %v\n", o.events, err)
			}
			if err := ef.Close(); err != nil {
				fmt.Fprintf(stderr, "jsforensics: --events %s: %v\n", o.events, err)
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
	return o.emit(rep, format, ropts, stdout)
}
