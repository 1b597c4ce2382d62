package html

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

// Timeline geometry, in SVG user units (the SVG scales to the page width).
const (
	svgWidth     = 1200.0
	labelWidth   = 120.0 // server names left of the plot
	undatedWidth = 56.0  // a column right of the plot for findings with no time
	plotLeft     = labelWidth
	plotRight    = svgWidth - undatedWidth - 8
	axisHeight   = 30.0
	laneHeight   = 50.0
	findingRowH  = 15.0
	// maxFindingRows bounds how high findings at the same moment stack; more
	// overlap the last row (every marker is still drawn).
	maxFindingRows = 8
	// markColumn is the width in which events of one kind on one lane are drawn
	// as a single marker carrying their count: a million route flaps make at
	// most plotWidth/markColumn markers per lane.
	markColumn = 6.0
	// activityColumn is the width of one bar of a lane's event-density strip.
	activityColumn = 3.0
	// minSegment is the narrowest leader period drawn on its own; narrower
	// changes fold into one "churn" period that counts them.
	minSegment = 2.0
)

const plotWidth = plotRight - plotLeft

// markKinds sorts the timeline kinds drawn as lane markers into categories.
// Everything else is only counted in the lane's activity strip.
var markKinds = map[string]string{
	"start":              "restart",
	"stop":               "stop",
	"unclean-stop":       "unclean",
	"panic":              "unclean",
	"stream-leader":      "stream-leader",
	"peer-add":           "peers",
	"peer-remove":        "peers",
	"remove-peer":        "peers",
	"peers-update":       "peers",
	"peers-evicted":      "peers",
	"peer-set-size":      "peers",
	"peer-state":         "peers",
	"meta-initial-peers": "peers",
	"cluster-size":       "peers",
}

// markOrder is the order categories are drawn in, and shown in the legend.
var markOrder = []string{"peers", "stream-leader", "restart", "stop", "unclean"}

// unnamedLeader stands for a leader the server reported without naming it.
const unnamedLeader = "(unnamed)"

// What ends or suspends a server's view of the meta leader.
var (
	downKinds     = map[string]bool{"stop": true, "unclean-stop": true, "shutdown": true, "panic": true}
	noLeaderKinds = map[string]bool{"no-meta-leader": true, "meta-contact-lost": true}
	// offKinds disable JetStream on a server that keeps running ("JetStream
	// out of resources, will be DISABLED"; "JetStream being DISABLED, our
	// server was removed from the cluster"): it stores nothing and follows
	// no meta leader until JetStream starts again (onKinds) or the server
	// restarts.
	offKinds = map[string]bool{"out-of-resources": true, "js-disabled": true}
	onKinds  = map[string]bool{"js-start": true, "js-restart": true}
)

type timelineView struct {
	Empty        bool
	Width        float64
	LaneH        float64
	Height       float64
	Start, End   string
	Ticks        []tick
	Breaks       []axisBreak
	FindingY     float64
	FindingMarks []findingMark
	LanesY       float64
	Lanes        []laneView
	UndatedX     float64
	HasUndated   bool
}

type tick struct {
	X     float64
	Label string
}

type findingMark struct {
	Index    int
	X, Y     float64
	Severity string
	SpanX    float64 // start of the span of the events behind the finding
	Title    string
	Label    string // the code, where it fits beside the marker
	LabelX   float64
	Anchor   string // "start" (right of the marker) or "end" (left)
}

type laneView struct {
	Server   string
	Label    string
	Y        float64
	Odd      bool
	Segments []segment
	Marks    []mark
	Activity []bar
	Ticks    []findingTick
}

type segment struct {
	X, W    float64
	Class   string
	Label   string
	Title   string
	Leader  string
	Changes int
	term    uint64
}

type mark struct {
	X, Y  float64
	Kind  string
	Count int
	Title string
}

type bar struct {
	X, H  float64
	Title string
}

type findingTick struct {
	Index    int
	X        float64
	Severity string
}

