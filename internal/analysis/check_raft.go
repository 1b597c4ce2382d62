package analysis

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// nearBitsSetting is how many flipped bits still make an unknown id a
// corrupt copy of a known one. Two unrelated ids differ in about 24 of their
// 64 bits, so 3 leaves a wide margin.
var nearBitsSetting = Setting{Key: "max_bits", Default: 3, Unit: "bits",
	Description: "an unknown peer id this many bits or fewer from a known server's id is a corrupted copy of it"}

// maxNearBits is the peer-id-corrupt threshold as this pass sets it.
func maxNearBits(p *Pass) int { return int(p.SettingOf("peer-id-corrupt", nearBitsSetting.Key)) }

// noGroupViews skips the raft checks on a bundle with no view of any group.
func noGroupViews(p *Pass) string {
	for _, g := range p.Model.Groups {
		if len(g.Views) > 0 {
			return ""
		}
	}
	return "no raft group is seen in the bundle (no peers.idx, raftz, jsz or varz view)"
}

// peerSighting is every place one peer id of one group was seen.
type peerSighting struct {
	group   string
	peer    string
	servers []string // servers whose view lists it
	sources []string
	// file and offset: the first peers.idx or tav.idx that holds it.
	server, file string
	offset       int64
}

// unknownPeers lists, per group, the peer ids that map to no known server.
func unknownPeers(m *Model) []peerSighting {
	var out []peerSighting
	for _, g := range m.Groups {
		seen := map[string]*peerSighting{}
		var order []string
		sight := func(v View, p, source, file string, off int64) {
			if _, ok := m.IDs[p]; ok {
				return
			}
			s := seen[p]
			if s == nil {
				s = &peerSighting{group: g.Name, peer: p}
				seen[p] = s
				order = append(order, p)
			}
			if s.file == "" && file != "" {
				s.server, s.file, s.offset = v.Server, file, off
			}
			s.servers = appendUnique(s.servers, v.Server)
			s.sources = appendUnique(s.sources, v.Server+" "+source)
		}
		for _, v := range g.Views {
			for _, p := range v.Peers {
				sight(v, p, v.Source, v.File, v.PeerOffsets[p])
			}
			// The vote tav.idx keeps is a peer id too: a flipped or zeroed
			// one is no more a server's than one in peers.idx.
			if v.VoteFile != "" && v.VotedFor != "" {
				sight(v, v.VotedFor, "tav.idx vote", v.VoteFile, 8)
			}
		}
		sort.Strings(order)
		for _, p := range order {
			out = append(out, *seen[p])
		}
	}
	return out
}

// nearestKnown returns the known id closest to id, its server and distance.
func nearestKnown(p *Pass, id string) (peer, server string, bits int, ok bool) {
	peer, bits, ok = natsfmt.NearestPeer(id, p.Facts.KnownIDs)
	if ok {
		server = p.Model.IDs[peer]
	}
	return
}

var checkPeerIDCorrupt = Check{
	Code:        "peer-id-corrupt",
	Severity:    report.Critical,
	Description: "a raft peer set holds an id no server can have, or a few bit flips from a known server's id",
	Settings:    []Setting{nearBitsSetting},
	Skip:        noGroupViews,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, s := range p.Facts.UnknownPeers {
			near, srv, bits, ok := nearestKnown(p, s.peer)
			valid := natsfmt.ValidPeerID(s.peer)
			if valid && (!ok || bits > maxNearBits(p)) {
				continue // peer-unknown's business
			}
			f := report.Finding{
				Group: s.group, Peer: s.peer, Server: s.server, File: s.file,
				Message: fmt.Sprintf("raft group %s lists peer %q, which no server can have", s.group, s.peer),
				Evidence: append([]string{fmt.Sprintf("listed by %s", strings.Join(s.sources, ", "))},
					peerIDEvidence(s.peer, valid)...),
			}
			if ok && bits <= maxNearBits(p)*2 {
				f.LikelyOrigin = &report.Origin{Peer: near, Server: srv, Bits: bits}
				f.Message = fmt.Sprintf("raft group %s lists peer %q, %d bit(s) away from %s (%s): a corrupted copy of that server's id", s.group, s.peer, bits, near, srv)
			}
			f.Remedy = peerRemoveRemedy(m, s.group, []string{s.peer})
			if s.file != "" {
				f.Offset = report.Ptr(s.offset)
			}
			if onlyVote(s) {
				// A vote is no membership: the server that kept it votes
				// again next term; tav.idx damage is a warning (store-corrupt).
				f.Severity = report.Warning
				f.Message = strings.Replace(f.Message, "lists peer", "holds a vote (tav.idx) for peer", 1)
			}
			out = append(out, f)
		}
		return out
	},
}

