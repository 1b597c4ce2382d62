package analysis

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var checkPeerUnknown = Check{
	Code:        "peer-unknown",
	Severity:    report.Warning,
	Description: "a peer id maps to no server found in the bundle and is not a near miss",
	Skip:        noGroupViewsOrLoneServer,
	Requires:    []Fact{FactKnownIDs, FactUnknownPeers},
	Run: func(p *Pass) []report.Finding {
		var out []report.Finding
		for _, s := range p.Facts.UnknownPeers() {
			_, _, bits, ok := nearestKnown(p, s.peer)
			if !natsfmt.ValidPeerID(s.peer) || (ok && bits <= maxNearBits(p)) {
				continue
			}
			f := report.Finding{
				Group: s.group, Peer: s.peer,
				Message:  fmt.Sprintf("raft group %s lists peer %s, which is no server in this bundle (a removed or renamed server, or one whose files are missing)", s.group, s.peer),
				Evidence: []string{"listed by " + strings.Join(s.sources, ", ")},
			}
			prescribe("unknown-peer-remove", args{"peer": s.peer, "group": s.group}).apply(&f)
			if heal := snapshotHeals(p, s); heal.text != "" {
				// Only peers.idx lists it; what the next start does with
				// it is the version's (peer-id-corrupt's rule).
				f.Evidence = append(f.Evidence, heal.text)
				if heal.heals {
					f.Severity = report.Info
					f.Message += "; " + heal.short
					heal.remedy.apply(&f)
				}
			}
			out = append(out, f)
		}
		return out
	},
}

// noGroupViewsOrLoneServer also skips a bundle of one server alone (a
// single volume shipped by itself): that the peers it lists are missing
// from the bundle says nothing of whether they are gone.
func noGroupViewsOrLoneServer(p *Pass) string {
	if r := noGroupViews(p); r != "" {
		return r
	}
	var present []string
	for _, s := range p.Model.Servers {
		if s.StoreDir != "" || s.Alive {
			present = append(present, s.Name)
		}
	}
	if len(present) == 1 {
		return fmt.Sprintf("the bundle holds one server only (%s): the peers its raft groups list are not in the bundle, which does not tell they are gone", present[0])
	}
	return ""
}