// buildTimeline lays out one lane per server. Its cost is linear in the
// timeline and its output bounded by the plot's width, not by the events.
func buildTimeline(r *report.Report, cards []findingCard) timelineView {
	tv := timelineView{Width: svgWidth, LaneH: laneHeight, UndatedX: plotRight + 8 + undatedWidth/2}
	sc, ok := newTimeScale(r)
	servers := laneServers(r)
	if !ok {
		tv.Empty = true
	} else {
		tv.Start = sc.t0.UTC().Format("2006-01-02 15:04:05.000 MST")
		tv.End = sc.t1.UTC().Format("2006-01-02 15:04:05.000 MST")
		tv.Ticks = sc.ticks()
		tv.Breaks = sc.breaks()
	}
	laneOf := map[string]int{}
	for i, name := range servers {
		laneOf[name] = i
		label := name
		if name == "" {
			label = "(no server)"
		}
		tv.Lanes = append(tv.Lanes, laneView{Server: name, Label: label, Odd: i%2 == 1})
	}

	if ok {
		drawLeaderViews(r, sc, tv.Lanes, laneOf)
		drawMarks(r, sc, tv.Lanes, laneOf)
	}
	rows := placeFindings(r, sc, ok, cards, &tv, laneOf)

	tv.FindingY = axisHeight
	tv.LanesY = axisHeight + float64(rows)*findingRowH + 10
	for i := range tv.Lanes {
		tv.Lanes[i].Y = tv.LanesY + float64(i)*laneHeight
	}
	tv.Height = tv.LanesY + float64(len(tv.Lanes))*laneHeight + 4
	for i := range tv.FindingMarks {
		tv.FindingMarks[i].Y = tv.FindingY + tv.FindingMarks[i].Y*findingRowH + findingRowH/2
	}
	return tv
}

// laneServers lists the report's servers in order, then any other name
// events are filed under, then "" if some events have no server.
func laneServers(r *report.Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.Servers {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	var extra []string
	for _, e := range r.Timeline {
		if !seen[e.Server] {
			seen[e.Server] = true
			extra = append(extra, e.Server)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// viewEvent is one change of what a server believes about the meta leader.
type viewEvent struct {
	t      time.Time
	leader string // a server name or peer id; "" with none or down
	term   uint64
	none   bool // the server says it has no leader
	down   bool // the server stopped
	off    bool // JetStream was disabled on the server, which runs on
	up     bool // the server, or its JetStream, started
	isTerm bool // only a term seen
}

// drawLeaderViews draws, per lane, whom that server took for the meta
// leader and when: its own lead periods, another's, none, or down.
func drawLeaderViews(r *report.Report, sc timeScale, lanes []laneView, laneOf map[string]int) {
	nameOfPeer := map[string]string{}
	for _, s := range r.Servers {
		if s.PeerID != "" {
			nameOfPeer[s.PeerID] = s.Name
		}
	}
	events := make([][]viewEvent, len(lanes))
	for _, g := range r.Groups {
		if g.Kind != "meta" {
			continue
		}
		for _, h := range g.History {
			li, ok := laneOf[h.Server]
			if !ok || h.Time == nil || h.Time.IsZero() {
				continue
			}
			switch h.Event {
			case "leader":
				leader := h.Peer
				if n, ok := nameOfPeer[h.Peer]; ok {
					leader = n
				}
				if leader == "" {
					// "new remote metadata leader": one in another
					// cluster of a supercluster, not named in the log.
					leader = unnamedLeader
				}
				events[li] = append(events[li], viewEvent{t: *h.Time, leader: leader, term: h.Term})
			case "term":
				events[li] = append(events[li], viewEvent{t: *h.Time, term: h.Term, isTerm: true})
			}
		}
	}
	// A captured view (/raftz, /jsz) names the leader its server followed
	// when it answered: the time of that server's newest event from the
	// same capture source.
	answered := map[[2]string]time.Time{}
	for _, e := range r.Timeline {
		if k := [2]string{e.Server, e.Source}; e.Time.After(answered[k]) {
			answered[k] = e.Time
		}
	}
	for _, g := range r.Groups {
		if g.Kind != "meta" {
			continue
		}
		for _, v := range g.Views {
			li, ok := laneOf[v.Server]
			at := answered[[2]string{v.Server, v.Source}]
			if !ok || v.Leader == "" || at.IsZero() || v.Source != "raftz" && v.Source != "jsz" {
				continue
			}
			leader := v.Leader
			if n, ok := nameOfPeer[leader]; ok {
				leader = n
			}
			events[li] = append(events[li], viewEvent{t: at, leader: leader, term: v.Term})
		}
	}
	for _, e := range r.Timeline {
		li, ok := laneOf[e.Server]
		if !ok || e.Time.IsZero() {
			continue
		}
		switch {
		case downKinds[e.Kind]:
			events[li] = append(events[li], viewEvent{t: e.Time, down: true})
		case e.Kind == "start" || onKinds[e.Kind]:
			events[li] = append(events[li], viewEvent{t: e.Time, up: true})
		case offKinds[e.Kind]:
			events[li] = append(events[li], viewEvent{t: e.Time, off: true})
		case noLeaderKinds[e.Kind]:
			events[li] = append(events[li], viewEvent{t: e.Time, none: true})
		}
	}
	for li := range lanes {
		evs := events[li]
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].t.Before(evs[j].t) })
		nameRemoteLeaders(evs)
		lanes[li].Segments = leaderSegments(lanes[li].Server, evs, sc)
	}
}

// nameRemoteLeaders names a leader the log reported unnamed ("new remote
// metadata leader") by the next leader the same server's sources name
// (a capture, the WAL, a later log line), where the server neither
// stopped nor lost its leader nor saw a higher term in between: the same
// leader, named by another source.
func nameRemoteLeaders(evs []viewEvent) {
	// One pass from the end, carrying the next leader a source names
	// (next) and the highest term seen since it (term): a lane of many
	// unnamed leaders costs its length, not its square.
	next, term := "", uint64(0)
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		switch {
		case e.down || e.up || e.none:
			next, term = "", 0
		case e.isTerm:
			term = max(term, e.term)
		case e.leader == unnamedLeader:
			if next != "" && (e.term == 0 || term <= e.term) {
				e.leader = next
			}
		case e.leader != "":
			next, term = e.leader, 0
		}
	}
}