// onlyVote says whether s was seen in tav.idx votes only.
func onlyVote(s peerSighting) bool {
	for _, src := range s.sources {
		if !strings.HasSuffix(src, " tav.idx vote") {
			return false
		}
	}
	return true
}

func peerIDEvidence(id string, valid bool) []string {
	if valid {
		return nil
	}
	return []string{fmt.Sprintf("%q is not 8 characters of 0-9A-Za-z: nats-server never generates such an id", id)}
}

var checkPeerUnknown = Check{
	Code:        "peer-unknown",
	Severity:    report.Warning,
	Description: "a peer id maps to no server found in the bundle and is not a near miss",
	Skip:        noGroupViews,
	Run: func(p *Pass) []report.Finding {
		var out []report.Finding
		for _, s := range p.Facts.UnknownPeers {
			_, _, bits, ok := nearestKnown(p, s.peer)
			if !natsfmt.ValidPeerID(s.peer) || (ok && bits <= maxNearBits(p)) {
				continue
			}
			out = append(out, report.Finding{
				Group: s.group, Peer: s.peer,
				Message:  fmt.Sprintf("raft group %s lists peer %s, which is no server in this bundle (a removed or renamed server, or one whose files are missing)", s.group, s.peer),
				Evidence: []string{"listed by " + strings.Join(s.sources, ", ")},
				Remedy:   "if the server still exists, add its store, log or captures to the bundle; if it is gone for good, remove it. Removing a peer drops its replicas from every group (they are placed anew and copied from the leaders) and a returning server with that id loses its data: if its disk may still exist, copy its store out first. " + peerRemoveCommand(s.peer),
			})
		}
		return out
	},
}

// viewKey groups identical views of a group.
func viewKey(v View) string {
	p := append([]string(nil), v.Peers...)
	sort.Strings(p)
	return fmt.Sprintf("%d|%s", v.ClusterSize, strings.Join(p, ","))
}

var checkQuorumUnreachable = Check{
	Code:        "quorum-unreachable",
	Severity:    report.Critical,
	Description: "a group's cluster_size needs a quorum larger than the peers that exist",
	Skip:        noGroupViews,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		former, departed := p.Facts.Former, p.Facts.Departed
		for _, g := range m.Groups {
			done := map[string]bool{}
			for _, v := range g.Views {
				// A view without its peer list (a leaderless /jsz) cannot
				// tell which peers exist.
				if v.ClusterSize == 0 || len(v.Peers) == 0 || done[viewKey(v)] {
					continue
				}
				done[viewKey(v)] = true
				quorum := natsfmt.Quorum(v.ClusterSize)
				var missing []string
				reachable := 0
				for _, id := range v.Peers {
					if p.Facts.Exists(id) && !departed[id] {
						reachable++
					} else {
						missing = append(missing, id)
					}
				}
				if reachable >= quorum || onlyFormer(missing, former) { // server-renamed's
					continue
				}
				var holders []string
				for _, w := range g.Views {
					if viewKey(w) == viewKey(v) {
						holders = appendUnique(holders, w.Server+" ("+w.Source+")")
					}
				}
				sort.Strings(missing)
				out = append(out, report.Finding{
					Group: g.Name, ClusterSize: v.ClusterSize, Quorum: quorum, Reachable: report.Ptr(reachable), Missing: missing,
					Message: fmt.Sprintf("raft group %s expects %d peers and needs %d for quorum, but only %d of its peers exist: no leader can be elected", g.Name, v.ClusterSize, quorum, reachable),
					Evidence: []string{
						"view held by " + strings.Join(holders, ", "),
						fmt.Sprintf("peers that exist: %s", strings.Join(existing(p.Facts, v.Peers), " ")),
						fmt.Sprintf("peers no present or live server holds: %s", strings.Join(missing, " ")),
					},
					Remedy: quorumRemedy(m, g, v.ClusterSize, reachable, missing),
				})
				out[len(out)-1].Evidence = append(out[len(out)-1].Evidence, implausibleTerms(g)...)
			}
		}
		return out
	},
}

