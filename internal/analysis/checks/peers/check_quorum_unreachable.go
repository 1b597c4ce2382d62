package peers

import (
	"fmt"
	"slices"
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

var CheckQuorumUnreachable = check.Check{
	Code:        string(report.CodeQuorumUnreachable),
	Severity:    report.Critical,
	Description: "a group's cluster_size needs a quorum larger than the peers that exist, whatever the cause (lost, departed or renamed servers, corrupt ids)",
	Skip:        noGroupViewsOrLoneServer,
	Requires:    []facts.Fact{facts.FactFormerIDs, facts.FactDeparted},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		former := p.Facts.FormerIDs()
		damaged := facts.SizeDamaged(m)
		for _, g := range m.Groups {
			// A renamed server's own new id beside the old ids it is no
			// member under (memberPeers) is left out, so that every view
			// of the same peer set is one finding.
			members := make([]model.View, len(g.Views))
			for i, v := range g.Views {
				members[i] = v
				members[i].Peers = facts.MemberPeers(m, v, former)
			}
			done := map[string]bool{}
			first := len(out)
			for _, v := range members {
				// A view without its peer list (a leaderless /jsz) cannot
				// tell which peers exist; a damaged size is store-corrupt's
				// (peer_size.go), the group runs with its peers'.
				if v.ClusterSize == 0 || len(v.Peers) == 0 || done[facts.ViewKey(v)] || v.Source == "peers.idx" && damaged[v.File] {
					continue
				}
				done[facts.ViewKey(v)] = true
				quorum, reachable, missing := quorumOf(p.Facts, v.ClusterSize, v.Peers)
				if reachable >= quorum {
					continue
				}
				// What each server holding this peer set from peers.idx
				// starts with: a server whose version starts from its
				// snapshot's peers, which reach quorum, is not stuck with
				// it; a live view (raftz, jsz) is what runs now.
				var starts []string
				stuck := false
				for _, w := range members {
					if facts.ViewKey(w) != facts.ViewKey(v) {
						continue
					}
					st := startNote(p, w)
					if st.text != "" {
						starts = append(starts, st.text)
					}
					stuck = stuck || w.Source != "peers.idx" || !st.governs || !st.reachable
				}
				if !stuck {
					continue // every holder starts from its snapshot's peers, which reach quorum
				}
				var holders []string
				for _, w := range members {
					if facts.ViewKey(w) == facts.ViewKey(v) {
						holders = model.AppendUnique(holders, m.Name(w.Server)+" ("+w.Source+")")
					}
				}
				sort.Strings(missing)
				f := report.Finding{
					Group: g.Name, ClusterSize: v.ClusterSize, Quorum: quorum, Reachable: report.Ptr(reachable), Missing: missing,
					Message: fmt.Sprintf("raft group %s%s expects %d peers and needs %d for quorum, but only %d of its peers exist: no leader can be elected", g.Name, groupAsset(g), v.ClusterSize, quorum, reachable),
					Evidence: []string{
						"view held by " + strings.Join(holders, ", "),
						"peers that exist: " + noneIfEmpty(strings.Join(namedIDs(m, existing(p.Facts, v.Peers)), " ")),
						"missing peers: " + strings.Join(missingPeers(m, p.Facts, missing), "; "),
					},
				}
				if g.Kind != natsfmt.GroupMeta && g.Asset != "" {
					f.Account = g.Account
					f.Stream, f.Consumer, _ = strings.Cut(g.Asset, " > ")
				}
				QuorumRemedy(m, g, v.ClusterSize, reachable, missing).Apply(&f)
				if renamed := renamedOf(missing, former); len(renamed) > 0 {
					f.Evidence = append(f.Evidence, fmt.Sprintf("of the missing peers, %s are renamed servers' old ids: those servers run under new names (server-renamed)", strings.Join(renamed, ", ")))
					if onlyFormer(missing, former) {
						f.Message += "; every missing peer is a renamed server's old id (server-renamed)"
						remedy.Prescribe(remedy.QuorumRenamedOldIDs, remedy.Args{}).Apply(&f)
					}
				}
				f.Evidence = append(f.Evidence, starts...)
				f.Evidence = append(f.Evidence, implausibleTerms(m, g)...)
				out = append(out, f)
			}
			out = oneFindingPerGroup(out, first)
		}
		return out
	},
}

// oneFindingPerGroup makes the findings from out[first:], one group's
// views that cannot reach quorum, one finding: the view of the largest
// cluster size (the quorum an election needs at most) with the others'
// figures as evidence. Servers of one group in the middle of a peer change
// hold different views of it (seen on 2.11.17's rename: the leader at 5,
// the followers at 3); the group is still one group without a leader.
func oneFindingPerGroup(out []report.Finding, first int) []report.Finding {
	if len(out)-first < 2 {
		return out
	}
	group := out[first:]
	best := 0
	for i, f := range group {
		if f.ClusterSize > group[best].ClusterSize {
			best = i
		}
	}
	f := group[best]
	f.Evidence = slices.Clone(f.Evidence)
	for i, o := range group {
		if i == best {
			continue
		}
		f.Evidence = append(f.Evidence, "another view of the group: "+o.Message)
		for _, e := range o.Evidence {
			f.Evidence = append(f.Evidence, "  "+e)
		}
	}
	return append(out[:first], f)
}

