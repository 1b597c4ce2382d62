package check

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// maxExamples is the setting of the checks whose findings can repeat by
// the thousand (one per folder or file of the same fault): past this many
// findings of one kind and cause on one server they become one finding with
// the count and this many examples, as natscli's --max-examples does. The
// report stays bounded whatever the number of streams.
var MaxExamples = Setting{Key: "max_examples", Default: 10, Unit: "findings",
	Description: "findings of one kind and cause on one server beyond this many are collapsed into one, with the count and this many examples"}

// collapse returns the findings build(0..n-1) makes, merging those that
// share code, severity, server, kind and cause (key(i) says them, with cause
// "" for a finding that never merges) when more than limit share them: the
// merged finding is the first of them with Count set, its message saying how
// many, and the first limit listed as evidence; the order is kept. Only the
// findings shown are built, so memory follows limit, not n.
func Collapse(n int, key func(i int) (group, cause string), build func(i int) report.Finding, limit int) []report.Finding {
	limit = max(limit, 1)
	keys := make([]string, n)
	count := map[string]int{}
	for i := range n {
		g, cause := key(i)
		if cause != "" {
			keys[i] = g + "\x00" + cause
			count[keys[i]]++
		}
	}
	type merged struct{ at, shown int } // index in out, examples listed
	groups := map[string]*merged{}
	var out []report.Finding
	for i := range n {
		k := keys[i]
		if k == "" || count[k] <= limit {
			out = append(out, build(i))
			continue
		}
		g := groups[k]
		switch {
		case g == nil:
			f := build(i)
			f.Count = count[k]
			_, cause := key(i)
			f.Message = fmt.Sprintf("%d findings of one cause on %s (%s); the first %d are listed, this one first: %s", f.Count, f.Server, cause, limit, f.Message)
			f.Evidence = append([]string{example(f)}, f.Evidence...)
			groups[k] = &merged{at: len(out), shown: 1}
			out = append(out, f)
		case g.shown < limit:
			f, m := build(i), &out[g.at]
			if m.Account != f.Account {
				m.Account = ""
			}
			if m.Stream != f.Stream {
				m.Stream = ""
			}
			m.Evidence = append(m.Evidence, example(f))
			g.shown++
		case g.shown == limit:
			m := &out[g.at]
			m.Evidence = append(m.Evidence, fmt.Sprintf("and %d more", m.Count-limit))
			g.shown++
		}
	}
	return out
}

// example is one collapsed finding as a line of evidence.
func example(f report.Finding) string {
	s := f.File
	if f.Offset != nil {
		s += fmt.Sprintf(" at offset %d", *f.Offset)
	}
	if f.Stream != "" && !strings.Contains(f.File, f.Stream) {
		s += " (" + f.Account + " > " + f.Stream + ")"
	}
	return s
}