func existing(f *Facts, peers []string) []string {
	var out []string
	for _, p := range peers {
		if f.Exists(p) && !f.Departed[p] {
			out = append(out, p+"="+f.ServerByID(p).Name)
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

// quorumRemedy is the way out of a group that cannot elect a leader.
func quorumRemedy(m *Model, g *Group, size, reachable int, missing []string) string {
	if g.Kind != "meta" {
		return fmt.Sprintf("Both ways out delete replicas: peer-remove deletes the removed peer's copy, and scaling to R1 keeps only the leader's copy and deletes the others. First copy every server's folder of this group out and compare the replicas (replica-gap, replica-divergence). Then, once the meta layer has a leader, remove the missing peers from the group (nats stream cluster peer-remove), or scale the asset down to R1 and back up (nats stream edit --replicas 1, then --replicas N); missing: %s", strings.Join(missing, " "))
	}
	var b strings.Builder
	v := minVersion(m)
	switch {
	case versionAtLeast(v, 2, 15):
		fmt.Fprintf(&b, "nats-server %s supports a quorum rescue. It makes the surviving servers' meta state the truth, and removing a peer drops its replicas: back up every server's store first (copy each jetstream folder out). With the system account, on the surviving servers:\n", v)
		fmt.Fprintf(&b, "  nats request '$JS.API.META.RESCUE' '{\"quorum_needed\":%d}'\n", natsfmt.Quorum(reachable))
		b.WriteString("then, once a meta leader is elected, remove each missing peer:\n")
	default:
		k := tempServersNeeded(size, reachable)
		fmt.Fprintf(&b, "1. Back up every server's store. Add %d temporary JetStream server(s) with new server_name(s) to the cluster so that %d live peers reach a quorum of a %d-peer group; a meta leader is then elected.\n", k, reachable+k, size+k)
		b.WriteString("2. With the system account, remove each missing peer:\n")
	}
	for _, p := range missing {
		b.WriteString("  " + peerRemoveCommand(p) + "\n")
	}
	if !versionAtLeast(v, 2, 15) {
		b.WriteString("3. Check `nats server report jetstream`, then stop the temporary server(s) and remove them the same way (nats server cluster peer-remove NAME).\n")
		if versionAtLeast(v, 2, 12) {
			b.WriteString("Note: 2.12 to 2.14 let a removed peer be re-added after 5 minutes if it still talks raft; make sure none of the removed ids belongs to a running server.\n")
		}
	}
	b.WriteString("Before recovery completes, see the orphan-risk findings: streams the recovered meta state does not assign are deleted 30 s later.")
	return b.String()
}

// peerRemoveCommand removes a peer from the meta group by id. natscli reads
// an argument that starts with '@' as a file of arguments, and corrupt ids
// can hold quotes, so the raw API request is given, with the id JSON- and
// shell-quoted ("peer" takes a server name, "peer_id" an id).
func peerRemoveCommand(id string) string {
	if !utf8.ValidString(id) {
		return fmt.Sprintf("# peer id %q holds bytes that are not UTF-8, which no JSON request can carry; remove it from every server's _meta_/peers.idx while all servers are stopped (back up first), or on 2.15+ use the quorum rescue and let the leader's peer state replace it", id)
	}
	body := fmt.Sprintf(`{"peer_id":%s}`, jsonString(id))
	cmd := "nats request '$JS.API.SERVER.REMOVE' " + shellQuote(body)
	if natsfmt.ValidPeerID(id) {
		cmd = fmt.Sprintf("nats server cluster peer-remove -f %s   # or: %s", id, cmd)
	}
	return cmd
}

func peerRemoveRemedy(m *Model, group string, ids []string) string {
	var b strings.Builder
	if group == "_meta_" {
		b.WriteString("With the system account and a meta leader present (see quorum-unreachable if there is none), remove the corrupt id:\n")
	} else {
		b.WriteString("Scaling the asset to R1 keeps only the leader's copy and deletes the others: copy every server's folder of this group out first. Remove the corrupt id from the meta group and let the asset's group be rebuilt (scale the asset to R1 and back if it stays stuck):\n")
	}
	for _, id := range ids {
		b.WriteString("  " + peerRemoveCommand(id) + "\n")
	}
	b.WriteString("Then find how the id was corrupted (disk, memory, or a network path that rewrites packets) before it happens again.")
	return b.String()
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// maxPlausibleTerm bounds a real raft term: every term is an election, and
// even one election a millisecond for a century stays below 2^42.
const maxPlausibleTerm = 1 << 42

// implausibleTerms lists views whose term no run of elections can reach:
// evidence of the same corruption (flipped high bits) as a mangled peer id.
func implausibleTerms(g *Group) []string {
	var out []string
	for _, v := range g.Views {
		if v.Term > maxPlausibleTerm {
			out = appendUnique(out, fmt.Sprintf("term %d (%#x) in %s's %s is implausible for a count of elections: isolated high bits set, as a bit flip leaves them", v.Term, v.Term, v.Server, v.Source))
		}
	}
	return out
}
