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

// maxExcerptLines bounds a timeline excerpt outside --verbose, after
// repeats are folded into runs: its first and last excerptEnds lines show
// the onset and the end, the lines between the state changes (a line
// whose kind differs from the one before), spread over the middle; the
// JSON keeps every reference.
const (
	maxExcerptLines = 16
	excerptEnds     = 4
)

// excerptLine is one line of a timeline excerpt: the event at Ref, or a
// run of Count events of one kind and text (on Servers, until Last).
type excerptLine struct {
	Ref   int
	Count int
	Last  int
	// Servers are the servers of a run, in order, when more than one.
	Servers []string
	// Skipped is how many events the excerpt leaves out before this line.
	Skipped int
}

// excerpt is a timeline excerpt: its lines, how many events they leave
// out in all, and how many the references held.
type excerpt struct {
	Lines   []excerptLine
	Elided  int
	Total   int
	Verbose bool
}

// foldExcerpt turns refs (oldest first) into an excerpt: consecutive
// events of one kind, group, stream and text become one run; outside
// verbose, a long excerpt keeps its first and its last lines, the onset
// and the end, and says how many events lie between.
func foldExcerpt(r *Report, refs []int, verbose bool) excerpt {
	x := excerpt{Total: len(refs), Verbose: verbose}
	key := func(e TimelineEvent) string { return e.Kind + "\x00" + e.Group + "\x00" + e.Stream + "\x00" + e.Text }
	for _, i := range refs {
		e := r.Timeline[i]
		n := max(1, e.Count)
		if k := len(x.Lines) - 1; !verbose && k >= 0 && key(r.Timeline[x.Lines[k].Ref]) == key(e) {
			l := &x.Lines[k]
			l.Count += n
			l.Last = i
			if len(l.Servers) == 0 {
				l.Servers = []string{r.Timeline[l.Ref].Server}
			}
			if !slicesContains(l.Servers, e.Server) {
				l.Servers = append(l.Servers, e.Server)
			}
			continue
		}
		x.Lines = append(x.Lines, excerptLine{Ref: i, Count: n, Last: i})
	}
	for k := range x.Lines {
		if len(x.Lines[k].Servers) < 2 {
			x.Lines[k].Servers = nil
		}
	}
	if verbose || len(x.Lines) <= maxExcerptLines {
		return x
	}
	lines := x.Lines
	keep := make([]bool, len(lines))
	for i := range lines {
		keep[i] = i < excerptEnds || i >= len(lines)-excerptEnds
	}
	kind := func(i int) string { return r.Timeline[lines[i].Ref].Kind }
	var changes []int
	for i := excerptEnds; i < len(lines)-excerptEnds; i++ {
		if kind(i) != kind(i-1) {
			changes = append(changes, i)
		}
	}
	budget := maxExcerptLines - 2*excerptEnds
	for k := 0; k < budget && k < len(changes); k++ {
		// Spread over the middle when there are more changes than room.
		keep[changes[k*len(changes)/min(budget, len(changes))]] = true
	}
	x.Lines = nil
	skipped := 0
	for i, l := range lines {
		if !keep[i] {
			skipped += l.Count
			continue
		}
		l.Skipped = skipped
		x.Elided += skipped
		skipped = 0
		x.Lines = append(x.Lines, l)
	}
	return x
}

func slicesContains(ss []string, s string) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

// causeSection is one cause and what the renderers print under it.
type causeSection struct {
	Number int // 1-based, as the diagnosis at the top numbers it
	Cause  Cause
	// Rows of FindingsTable, the cause's findings in the cause's order.
	Rows []int
	// Timeline is the excerpt shown under the cause.
	Timeline excerpt
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
	Own []excerpt
	// ID is, per row, the finding's id: its index in the report (the
	// JSON's findings[i], the HTML page's #i).
	ID []int
	// Shared is, per row, the remedy the finding shares with others of
	// its cause, printed once under the first of them; nil when its remedy
	// is its own.
	Shared []*sharedRemedy
}