// leaderSegments turns one server's view changes into periods.
func leaderSegments(server string, evs []viewEvent, sc timeScale) []segment {
	var out []segment
	open := false
	var cur segment
	var curStart time.Time
	var term uint64
	closeAt := func(t time.Time) {
		if !open {
			return
		}
		open = false
		x0, x1 := sc.x(curStart), sc.x(t)
		cur.X, cur.W = x0, math.Max(x1-x0, 1)
		// A period too short to see merges into the previous one when that
		// is short too (or already merged) and ends where this begins; the
		// merged period counts the changes.
		if n := len(out); n > 0 && x1-x0 < minSegment && (out[n-1].W < minSegment || out[n-1].Class == "churn") && out[n-1].X+out[n-1].W >= x0-0.5 {
			p := &out[n-1]
			p.W = x1 - p.X
			p.Changes += 1 + cur.Changes
			p.Class = "churn"
			p.Label = ""
			p.Title = fmt.Sprintf("%s: %d changes of view in this period", server, p.Changes+1)
			return
		}
		out = append(out, cur)
	}
	openSeg := func(t time.Time, s segment) {
		cur, curStart, open = s, t, true
	}
	// What the open period is: a leader name, "none", "down", or "off"
	// (JetStream disabled: no view of a leader is taken until it starts).
	state := ""
	for _, e := range evs {
		switch {
		case e.isTerm:
			if e.term > term {
				term = e.term
			}
			continue
		case e.up:
			if state == "down" || state == "off" {
				closeAt(e.t)
				state = ""
			}
			continue
		case e.down:
			if state == "down" {
				continue
			}
			closeAt(e.t)
			state = "down"
			openSeg(e.t, segment{Class: "down", Label: "down", Title: server + ": stopped " + e.t.UTC().Format(timeFormat)})
			continue
		case e.off:
			if state == "down" || state == "off" {
				continue
			}
			closeAt(e.t)
			state = "off"
			openSeg(e.t, segment{Class: "off", Label: "JetStream off", Title: server + ": JetStream disabled " + e.t.UTC().Format(timeFormat) + ", the server running on"})
			continue
		case state == "off":
			continue // a view of a leader while JetStream is off is none
		case e.none:
			if state == "none" || state == "down" {
				continue
			}
			closeAt(e.t)
			state = "none"
			openSeg(e.t, segment{Class: "none", Label: "no leader", Title: server + ": no meta leader from " + e.t.UTC().Format(timeFormat)})
			continue
		}
		if e.term > term {
			term = e.term
		}
		if state == e.leader && (e.term == 0 || e.term == cur.term) {
			continue
		}
		closeAt(e.t)
		state = e.leader
		s := segment{Class: "other", Leader: e.leader, Label: "→ " + e.leader}
		if e.leader == server {
			s.Class, s.Label = "self", "leader"
		}
		if term > 0 {
			s.Label += fmt.Sprintf(" t%d", term)
			s.Title = fmt.Sprintf("%s: meta leader %s in term %d from %s", server, e.leader, term, e.t.UTC().Format(timeFormat))
		} else {
			s.Title = fmt.Sprintf("%s: meta leader %s from %s", server, e.leader, e.t.UTC().Format(timeFormat))
		}
		s.Changes = 0
		s.term = term
		openSeg(e.t, s)
	}
	closeAt(sc.t1)
	for i := range out {
		// Labels only where they fit, about 6 units a character.
		if float64(len(out[i].Label))*6+6 > out[i].W {
			out[i].Label = ""
		}
	}
	return out
}

