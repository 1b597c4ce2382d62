package analysis_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/report"
)

// rendered is every committed fixture's report rendered as JSON, text and
// Markdown, by "fixture format"; analyzed once for every test that reads
// it.
var rendered map[string]string

func renderings(t *testing.T) map[string]string {
	t.Helper()
	if rendered != nil {
		return rendered
	}
	out := map[string]string{}
	for _, fx := range formFixtures(t) {
		path := fx.folder
		if path == "" {
			path = fx.archives[0]
		}
		rep, err := analysis.Run(path, analysis.Options{ToolVersion: "test"})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// The path given to analyze is the user's own.
		rep.Bundle = ""
		for format, write := range map[string]func(*bytes.Buffer, *report.Report) error{
			"json":     func(b *bytes.Buffer, r *report.Report) error { return report.WriteJSON(b, r) },
			"text":     func(b *bytes.Buffer, r *report.Report) error { return report.WriteText(b, r) },
			"markdown": func(b *bytes.Buffer, r *report.Report) error { return report.WriteMarkdown(b, r) },
		} {
			var b bytes.Buffer
			if err := write(&b, rep); err != nil {
				t.Fatalf("%s %s: %v", fx.name, format, err)
			}
			out[fx.name+" "+format] = b.String()
		}
	}
	rendered = out
	return out
}

// holding fails for every rendering that holds s, with where.
func holding(t *testing.T, s, why string) {
	t.Helper()
	for name, text := range renderings(t) {
		if i := strings.Index(text, s); i >= 0 {
			t.Errorf("%s holds %q (%s): …%s…", name, s, why, text[max(0, i-120):min(len(text), i+80)])
		}
	}
}

// TestRenderingsFillEveryTemplate: no rendering of a committed fixture
// holds a parameter the remedy catalogue's templates left unfilled.
func TestRenderingsFillEveryTemplate(t *testing.T) {
	holding(t, "{{", "a template parameter left unfilled")
}

// TestRenderingsCiteNoRepositoryFile: no rendering of a committed
// fixture's report cites the repository's own files (testdata/…), which a
// user does not have; the runs that proved a remedy are named by release.
func TestRenderingsCiteNoRepositoryFile(t *testing.T) {
	holding(t, "testdata/", "a file of this repository")
}
