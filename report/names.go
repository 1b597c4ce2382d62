package report

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Ids beside names: every table shows a peer as "nats-3 (bkCGheKT)", the
// name the report resolved for the id, so a reader never matches eight
// letters by eye; an id no server of the bundle holds stays bare.

// PeerLabeler returns the labeller of r's peers: "nats-3 (bkCGheKT)" for
// an id or a name of a server the report knows, the value itself
// otherwise. The renderers outside this package (HTML) use it.
func PeerLabeler(r *Report) func(string) string { return newNamer(r).label }

// namer labels peers and servers by name and id.
type namer struct {
	byID   map[string]Server
	byName map[string]Server
}

func newNamer(r *Report) namer {
	n := namer{byID: map[string]Server{}, byName: map[string]Server{}}
	for _, s := range r.Servers {
		if s.PeerID != "" {
			n.byID[s.PeerID] = s
		}
		n.byName[s.Name] = s
	}
	return n
}

// label is "name (id)" for a peer id or a server name the report knows,
// the value itself otherwise.
func (n namer) label(v string) string {
	if s, ok := n.byID[v]; ok && s.Name != "" && s.Name != v {
		return s.Name + " (" + v + ")"
	}
	if s, ok := n.byName[v]; ok && s.PeerID != "" && s.PeerID != v {
		return v + " (" + s.PeerID + ")"
	}
	return v
}

// same says whether a and b (names or ids) are one server.
func (n namer) same(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	ia, ib := a, b
	if s, ok := n.byName[a]; ok && s.PeerID != "" {
		ia = s.PeerID
	}
	if s, ok := n.byName[b]; ok && s.PeerID != "" {
		ib = s.PeerID
	}
	return ia == ib
}

// labels labels each peer, the leader marked with a trailing "*".
func (n namer) labels(peers []string, leader string) string {
	out := make([]string, len(peers))
	for i, p := range peers {
		out[i] = n.label(p)
		if n.same(p, leader) {
			out[i] += "*"
		}
	}
	return strings.Join(out, " ")
}

// mergedView is one server's view of a group, from every source that
// gave one: each figure once when the sources agree, each source's value
// when they do not. A figure no source knows (0, empty) is unknown.
type mergedView struct {
	Server                                      string
	Size, Quorum, Term, Leader, VotedFor, Peers string
	Sources                                     []string
	// Captured is when the last capture of these views was answered
	// (FormatTime), "" when none is dated.
	Captured string
	leader   string // the leader, as the last views name it
}

// momentSpan is how far apart one server's answers to one round of
// captures may be (its /varz and its /jsz, taken one after the other):
// its views dated within it of each other show one moment.
const momentSpan = 5 * time.Second

// lastMoment is the time of the last dated view of vs, and whether some
// dated view lies more than momentSpan before it (vs show several
// moments). Zero when none is dated.
func lastMoment(vs []GroupView) (last time.Time, several bool) {
	for _, v := range vs {
		if v.Time != nil && v.Time.After(last) {
			last = *v.Time
		}
	}
	for _, v := range vs {
		if v.Time != nil && v.Time.Before(last.Add(-momentSpan)) {
			several = true
		}
	}
	return last, several
}

// atLast says whether v was captured at the last moment (within
// momentSpan of last).
func atLast(v GroupView, last time.Time) bool {
	return v.Time != nil && !v.Time.Before(last.Add(-momentSpan))
}

// unknown is how the tables print a figure no source gives.
const unknown = "unknown"

// mergeViews gives each server's views of a group as one, in the order
// the servers first appear.
func mergeViews(n namer, vs []GroupView) []mergedView {
	var order []string
	by := map[string][]GroupView{}
	for _, v := range vs {
		if _, ok := by[v.Server]; !ok {
			order = append(order, v.Server)
		}
		by[v.Server] = append(by[v.Server], v)
	}
	var out []mergedView
	for _, server := range order {
		views := by[server]
		m := mergedView{Server: server}
		last, several := lastMoment(views)
		if !last.IsZero() {
			m.Captured = FormatTime(&last)
		}
		// A source is named with its capture time where this server's
		// views come from several moments (a capture before the incident
		// and one after): each value is then said with when it held.
		source := func(v GroupView) string {
			if several && v.Time != nil {
				return v.Source + " " + v.Time.UTC().Format("2006-01-02T15:04:05Z")
			}
			return v.Source
		}
		pick := func(val func(GroupView) string) string {
			type seen struct {
				v    string
				srcs []string
			}
			var vals []seen
			for _, v := range views {
				s := val(v)
				if s == "" {
					continue
				}
				k := slices.IndexFunc(vals, func(x seen) bool { return x.v == s })
				if k < 0 {
					vals = append(vals, seen{v: s})
					k = len(vals) - 1
				}
				if src := source(v); !slices.Contains(vals[k].srcs, src) {
					vals[k].srcs = append(vals[k].srcs, src)
				}
			}
			switch len(vals) {
			case 0:
				return ""
			case 1:
				return vals[0].v
			}
			parts := make([]string, len(vals))
			for i, x := range vals {
				parts[i] = fmt.Sprintf("%s (%s)", x.v, strings.Join(x.srcs, ", "))
			}
			return strings.Join(parts, "; ")
		}
		count := func(f func(GroupView) uint64) func(GroupView) string {
			return func(v GroupView) string {
				if f(v) == 0 {
					return ""
				}
				return num(f(v))
			}
		}
		for _, v := range views {
			if v.Leader != "" && atLast(v, last) {
				m.leader = v.Leader // the leader of the last moment
			}
		}
		for _, v := range views {
			if v.Leader != "" && m.leader == "" {
				m.leader = v.Leader
			}
			if !slices.Contains(m.Sources, v.Source) {
				m.Sources = append(m.Sources, v.Source)
			}
		}
		m.Size = orUnknown(pick(count(func(v GroupView) uint64 { return uint64(v.ClusterSize) })))
		m.Quorum = orUnknown(pick(count(func(v GroupView) uint64 { return uint64(v.Quorum) })))
		m.Term = orUnknown(pick(count(func(v GroupView) uint64 { return v.Term })))
		m.Leader = pick(func(v GroupView) string { return n.label(v.Leader) })
		m.VotedFor = pick(func(v GroupView) string { return n.label(v.VotedFor) })
		m.Peers = pick(func(v GroupView) string { return n.labels(v.Peers, m.leader) })
		out = append(out, m)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}
