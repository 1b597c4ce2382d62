package capture

import (
	"sort"
	"time"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// MetaGroup is the raft group name of the JetStream meta layer.
const MetaGroup = natsfmt.MetaGroup

// HasLeader says whether the answering server knew a meta leader. Peer is the
// hash of the leader's name, so a leaderless answer still carries a peer:
// natsfmt.NoLeaderPeer, the hash of the empty name.
func (m *MetaCluster) HasLeader() bool {
	if m == nil {
		return false
	}
	return m.Leader != "" || (m.Peer != "" && m.Peer != natsfmt.NoLeaderPeer)
}

// LeaderPeer is the leader's node id, or "" when there is no leader.
func (m *MetaCluster) LeaderPeer() string {
	if !m.HasLeader() {
		return ""
	}
	if m.Peer == "" {
		return natsfmt.PeerID(m.Leader)
	}
	return m.Peer
}

// Accounts lists the accounts of a /raftz answer, sorted.
func (r Raftz) Accounts() []string {
	out := make([]string, 0, len(r))
	for a := range r {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Groups lists the group names of one account, sorted.
func (r Raftz) Groups(account string) []string {
	out := make([]string, 0, len(r[account]))
	for g := range r[account] {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Meta finds the _meta_ group. It lives in the system account: "$SYS", or
// an A… nkey in operator mode, so any account holding _meta_ is accepted,
// "$SYS" first, then in name order.
func (r Raftz) Meta() (g RaftzGroup, account string, ok bool) {
	if g, ok := r["$SYS"][MetaGroup]; ok {
		return g, "$SYS", true
	}
	for _, a := range r.Accounts() {
		if g, ok := r[a][MetaGroup]; ok {
			return g, a, true
		}
	}
	return RaftzGroup{}, "", false
}

// nodeID is the raft node id of the answering server: every group of one
// server has the same id (raft.go: the server name's hash).
func (r Raftz) nodeID() string {
	if g, _, ok := r.Meta(); ok && g.ID != "" {
		return g.ID
	}
	for _, a := range r.Accounts() {
		for _, n := range r.Groups(a) {
			if id := r[a][n].ID; id != "" {
				return id
			}
		}
	}
	return ""
}

// MetaView is one server's view of the meta group, from a /raftz _meta_
// group or from a /jsz meta_cluster (or /varz jetstream.meta, the same).
// Fields a source does not carry stay zero; Source says which it was.
type MetaView struct {
	Source string // KindRaftz, KindJsz or KindVarz
	Server ServerRef

	Self             string // the answering node's id (raftz; from the server name otherwise, if known)
	Cluster          string // cluster name (jsz/varz)
	ClusterSize      int
	Quorum           int  // quorum needed
	QuorumFromServer bool // false when Quorum was computed as ClusterSize/2+1 (jsz before 2.15)

	State         string // FOLLOWER, LEADER, CANDIDATE… (raftz)
	Term          uint64 // raftz
	VotedFor      string // raftz
	Committed     uint64 // raftz
	Applied       uint64 // raftz
	EverHadLeader bool   // raftz
	HasLeader     bool
	Leader        string // leader node id
	LeaderName    string // leader server name (jsz/varz)
	Pending       int    // jsz

	// Peers of the group, sorted by id. From raftz: every peer the server
	// tracks plus itself (Self true). From jsz: the replicas plus the leader.
	Peers []MetaPeer
}

// MetaPeer is one member of a MetaView.
type MetaPeer struct {
	ID    string
	Name  string // "" when the server does not know it
	Self  bool
	Known bool // raftz: confirmed member (2.10/2.12); not in a membership change (2.15)

	LastSeen            time.Duration // raftz last_seen, parsed
	Seen                bool          // LastSeen was present and parsed
	LastReplicatedIndex uint64        // raftz, leader only

	Current bool          // jsz
	Offline bool          // jsz
	Active  time.Duration // jsz: since last seen
	Lag     uint64        // jsz
	Leader  bool
}

// MetaFromRaftz builds a view from a _meta_ group of a /raftz answer.
func MetaFromRaftz(g RaftzGroup) MetaView {
	v := MetaView{
		Source: KindRaftz, Self: g.ID, ClusterSize: g.Size, Quorum: g.QuorumNeeded, QuorumFromServer: true,
		State: g.State, Term: g.Term, VotedFor: g.VotedFor, Committed: g.Committed, Applied: g.Applied,
		EverHadLeader: g.EverHadLeader, HasLeader: g.Leader != "", Leader: g.Leader,
	}
	selfIn := false
	for id, p := range g.Peers {
		mp := MetaPeer{ID: id, Name: p.Name, Known: p.Known, LastReplicatedIndex: p.LastReplicatedIndex,
			Leader: id == g.Leader && g.Leader != ""}
		mp.LastSeen, mp.Seen = p.LastSeenDuration()
		if id == g.ID {
			mp.Self, selfIn = true, true
		}
		v.Peers = append(v.Peers, mp)
	}
	if g.ID != "" && !selfIn {
		// /raftz leaves the answering node out of its peers.
		v.Peers = append(v.Peers, MetaPeer{ID: g.ID, Self: true, Known: true, Leader: g.ID == g.Leader})
	}
	sortPeers(v.Peers)
	return v
}

// MetaFromCluster builds a view from a /jsz meta_cluster or /varz
// jetstream.meta. selfName, when known, marks the answering server.
func MetaFromCluster(m *MetaCluster, selfName string) MetaView {
	v := MetaView{Source: KindJsz}
	if m == nil {
		return v
	}
	v.Cluster, v.ClusterSize, v.Pending = m.Name, m.ClusterSize, m.Pending
	v.HasLeader, v.Leader, v.LeaderName = m.HasLeader(), m.LeaderPeer(), m.Leader
	if m.QuorumNeeded > 0 {
		v.Quorum, v.QuorumFromServer = m.QuorumNeeded, true
	} else if m.ClusterSize > 0 {
		v.Quorum = natsfmt.Quorum(m.ClusterSize)
	}
	if selfName != "" {
		v.Self = natsfmt.PeerID(selfName)
	}
	seen := map[string]bool{}
	if v.HasLeader {
		v.Peers = append(v.Peers, MetaPeer{ID: v.Leader, Name: m.Leader, Leader: true, Current: true, Self: v.Leader == v.Self})
		seen[v.Leader] = true
	}
	for _, r := range m.Replicas {
		id := r.Peer
		if id == "" && r.Name != "" {
			id = natsfmt.PeerID(r.Name)
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		v.Peers = append(v.Peers, MetaPeer{ID: id, Name: r.Name, Current: r.Current, Offline: r.Offline,
			Active: r.Active, Lag: r.Lag, Self: id == v.Self && id != ""})
	}
	sortPeers(v.Peers)
	return v
}

// Meta returns the capture's view of the meta group: the _meta_ group of a
// /raftz, the meta_cluster of a /jsz, or jetstream.meta of a /varz.
func (c Capture) Meta() (MetaView, bool) {
	var v MetaView
	switch {
	case c.Raftz != nil:
		g, _, ok := c.Raftz.Meta()
		if !ok {
			return v, false
		}
		v = MetaFromRaftz(g)
	case c.Jsz != nil && c.Jsz.Meta != nil:
		v = MetaFromCluster(c.Jsz.Meta, c.Server.Name)
	case c.Varz != nil && c.Varz.JetStream.Meta != nil:
		v = MetaFromCluster(c.Varz.JetStream.Meta, c.Server.Name)
		v.Source = KindVarz
	default:
		return v, false
	}
	v.Server = c.Server
	return v, true
}

func sortPeers(p []MetaPeer) {
	sort.Slice(p, func(i, j int) bool { return p[i].ID < p[j].ID })
}
