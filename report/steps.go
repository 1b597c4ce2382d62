package report

import "strings"

// A remedy (Finding.Remedy) and a cause's first step (Cause.FirstStep) are
// lines: each line of prose is a step of its own ("What this destroys: …",
// "Save first: …", "Check: …"), and a line indented by two spaces is a
// command, to be typed as written. Prose may quote a command in backticks.
// The text renderer wraps the prose and keeps commands whole; the Markdown
// and HTML renderers make each prose line a paragraph and the commands code
// blocks, from the parts StepParts gives.

// StepPart is one part of a remedy or a first step: a line of prose, or
// the commands of consecutive command lines.
type StepPart struct {
	Text     string   // a line of prose; "" for commands
	Commands []string // the commands, one a line, without their indent
}

// StepParts splits a remedy or a first step into its parts, in order. The
// first line is prose however it is indented, as the text report reads it.
func StepParts(s string) []StepPart {
	var out []StepPart
	for i, line := range strings.Split(s, "\n") {
		if i > 0 && strings.HasPrefix(line, "  ") {
			cmd := strings.TrimLeft(line, " ")
			if n := len(out); n > 0 && out[n-1].Commands != nil {
				out[n-1].Commands = append(out[n-1].Commands, cmd)
			} else {
				out = append(out, StepPart{Commands: []string{cmd}})
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, StepPart{Text: line})
	}
	return out
}

// CodeSpans splits a line of prose at its backquoted spans: the elements
// at odd indexes are code (without their backquotes), the others text. A
// backquote without its pair is text.
func CodeSpans(s string) []string {
	var out []string
	for {
		open := strings.IndexByte(s, '`')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open+1:], '`')
		if end < 0 {
			break
		}
		out = append(out, s[:open], s[open+1:open+1+end])
		s = s[open+1+end+1:]
	}
	return append(out, s)
}
