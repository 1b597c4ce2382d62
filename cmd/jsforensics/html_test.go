package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/report/html"
)

// screenshotFixtures are the bundles whose first screen README shows; -update
// rewrites their PNGs under docs/.
var screenshotFixtures = map[string]string{
	"v2.10.22-incident-phantom-peers": "html-incident-phantom-peers.png",
	"v2.15.2-supercluster-split":      "html-supercluster-split.png",
}

// fixtureBundles lists each committed fixture once, in its first form: the
// folder, else the zip, else the tar.gz.
func fixtureBundles(t *testing.T) map[string]string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(bundles, "*"))
	out := map[string]string{}
	for _, d := range dirs {
		for _, form := range []string{"bundle", "bundle.zip", "bundle.tar.gz"} {
			if _, err := os.Stat(filepath.Join(d, form)); err == nil {
				out[filepath.Base(d)] = filepath.Join(d, form)
				break
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no committed bundles")
	}
	return out
}

func renderHTML(t *testing.T, bundle string) (*report.Report, []byte) {
	t.Helper()
	rep, err := analysis.Run(bundle, analysis.Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := html.Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	return rep, b.Bytes()
}

// TestHTMLGolden keeps the HTML of the first incident's bundle.
func TestHTMLGolden(t *testing.T) {
	_, got := renderHTML(t, filepath.Join(bundles, "v2.10.22-incident-phantom-peers/bundle"))
	path := filepath.Join("testdata", "incident-phantom-peers.html")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("HTML differs from %s; rerun with -update if intended", path)
	}
}

// TestHTMLHistoryGolden keeps the client histories' section of the Jepsen
// fixture's page (only that section: the rest is the other goldens').
func TestHTMLHistoryGolden(t *testing.T) {
	_, page := renderHTML(t, filepath.Join(bundles, "acked-lost-jepsen-v2.15.2/bundle"))
	from, to := bytes.Index(page, []byte(`<section id="histories">`)), bytes.Index(page, []byte(`<section id="findings">`))
	if from < 0 || to < from {
		t.Fatal("the Jepsen fixture's page has no histories section before its findings")
	}
	got := page[from:to]
	path := filepath.Join("testdata", "acked-lost-jepsen-histories.html")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the histories section differs from %s; rerun with -update if intended", path)
	}
}

// findChromium returns the browser, or skips (fails with
// JSF_REQUIRE_BROWSER=1) when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("JSF_REQUIRE_BROWSER") == "1" {
		t.Fatal("JSF_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH: the HTML report is not checked in a browser (apt-get install -y chromium; JSF_REQUIRE_BROWSER=1 makes this a failure)")
	return ""
}

// pageDOM is what the browser reports of a rendered page.
type pageDOM struct {
	Lanes         []string `json:"lanes"`
	HiddenLanes   []string `json:"hiddenLanes"`
	Marks         []int    `json:"marks"`
	HiddenMarks   []int    `json:"hiddenMarks"`
	Cards         []int    `json:"cards"`
	Streams       []string `json:"streams"`
	RangeMarks    []int    `json:"rangeMarks"`
	Causes        [][]int  `json:"causes"`
	SVGElements   int      `json:"svgElements"`
	ExternalLoads int      `json:"externalLoads"`
	Histories     []struct {
		File    string         `json:"file"`
		Totals  map[string]int `json:"totals"`  // the section's data-ok, data-lost, ...
		Drawn   map[string]int `json:"drawn"`   // the counts its bars draw, by kind
		Titled  int            `json:"titled"`  // lost values its bars' titles name
		Nemesis int            `json:"nemesis"` // nemesis marks drawn
		Shown   bool           `json:"shown"`   // the plot has a visible box
	} `json:"histories"`
}

