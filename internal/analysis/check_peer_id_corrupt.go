package analysis

import (
	"fmt"
	"strings"

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

func peerIDEvidence(id string, valid bool) []string {
	if valid {
		return nil
	}
	return []string{fmt.Sprintf("%q is not 8 characters of 0-9A-Za-z: nats-server never generates such an id", id)}
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
