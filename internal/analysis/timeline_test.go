package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/timeline"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// leaderKillBundle is the fixture where the meta leader was SIGKILLed:
// three debug logs and two kubectl copies of the killed server's log.
func leaderKillBundle(t *testing.T) (dir, killed string) {
	t.Helper()
	for _, fx := range fixtures(t) {
		var exp struct {
			Killed string `json:"killed"`
		}
		if json.Unmarshal(fx.want.Expect, &exp) == nil && exp.Killed != "" {
			return fx.forms[0], exp.Killed
		}
	}
	t.Fatal("no fixture with a killed leader")
	return "", ""
}

func analyzeWith(t *testing.T, dir string, opts timeline.Options) *report.Report {
	t.Helper()
	rep, err := Run(dir, Options{ToolVersion: "test", Timeline: opts})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// events is how many log events the entries stand for.
func events(tl []report.TimelineEvent) int {
	n := 0
	for _, e := range tl {
		n += max(e.Count, 1)
	}
	return n
}

// line identifies an event by what it says and where.
func line(e report.TimelineEvent) string {
	return e.Time.UTC().Format(time.RFC3339Nano) + "|" + e.Server + "|" + e.Kind + "|" + e.Text + "|" + e.File + "|" + strconv.Itoa(e.Line)
}

// TestTimelineRunsKeepStateChanges: by default every state change of the
// full timeline is in the report's timeline as it is, routine repetition
// becomes runs, and the runs account for every event the full timeline
// holds, so nothing is lost, only collapsed.
func TestTimelineRunsKeepStateChanges(t *testing.T) {
	dir, _ := leaderKillBundle(t)
	full := analyzeWith(t, dir, timeline.Options{Full: true})
	runs := analyzeWith(t, dir, timeline.Options{})
	for _, e := range full.Timeline {
		if e.Count != 0 || e.Until != nil {
			t.Fatalf("full timeline holds a run: %+v", e)
		}
	}
	if got, want := events(runs.Timeline), len(full.Timeline); got != want {
		t.Errorf("runs stand for %d events, the full timeline holds %d", got, want)
	}
	if len(runs.Timeline) >= len(full.Timeline) {
		t.Errorf("%d entries with runs, %d in full: nothing collapsed", len(runs.Timeline), len(full.Timeline))
	}
	kept := map[string]int{}
	nRuns := 0
	for i, e := range runs.Timeline {
		if i > 0 && e.Time.Before(runs.Timeline[i-1].Time) {
			t.Fatalf("timeline out of order at %d", i)
		}
		kept[line(e)]++
		if e.Count == 0 {
			continue
		}
		nRuns++
		if e.Count < 2 || e.Until == nil || e.Until.Before(e.Time) || e.Source != "log" || e.File == "" || e.Line == 0 {
			t.Errorf("malformed run %+v", e)
		}
		if timeline.StateKinds[e.Kind] || timeline.MetaKinds[natsfmt.EventKind(e.Kind)] {
			t.Errorf("a state change collapsed into a run: %+v", e)
		}
	}
	if nRuns == 0 {
		t.Error("no run in the timeline of three debug logs")
	}
	for _, e := range full.Timeline {
		if timeline.StateKinds[e.Kind] || timeline.MetaKinds[natsfmt.EventKind(e.Kind)] {
			if kept[line(e)] == 0 {
				t.Errorf("state change missing from the timeline with runs: %s", line(e))
			}
			kept[line(e)]--
		}
	}
	if len(full.Findings) != len(runs.Findings) {
		t.Errorf("%d findings with the full timeline, %d with runs", len(full.Findings), len(runs.Findings))
	}
}

// TestTimelineBoundsFoldTheMiddle: past the bounds of one file the
// timeline keeps its first and last entries and folds the rest into runs;
// the entries still stand for every event, and a note says what was folded.
func TestTimelineBoundsFoldTheMiddle(t *testing.T) {
	dir, _ := leaderKillBundle(t)
	const head, tail = 25, 25
	full := analyzeWith(t, dir, timeline.Options{Full: true})
	small := analyzeWith(t, dir, timeline.Options{Head: head, Tail: tail})
	if got, want := events(small.Timeline), len(full.Timeline); got != want {
		t.Errorf("bounded timeline stands for %d events, the full one holds %d", got, want)
	}
	type fileFacts struct {
		entries int
		keys    map[timeline.RunKey]bool
		last    time.Time
	}
	by := func(tl []report.TimelineEvent) map[string]*fileFacts {
		m := map[string]*fileFacts{}
		for _, e := range tl {
			if e.Source != "log" {
				continue
			}
			f := m[e.File]
			if f == nil {
				f = &fileFacts{keys: map[timeline.RunKey]bool{}}
				m[e.File] = f
			}
			f.entries++
			f.keys[timeline.KeyOf(&model.TimelineEvent{Server: model.ServerID(e.Server), Kind: e.Kind, Group: e.Group, Account: e.Account, Stream: e.Stream})] = true
			last := e.Time
			if e.Until != nil {
				last = *e.Until
			}
			if last.After(f.last) {
				f.last = last
			}
		}
		return m
	}
	fullBy, smallBy := by(full.Timeline), by(small.Timeline)
	for file, f := range fullBy {
		s := smallBy[file]
		if s == nil {
			continue // every event of this file merged with another copy's
		}
		if s.entries > head+tail+len(f.keys) {
			t.Errorf("%s: %d entries, more than %d+%d and one run per kind and asset (%d)", file, s.entries, head, tail, len(f.keys))
		}
		if !s.last.Equal(f.last) {
			t.Errorf("%s: last event at %s, the full timeline's at %s: the tail was not kept", file, s.last, f.last)
		}
	}
	folded := false
	for _, n := range small.Notes {
		folded = folded || strings.Contains(n, "are folded into")
	}
	if !folded {
		t.Errorf("no note on folded entries: %q", small.Notes)
	}
}

// TestEventsExportEveryEvent: --events writes every log event as read,
// one JSON object a line, including the ones the timeline merges (copies
// of one log) or collapses.
func TestEventsExportEveryEvent(t *testing.T) {
	dir, _ := leaderKillBundle(t)
	var buf bytes.Buffer
	runs := analyzeWith(t, dir, timeline.Options{Events: &buf})
	full := analyzeWith(t, dir, timeline.Options{Full: true})
	exported := map[string]bool{}
	files := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var e report.TimelineEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		if e.Source != "log" || e.Time.IsZero() || e.Kind == "" || e.Count != 0 {
			t.Errorf("line %d: %+v", n, e)
		}
		exported[line(e)] = true
		files[e.File] = true
	}
	for _, e := range full.Timeline {
		if e.Source == "log" && !exported[line(e)] {
			t.Errorf("not exported: %s", line(e))
		}
	}
	if n <= events(runs.Timeline) {
		t.Errorf("%d exported events, the timeline (copies merged) stands for %d: the copies are missing", n, events(runs.Timeline))
	}
	if len(files) != 5 {
		t.Errorf("events from %d files, want the 5 logs", len(files))
	}
}