// domProbe reads the page's hooks: lanes and finding markers with whether
// each has a visible box inside the timeline.
const domProbe = `(() => {
  const tl = document.querySelector('svg#timeline');
  const box = tl.getBoundingClientRect();
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&
    r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; };
  const lanes = [...tl.querySelectorAll('g.lane')];
  const marks = [...tl.querySelectorAll('[data-finding]')];
  return {
    lanes: lanes.map(g => g.dataset.server),
    hiddenLanes: lanes.filter(g => !shown(g)).map(g => g.dataset.server),
    marks: marks.map(m => +m.dataset.finding),
    hiddenMarks: marks.filter(m => !shown(m)).map(m => +m.dataset.finding),
    cards: [...document.querySelectorAll('article[data-finding-card]')].map(a => +a.dataset.findingCard),
    streams: [...document.querySelectorAll('section.stream')].map(s => s.dataset.stream),
    rangeMarks: [...document.querySelectorAll('#replicas rect[data-finding]')].map(r => +r.dataset.finding),
    causes: [...document.querySelectorAll('#diagnosis [data-cause]')].map(c =>
      [...c.querySelectorAll('a[href^="#finding-"]')].filter(a => document.querySelector(a.getAttribute('href'))).map(a => +a.getAttribute('href').slice(9))),
    histories: [...document.querySelectorAll('#histories section.history')].map(sec => {
      const drawn = {ok: 0, lost: 0, unknown: 0, fail: 0};
      sec.querySelectorAll('g.hbar rect[data-kind]').forEach(r => { drawn[r.dataset.kind] += +r.dataset.count; });
      const plot = sec.querySelector('svg.history-plot');
      const r = plot ? plot.getBoundingClientRect() : {width: 0, height: 0};
      return {
        file: sec.dataset.history, drawn,
        totals: {ok: +sec.dataset.ok, lost: +sec.dataset.lost, unknown: +sec.dataset.unknown, fail: +sec.dataset.fail},
        titled: [...sec.querySelectorAll('g.hbar > title')].map(t => (t.textContent.split('\nlost: ')[1] || '').split(', ').filter(v => v.startsWith('"')).length).reduce((a, b) => a + b, 0),
        nemesis: sec.querySelectorAll('g.nemesis').length,
        shown: r.width > 0 && r.height > 0,
      };
    }),
    svgElements: document.querySelectorAll('svg *').length,
    externalLoads: performance.getEntriesByType('resource').length,
  };
})()`

// TestHTMLInBrowser renders every fixture's report, loads it in one headless
// Chromium, and checks through the DOM that no console error was raised,
// that every server has a visible lane and every finding a visible marker
// (and a card), that replica findings are drawn on their stream, and that
// the page loaded nothing. It takes a screenshot of each page's first screen.
func TestHTMLInBrowser(t *testing.T) {
	chromium := findChromium(t)
	start := time.Now()
	dir := t.TempDir()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	var mu sync.Mutex
	var consoleErrors []string
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				msg = fmt.Sprintf("console.%s", e.Type)
				for _, a := range e.Args {
					msg += fmt.Sprintf(" %s", a.Value)
				}
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = fmt.Sprintf("log %s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
			}
		}
		if msg != "" {
			mu.Lock()
			consoleErrors = append(consoleErrors, msg)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}

	// JSF_SCREENSHOT_DIR keeps the screenshots (for a look, or as CI artifacts).
	shots := dir
	if d := os.Getenv("JSF_SCREENSHOT_DIR"); d != "" {
		shots = d
	}
	fixtures := fixtureBundles(t)
	names := make([]string, 0, len(fixtures))
	for name := range fixtures {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			rep, page := renderHTML(t, fixtures[name])
			file := filepath.Join(dir, name+".html")
			if err := os.WriteFile(file, page, 0o644); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			consoleErrors = nil
			mu.Unlock()
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file)); err != nil {
				t.Fatal(err)
			}
			dom, err := chromedp.Run(ctx, chromedp.Evaluate[pageDOM](domProbe))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			errs := append([]string(nil), consoleErrors...)
			mu.Unlock()
			for _, e := range errs {
				t.Errorf("console error: %s", e)
			}
			checkPageDOM(t, rep, dom)
			if name == "acked-lost-jepsen-v2.15.2" {
				// Its two histories (with and without :seq) each lose
				// 30 acknowledged writes, under the servers' stop.
				if len(dom.Histories) != 2 {
					t.Fatalf("%d history plots, want 2", len(dom.Histories))
				}
				for _, h := range dom.Histories {
					if h.Totals["lost"] != 30 || h.Drawn["lost"] != 30 || h.Nemesis != 2 {
						t.Errorf("history plot %s: %d lost (%d drawn), %d nemesis marks; want 30 and 2", h.File, h.Totals["lost"], h.Drawn["lost"], h.Nemesis)
					}
				}
			}

			png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#overview")))
			if err != nil {
				t.Fatal(err)
			}
			if len(png) < 1000 {
				t.Errorf("screenshot of %d bytes", len(png))
			}
			shot := filepath.Join(shots, name+".png")
			if doc, ok := screenshotFixtures[name]; ok && *update {
				shot = filepath.Join("..", "..", "docs", doc)
			}
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			// The committed screenshots are quantized when pngquant is
			// there (a third of the bytes, no visible change).
			if _, ok := screenshotFixtures[name]; ok && *update {
				if pq, err := exec.LookPath("pngquant"); err == nil {
					if out, err := exec.Command(pq, "--quality=80-95", "--speed=1", "--force", "--output", shot, shot).CombinedOutput(); err != nil {
						t.Logf("pngquant: %v %s", err, out)
					}
				}
			}
		})
	}
	t.Logf("%d pages in %s (screenshots in %s)", len(names), time.Since(start).Round(time.Millisecond), shots)
}

