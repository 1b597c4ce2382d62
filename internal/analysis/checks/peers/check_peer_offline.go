package peers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// groupMembership is one group a departed server still sits in.
type groupMembership struct {
	group        *model.Group
	size, quorum int
	live         int
	peers        []string
}

// currentViews are the views of a group from servers that answered
// captures (their own raft state as it runs), else every view.
func currentViews(m *model.Model, g *model.Group) []model.View {
	var out []model.View
	for _, v := range g.Views {
		if s := m.ServerOf(v.Server); s != nil && model.AnsweredCapture(s) && len(v.Peers) > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		for _, v := range g.Views {
			if len(v.Peers) > 0 {
				out = append(out, v)
			}
		}
	}
	return out
}

func memberships(m *model.Model, f *facts.Facts, id string, departed map[string]bool) []groupMembership {
	var out []groupMembership
	for _, g := range m.Groups {
		var gm *groupMembership
		for _, v := range currentViews(m, g) {
			if !containsString(v.Peers, id) {
				continue
			}
			if gm == nil {
				gm = &groupMembership{group: g}
			}
			gm.size = max(gm.size, v.ClusterSize)
			for _, p := range v.Peers {
				gm.peers = model.AppendUnique(gm.peers, p)
			}
		}
		if gm == nil || gm.size == 0 {
			continue
		}
		gm.quorum = natsfmt.Quorum(gm.size)
		for _, p := range gm.peers {
			if f.Exists(p) && !departed[p] {
				gm.live++
			}
		}
		sort.Strings(gm.peers)
		out = append(out, *gm)
	}
	return out
}

var CheckPeerOffline = check.Check{
	Code:        string(report.CodePeerOffline),
	Severity:    report.Warning,
	Description: "a server that is known by name but answered no capture, that a group leader has not heard from and whose own log does not run on to the captures, is still a peer of the meta, stream or consumer groups (a scale-down or a lost server without peer-remove); the failures each group can still survive",
	Requires:    []facts.Fact{facts.FactDeparted},
	Run: func(p *check.Pass) []report.Finding {
		m, departed := p.Model, p.Facts.Departed()
		ids := model.SortedKeys(departed)
		var out []report.Finding
		for _, id := range ids {
			ms := memberships(m, p.Facts, id, departed)
			if len(ms) == 0 {
				continue
			}
			name := m.IDs[id]
			f := report.Finding{Server: name, Peer: id, Servers: []string{name}}
			var stalled []string
			metaStalled := false
			for _, gm := range ms {
				what := groupLabel(gm.group)
				spare := gm.live - gm.quorum
				line := fmt.Sprintf("%s: cluster_size %d, quorum %d, %d live peer(s) of %s: ", what, gm.size, gm.quorum, gm.live, strings.Join(gm.peers, " "))
				if spare < 0 {
					line += "below quorum, stalled (see quorum-unreachable)"
					stalled = append(stalled, what)
					metaStalled = metaStalled || gm.group.Kind == natsfmt.GroupMeta
				} else {
					line += fmt.Sprintf("survives %d more failure(s)", spare)
				}
				f.Evidence = append(f.Evidence, line)
				if gm.group.Kind == natsfmt.GroupMeta {
					f.Group, f.ClusterSize, f.Quorum, f.Reachable = gm.group.Name, gm.size, gm.quorum, report.Ptr(gm.live)
				}
			}
			if f.Group == "" {
				f.Group = ms[0].group.Name
			}
			if s := m.ServerByID(id); s != nil && s.StoreDir != "" {
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s's store is in the bundle (%s) but %s answered no capture and the live servers have not heard from it", name, s.StoreDir, name))
			}
			f.Message = fmt.Sprintf("server %s (%s) is gone but still a peer of %d raft group(s)", name, id, len(ms))
			if len(stalled) > 0 {
				f.Message += fmt.Sprintf("; %s kept less than a quorum of live peers", strings.Join(stalled, ", "))
			}
			peerOfflineRemedy(m, ids, metaStalled).Apply(&f)
			out = append(out, f)
		}
		return out
	},
}

// peerOfflineRemedy is the peer-remove sequence the scale-down fixture
// proved (testdata/bundles/scaledown-v2.12.1, expect.remedy): one server at
// a time, the next once the meta group has shrunk (remedies.yaml:
// departed-server-remove). metaStalled: the meta group has less than a
// quorum of live peers, so no removal can be applied before it is rescued.
func peerOfflineRemedy(m *model.Model, ids []string, metaStalled bool) remedy.Prescription {
	var removals []remedy.Args
	for _, id := range ids {
		removals = append(removals, remedy.Args{"peer": id, "name": m.IDs[id]})
	}
	return remedy.Prescribe(remedy.DepartedServerRemove, remedy.Args{"removals": removals, "readd": remedy.ReaddNote(m), "metastalled": metaStalled})
}
