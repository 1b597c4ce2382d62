package peers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// renameCost is what one group lost to renamed peers.
type renameCost struct {
	group           *model.Group
	size, quorum    int
	peers, live     []string
	leader, leader0 bool // a view names a leader; a view says there is none
}

// renameCosts: what each group that lists the old id costs, in the renamed
// server's own view of the group where it has one that lists the id (the
// servers' sizes differ while the group changes: rename-v2.11.17's leader
// ran at size 5, its followers at 3, each as its /raftz said), else in
// every view that lists it.
func renameCosts(m *model.Model, f *facts.Facts, id string, former map[string]model.Rename) []renameCost {
	var out []renameCost
	self := former[id].New
	for _, g := range m.Groups {
		c := renameCost{group: g}
		own := false
		for _, v := range g.Views {
			own = own || m.Name(v.Server) == self && containsString(facts.MemberPeers(m, v, former), id)
		}
		for _, v := range g.Views {
			peers := facts.MemberPeers(m, v, former)
			if !containsString(peers, id) || own && m.Name(v.Server) != self {
				continue
			}
			if v.ClusterSize > c.size {
				c.size = v.ClusterSize
			}
			for _, p := range peers {
				c.peers = model.AppendUnique(c.peers, p)
			}
			if v.LeaderKnown {
				c.leader = c.leader || v.Leader != ""
				c.leader0 = c.leader0 || v.Leader == ""
			}
		}
		if c.size == 0 {
			continue
		}
		c.quorum = natsfmt.Quorum(c.size)
		for _, p := range c.peers {
			if _, gone := former[p]; !gone && f.Exists(p) {
				c.live = append(c.live, p)
			}
		}
		sort.Strings(c.peers)
		out = append(out, c)
	}
	return out
}

// groupLabel names a group with its asset when known: "S-R3F-x (APP > ORDERS)".
func groupLabel(g *model.Group) string {
	if g.Asset == "" {
		return g.Name
	}
	return g.Name + " (" + g.Account + " > " + g.Asset + ")"
}

// onlyFormer says whether every id of a non-empty list is a renamed
// server's old id.
func onlyFormer(ids []string, former map[string]model.Rename) bool {
	for _, id := range ids {
		if _, ok := former[id]; !ok {
			return false
		}
	}
	return len(ids) > 0
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// removedByRename lists the streams a renamed server's log shows it deleting
// after its first boot under the new name (DBG `JetStream removing stream`),
// each with the size it restored just before, as evidence lines.
func removedByRename(m *model.Model, r model.Rename) (lines []string, streams []string) {
	restored := map[model.AssetKey]model.TimelineEvent{}
	for _, e := range m.Timeline {
		if m.Name(e.Server) != r.New || e.File != r.File || e.Line < r.Line {
			continue
		}
		k := model.AssetKey{Account: e.Account, Stream: e.Stream}
		switch e.Kind {
		case "restored-stream":
			restored[k] = e
		case "stream-removed":
			s := e.Account + " > " + e.Stream
			if containsString(streams, s) {
				continue
			}
			streams = append(streams, s)
			line := fmt.Sprintf("%s deleted its copy of %s at %s (%s line %d: %q)", r.New, s,
				e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.File, e.Line, strings.TrimSpace(e.Text))
			if b, ok := restored[k]; ok {
				line += fmt.Sprintf(", right after restoring it (line %d: %q)", b.Line, strings.TrimSpace(b.Text))
			}
			lines = append(lines, line+": it is no member of the stream's group, which lists its old id")
		}
	}
	return lines, streams
}

var CheckServerRenamed = check.Check{
	Code:        string(report.CodeServerRenamed),
	Severity:    report.Critical,
	Description: "a raft peer set lists the peer id of a name a server of the bundle ran under before (earlier log banner) and no server runs under now: one server with two names, which its groups count as a peer that never answers",
	Requires:    []facts.Fact{facts.FactFormerIDs},
	Run: func(p *check.Pass) []report.Finding {
		m, former := p.Model, p.Facts.FormerIDs()
		var out []report.Finding
		for _, id := range model.SortedKeys(former) {
			r := former[id]
			costs := renameCosts(m, p.Facts, id, former)
			if len(costs) == 0 {
				continue // no group remembers the old identity
			}
			srv := m.Server(r.New)
			f := report.Finding{Server: r.New, Peer: id,
				Evidence: []string{fmt.Sprintf("%s: booted as %q (last at line %d) and as %q from line %d on, same store and log: one server; %s is getHash(%q), its id now is %s",
					r.File, r.Old, r.OldLine, r.New, r.Line, id, r.Old, srv.PeerID)}}
			var lost []string
			for _, c := range costs {
				what := groupLabel(c.group)
				state := "a leader is named"
				if !c.leader {
					state = "no leader"
				}
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s: cluster_size %d, quorum %d, peers %s; %d of them a live server answers to; %s",
					what, c.size, c.quorum, strings.Join(c.peers, " "), len(c.live), state))
				if len(c.live) < c.quorum {
					lost = append(lost, c.group.Name)
				}
				if c.group.Kind == natsfmt.GroupMeta {
					f.Group, f.ClusterSize, f.Quorum, f.Reachable = c.group.Name, c.size, c.quorum, report.Ptr(len(c.live))
					for _, p := range c.peers {
						if _, gone := former[p]; gone {
							f.Missing = append(f.Missing, p)
						}
					}
				}
			}
			if f.Group == "" {
				f.Group = costs[0].group.Name
			}
			removed, streams := removedByRename(m, r)
			f.Evidence = append(f.Evidence, removed...)
			f.Message = fmt.Sprintf("server %s is %s renamed (%s -> %s): %d raft group(s) still list its old id %s, which no server answers to",
				r.New, r.Old, r.Old, r.New, len(costs), id)
			if len(lost) > 0 {
				f.Message += fmt.Sprintf("; %d of them (%s) cannot reach quorum", len(lost), strings.Join(lost, ", "))
			}
			if len(streams) > 0 {
				f.Message += fmt.Sprintf("; at its first start as %s it deleted its copies of %s", r.New, strings.Join(streams, ", "))
			}
			renameRemedy(m, former).Apply(&f)
			out = append(out, f)
		}
		return out
	},
}