// sharedRemedy is one remedy several findings of a cause prescribe alike:
// the same lines of prose, only their commands differing (one removal a
// corrupt peer id). The text and Markdown reports print it once, its
// commands merged; the JSON keeps each finding's own.
type sharedRemedy struct {
	Rows []int  // the findings' rows, in print order
	Text string // the remedy, each command block the blocks of all of them, in order
}

// IDs names the findings a shared remedy serves: "#0-#4" or "#2, #5".
func (sh *sharedRemedy) IDs(l findingLayout) string {
	ids := make([]int, len(sh.Rows))
	for i, row := range sh.Rows {
		ids[i] = l.ID[row]
	}
	return findingIDs(ids)
}

// findingIDs writes finding ids, a run of three or more as "#a-#b".
func findingIDs(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if j-i >= 3 {
			parts = append(parts, fmt.Sprintf("#%d-#%d", ids[i], ids[j-1]))
		} else {
			for _, id := range ids[i:j] {
				parts = append(parts, fmt.Sprintf("#%d", id))
			}
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// remedyProse is a remedy with each block of commands replaced by one
// empty line: remedies alike in prose share one printing.
func remedyProse(s string) string {
	var b strings.Builder
	inCommands := false
	for i, line := range strings.Split(s, "\n") {
		if i > 0 && strings.HasPrefix(line, "  ") {
			if !inCommands {
				b.WriteString("\n")
			}
			inCommands = true
			continue
		}
		inCommands = false
		b.WriteString(line + "\n")
	}
	return b.String()
}

// mergeRemedies is remedies alike in prose as one: the prose of the
// first, each block of commands the commands of that block in every
// remedy, in order, each once.
func mergeRemedies(rs []string) string {
	type block struct {
		cmds []string
		seen map[string]bool
	}
	var blocks []*block
	for _, r := range rs {
		k := -1
		inCommands := false
		for i, line := range strings.Split(r, "\n") {
			if i == 0 || !strings.HasPrefix(line, "  ") {
				inCommands = false
				continue
			}
			if !inCommands {
				k++
				if k == len(blocks) {
					blocks = append(blocks, &block{seen: map[string]bool{}})
				}
			}
			inCommands = true
			if b := blocks[k]; !b.seen[line] {
				b.seen[line] = true
				b.cmds = append(b.cmds, line)
			}
		}
	}
	var out []string
	k := -1
	inCommands := false
	for i, line := range strings.Split(rs[0], "\n") {
		if i == 0 || !strings.HasPrefix(line, "  ") {
			inCommands = false
			out = append(out, line)
			continue
		}
		if !inCommands {
			k++
			out = append(out, blocks[k].cmds...)
		}
		inCommands = true
	}
	return strings.Join(out, "\n")
}

// shareRemedies finds, in each cause, the findings whose remedies are
// alike in prose (remedyProse), and gives each such set of two or more one
// sharedRemedy.
func (l *findingLayout) shareRemedies(r *Report, order []int) {
	l.Shared = make([]*sharedRemedy, len(order))
	for _, s := range l.Causes {
		var keys []string
		byKey := map[string][]int{}
		for _, row := range s.Rows {
			rem := r.Findings[order[row]].Remedy
			if rem == "" {
				continue
			}
			k := remedyProse(rem)
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], row)
		}
		for _, k := range keys {
			rows := byKey[k]
			if len(rows) < 2 {
				continue
			}
			texts := make([]string, len(rows))
			for i, row := range rows {
				texts[i] = r.Findings[order[row]].Remedy
			}
			sh := &sharedRemedy{Rows: rows, Text: mergeRemedies(texts)}
			for _, row := range rows {
				l.Shared[row] = sh
			}
		}
	}
}