// groupAsset names the stream or consumer a group replicates, as
// " (stream ACC > NAME)", or "" for the meta group or an unknown asset.
func groupAsset(g *model.Group) string {
	if g.Kind == natsfmt.GroupMeta || g.Asset == "" {
		return ""
	}
	kind := g.Kind
	if kind == "" {
		kind = "asset"
	}
	if g.Account != "" {
		return fmt.Sprintf(" (%s %s > %s)", kind, g.Account, g.Asset)
	}
	return fmt.Sprintf(" (%s %s)", kind, g.Asset)
}

// namedIDs are peer ids with the server name the bundle gives each, as
// "name (ID)"; an id no name hashes to stays bare.
func namedIDs(m *model.Model, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id
		// nats-server refuses a server_name with a space from 2.11 on
		// (server.go: "server name cannot contain spaces", read in 2.11.17
		// to 2.15.3; 2.10.22 has no such check). A name with one is taken
		// for a phrase a log printed in a name's place ("Server name
		// unknown at this time (peerID: …)") and left out: the id alone
		// is still right.
		if n := m.IDs[id]; n != "" && !strings.Contains(n, " ") {
			out[i] = n + " (" + id + ")"
		} else if s := m.ServerByID(id); s != nil && s.Name != "" && !strings.Contains(s.Name, " ") {
			out[i] = s.Name + " (" + id + ")"
		}
	}
	return out
}

// missingPeers says of each missing peer id what the bundle knows of it: a
// server that departed, or an id no server of the bundle holds.
func missingPeers(m *model.Model, f *facts.Facts, ids []string) []string {
	out := namedIDs(m, ids)
	for i, id := range ids {
		switch {
		case f.Departed()[id]:
			out[i] += ", a server that left (nothing in the bundle shows it running)"
		case out[i] == id:
			out[i] += ", an id no server of the bundle holds"
		}
	}
	return out
}

// renamedOf lists the ids of a list that are renamed servers' old ids, as
// "id (old -> new)".
func renamedOf(ids []string, former map[string]model.Rename) []string {
	var out []string
	for _, id := range ids {
		if r, ok := former[id]; ok {
			out = append(out, fmt.Sprintf("%s (%s -> %s)", id, r.Old, r.New))
		}
	}
	return out
}

// quorumOf is the quorum a group of size needs and how many of peers exist
// (present or live, not departed), with the others.
func quorumOf(f *facts.Facts, size int, peers []string) (quorum, reachable int, missing []string) {
	quorum = natsfmt.Quorum(size)
	for _, id := range peers {
		if f.Exists(id) && !f.Departed()[id] {
			reachable++
		} else {
			missing = append(missing, id)
		}
	}
	return quorum, reachable, missing
}

// startPeers is what a peers.idx view's server does at its next start when
// its newest snapshot holds another peer state (View.StartPeers).
type startPeers struct {
	governs   bool // the server's version starts from the snapshot's peers
	reachable bool // and those reach quorum
	text      string
}

func startNote(p *check.Pass, v model.View) startPeers {
	if len(v.StartPeers) == 0 {
		return startPeers{}
	}
	version := ""
	if s := p.Model.ServerOf(v.Server); s != nil {
		version = s.Version
	}
	q, r, _ := quorumOf(p.Facts, v.StartSize, v.StartPeers)
	st := startPeers{reachable: r >= q}
	snap := fmt.Sprintf("its snapshot %s holds another peer state (cluster_size %d, peers %s), %d of them existing (quorum %d)",
		v.StartFile, v.StartSize, strings.Join(v.StartPeers, " "), r, q)
	yes, known := releases.StartsFromSnapshotPeers(version)
	switch {
	case yes:
		st.governs = true
		st.text = fmt.Sprintf("%s runs %s, which starts the group from %s, not from peers.idx", p.Model.Name(v.Server), version, snap)
	case known:
		st.text = fmt.Sprintf("%s runs %s, which starts the group from peers.idx; %s, which 2.12.5+ and 2.14+ would start from instead", p.Model.Name(v.Server), version, snap)
	default:
		st.text = fmt.Sprintf("%s's version is not known: 2.10, 2.11 and 2.12.0-2.12.4 start the group from peers.idx (this verdict); 2.12.5+ and 2.14+ start from the snapshot: %s", p.Model.Name(v.Server), snap)
	}
	return st
}

