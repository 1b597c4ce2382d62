package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Selection narrows a report to some servers, accounts or streams
// (analyze and render --server, --account, --stream). It works on the
// report, not the model, so a saved report narrows as a fresh one does.
// Within a list any name matches; the lists together must all match.
type Selection struct {
	Servers  []string
	Accounts []string
	// Streams are NAME (in any account), ACCOUNT/NAME or "ACCOUNT > NAME" (the
	// form the report prints).
	Streams []string
	// Since and Until bound the timeline (and the groups' histories) in
	// time: an event (a run) is kept when it lies at least partly between
	// them. Findings stay: they judge the state the bundle holds, not a
	// moment. Nil is no bound (analyze and render --since, --until).
	Since, Until *time.Time
}

// IsZero says the selection keeps everything.
func (s Selection) IsZero() bool {
	return len(s.Servers) == 0 && len(s.Accounts) == 0 && len(s.Streams) == 0 && s.Since == nil && s.Until == nil
}

func (s Selection) server(name string) bool {
	return len(s.Servers) == 0 || slices.Contains(s.Servers, name)
}

// assets says whether the selection names accounts or streams.
func (s Selection) assets() bool { return len(s.Accounts) > 0 || len(s.Streams) > 0 }

func (s Selection) stream(account, name string) bool {
	if len(s.Accounts) > 0 && !slices.Contains(s.Accounts, account) {
		return false
	}
	if len(s.Streams) > 0 && !slices.ContainsFunc(s.Streams, func(sel string) bool {
		a, n := splitStreamName(sel)
		return n == name && (a == "" || a == account)
	}) {
		return false
	}
	return true
}

// groupStream is the stream a group's asset belongs to: a consumer
// group's asset is "STREAM > CONSUMER".
func groupStream(asset string) string {
	name, _, _ := strings.Cut(asset, " > ")
	return name
}

// Apply returns the part of r that concerns the selection: the servers,
// streams (each narrowed to the selected servers' copies), groups (narrowed
// to their views), findings and timeline events that name a selected
// server, account or stream. Findings that name no server stay under
// --server when their group does; the meta group and its findings go under
// --account or --stream. The diagnosis keeps the causes with a finding
// left, the findings' and causes' timeline references point into the
// narrowed timeline, and a note says what was left out. Checks describe
// the whole run and stay as they are.
func (s Selection) Apply(r *Report) *Report {
	if s.IsZero() {
		return r
	}
	out := *r
	out.Streams = nil
	for _, st := range r.Streams {
		if !s.stream(st.Account, st.Name) {
			continue
		}
		if len(s.Servers) > 0 {
			st.OnDisk = s.copies(st.OnDisk)
			st.Captured = s.copies(st.Captured)
			if len(st.OnDisk) == 0 && len(st.Captured) == 0 && !slices.ContainsFunc(st.AssignedTo, s.server) {
				continue
			}
		}
		out.Streams = append(out.Streams, st)
	}
	if s.assets() {
		// A history concerns the stream it was compared with.
		out.Histories = nil
		for _, h := range r.Histories {
			if h.Stream != "" && s.stream(h.Account, h.Stream) {
				out.Histories = append(out.Histories, h)
			}
		}
	}

	keptGroup := map[string]bool{}
	out.Groups = nil
	for _, g := range r.Groups {
		if s.assets() && (g.Account == "" || !s.stream(g.Account, groupStream(g.Asset))) {
			continue
		}
		if s.Since != nil || s.Until != nil {
			var hist []HistoryEvent
			for _, h := range g.History {
				if h.Time == nil || s.inWindow(*h.Time, nil) {
					hist = append(hist, h)
				}
			}
			g.History = hist
		}
		if len(s.Servers) > 0 {
			var views []GroupView
			for _, v := range g.Views {
				if s.server(v.Server) {
					views = append(views, v)
				}
			}
			if len(views) == 0 {
				continue
			}
			g.Views = views
			var hist []HistoryEvent
			for _, h := range g.History {
				if h.Server == "" || s.server(h.Server) {
					hist = append(hist, h)
				}
			}
			g.History = hist
		}
		keptGroup[g.Name] = true
		out.Groups = append(out.Groups, g)
	}

	newEvent := make([]int, len(r.Timeline))
	out.Timeline = nil
	for i, e := range r.Timeline {
		newEvent[i] = -1
		if !s.inWindow(e.Time, e.Until) {
			continue
		}
		if len(s.Servers) > 0 && !s.server(e.Server) {
			continue
		}
		if s.assets() && !(e.Stream != "" && s.stream(e.Account, e.Stream)) && !(e.Group != "" && keptGroup[e.Group]) {
			continue
		}
		newEvent[i] = len(out.Timeline)
		out.Timeline = append(out.Timeline, e)
	}

	newFinding := make([]int, len(r.Findings))
	out.Findings = nil
	for i, f := range r.Findings {
		newFinding[i] = -1
		if !s.finding(f, keptGroup) {
			continue
		}
		f.TimelineRefs = remap(f.TimelineRefs, newEvent)
		newFinding[i] = len(out.Findings)
		out.Findings = append(out.Findings, f)
	}
	out.Diagnosis = nil
	for _, c := range r.Diagnosis {
		c.Findings = remap(c.Findings, newFinding)
		if len(c.Findings) == 0 {
			continue
		}
		c.TimelineRefs = remap(c.TimelineRefs, newEvent)
		out.Diagnosis = append(out.Diagnosis, c)
	}

	out.Servers = nil
	for _, sv := range r.Servers {
		if len(s.Servers) > 0 && s.server(sv.Name) || len(s.Servers) == 0 && !s.assets() || len(s.Servers) == 0 && out.mentionsServer(sv.Name) {
			out.Servers = append(out.Servers, sv)
		}
	}
	out.Coverage = s.coverage(r)
	out.Notes = append(slices.Clip(r.Notes), fmt.Sprintf("report narrowed to %s: %d of %d findings, %d of %d streams, %d of %d raft groups, %d of %d timeline events kept",
		s, len(out.Findings), len(r.Findings), len(out.Streams), len(r.Streams), len(out.Groups), len(r.Groups), len(out.Timeline), len(r.Timeline)))
	out.Normalize()
	return &out
}

