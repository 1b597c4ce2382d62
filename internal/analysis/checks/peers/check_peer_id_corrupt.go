package peers

import (
	"fmt"
	"path"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// nearBitsSetting is how many flipped bits still make an unknown id a
// corrupt copy of a known one. Two unrelated ids differ in about 24 of their
// 64 bits, so 3 leaves a wide margin.
var nearBitsSetting = check.Setting{Key: "max_bits", Default: 3, Unit: "bits",
	Description: "an unknown peer id this many bits or fewer from a known server's id is a corrupted copy of it"}

// maxNearBits is the peer-id-corrupt threshold as this pass sets it.
func maxNearBits(p *check.Pass) int { return int(p.SettingOf("peer-id-corrupt", nearBitsSetting.Key)) }

// noGroupViews skips the raft checks on a bundle with no view of any group.
func noGroupViews(p *check.Pass) string {
	for _, g := range p.Model.Groups {
		if len(g.Views) > 0 {
			return ""
		}
	}
	return "no raft group is seen in the bundle (no peers.idx, raftz, jsz or varz view)"
}

// nearestKnown returns the known id closest to id, its server and distance.
func nearestKnown(p *check.Pass, id string) (peer, server string, bits int, ok bool) {
	peer, bits, ok = natsfmt.NearestPeer(id, p.Facts.KnownIDs())
	if ok {
		server = p.Model.IDs[peer]
	}
	return
}

var CheckPeerIDCorrupt = check.Check{
	Code:        string(report.CodePeerIDCorrupt),
	Severity:    report.Critical,
	Description: "a raft peer set holds an id no server can have, or a few bit flips from a known server's id",
	Settings:    []check.Setting{nearBitsSetting},
	Skip:        noGroupViews,
	Requires:    []facts.Fact{facts.FactKnownIDs, facts.FactUnknownPeers},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, s := range p.Facts.UnknownPeers() {
			near, srv, bits, ok := nearestKnown(p, s.Peer)
			valid := natsfmt.ValidPeerID(s.Peer)
			if valid && (!ok || bits > maxNearBits(p)) {
				continue // peer-unknown's business
			}
			f := report.Finding{
				Group: s.Group, Peer: s.Peer, Server: s.Server, File: s.File,
				Message: fmt.Sprintf("raft group %s lists peer %q, which no server can have", s.Group, s.Peer),
				Evidence: append([]string{fmt.Sprintf("listed by %s", strings.Join(s.Sources, ", "))},
					peerIDEvidence(s.Peer, valid)...),
			}
			if ok && bits <= maxNearBits(p)*2 {
				f.LikelyOrigin = &report.Origin{Peer: near, Server: srv, Bits: bits}
				f.Message = fmt.Sprintf("raft group %s lists peer %q, %d bit(s) away from %s (%s): a corrupted copy of that server's id", s.Group, s.Peer, bits, near, srv)
			}
			remedy.PeerRemoveRemedy(m, s.Group, []string{s.Peer}).Apply(&f)
			if s.File != "" {
				f.Offset = report.Ptr(s.Offset)
			}
			if heal := snapshotHeals(p, s); heal.text != "" {
				f.Evidence = append(f.Evidence, heal.text)
				if heal.heals {
					// The next start restores the group from a snapshot
					// that does not list the id, and rewrites peers.idx.
					f.Severity = report.Warning
					f.Message += "; " + heal.short
					heal.remedy.Apply(&f)
				}
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

// snapshotHeal is what the next start does with an id only peers.idx
// views list, when their servers' newest snapshots hold another peer state.
type snapshotHeal struct {
	heals       bool // every such server starts from a snapshot without the id
	text, short string
	remedy      remedy.Prescription
}

// snapshotHeals: a 2.12.5+ or 2.14+ server starts a group from its
// snapshot's peer state and writes it to peers.idx (raft.go initRaftNode,
// processPeerState -> writePeerState; real v2.15.3 rewrote the incident-000
// edit to the five real peers at its start), so an id only in peers.idx
// is gone at its next start. Any live view (raftz, jsz) listing the id, or
// a server starting from peers.idx, keeps the finding as it is.
func snapshotHeals(p *check.Pass, s facts.PeerSighting) snapshotHeal {
	g := s.G
	if g == nil {
		return snapshotHeal{}
	}
	heals, unknown, any := true, false, false
	var files []string
	for _, v := range g.Views {
		if !containsString(v.Peers, s.Peer) {
			continue
		}
		if v.Source != "peers.idx" || len(v.StartPeers) == 0 || containsString(v.StartPeers, s.Peer) {
			return snapshotHeal{}
		}
		any = true
		version := ""
		if srv := p.Model.ServerOf(v.Server); srv != nil {
			version = srv.Version
		}
		yes, known := releases.StartsFromSnapshotPeers(version)
		heals = heals && yes
		unknown = unknown || !known
		files = append(files, v.StartFile)
	}
	if !any {
		return snapshotHeal{}
	}
	h := snapshotHeal{heals: heals}
	var names []string
	for _, f := range files {
		names = model.AppendUnique(names, path.Base(f))
	}
	snaps := fmt.Sprintf("%s, on %d server(s)", strings.Join(names, ", "), len(files))
	if len(files) == 1 {
		snaps = files[0]
	}
	switch {
	case heals:
		h.text = fmt.Sprintf("only peers.idx lists it; the newest snapshot (%s) holds a peer state without it, which these servers' version (2.12.5+, 2.14+) starts the group from and writes back to peers.idx", snaps)
		h.short = "the next start restores the group from its snapshot, which does not list it, and rewrites peers.idx"
		h.remedy = remedy.Prescribe(remedy.PeersIdxHealedBySnapshot, remedy.Args{"group": s.Group, "snapshots": snaps, "dropping": ", dropping " + s.Peer})
	case unknown:
		h.text = fmt.Sprintf("only peers.idx lists it; the newest snapshot (%s) holds a peer state without it: 2.12.5+ and 2.14+ start from that snapshot and rewrite peers.idx, so there the id is gone at the next start; 2.10, 2.11 and 2.12.0-2.12.4 start from peers.idx (this verdict)", snaps)
	default:
		h.text = fmt.Sprintf("only peers.idx lists it; the newest snapshot (%s) holds a peer state without it, which this version does not use at start (2.12.5+ and 2.14+ would)", snaps)
	}
	return h
}

func peerIDEvidence(id string, valid bool) []string {
	if valid {
		return nil
	}
	return []string{fmt.Sprintf("%q is not 8 characters of 0-9A-Za-z: nats-server never generates such an id", id)}
}

// onlyVote says whether s was seen in tav.idx votes only.
func onlyVote(s facts.PeerSighting) bool {
	for _, src := range s.Sources {
		if !strings.HasSuffix(src, " tav.idx vote") {
			return false
		}
	}
	return true
}