func existing(f *facts.Facts, peers []string) []string {
	var out []string
	for _, p := range peers {
		if f.Exists(p) && !f.Departed()[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// tempServersNeeded is how many new servers bring reachable peers to quorum
// (each also grows the cluster size by one).
func tempServersNeeded(size, reachable int) int {
	for k := 0; k < 64; k++ {
		if reachable+k >= natsfmt.Quorum(size+k) {
			return k
		}
	}
	return 64
}

// quorumRemedy is the way out of a group that cannot elect a leader
// (remedies.yaml: stream-quorum-peer-remove, meta-quorum-rescue from 2.15,
// meta-quorum-temporary-servers before).
func QuorumRemedy(m *model.Model, g *model.Group, size, reachable int, missing []string) remedy.Prescription {
	if g.Kind != natsfmt.GroupMeta {
		// A consumer group's asset is "STREAM > CONSUMER": the stream peer
		// removal takes the peer out of the stream and its consumers.
		stream, _, _ := strings.Cut(g.Asset, " > ")
		unknown := stream == ""
		if unknown {
			stream = "STREAM"
		}
		var removals, unnamed []string
		for _, p := range missing {
			// The request takes a server name on every version.
			name := m.IDs[p]
			if name == "" {
				name = p
				unnamed = append(unnamed, p)
			}
			removals = append(removals, remedy.StreamPeerRemoveCommand(stream, name))
		}
		return remedy.Prescribe(remedy.StreamQuorumPeerRemove, remedy.Args{"group": g.Name, "stream": stream, "replicas": size, "missing": strings.Join(missing, " "),
			"removals": removals, "unnamed": strings.Join(unnamed, " "), "streamunknown": unknown,
			"consumergroup": g.Kind == natsfmt.GroupConsumer})
	}
	v := releases.MinVersion(m)
	a := remedy.Args{"version": v, "missing": missing, "readd": remedy.ReaddNote(m), "quorum": natsfmt.Quorum(reachable)}
	// Where the rescue's presence cannot be told before 2.15 (2.13, past a
	// line's newest release read), the temporary servers below are the way
	// that needs no such API.
	if yes, known := releases.HasMetaRescue(v); yes {
		a["rescue"] = "nats-server " + v + " supports a quorum rescue."
		if !known {
			a["rescue"] = "nats-server 2.15.2 and 2.15.3 support a quorum rescue (source and runs); whether " + v +
				" does cannot be told: if it answers that there is no such API (10039) or not at all, add temporary JetStream servers with new server_names instead, until the live peers reach a quorum."
		}
		return remedy.Prescribe(remedy.MetaQuorumRescue, a)
	}
	// A server started under a missing peer's name has its peer id
	// (server_name hashes to it); with every peer of the group answering,
	// votes from empty logs elect a leader (raft.go runAsCandidate, from
	// 2.12.1: len(votes)+len(emptyVotes) == csz). Where new servers' votes
	// do not count, that is the way out for lost servers of known names.
	members, known := releases.CountsMemberVotesOnly(v)
	var names []string
	for _, p := range missing {
		if n := m.IDs[p]; n != "" && natsfmt.PeerID(n) == p {
			names = append(names, n)
		}
	}
	if members && len(names) == len(missing) {
		return remedy.Prescribe(remedy.MetaQuorumSameNames, remedy.Args{"version": v, "names": strings.Join(names, ", "), "count": len(names),
			"size": size})
	}
	a["votesunknown"] = !known
	k := tempServersNeeded(size, reachable)
	a["temporary"], a["live"], a["size"] = k, reachable+k, size+k
	// go run . remedies (testdata/remedies/v2.10.27-incident-phantom-peers*.json):
	// 2.10.27 elected a leader with a temporary server in 2 of 7 runs, both
	// with it started together with the live servers; 2.11.17 with it added
	// to the group already stuck.
	a["tempstogether"] = strings.HasPrefix(v, "2.10.")
	return remedy.Prescribe(remedy.MetaQuorumTemporaryServers, a)
}

// maxPlausibleTerm bounds a real raft term: every term is an election, and
// even one election a millisecond for a century stays below 2^42.
const maxPlausibleTerm = 1 << 42

// implausibleTerms lists views whose term no run of elections can reach:
// evidence of the same corruption (flipped high bits) as a mangled peer id.
func implausibleTerms(m *model.Model, g *model.Group) []string {
	var out []string
	for _, v := range g.Views {
		if v.Term > maxPlausibleTerm {
			out = model.AppendUnique(out, fmt.Sprintf("term %d (%#x) in %s's %s is implausible for a count of elections: isolated high bits set, as a bit flip leaves them", v.Term, v.Term, m.Name(v.Server), v.Source))
		}
	}
	return out
}

// noneIfEmpty is s, or "none" where a list is empty.
func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