// layoutFindings groups r's findings by cause. Without verbose no timeline
// event is printed twice: an excerpt skips what an earlier one showed.
func layoutFindings(r *Report, verbose bool) findingLayout {
	order := findingOrder(r.Findings)
	rowOf := make([]int, len(order))
	for row, i := range order {
		rowOf[i] = row
	}
	l := findingLayout{Own: make([]excerpt, len(order)), ID: order}
	shown := map[int]bool{}
	// fresh keeps the valid refs not shown yet (all of them with verbose),
	// marks them shown and folds them into an excerpt.
	fresh := func(refs []int) excerpt {
		var out []int
		for _, i := range refs {
			if i < 0 || i >= len(r.Timeline) || (!verbose && shown[i]) {
				continue
			}
			shown[i] = true
			out = append(out, i)
		}
		return foldExcerpt(r, out, verbose)
	}
	inCause := make([]bool, len(order))
	for k, c := range r.Diagnosis {
		s := causeSection{Number: k + 1, Cause: c}
		s.Timeline = fresh(c.TimelineRefs)
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
	l.shareRemedies(r, order)
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

func (l *findingLayout) ownExcerpt(r *Report, row int, order []int, verbose bool, fresh func([]int) excerpt) {
	f := r.Findings[order[row]]
	if !verbose && f.Severity != Critical {
		return
	}
	l.Own[row] = fresh(f.TimelineRefs)
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

// note says what an excerpt folds and leaves out, or "" when nothing.
func (x excerpt) note() string {
	if x.Verbose || len(x.Lines) == x.Total {
		return ""
	}
	if x.Elided == 0 {
		return fmt.Sprintf(" (%d events, repeats folded into runs)", x.Total)
	}
	return fmt.Sprintf(" (%d events, repeats folded into runs; onset, state changes and end shown, %d events left out; --verbose for all)", x.Total, x.Elided)
}

// gapLine is the line an excerpt prints before l where it leaves events
// out, or "".
func gapLine(l excerptLine) string {
	if l.Skipped == 0 {
		return ""
	}
	return fmt.Sprintf("… %d events left out …", l.Skipped)
}

// lineText is an excerpt line's text: a run's leads with how many events,
// on which servers and until when.
func (r *Report) lineText(l excerptLine) string {
	e := r.Timeline[l.Ref]
	if l.Count < 2 {
		return e.Text
	}
	until := r.Timeline[l.Last].Time
	if u := r.Timeline[l.Last].Until; u != nil {
		until = *u
	}
	on := ""
	if len(l.Servers) > 1 {
		on = " on " + strings.Join(l.Servers, ", ")
	}
	return fmt.Sprintf("(x%d%s until %s) %s", l.Count, on, until.UTC().Format("2006-01-02T15:04:05.000Z"), e.Text)
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

// ExcerptLine is one line of a folded timeline excerpt: an event, or a run
// of events of one kind and text (Text leads with how many, on which
// servers, until when), with how many events the excerpt leaves out
// before it.
type ExcerptLine struct {
	Event   TimelineEvent
	Server  string // the event's server, or "N servers" for a run on several
	Text    string
	Skipped int
}

// FoldExcerpt is the excerpt the text and Markdown reports print for refs
// (oldest first): repeats folded into runs, and past maxExcerptLines lines
// the onset, the state changes and the end. It returns the lines and how
// many events they leave out; the HTML page prints the same.
func FoldExcerpt(r *Report, refs []int) ([]ExcerptLine, int) {
	var valid []int
	for _, i := range refs {
		if i >= 0 && i < len(r.Timeline) {
			valid = append(valid, i)
		}
	}
	x := foldExcerpt(r, valid, false)
	out := make([]ExcerptLine, len(x.Lines))
	for k, l := range x.Lines {
		e := r.Timeline[l.Ref]
		server := e.Server
		if len(l.Servers) > 1 {
			server = fmt.Sprintf("%d servers", len(l.Servers))
		}
		out[k] = ExcerptLine{Event: e, Server: server, Text: r.lineText(l), Skipped: l.Skipped}
	}
	return out, x.Elided
}
