package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
)

func TestStepParts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []StepPart
	}{
		{"one line", []StepPart{{Text: "one line"}}},
		{"Save first: copy it.\nRemove it:\n  nats a\n  nats b   # or: c\nCheck: `nats x` says so.",
			[]StepPart{{Text: "Save first: copy it."}, {Text: "Remove it:"}, {Commands: []string{"nats a", "nats b   # or: c"}}, {Text: "Check: `nats x` says so."}}},
		{"a:\n  cmd 1\nb:\n  cmd 2", []StepPart{{Text: "a:"}, {Commands: []string{"cmd 1"}}, {Text: "b:"}, {Commands: []string{"cmd 2"}}}},
		{"  the first line is prose\n\nafter a blank line", []StepPart{{Text: "  the first line is prose"}, {Text: "after a blank line"}}},
		{"", nil},
	} {
		if diff := cmp.Diff(tc.want, StepParts(tc.in)); diff != "" {
			t.Errorf("StepParts(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestCodeSpans(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"no code", []string{"no code"}},
		{"Check: `nats server report jetstream` shows it", []string{"Check: ", "nats server report jetstream", " shows it"}},
		{"`a` and `b`", []string{"", "a", " and ", "b", ""}},
		{"an odd ` backquote", []string{"an odd ` backquote"}},
		{"`a` then `unpaired", []string{"", "a", " then `unpaired"}},
	} {
		if got := CodeSpans(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("CodeSpans(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMarkdownSteps: in Markdown, as a CommonMark reader shows it, a
// remedy's and a first step's prose lines are paragraphs of their own
// (wrapped by the reader, not in a code block), their backquoted commands
// code spans, and only the command lines code blocks, as typed.
func TestMarkdownSteps(t *testing.T) {
	r := sampleReport()
	steps := "What this destroys: nothing_here *yet*.\nSave first: copy _js_/_meta_ out.\nRemove it:\n  nats request '$JS.API.SERVER.REMOVE' '{\"peer_id\":\"x_y\"}'\n  nats server report jetstream\nCheck: `nats server report jetstream` shows a leader."
	r.Findings[1].Remedy = steps
	r.Diagnosis[0].FirstStep = steps
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := goldmark.Convert(md.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	diag, findings, ok := strings.Cut(html, "<h2>Findings</h2>")
	if !ok {
		t.Fatalf("no findings section:\n%s", html)
	}
	_, remedy, _ := strings.Cut(findings, "<p>Remedy:</p>")
	for name, part := range map[string]string{"first step": diag, "remedy": remedy} {
		for _, want := range []string{
			"<p>What this destroys: nothing_here *yet*.</p>",
			"<p>Save first: copy _js_/_meta_ out.</p>",
			"<p>Remove it:</p>",
			"<pre><code>nats request '$JS.API.SERVER.REMOVE' '{&quot;peer_id&quot;:&quot;x_y&quot;}'\nnats server report jetstream\n</code></pre>",
			"<p>Check: <code>nats server report jetstream</code> shows a leader.</p>",
		} {
			if name == "first step" {
				want = strings.Replace(want, "<p>What", "<p>First: What", 1)
			}
			if !strings.Contains(part, want) {
				t.Errorf("%s: the page lacks %s\n%s", name, want, part)
			}
		}
		if n := len(regexp.MustCompile(`<pre>`).FindAllString(part[:strings.Index(part, "Check:")], -1)); n != 1 {
			t.Errorf("%s: %d code blocks, want the commands' one", name, n)
		}
	}
}