// renameRemedy is the way out that the rename fixtures proved on real
// servers (testdata/bundles/rename-v2.15.2, rename-v2.12.1 and
// rename-v2.12.15, want.json expect.remedies), by what the renamed servers
// did to the meta group and by version.
func renameRemedy(m *model.Model, former map[string]model.Rename) remedy.Prescription {
	var renames []model.Rename
	for _, id := range model.SortedKeys(former) {
		renames = append(renames, former[id])
	}
	sort.Slice(renames, func(i, j int) bool { return renames[i].Old < renames[j].Old })
	var olds, news, deleted []string
	var stops []remedy.Args
	for _, r := range renames {
		olds, news = append(olds, r.Old), append(news, r.New)
		_, s := removedByRename(m, r)
		for _, x := range s {
			deleted = model.AppendUnique(deleted, x+" on "+r.New)
		}
		stops = append(stops, remedy.Args{"old": r.Old, "peer": model.PeerID(r.Old)})
	}
	v := releases.MinVersion(m)
	a := remedy.Args{"version": model.DashIfEmpty(v), "olds": strings.Join(olds, ", "), "news": strings.Join(news, ", "), "stops": stops,
		"renamed": len(olds), "beside_size": 2 * len(olds), "beside_quorum": len(olds) + 1,
		// $JS.API.META.RESCUE exists from 2.15 (v2.15.3 jetstream_api.go; not
		// in 2.11.17, 2.12.15, 2.14.10 source; README row rename: 2.11.17
		// answered it "JetStream not enabled for account", 10039).
		"rescue": releases.VersionAtLeast(v, 2, 15)}
	// What the rename deleted, where a log shows it; nothing said where
	// none does (the cost step's {{deleted}} is then empty, not left).
	a["deleted"] = ""
	if len(deleted) > 0 {
		a["deleted"] = fmt.Sprintf(" (here: %s)", strings.Join(deleted, "; "))
	}
	// Which way out works follows what the renamed servers did to the
	// meta group (testdata/bundles/rename-*, want.json expect.remedies):
	// 2.12.1 added their new ids (size 6), so reverted servers are 3 of 6
	// and only the servers beside work; 2.12.15 and 2.15.2 did not (size
	// 3): reverting works on both, the servers beside only on 2.15.2
	// (2.12.15 and 2.14.10 ended at 2 peers with one renamed server outside
	// the group; rename-v2.14.10 was run and not committed). README
	// versions table, row rename: 2.11.17 grew the group as 2.12.1 did
	// (size 5 on its leader; old names beside recovered it, reverting did
	// not), so metaGrewByRename picks its remedy before any version test.
	// The 2.15 boundary: 2.15.2 beside-or-revert, 2.12.15 and 2.14.10
	// revert; 2.13 was never released, so no bundle runs it.
	switch {
	case metaGrewByRename(m, former):
		return remedy.Prescribe(remedy.RenameOldNamesBeside, a)
	case releases.VersionAtLeast(v, 2, 15):
		return remedy.Prescribe(remedy.RenameBesideOrRevert, a)
	}
	return remedy.Prescribe(remedy.RenameRevert, a)
}

// metaGrewByRename says whether some view of the meta group counts a
// renamed server's new id as a member (2.12.1 adds it: size 6 of 3
// servers), rather than only listing the answering node beside the old ids
// (/raftz on 2.12.15 and 2.15.2: 4 peers, size 3).
func metaGrewByRename(m *model.Model, former map[string]model.Rename) bool {
	for _, g := range m.Groups {
		if g.Kind != natsfmt.GroupMeta {
			continue
		}
		for _, v := range g.Views {
			peers := facts.MemberPeers(m, v, former)
			for _, r := range former {
				if containsString(peers, model.PeerID(r.New)) {
					return true
				}
			}
		}
	}
	return false
}
