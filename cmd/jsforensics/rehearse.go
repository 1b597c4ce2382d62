package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/rehearse"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/report/html"
)

type rehearseOptions struct {
	server  string
	watch   time.Duration
	format  string
	output  string
	force   bool
	keep    bool
	quiet   bool
	keys    keyFlags
	limits  bundle.Limits
	timeout time.Duration
}

func newRehearseCmd(stdout, stderr io.Writer) *cobra.Command {
	var o rehearseOptions
	c := &cobra.Command{
		Use:   "rehearse BUNDLE --nats-server PATH",
		Short: "Start the bundle's servers on a copy of their stores, in a sandbox, and show what they do",
		Long: `Rehearse copies every server's store from the bundle into a scratch folder (the bundle
is never written; files are cloned where the filesystem allows), writes each server a config
for the sandbox (every listener on 127.0.0.1, routes only to the sandbox's servers, no
leafnode remotes, gateways, websocket or MQTT, no URL resolver; a config with any other
address is refused), starts every server with the nats-server given, watches them (default
45 s: past the orphan check), records what each did (started or the fatal line, the meta
leader, the streams it serves, the stream and consumer folders it deleted, its warnings and
errors), stops every server by its PID (also on Ctrl-C and on --timeout) and removes the
scratch folder unless --keep.

It then sets each statement of the analysis about what a server does next (orphans deleted,
JetStream refused on a corrupt meta snapshot) beside what happened: held, did not hold (a bug
of jsforensics) or not observable.

Exit codes: 0 the rehearsal ran and no statement was contradicted; 1 a statement did not
hold; 3 the rehearsal could not run.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(args[0], stdout, stderr)
		},
	}
	c.Flags().StringVar(&o.server, "nats-server", "", "the nats-server binary to start (required)")
	c.Flags().DurationVar(&o.watch, "watch", rehearse.DefaultWatch, "how long the servers run after starting")
	c.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "stop everything after this long, whatever it is doing")
	c.Flags().StringVar(&o.format, "format", "text", "output format: text, json or html (a page with a timeline of the servers' log lines)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write to this file instead of standard output (never inside the bundle)")
	c.Flags().BoolVar(&o.force, "force", false, "replace the output file if it exists")
	c.Flags().BoolVar(&o.keep, "keep", false, "keep the scratch folder (stores, configs, logs) after the run")
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress on standard error")
	o.keys.add(c)
	addLimitFlags(c, &o.limits)
	_ = c.MarkFlagRequired("nats-server")
	return c
}

func (o *rehearseOptions) run(path string, stdout, stderr io.Writer) error {
	if o.format != "text" && o.format != "json" && o.format != "html" {
		return fmt.Errorf("--format %q: give text, json or html", o.format)
	}
	if o.format == "html" && (o.output == "" || o.output == stdoutName) && terminalOf(stdout).is {
		return fmt.Errorf("--format html is a page for a browser: give -o FILE")
	}
	guard, err := newInputGuard(path)
	if err != nil {
		return err
	}
	if err := guard.refuse("-o", o.output); err != nil {
		return err
	}
	if err := guard.refuseDir("--tmpdir", o.limits.TempDir); err != nil {
		return err
	}
	if err := checkOutput("-o", o.output, o.force); err != nil {
		return err
	}
	keys, err := o.keys.resolve()
	if err != nil {
		return err
	}
	key := ""
	if len(keys) > 0 {
		key = keys[0]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %s reached", o.timeout))
	defer cancel()
	opts := rehearse.Options{ServerBin: o.server, Watch: o.watch, TempDir: o.limits.TempDir, Keep: o.keep, Key: key, Limits: o.limits}
	if !o.quiet {
		opts.Progress = func(msg string) { fmt.Fprintf(stderr, "rehearse: %s\n", msg) }
	}
	r, err := rehearse.Run(ctx, path, opts)
	if err != nil {
		return err
	}
	f, err := createOutput(o.output)
	if err != nil {
		return err
	}
	w := f.writerOr(stdout)
	if o.format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(r)
	} else if o.format == "html" {
		err = html.WriteRehearsal(w, r)
	} else {
		err = report.WriteRehearsalText(w, r)
	}
	if f != nil {
		err = f.finish(err)
	}
	if err != nil {
		return err
	}
	for _, s := range r.Statements {
		if s.Held != nil && !*s.Held {
			return exitError{code: exitWarning}
		}
	}
	return nil
}
