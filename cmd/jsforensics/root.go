package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// newRootCmd builds the command tree from one explicit list, as bbolt's and
// natscli's do: each subcommand's file has its constructor, and this is the
// only place that adds one.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "jsforensics",
		Short:         "Offline forensic analyzer for NATS JetStream support bundles",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newAnalyzeCmd(stdout, stderr),
		newChecksCmd(stdout),
		newDumpCmd(stdout, stderr),
		newExtractCmd(stdout, stderr),
		newRehearseCmd(stdout, stderr),
		newRenderCmd(stdout),
		newSchemaCmd(stdout),
		newVersionCmd(stdout),
	)
	return root
}

// newDumpCmd is the parent of the per-parser dump subcommands (dump_store.go,
// dump_raft.go), listed here. Without one it is a usage error: the file's
// type is not guessed.
func newDumpCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "dump TYPE FILE",
		Short: "Print every decoded record of one file (works on broken files)",
		Long: `Dump prints every record one parser decodes from one file, and goes on past
damage, saying where it is. TYPE says what the file is (its parser); it is never guessed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%q is not a file type to dump: give one of %s, then the file", args[0], subcommandNames(cmd))
			}
			return fmt.Errorf("say which file to dump and its type: one of %s, then the file", subcommandNames(cmd))
		},
		RunE: func(*cobra.Command, []string) error { return nil }, // Args refuses every call
	}
	c.AddCommand(
		// filestore files (storeparse)
		newDumpBlkCmd(stdout, stderr),
		newDumpIndexCmd(stdout),
		newDumpMetaCmd(stdout),
		newDumpOdatCmd(stdout),
		// raft group files (raftlog)
		newDumpPeersCmd(stdout),
		newDumpTavCmd(stdout),
		newDumpCommitCmd(stdout),
		newDumpSnapCmd(stdout),
		newDumpWALCmd(stdout),
	)
	return c
}

// subcommandNames lists c's subcommands, comma-separated.
func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return strings.Join(names, ", ")
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tool version: release, module version, VCS revision, Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, versionLine())
			return err
		},
	}
}

// versionLine is "jsforensics VERSION (module MODVERSION, revision REV[+dirty], TIME, goX)"
// from -ldflags and the build info the go command embeds; parts it lacks
// are left out.
func versionLine() string {
	parts := []string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			parts = append(parts, "module "+v)
		}
		var rev, when, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			parts = append(parts, "revision "+rev+dirty)
		}
		if when != "" {
			parts = append(parts, when)
		}
		parts = append(parts, bi.GoVersion)
	} else {
		parts = append(parts, runtime.Version())
	}
	return fmt.Sprintf("jsforensics %s (%s)", version, strings.Join(parts, ", "))
}

// run executes the CLI in-process and returns the exit code, so tests can
// call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	// A usage error (arguments or flags) says how the command is used.
	usage := false
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { usage = true; return err })
	markArgs(root, &usage)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintln(stderr, "jsforensics:", err)
	if usage || strings.HasPrefix(err.Error(), "unknown command") {
		fmt.Fprintf(stderr, "usage: %s\nrun '%s --help' for the flags\n", cmd.UseLine(), cmd.CommandPath())
	}
	return exitUnknown
}

// markArgs wraps every command's argument check so that its failure is
// known as a usage error.
func markArgs(c *cobra.Command, usage *bool) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err != nil {
				*usage = true
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		markArgs(sub, usage)
	}
}