// TestCopiesOfOneLogMerged: the kubectl copies of the killed server's log
// add nothing to the timeline, with or without runs.
func TestCopiesOfOneLogMerged(t *testing.T) {
	dir, killed := leaderKillBundle(t)
	bare := copyTree(t, dir)
	if err := os.RemoveAll(filepath.Join(bare, "kubectl")); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []timeline.Options{{Full: true}, {}} {
		with, without := analyzeWith(t, dir, opts), analyzeWith(t, bare, opts)
		count := func(tl []report.TimelineEvent) (int, int) {
			entries, n := 0, 0
			for _, e := range tl {
				if e.Server == killed && e.Source == "log" {
					entries++
					n += max(e.Count, 1)
				}
			}
			return entries, n
		}
		we, wn := count(with.Timeline)
		oe, on := count(without.Timeline)
		if we != oe || wn != on || wn == 0 {
			t.Errorf("full=%v: %s has %d entries (%d events) with the kubectl copies, %d (%d) without", opts.Full, killed, we, wn, oe, on)
		}
	}
}

// TestClockOffsetFromSharedElections: moving one server's log times by
// 1.5 s moves its estimated clock offset by 1.5 s.
func TestClockOffsetFromSharedElections(t *testing.T) {
	dir, _ := leaderKillBundle(t)
	offset := func(rep *report.Report, server string) float64 {
		re := regexp.MustCompile(regexp.QuoteMeta(server) + ` ([+-][0-9.]+)s \(([0-9]+) shared elections\)`)
		for _, n := range rep.Notes {
			if strings.HasPrefix(n, "clock offsets") {
				if m := re.FindStringSubmatch(n); m != nil {
					v, _ := strconv.ParseFloat(m[1], 64)
					return v
				}
			}
		}
		t.Fatalf("no clock offset for %s in %q", server, rep.Notes)
		return 0
	}
	before := offset(analyzeWith(t, dir, timeline.Options{}), "dbg-2")
	moved := copyTree(t, dir)
	moveLogTimes(t, filepath.Join(moved, "dbg-2.log"), 0, 1500*time.Millisecond)
	after := offset(analyzeWith(t, moved, timeline.Options{}), "dbg-2")
	if d := after - before - 1.5; d > 0.005 || d < -0.005 {
		t.Errorf("offset of dbg-2 %+.3fs, after moving its log by 1.5 s %+.3fs", before, after)
	}
}

