package report

import (
	"fmt"
	"slices"
	"strings"
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
	leader                                      string // the leader, as the views name it
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
				if !slices.Contains(vals[k].srcs, v.Source) {
					vals[k].srcs = append(vals[k].srcs, v.Source)
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