// coverage is r's coverage narrowed to the selected servers (what could not
// be judged on another server does not concern the narrowed report), with
// every selection name that matches nothing added as unjudged.
func (s Selection) coverage(r *Report) *Coverage {
	var c Coverage
	if r.Coverage != nil {
		c = *r.Coverage
	}
	c.Unjudged = nil
	if r.Coverage != nil {
		for _, u := range r.Coverage.Unjudged {
			if u.Server == "" || s.server(u.Server) {
				c.Unjudged = append(c.Unjudged, u)
			}
		}
	}
	c.Unjudged = append(c.Unjudged, s.unmatched(r)...)
	return &c
}

// String names the selection as its flags do.
func (s Selection) String() string {
	var parts []string
	for _, p := range []struct {
		flag  string
		names []string
	}{{"--server", s.Servers}, {"--account", s.Accounts}, {"--stream", s.Streams}} {
		if len(p.names) > 0 {
			parts = append(parts, p.flag+" "+strings.Join(p.names, ","))
		}
	}
	return strings.TrimSpace(strings.Join(parts, " ") + s.windowString())
}

func (s Selection) copies(in []OnDisk) []OnDisk {
	var out []OnDisk
	for _, d := range in {
		if s.server(d.Server) {
			out = append(out, d)
		}
	}
	return out
}

// finding says whether f concerns the selection (see Apply).
func (s Selection) finding(f Finding, keptGroup map[string]bool) bool {
	if s.assets() {
		switch {
		case f.Stream != "":
			if !s.stream(f.Account, f.Stream) {
				return false
			}
		case f.Group != "":
			if !keptGroup[f.Group] {
				return false
			}
		default:
			return false
		}
	}
	if len(s.Servers) == 0 {
		return true
	}
	named := findingServers(f)
	if len(named) == 0 {
		return f.Group == "" || keptGroup[f.Group]
	}
	return slices.ContainsFunc(named, s.server)
}

// findingServers are the servers a finding names.
func findingServers(f Finding) []string {
	var names []string
	if f.Server != "" {
		names = append(names, f.Server)
	}
	names = append(names, f.Servers...)
	for _, v := range f.Views {
		names = append(names, v.Servers...)
	}
	if f.LikelyOrigin != nil && f.LikelyOrigin.Server != "" {
		names = append(names, f.LikelyOrigin.Server)
	}
	return names
}

// mentionsServer says whether the narrowed report still names server:
// a copy, an assignment, a group view or a finding.
func (r *Report) mentionsServer(name string) bool {
	for _, st := range r.Streams {
		if slices.Contains(st.AssignedTo, name) || slices.ContainsFunc(st.OnDisk, func(d OnDisk) bool { return d.Server == name }) ||
			slices.ContainsFunc(st.Captured, func(d OnDisk) bool { return d.Server == name }) {
			return true
		}
	}
	for _, g := range r.Groups {
		if slices.ContainsFunc(g.Views, func(v GroupView) bool { return v.Server == name }) {
			return true
		}
	}
	for _, f := range r.Findings {
		if slices.Contains(findingServers(f), name) {
			return true
		}
	}
	return false
}

// remap rewrites indices through to (-1: dropped), keeping their order.
func remap(idx []int, to []int) []int {
	var out []int
	for _, i := range idx {
		if i >= 0 && i < len(to) && to[i] >= 0 {
			out = append(out, to[i])
		}
	}
	return out
}