// moveLogTimes moves the nats-server timestamps of the lines of a log
// after its first `from` lines by d.
func moveLogTimes(t *testing.T, path string, from int, d time.Duration) {
	t.Helper()
	stamp := regexp.MustCompile(`^(\[[0-9]+\] )([0-9]{4}/[0-9]{2}/[0-9]{2} [0-9:.]{15})`)
	const layout = "2006/01/02 15:04:05.000000"
	rewrite(t, path, func(b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		for i := from; i < len(lines); i++ {
			lines[i] = stamp.ReplaceAllFunc(lines[i], func(m []byte) []byte {
				sub := stamp.FindSubmatch(m)
				at, err := time.Parse(layout, string(sub[2]))
				if err != nil {
					t.Fatalf("%s: %v", sub[2], err)
				}
				return append(append([]byte(nil), sub[1]...), at.Add(d).Format(layout)...)
			})
		}
		return bytes.Join(lines, nil)
	})
}

// TestRunsSpanAnHourAtMost: a boot that goes on for hours shows its
// routine events hour by hour: the second half of one log moved on by
// three hours splits its runs, none spanning more than maxRunSpan, and
// they still stand for every event.
func TestRunsSpanAnHourAtMost(t *testing.T) {
	dir, _ := leaderKillBundle(t)
	moved := copyTree(t, dir)
	p := filepath.Join(moved, "dbg-0.log")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	moveLogTimes(t, p, bytes.Count(b, []byte("\n"))/2, 3*time.Hour)
	base := analyzeWith(t, moved, timeline.Options{Full: true})
	split := analyzeWith(t, moved, timeline.Options{})
	unsplit := analyzeWith(t, dir, timeline.Options{})
	if got, want := events(split.Timeline), len(base.Timeline); got != want {
		t.Errorf("runs stand for %d events, the full timeline holds %d", got, want)
	}
	for _, e := range split.Timeline {
		if e.Until != nil && e.Until.Sub(e.Time) >= timeline.MaxRunSpan {
			t.Errorf("run over %s: %+v", e.Until.Sub(e.Time), e)
		}
	}
	if len(split.Timeline) <= len(unsplit.Timeline) {
		t.Errorf("%d entries with three hours inside a boot, %d without: no run was split", len(split.Timeline), len(unsplit.Timeline))
	}
}
