package peers

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var CheckPeerUnknown = check.Check{
	Code:        string(report.CodePeerUnknown),
	Severity:    report.Warning,
	Description: "a peer id maps to no server found in the bundle and is not a near miss",
	Skip:        noGroupViewsOrLoneServer,
	Requires:    []facts.Fact{facts.FactKnownIDs, facts.FactUnknownPeers},
	Run: func(p *check.Pass) []report.Finding {
		var out []report.Finding
		for _, s := range p.Facts.UnknownPeers() {
			_, _, bits, ok := nearestKnown(p, s.Peer)
			if !natsfmt.ValidPeerID(s.Peer) || (ok && bits <= maxNearBits(p)) {
				continue
			}
			f := report.Finding{
				Group: s.Group, Peer: s.Peer,
				Message:  fmt.Sprintf("raft group %s lists peer %s, which is no server in this bundle (a removed or renamed server, or one whose files are missing)", s.Group, s.Peer),
				Evidence: []string{"listed by " + strings.Join(s.Sources, ", ")},
			}
			remedy.Prescribe(remedy.UnknownPeerRemove, remedy.Args{"peer": s.Peer, "group": s.Group}).Apply(&f)
			if heal := snapshotHeals(p, s); heal.text != "" {
				// Only peers.idx lists it; what the next start does with
				// it is the version's (peer-id-corrupt's rule).
				f.Evidence = append(f.Evidence, heal.text)
				if heal.heals {
					f.Severity = report.Info
					f.Message += "; " + heal.short
					heal.remedy.Apply(&f)
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
func noGroupViewsOrLoneServer(p *check.Pass) string {
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
