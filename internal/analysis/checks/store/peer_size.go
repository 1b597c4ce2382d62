package store

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// peerSizeFindings are the peers.idx files whose cluster size (its first
// four bytes, formats.md 5.2) disagrees with the peers the file itself
// lists and with every other server's view of the group, which agree on
// one size: the size was damaged, not changed by the group. peers.idx has
// no checksum, so nothing else reports it.
//
// What the server does with it at its next start (raft.go initRaftNode,
// processPeerState; seen by `go run . perturb` class peers-size-flipped on
// 2.10 to 2.15): a larger size raises the quorum it needs, so it cannot be
// elected by the real peers; it follows the leader the others elect, whose
// peer state (sent on every election, runAsLeader sendPeerState) it takes
// and writes back to peers.idx. A size whose quorum is the real one changes
// nothing either. A smaller quorum lets it win an election with fewer votes
// than the group's, and as leader it sends its size to every peer: the
// whole group then runs at that quorum (a race with the others' election;
// both outcomes seen), so that is critical.
//
// covered lists the files so reported: the loader's own "cluster size …
// peers listed" damage of them is left to this finding.
func peerSizeFindings(m *model.Model) (out []report.Finding, covered map[string]bool) {
	covered = map[string]bool{}
	for _, d := range facts.SizeDamages(m) {
		g, v, real := d.Group, d.View, d.Real
		srv := m.Name(v.Server)
		q, rq := v.ClusterSize/2+1, real/2+1
		f := report.Finding{Code: string(report.CodeStoreCorrupt), Severity: report.Warning, Server: srv, Group: g.Name,
			Account: g.Account, File: v.File, Offset: report.Ptr(int64(0)), Kind: "peer-state",
			ClusterSize: v.ClusterSize, Quorum: q,
		}
		f.Message = fmt.Sprintf("%s's peers.idx of raft group %s says the group has %d peers (quorum %d), but lists %d and every other server's view of the group says %d (quorum %d): its cluster size was damaged (peers.idx has no checksum)",
			srv, g.Name, v.ClusterSize, q, real, real, rq)
		switch {
		case q > rq:
			f.Message += fmt.Sprintf("; at its next start %s cannot be elected by the %d real peers, follows the leader they elect and, once caught up, takes that leader's peer state (sent at every election) and writes it back to peers.idx: nothing is lost", srv, real)
		case q == rq:
			f.Message += fmt.Sprintf("; the quorum is the group's own (%d), and the leader's peer state rewrites the size at the next election: nothing is lost", q)
		default:
			f.Severity = report.Critical
			f.Message += fmt.Sprintf("; at its next start %s can win an election with %d vote(s), fewer than the group's quorum of %d, and as leader it sends that size to every peer: the group then runs at quorum %d (seen on 2.10.27 with a _meta_ size of 1; where the others elect first, their leader's peer state rewrites it)", srv, q, rq, q)
		}
		if v.StartSize > 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("the group's snapshot %s holds size %d: 2.12.5+ and 2.14+ start from it", v.StartFile, v.StartSize))
		}
		out = append(out, f)
		covered[v.File] = true
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, covered
}

// isSizeDamage: the loader's damage of a peers.idx cluster size (load_raftfiles.go peerIssues).
func isSizeDamage(c *model.Corruption) bool {
	return c.Structure == natsfmt.StructPeersIdx && c.Offset == 0 && strings.Contains(c.Message, "cluster size") && strings.Contains(c.Message, "peers listed")
}