func checkPageDOM(t *testing.T, rep *report.Report, dom pageDOM) {
	t.Helper()
	lanes := map[string]bool{}
	for _, l := range dom.Lanes {
		lanes[l] = true
	}
	for _, s := range rep.Servers {
		if !lanes[s.Name] {
			t.Errorf("no lane for server %q (lanes %q)", s.Name, dom.Lanes)
		}
	}
	if len(dom.HiddenLanes) > 0 {
		t.Errorf("lanes without a visible box: %q", dom.HiddenLanes)
	}
	has := func(list []int) map[int]bool {
		m := map[int]bool{}
		for _, i := range list {
			m[i] = true
		}
		return m
	}
	marks, cards, ranges := has(dom.Marks), has(dom.Cards), has(dom.RangeMarks)
	for i, f := range rep.Findings {
		if !marks[i] {
			t.Errorf("no timeline marker for finding %d (%s)", i, f.Code)
		}
		if !cards[i] {
			t.Errorf("no card for finding %d (%s)", i, f.Code)
		}
		if (f.Code == "replica-gap" || f.Code == "replica-divergence") && len(f.Ranges) > 0 && !ranges[i] {
			t.Errorf("finding %d (%s) is not drawn on its stream's replica map", i, f.Code)
		}
	}
	if len(dom.HiddenMarks) > 0 {
		t.Errorf("finding markers without a visible box: %v", dom.HiddenMarks)
	}
	if len(dom.Cards) != len(rep.Findings) {
		t.Errorf("%d cards for %d findings", len(dom.Cards), len(rep.Findings))
	}
	streams := map[string]bool{}
	for _, s := range dom.Streams {
		streams[s] = true
	}
	for _, s := range rep.Streams {
		if k := s.Account + " > " + s.Name; !streams[k] {
			t.Errorf("no replica map for stream %q", k)
		}
	}
	// The diagnosis: one item per cause, linking each of its findings to a
	// card that exists.
	if len(dom.Causes) != len(rep.Diagnosis) {
		t.Errorf("%d causes on the page, %d in the report", len(dom.Causes), len(rep.Diagnosis))
	}
	for ci, c := range rep.Diagnosis {
		if ci >= len(dom.Causes) {
			break
		}
		links := has(dom.Causes[ci])
		for _, fi := range c.Findings {
			if !links[fi] {
				t.Errorf("cause %d does not link finding %d to its card", ci, fi)
			}
		}
	}
	// The client histories: one plot each, absent without one, drawing
	// every publish of the report's totals.
	if len(dom.Histories) != len(rep.Histories) {
		t.Errorf("%d history plots for %d histories", len(dom.Histories), len(rep.Histories))
	}
	for i, h := range rep.Histories {
		if i >= len(dom.Histories) {
			break
		}
		d := dom.Histories[i]
		want := map[string]int{"ok": h.Totals.OK, "lost": h.Totals.Lost, "unknown": h.Totals.Unknown, "fail": h.Totals.Fail}
		drawn := map[string]int{"ok": h.Totals.OK - h.Untimed, "lost": h.Totals.Lost, "unknown": h.Totals.Unknown, "fail": h.Totals.Fail}
		if d.File != h.File || !maps.Equal(d.Totals, want) || (h.Untimed == 0 && !maps.Equal(d.Drawn, drawn)) {
			t.Errorf("history plot %s: totals %v, bars %v; the report has %s with %v", d.File, d.Totals, d.Drawn, h.File, want)
		}
		if !d.Shown || d.Nemesis != len(h.Nemesis) {
			t.Errorf("history plot %s: visible %v, %d nemesis marks for %d", d.File, d.Shown, d.Nemesis, len(h.Nemesis))
		}
		if d.Titled > h.Totals.Lost || (h.Totals.Lost > 0 && d.Titled == 0) {
			t.Errorf("history plot %s: its bars' titles name %d lost values of %d", d.File, d.Titled, h.Totals.Lost)
		}
	}
	if dom.ExternalLoads != 0 {
		t.Errorf("the page loaded %d resources; it must be self-contained", dom.ExternalLoads)
	}
}

