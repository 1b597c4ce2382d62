package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/report/html"
	"github.com/jsforensics/jsforensics/report/xlsx"
)

// outputFormat is one way to write a report. outputFormats is the one
// list the CLI knows: --format's help and validation read it (and so will
// `render`).
type outputFormat struct {
	name    string
	aliases []string
	// binary formats are refused on a terminal: give -o.
	binary bool
	// page formats (HTML) are text but no reading on a terminal: refused
	// there like binary ones.
	page  bool
	write func(w io.Writer, r *report.Report, o renderOptions) error
}

// renderOptions are what a renderer may use besides the report: the
// terminal it writes to, --width, --brief and --verbose. analyze and
// render pass the same.
type renderOptions struct {
	terminal
	verbose bool
	brief   bool
}

var outputFormats = []outputFormat{
	{name: "text", write: func(w io.Writer, r *report.Report, o renderOptions) error {
		return report.WriteTextWith(w, r, report.TextOptions{Color: o.color, Width: o.width, Verbose: o.verbose, Brief: o.brief})
	}},
	{name: "json", write: func(w io.Writer, r *report.Report, _ renderOptions) error { return report.WriteJSON(w, r) }},
	{name: "markdown", aliases: []string{"md"}, write: func(w io.Writer, r *report.Report, o renderOptions) error {
		return report.WriteMarkdownWith(w, r, report.MarkdownOptions{Verbose: o.verbose, Brief: o.brief})
	}},
	{name: "xlsx", binary: true, write: func(w io.Writer, r *report.Report, _ renderOptions) error { return xlsx.Write(w, r) }},
	{name: "html", page: true, write: func(w io.Writer, r *report.Report, _ renderOptions) error { return html.Write(w, r) }},
}

// formatNames lists the format names for help and error messages.
func formatNames() string {
	names := make([]string, len(outputFormats))
	for i, f := range outputFormats {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// lookupFormat finds a format by name or alias.
func lookupFormat(name string) (outputFormat, error) {
	for _, f := range outputFormats {
		if f.name == name {
			return f, nil
		}
		for _, a := range f.aliases {
			if a == name {
				return f, nil
			}
		}
	}
	return outputFormat{}, fmt.Errorf("unknown --format %q (%s)", name, formatNames())
}

// terminal is what the output is, when it is a terminal: colour and width
// are used only there, so files, pipes and tests get the plain form.
type terminal struct {
	is    bool
	color bool
	width int
}

// terminalOf inspects w; anything but a terminal *os.File is plain.
// NO_COLOR (no-color.org) keeps the width but drops colour.
func terminalOf(w io.Writer) terminal {
	f, ok := w.(*os.File)
	if !ok || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return terminal{}
	}
	t := terminal{is: true, color: os.Getenv("NO_COLOR") == ""}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		t.width = w
	}
	return t
}
