package report

import (
	"fmt"
	"sort"
	"strings"
)

// The findings section of the text and Markdown reports is laid out here,
// once, so both show the same thing: the findings grouped under the cause
// (Report.Diagnosis) that explains them, each cause's timeline excerpt
// shown once under it, and the findings no cause names after them.

// maxCauseEvents bounds a cause's timeline excerpt outside --verbose: the
// newest events matter most, the JSON keeps them all.
const maxCauseEvents = 8

// causeSection is one cause and what the renderers print under it.
type causeSection struct {
	Number int // 1-based, as the diagnosis at the top numbers it
	Cause  Cause
	// Rows of FindingsTable, the cause's findings in the cause's order.
	Rows []int
	// Timeline is the excerpt shown under the cause; Elided how many
	// older events of the cause it leaves out.
	Timeline []int
	Elided   int
}

// findingLayout is the findings section: causes, then the rest.
type findingLayout struct {
	Causes []causeSection
	// Rest are the rows no cause names (info findings), most severe first.
	Rest []int
	// Own is, per row, the timeline excerpt printed under that finding:
	// every reference with --verbose; else only events no excerpt above
	// showed (for a finding in a cause, none of the cause's), and only for
	// critical findings, as the report always did.
	Own [][]int
	// OwnElided is, per row, how many older events Own leaves out.
	OwnElided []int
}

// layoutFindings groups r's findings by cause. Without verbose no timeline
// event is printed twice: an excerpt skips what an earlier one showed.
func layoutFindings(r *Report, verbose bool) findingLayout {
	order := findingOrder(r.Findings)
	rowOf := make([]int, len(order))
	for row, i := range order {
		rowOf[i] = row
	}
	l := findingLayout{Own: make([][]int, len(order)), OwnElided: make([]int, len(order))}
	shown := map[int]bool{}
	// fresh keeps the valid refs not shown yet (all of them with verbose),
	// marks them shown and cuts the excerpt to its newest limit events.
	fresh := func(refs []int, limit int) ([]int, int) {
		var out []int
		for _, i := range refs {
			if i < 0 || i >= len(r.Timeline) || (!verbose && shown[i]) {
				continue
			}
			shown[i] = true
			out = append(out, i)
		}
		if verbose || len(out) <= limit {
			return out, 0
		}
		return out[len(out)-limit:], len(out) - limit
	}
	inCause := make([]bool, len(order))
	for k, c := range r.Diagnosis {
		s := causeSection{Number: k + 1, Cause: c}
		s.Timeline, s.Elided = fresh(c.TimelineRefs, maxCauseEvents)
		for _, i := range c.Findings {
			if i < 0 || i >= len(order) || inCause[i] {
				continue
			}
			inCause[i] = true
			s.Rows = append(s.Rows, rowOf[i])
		}
		l.Causes = append(l.Causes, s)
	}
	for row, i := range order {
		if !inCause[i] {
			l.Rest = append(l.Rest, row)
		}
	}
	// Findings' own excerpts, in the order they are printed.
	for _, s := range l.Causes {
		for _, row := range s.Rows {
			l.ownExcerpt(r, row, order, verbose, fresh)
		}
	}
	for _, row := range l.Rest {
		l.ownExcerpt(r, row, order, verbose, fresh)
	}
	return l
}

// visit walks the section in print order: cause for each cause's
// heading, finding for each of its rows; then restHeading (only when
// causes came before) and finding for each row no cause names.
func (l findingLayout) visit(cause func(causeSection), restHeading func(), finding func(row int)) {
	for _, s := range l.Causes {
		cause(s)
		for _, row := range s.Rows {
			finding(row)
		}
	}
	if len(l.Causes) > 0 && len(l.Rest) > 0 {
		restHeading()
	}
	for _, row := range l.Rest {
		finding(row)
	}
}

func (l *findingLayout) ownExcerpt(r *Report, row int, order []int, verbose bool, fresh func([]int, int) ([]int, int)) {
	f := r.Findings[order[row]]
	if !verbose && f.Severity != Critical {
		return
	}
	l.Own[row], l.OwnElided[row] = fresh(f.TimelineRefs, maxRelatedEvents)
}

// causeHeading names a cause by its findings' codes: "peer-id-corrupt ×5,
// quorum-unreachable, meta-no-leader".
func causeHeading(r *Report, s causeSection) string {
	var codes []string
	count := map[string]int{}
	for _, i := range s.Cause.Findings {
		if i < 0 || i >= len(r.Findings) {
			continue
		}
		c := r.Findings[i].Code
		if count[c] == 0 {
			codes = append(codes, c)
		}
		count[c]++
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = c
		if count[c] > 1 {
			parts[i] += fmt.Sprintf(" ×%d", count[c])
		}
	}
	return fmt.Sprintf("Cause %d: %s", s.Number, strings.Join(parts, ", "))
}

// excerptNote says what an excerpt leaves out, or "" when nothing.
func excerptNote(shown, elided int) string {
	if elided == 0 {
		return ""
	}
	return fmt.Sprintf(" (last %d of %d events; --verbose for all)", shown, shown+elided)
}

// findingOrder is the order of SortedFindings as indices into in.
func findingOrder(in []Finding) []int {
	order := make([]int, len(in))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := in[order[i]], in[order[j]]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() < b.Severity.Rank()
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		return a.File < b.File
	})
	return order
}
