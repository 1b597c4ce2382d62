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