// TestHTMLEscapesText puts markup into the names and texts of a real
// report and checks that the page carries it as text, never as markup.
func TestHTMLEscapesText(t *testing.T) {
	rep, err := analysis.Run(filepath.Join(bundles, "v2.10.22-incident-phantom-peers/bundle"), analysis.Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	old := rep.Servers[0].Name
	rep.Servers[0].Name += hostile
	for i := range rep.Timeline {
		if rep.Timeline[i].Server == old {
			rep.Timeline[i].Server = rep.Servers[0].Name
			rep.Timeline[i].Text += hostile
		}
	}
	rep.Findings[0].Message += hostile
	rep.Findings[0].Remedy += hostile
	rep.Streams[0].Name += hostile
	var b bytes.Buffer
	if err := html.Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(out, bad) {
			t.Errorf("the page contains %q: text was not escaped", bad)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile text is not on the page, escaped")
	}
}

// TestHTMLBoundsDenseTimeline multiplies a real timeline's events and
// meta leader changes and checks that the page's size does not follow:
// dense events become counted markers and short leader periods one
// "churn" period.
func TestHTMLBoundsDenseTimeline(t *testing.T) {
	rep, base := renderHTML(t, filepath.Join(bundles, "membership-v2.12.1/bundle"))
	t0, t1 := rep.Timeline[0].Time, rep.Timeline[len(rep.Timeline)-1].Time
	const copies = 100
	n := len(rep.Timeline)
	dense := make([]report.TimelineEvent, 0, n*copies)
	for c := 0; c < copies; c++ {
		for _, e := range rep.Timeline[:n] {
			e.Time = e.Time.Add(time.Duration(c) * time.Microsecond)
			dense = append(dense, e)
		}
	}
	sort.SliceStable(dense, func(i, j int) bool { return dense[i].Time.Before(dense[j].Time) })
	rep.Timeline = dense
	for gi := range rep.Groups {
		g := &rep.Groups[gi]
		if g.Kind != "meta" {
			continue
		}
		// 50,000 leader flips on every server, evenly over the span.
		step := t1.Sub(t0) / 50000
		for i := 0; i < 50000; i++ {
			at := t0.Add(time.Duration(i) * step)
			for _, s := range rep.Servers {
				g.History = append(g.History, report.HistoryEvent{Time: &at, Event: "leader", Peer: rep.Servers[i%len(rep.Servers)].PeerID, Server: s.Name, Source: "log"})
			}
		}
	}
	start := time.Now()
	var b bytes.Buffer
	if err := html.Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	elements := strings.Count(b.String(), "<")
	baseElements := bytes.Count(base, []byte("<"))
	t.Logf("%d events, 250,000 leader changes: %d bytes, %d tags (%d before) in %s", len(dense), b.Len(), elements, baseElements, took.Round(time.Millisecond))
	// The bound: per lane, one marker per column and kind, one activity bar
	// per column, leader periods no narrower than two units; the findings
	// and the replica maps do not grow.
	if limit := baseElements + len(rep.Servers)*(1040/6*5+1040/3+1040/2)*3; elements > limit {
		t.Errorf("%d tags for a dense timeline, over the bound %d", elements, limit)
	}
	if !strings.Contains(b.String(), `data-period="churn"`) {
		t.Error("50,000 leader flips drew no churn period")
	}
}

// TestHTMLSameFromSavedJSON renders a report, saves it as JSON, reads it
// back and renders again: the page depends on nothing the JSON drops (a
// time's zone or monotonic reading, map order), so a saved report renders
// the same page.
func TestHTMLSameFromSavedJSON(t *testing.T) {
	for _, name := range []string{"v2.10.22-incident-phantom-peers", "membership-v2.12.1", "v2.15.2-supercluster-split", "acked-lost-jepsen-v2.15.2"} {
		rep, direct := renderHTML(t, filepath.Join(bundles, name, "bundle"))
		var js bytes.Buffer
		if err := report.WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		var saved report.Report
		if err := json.Unmarshal(js.Bytes(), &saved); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := html.Write(&again, &saved); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(direct, again.Bytes()) {
			t.Errorf("%s: the page from the saved JSON differs from the page from the analysis", name)
		}
	}
}

// TestHTMLCutsQuietStretch moves the second half of a real timeline three
// days on: the axis cuts the quiet days into a break instead of squeezing
// both busy halves into its ends.
func TestHTMLCutsQuietStretch(t *testing.T) {
	rep, err := analysis.Run(filepath.Join(bundles, "v2.10.22-incident-phantom-peers/bundle"), analysis.Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	half := len(rep.Timeline) / 2
	cut := rep.Timeline[half].Time
	later := func(tp *time.Time) {
		if tp != nil && !tp.Before(cut) {
			*tp = tp.Add(72 * time.Hour)
		}
	}
	for i := range rep.Timeline {
		later(&rep.Timeline[i].Time)
		later(rep.Timeline[i].Until)
	}
	for gi := range rep.Groups {
		for hi := range rep.Groups[gi].History {
			later(rep.Groups[gi].History[hi].Time)
		}
	}
	for fi := range rep.Findings {
		later(rep.Findings[fi].Since)
	}
	var b bytes.Buffer
	if err := html.Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `class="brk" data-break="3d"`); n != 1 {
		t.Errorf("%d breaks of 3d on the axis, want 1", n)
	}
	// Both halves keep their ticks: some before the break, some after.
	ticks := regexp.MustCompile(`<text class="axis" x="([0-9.]+)" y="14"`).FindAllStringSubmatch(b.String(), -1)
	brk := regexp.MustCompile(`class="brk" data-break="3d"><title>[^<]*</title><rect x="([0-9.]+)"`).FindStringSubmatch(b.String())
	if brk == nil || len(ticks) < 4 {
		t.Fatalf("no break or too few ticks (%d)", len(ticks))
	}
	bx, _ := strconv.ParseFloat(brk[1], 64)
	before, after := 0, 0
	for _, m := range ticks {
		if x, _ := strconv.ParseFloat(m[1], 64); x < bx {
			before++
		} else {
			after++
		}
	}
	if before < 2 || after < 2 {
		t.Errorf("ticks %d before and %d after the break: a busy half lost its width", before, after)
	}
}

// TestHTMLReplicaMarks draws the membership bundle's divergence on every
// copy it names, and an unreadable range given to one copy on that copy.
func TestHTMLReplicaMarks(t *testing.T) {
	rep, err := analysis.Run(filepath.Join(bundles, "membership-v2.12.1/bundle"), analysis.Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	div := -1
	for i, f := range rep.Findings {
		if f.Code == "replica-divergence" {
			div = i
		}
	}
	if div < 0 || len(rep.Streams) == 0 || len(rep.Streams[0].OnDisk) == 0 {
		t.Fatal("the membership bundle lost its replica-divergence finding or its stream")
	}
	rep.Streams[0].OnDisk[0].Unreadable = []report.Range{{First: 5, Last: 9}}
	var b bytes.Buffer
	if err := html.Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n, want := strings.Count(out, fmt.Sprintf(`class="diverge" data-finding="%d"`, div)), len(rep.Findings[div].Servers); n != want {
		t.Errorf("divergence drawn on %d copies, want %d (%v)", n, want, rep.Findings[div].Servers)
	}
	if n := strings.Count(out, `<rect class="unreadable"`); n != 1 {
		t.Errorf("%d unreadable marks, want 1", n)
	}
}

// TestLanesNameRemoteLeaders: on the split supercluster a server logs "new
// remote metadata leader" without naming it; its lane takes the name the
// same server's later /jsz or /raftz answer gives (old-0), never
// "(unnamed)" where a source of the bundle names the leader.
func TestLanesNameRemoteLeaders(t *testing.T) {
	_, page := renderHTML(t, filepath.Join(bundles, "v2.15.2-supercluster-split", "bundle"))
	if bytes.Contains(page, []byte("(unnamed)")) {
		t.Error("a lane still shows an unnamed meta leader")
	}
	for _, want := range []string{"new-1: meta leader old-0 from 2026-11-30T01:41:07.652Z", "new-2: meta leader old-0 from 2026-11-30T01:41:12.651Z"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("no lane period %q", want)
		}
	}
}

// TestLaneStopsFollowingWhenJetStreamIsOff: on the diskfull bundles (real
// 2.11, 2.12 and 2.15 servers), df-2 runs out of disk and disables
// JetStream but runs on: its lane follows no meta leader from that moment
// (a "JetStream off" period) to its stop.
func TestLaneStopsFollowingWhenJetStreamIsOff(t *testing.T) {
	period := regexp.MustCompile(`data-period="([^"]+)"[^>]*><title>([^<]*)</title>`)
	for _, v := range []string{"v2.11.17", "v2.12.15", "v2.15.3"} {
		t.Run(v, func(t *testing.T) {
			rep, page := renderHTML(t, filepath.Join(bundles, "diskfull-"+v, "bundle"))
			var off string
			for _, e := range rep.Timeline {
				if e.Server == "df-2" && e.Kind == "out-of-resources" {
					off = e.Time.UTC().Format("2006-01-02T15:04:05.000Z")
					break
				}
			}
			if off == "" {
				t.Fatal("df-2 never ran out of resources")
			}
			s := string(page)
			i := strings.Index(s, `class="lane" data-server="df-2"`)
			if i < 0 {
				t.Fatal("no lane for df-2")
			}
			lane := s[i:]
			if j := strings.Index(lane[1:], `class="lane" data-server=`); j >= 0 {
				lane = lane[:j+1]
			}
			var got []string
			for _, m := range period.FindAllStringSubmatch(lane, -1) {
				got = append(got, m[1])
			}
			at := slices.IndexFunc(period.FindAllStringSubmatch(lane, -1), func(m []string) bool {
				return m[1] == "off" && strings.Contains(m[2], "JetStream disabled "+off)
			})
			if at < 0 {
				t.Fatalf("df-2's lane has no JetStream-off period from %s: %q", off, got)
			}
			if rest := got[at+1:]; !slices.Equal(rest, []string{"down"}) {
				t.Errorf("after JetStream went off, df-2's lane shows %q, want only its stop", rest)
			}
			if at == 0 || got[at-1] != "other" && got[at-1] != "self" {
				t.Errorf("before, df-2's lane should follow a leader: %q", got)
			}
		})
	}
}