// drawMarks draws the marked kinds per lane, one marker per column and kind,
// and every event in the lane's activity strip.
func drawMarks(r *report.Report, sc timeScale, lanes []laneView, laneOf map[string]int) {
	type key struct {
		lane, col int
		cat       string
	}
	type agg struct {
		count int
		first int
		kinds map[string]int
	}
	marks := map[key]*agg{}
	// activity holds per lane the difference of the density between a
	// column and the one before, so a run adds its weight over all the
	// columns it covers in constant time.
	columns := int(math.Ceil(plotWidth/activityColumn)) + 1
	column := func(t time.Time) int {
		return min(max(int((sc.x(t)-plotLeft)/activityColumn), 0), columns-1)
	}
	activity := make([][]float64, len(lanes))
	for i, e := range r.Timeline {
		li, ok := laneOf[e.Server]
		if !ok || e.Time.IsZero() {
			continue
		}
		x := sc.x(e.Time) - plotLeft
		if activity[li] == nil {
			activity[li] = make([]float64, columns+1)
		}
		// A run stands for Count events from Time to Until: its weight is
		// spread evenly over the columns it covers.
		n := float64(max(e.Count, 1))
		c0, c1 := column(e.Time), column(e.Time)
		if e.Until != nil && e.Until.After(e.Time) {
			c1 = column(*e.Until)
		}
		w := n / float64(c1-c0+1)
		activity[li][c0] += w
		activity[li][c1+1] -= w
		cat, ok := markKinds[e.Kind]
		if !ok {
			continue
		}
		k := key{li, int(x / markColumn), cat}
		a := marks[k]
		if a == nil {
			a = &agg{first: i, kinds: map[string]int{}}
			marks[k] = a
		}
		a.count += max(e.Count, 1)
		a.kinds[e.Kind] += max(e.Count, 1)
	}
	keys := make([]key, 0, len(marks))
	for k := range marks {
		keys = append(keys, k)
	}
	catRank := map[string]int{}
	for i, c := range markOrder {
		catRank[c] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.lane != b.lane {
			return a.lane < b.lane
		}
		if catRank[a.cat] != catRank[b.cat] {
			return catRank[a.cat] < catRank[b.cat]
		}
		return a.col < b.col
	})
	for _, k := range keys {
		a := marks[k]
		e := r.Timeline[a.first]
		title := e.Time.UTC().Format(timeFormat) + " " + e.Kind + ": " + clip(e.Summary(), 200)
		if a.count > 1 {
			title = fmt.Sprintf("%d events from %s: %s", a.count, e.Time.UTC().Format(timeFormat), kindCounts(a.kinds))
		}
		m := mark{X: sc.x(e.Time), Y: 38, Kind: k.cat, Count: a.count, Title: title}
		// A restart is a stop and a start a moment apart: stops lean left
		// and starts right so that both show, in the row above changes.
		switch k.cat {
		case "stop", "unclean":
			m.X, m.Y = m.X-3.5, 28
		case "restart":
			m.X, m.Y = m.X+3.5, 28
		}
		lanes[k.lane].Marks = append(lanes[k.lane].Marks, m)
	}
	for li, diff := range activity {
		if diff == nil {
			continue
		}
		density := make([]float64, columns)
		most, level := 0.0, 0.0
		for c := range density {
			level += diff[c]
			density[c] = level
			most = max(most, level)
		}
		for c, n := range density {
			if n < 1e-9 {
				continue
			}
			// Height on a log scale so a single event shows beside a flood.
			h := 1.5 + 4.5*math.Log1p(n)/math.Log1p(most)
			title := fmt.Sprintf("%.0f events", math.Round(n))
			if n < 0.5 {
				title = "part of a run of events"
			}
			lanes[li].Activity = append(lanes[li].Activity, bar{X: plotLeft + float64(c)*activityColumn, H: h, Title: title})
		}
	}
}

func kindCounts(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", m[k], k)
	}
	return s
}

