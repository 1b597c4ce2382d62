package store

import (
	"fmt"
	"path"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// store-corrupt's judgement of the raft group records (RaftRecord): what
// peers.idx, tav.idx, commit.idx and the newest snapshot decode to but a
// server does not write, each naming the file, the offset and the
// structure, as dump prints it; and where a meta snapshot that fails its
// checksum is damaged. The loader only reads them.

// Rules of what nats-server never writes into a raft group's small files.
const (
	RulePeerState   = "peer state"         // PeerState.Check: duplicate ids, size 0 or below the ids, no or a bad trailer, trailing bytes
	RuleClusterSize = "group cluster size" // a stream or consumer group's size above its peers
	RuleTavEmpty    = "empty tav.idx"
	RuleTavTrailing = "bytes after the vote"
	RuleTermJump    = "term far above the entries"
	RuleCommitTrail = "bytes after the commit checksum"
	RuleSnapName    = "snapshot named for another term or index"
)

// neverWritten names, per rule and per 2.x release line, the committed
// fixtures whose raft files real servers of that line wrote and in which
// every file of the kind keeps the rule (TestNeverWrittenProven holds each
// to it). A server of a release line no fixture covers gets an info finding
// saying the file cannot be told from what that line writes, never damage.
// An unknown version is judged as damage: no line read writes it.
var NeverWritten = map[string]map[int][]string{
	RulePeerState: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	RuleClusterSize: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	RuleTavEmpty: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	RuleTavTrailing: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	RuleTermJump: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	// commit.idx is written by 2.15 only (raft.go openCommitFile).
	RuleCommitTrail: {
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
	RuleSnapName: {
		10: {"v2.10.22-per-server", "orphan-v2.10.22", "perturbed-crash-v2.10.27"},
		12: {"v2.12.1-archive", "lifecycle-v2.12.1", "perturbed-crash-v2.12.15"},
		14: {"metasnap-v2.14.10"},
		15: {"v2.15.2-flat", "orphan-v2.15.2", "perturbed-crash-v2.15.3"},
	},
}

// unproven says, for a server running version, why rule cannot be held
// against its files ("" when it can): its release line has no fixture.
func unproven(rule, version string) string {
	ma, mi, _, ok := releases.ParseVersion(version)
	if !ok {
		return ""
	}
	if ma == 2 && len(NeverWritten[rule][mi]) > 0 {
		return ""
	}
	var lines []string
	for _, l := range []int{10, 11, 12, 13, 14, 15, 16} {
		if len(NeverWritten[rule][l]) > 0 {
			lines = append(lines, fmt.Sprintf("2.%d", l))
		}
	}
	return fmt.Sprintf("no real-server fixture of the %d.%d release line shows what it writes here (only %s are proven), so this cannot be told from damage on %s", ma, mi, strings.Join(lines, ", "), version)
}

// raftVerdict is one rule broken by a file of a raft group record, as the
// corruption store-corrupt reports.
type raftVerdict struct {
	Rule string
	C    model.Corruption
}

// recordVerdicts are the rules r's files break, in the order the files
// are read.
func RecordVerdicts(r *model.RaftRecord) []raftVerdict {
	var out []raftVerdict
	add := func(rule, file string, off int64, s model.Structure, format string, args ...any) {
		out = append(out, raftVerdict{rule, model.RaftFileCorruption(r.Server, r.Group, file, off, s, fmt.Sprintf(format, args...))})
	}
	if p := r.Peers; p != nil {
		// Ids outside the alphabet are peer-id-corrupt's (with this file
		// and offset); a cluster size above the ids listed is normal for a
		// bootstrapping _meta_ only: the server keeps a stream or consumer
		// group's size equal to its peers.
		for _, is := range p.Issues {
			if is.Kind == model.PeerIssueInvalidID {
				continue
			}
			add(RulePeerState, p.File, is.Offset, natsfmt.StructPeersIdx, "peer state: %s", is.Detail)
		}
		if ps := p.State; r.Kind != natsfmt.GroupMeta && int64(ps.ClusterSize) > int64(len(ps.Peers)) {
			add(RuleClusterSize, p.File, 0, natsfmt.StructPeersIdx, "cluster size %d above the %d peers listed: for a stream or consumer group the server keeps them equal", ps.ClusterSize, len(ps.Peers))
		}
	}
	if s := r.Snapshot; s != nil && s.Decoded && (s.Term != s.NameTerm || s.Index != s.NameIndex) {
		// The server picks its snapshot by name; one whose header says
		// otherwise was renamed or overwritten, and is not what its name
		// promises (snap.3.13 holding index 12 is not the newest).
		add(RuleSnapName, s.File, 0, natsfmt.StructSnapshotHeader, "named for term %d index %d but holds term %d index %d", s.NameTerm, s.NameIndex, s.Term, s.Index)
	}
	if t := r.TermVote; t != nil {
		// A term below one the group's own snapshot or WAL entries carry is
		// what servers write and is not judged: every version takes a higher
		// term from entries it catches up on without writing tav.idx
		// (processAppendEntry: `if isNew { n.writeTermVote() }`), and a
		// v2.10.22 server that campaigns while joining a cluster whose log is
		// ahead writes term 0 and its own vote under a term-1 WAL and
		// snapshot (tavlag-v2.10.22: "AppendEntry did not match" resets
		// n.term to the empty log's pterm, the stepdown then writes it); the
		// server starts from the higher term of its entries. A term no run
		// of elections reaches past them is damage.
		tv := t.TermVote
		switch {
		case t.Size == 0:
			add(RuleTavEmpty, t.File, 0, natsfmt.StructTermVote, "empty: the server reads no term and no vote from it")
		case tv.Trailing > 0:
			add(RuleTavTrailing, t.File, int64(t.Size-tv.Trailing), natsfmt.StructTermVote, "%d bytes after the vote", tv.Trailing)
		case tv.HasTerm && tv.Term > r.MaxTerm+model.MaxTermJump && r.MaxTerm > 0:
			add(RuleTermJump, t.File, 0, natsfmt.StructTermVote, "term %d is more than %d above term %d of the group's own snapshot or WAL entries", tv.Term, model.MaxTermJump, r.MaxTerm)
		}
	}
	// A commit.idx whose checksum fails is the decoder's error; bytes after
	// it make the server ignore the file too and start from its WAL.
	if c := r.Commit; c != nil && c.Index.Trailing > 0 {
		add(RuleCommitTrail, c.File, int64(c.Size-c.Index.Trailing), natsfmt.StructCommitIdx, "%d bytes after the checksum", c.Index.Trailing)
	}
	return out
}

// raftFileDamage is store-corrupt's damage from the raft group records:
// every rule a file breaks, as a corruption of its structure; on a release
// line no fixture proves the rule for, an info finding that cannot tell.
// A file the archive did not deliver as written is not judged (said as a
// part skipped).
func raftFileDamage(p *check.Pass) []model.Corruption {
	m := p.Model
	var out []model.Corruption
	for _, r := range m.RaftRecords {
		version := model.ServerVersion(m, r.Server)
		for _, v := range RecordVerdicts(r) {
			c := v.C
			if m.NotAsWritten(c.File) {
				p.Skipf("%s: %s is not in the bundle as the server wrote it (the archive did not deliver it or its folder intact), so it is not judged", m.Name(r.Server), c.File)
				continue
			}
			if why := unproven(v.Rule, version); why != "" {
				c.Message += ": " + why
				c.Unproven = true
			}
			if c.Structure == natsfmt.StructPeersIdx {
				c.SnapshotPeers = snapshotPeersFile(r)
			}
			out = append(out, c)
		}
	}
	return append(out, metaSnapshotDamage(m)...)
}

// snapshotPeersFile is the group's newest snapshot when the server can
// start from its peer state (checksum holds, peers listed, no WAL entry
// past it changing them), else "".
func snapshotPeersFile(r *model.RaftRecord) string {
	s := r.Snapshot
	if s == nil || !s.Decoded || !s.ChecksumOK || s.PeerState == nil || len(s.PeerState.Peers) == 0 || r.PeersAfterSnap {
		return ""
	}
	return s.File
}

// metaSnapshotDamage turns each corrupt meta snapshot into a store
// corruption naming where the damage is and what the server's version does
// with it on its next start.
func metaSnapshotDamage(m *model.Model) []model.Corruption {
	var snaps []MetaSnapFile
	var recs []*model.SnapshotRecord
	var damaged int
	for _, r := range m.RaftRecords {
		s := r.Snapshot
		if r.Kind != natsfmt.GroupMeta || s == nil || s.Meta == nil {
			continue
		}
		srv := m.ServerOf(r.Server)
		if srv == nil {
			srv = &model.Server{ID: r.Server, Name: string(r.Server)}
		}
		snaps = append(snaps, MetaSnapFile{Srv: srv, File: s.File, B: s.Raw, Snap: s.Meta})
		recs = append(recs, s)
		if !s.ChecksumOK {
			damaged++
		}
	}
	var out []model.Corruption
	for i, s := range snaps {
		if s.Snap.ChecksumOK || m.NotAsWritten(s.File) {
			continue
		}
		c := model.Corruption{Server: s.Srv.ID, File: s.File, Kind: natsfmt.CorruptChecksum, HasOffset: true}
		where, off := LocateSnapshotDamage(s, snaps)
		c.Offset = off
		switch hoff := int64(len(s.B) - 8); {
		case off >= hoff:
			c.Structure = natsfmt.StructSnapshotTrailer
		case off < s.Snap.DataOffset:
			c.Structure = natsfmt.StructSnapshotHeader
		default:
			c.Structure = natsfmt.StructSnapshotData
		}
		c.Message = fmt.Sprintf("raft group _meta_: snapshot %s (term %d, index %d) fails its checksum: %s", path.Base(s.File), s.Snap.Term, s.Snap.Index, where)
		if rec := recs[i]; rec.MetaErr != nil {
			c.Evidence = append(c.Evidence, "its payload does not decode either: "+rec.MetaErr.Error())
		} else {
			c.Evidence = append(c.Evidence, fmt.Sprintf("its payload still decodes (%d stream assignments) but the server does not apply a snapshot that fails its checksum, so they are not counted as its state", len(rec.MetaAssign)))
		}
		c.Evidence = append(c.Evidence, MetaSnapNextStart(s.Srv, damaged, len(snaps))...)
		if refuses, known := releases.RefusesCorruptMetaSnapshot(s.Srv.Version); refuses && known {
			c.Next = append(c.Next, report.ServerNext{Server: s.Srv.Name, Does: report.NextRefusesJetStream, Release: s.Srv.Version})
		}
		out = append(out, c)
	}
	return out
}