// placeFindings puts one marker per finding in the row above the lanes, at
// its Since or its newest timeline event, stacking those that would
// overlap, and ticks on the lanes of the servers it involves. It returns
// the number of rows used.
func placeFindings(r *report.Report, sc timeScale, dated bool, cards []findingCard, tv *timelineView, laneOf map[string]int) int {
	var lastX [maxFindingRows]float64
	for i := range lastX {
		lastX[i] = math.Inf(-1)
	}
	rows := 1
	type placed struct {
		idx  int
		x    float64
		span float64
		when time.Time
	}
	var ps []placed
	for i, f := range r.Findings {
		p := placed{idx: i, x: tv.UndatedX, span: -1}
		var first, last time.Time
		for _, ref := range f.TimelineRefs {
			if ref < 0 || ref >= len(r.Timeline) || r.Timeline[ref].Time.IsZero() {
				continue
			}
			t := r.Timeline[ref].Time
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
		switch {
		case dated && f.Since != nil && !f.Since.IsZero():
			p.when = *f.Since
		case dated && !last.IsZero():
			p.when = last
		}
		if !p.when.IsZero() {
			p.x = sc.x(p.when)
			if !first.IsZero() && sc.x(first) < p.x-1 {
				p.span = sc.x(first)
			}
		} else {
			tv.HasUndated = true
		}
		ps = append(ps, p)
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ps[order[a]].x < ps[order[b]].x })
	for _, oi := range order {
		p := ps[oi]
		f := r.Findings[p.idx]
		row := maxFindingRows - 1
		for k := range lastX {
			if lastX[k] <= p.x-12 {
				row = k
				break
			}
		}
		lastX[row] = p.x
		if row+1 > rows {
			rows = row + 1
		}
		when := "undated"
		if !p.when.IsZero() {
			when = p.when.UTC().Format(timeFormat)
		}
		m := findingMark{Index: p.idx, X: p.x, Y: float64(row), Severity: string(f.Severity), SpanX: p.span,
			Title: fmt.Sprintf("%s %s (%s): %s", f.Severity, f.Code, when, clip(f.Message, 300))}
		tv.FindingMarks = append(tv.FindingMarks, m)

		// Lane ticks: at the newest event of the finding on each lane, or at
		// the marker for a server named by the finding without an event.
		onLane := map[int]float64{}
		for _, ref := range f.TimelineRefs {
			if ref < 0 || ref >= len(r.Timeline) || !dated {
				continue
			}
			e := r.Timeline[ref]
			if li, ok := laneOf[e.Server]; ok && !e.Time.IsZero() {
				onLane[li] = math.Max(onLane[li], sc.x(e.Time))
			}
		}
		for _, s := range append([]string{f.Server}, f.Servers...) {
			if li, ok := laneOf[s]; ok && s != "" {
				if _, seen := onLane[li]; !seen {
					onLane[li] = p.x
				}
			}
		}
		lis := make([]int, 0, len(onLane))
		for li := range onLane {
			lis = append(lis, li)
		}
		sort.Ints(lis)
		for _, li := range lis {
			tv.Lanes[li].Ticks = append(tv.Lanes[li].Ticks, findingTick{Index: p.idx, X: onLane[li], Severity: string(f.Severity)})
		}
	}
	labelFindings(tv.FindingMarks, r.Findings)
	sort.SliceStable(tv.FindingMarks, func(a, b int) bool { return tv.FindingMarks[a].Index < tv.FindingMarks[b].Index })
	if cards != nil {
		for _, m := range tv.FindingMarks {
			cards[m.Index].MarkedAt = m.X
		}
	}
	return rows
}

// labelFindings writes each marker's code beside it, right if the row has
// room before the next marker, else left, else not at all.
func labelFindings(marks []findingMark, findings []report.Finding) {
	rows := map[float64][]int{}
	for i, m := range marks {
		rows[m.Y] = append(rows[m.Y], i)
	}
	for _, idx := range rows {
		sort.Slice(idx, func(a, b int) bool { return marks[idx[a]].X < marks[idx[b]].X })
		for k, i := range idx {
			m := &marks[i]
			label := findings[m.Index].Code
			need := float64(len(label))*5.6 + 12
			right, left := plotRight+undatedWidth-m.X, m.X-plotLeft
			if k+1 < len(idx) {
				right = marks[idx[k+1]].X - m.X
			}
			if k > 0 {
				left = m.X - marks[idx[k-1]].X
				if marks[idx[k-1]].Anchor == "start" {
					left -= float64(len(marks[idx[k-1]].Label))*5.6 + 12
				}
			}
			switch {
			case right >= need:
				m.Label, m.LabelX, m.Anchor = label, m.X+8, "start"
			case left >= need:
				m.Label, m.LabelX, m.Anchor = label, m.X-8, "end"
			}
		}
	}
}
