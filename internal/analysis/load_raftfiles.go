package analysis

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// The small raft files of a group folder (peers.idx, tav.idx, commit.idx):
// what dump prints as implausible is a finding here too, each naming the
// file, the offset and the structure.

// raftFile reads one small raft file whole. A file that is not there is
// not damage (a group may have none yet); any other read failure (a folder
// in its place, an oversized file) is, at offset 0.
func (l *loader) raftFile(srv *Server, group, file string, limit int64, s binfmt.Structure) ([]byte, bool) {
	b, err := readSmall(l.b.FS, file, limit)
	if err == nil {
		return b, true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		var ce *binfmt.CorruptError
		if !errors.As(err, &ce) {
			err = &binfmt.CorruptError{File: file, Err: fmt.Errorf("%w: unreadable: %w", binfmt.ErrFormat, err)}
		}
		l.raftCorrupt(srv, group, binfmt.Stamp(err, s))
	}
	return nil, false
}

// raftDamage records what decodes but is not what a server writes.
func (l *loader) raftDamage(srv *Server, group, file string, off int64, s binfmt.Structure, format string, args ...any) {
	l.raftCorrupt(srv, group, binfmt.Stamp(binfmt.Errorf(file, off, binfmt.ErrFormat, format, args...), s))
}

// peerIssues turns what PeerState.Check flags into findings. Ids outside
// the alphabet are peer-id-corrupt's (with this file and offset); a cluster
// size above the ids listed is normal for a bootstrapping _meta_ only: the
// server keeps a stream or consumer group's size equal to its peers.
func (l *loader) peerIssues(srv *Server, group, kind, file string, ps *raftlog.PeerState) {
	for _, is := range ps.Check() {
		if is.Kind == raftlog.IssueInvalidID {
			continue
		}
		l.raftDamage(srv, group, file, is.Offset, natsfmt.StructPeersIdx, "peer state: %s", is.Detail)
	}
	if kind != "meta" && int64(ps.ClusterSize) > int64(len(ps.Peers)) {
		l.raftDamage(srv, group, file, 0, natsfmt.StructPeersIdx, "cluster size %d above the %d peers listed: for a stream or consumer group the server keeps them equal", ps.ClusterSize, len(ps.Peers))
	}
}

// termVoteIssues flags a tav.idx the server would not have written: empty
// (the server reads no term and no vote), bytes after the vote, or a term
// no run of elections reaches past the group's entries. A term below one
// the group's own snapshot or WAL entries carry is no damage: every version
// (raft.go processAppendEntry, 2.10.22 to 2.15.3) takes a higher term from
// an append entry it catches up on without writing tav.idx (`if isNew {
// n.writeTermVote() }`), and a healthy v2.10.22 follower was seen holding
// term 0 and a vote under a term-1 WAL; no fixture shows a server never
// writing it, so the bundle cannot tell it from damage and says so in a
// note.
func (l *loader) termVoteIssues(srv *Server, group, file string, b []byte, tv *raftlog.TermVote, ws *walState) {
	switch {
	case len(b) == 0:
		l.raftDamage(srv, group, file, 0, natsfmt.StructTermVote, "empty: the server reads no term and no vote from it")
	case tv.Trailing > 0:
		l.raftDamage(srv, group, file, int64(len(b)-tv.Trailing), natsfmt.StructTermVote, "%d bytes after the vote", tv.Trailing)
	case tv.HasTerm && tv.Term < ws.maxTerm:
		l.note("%s: %s holds term %d, below term %d of the group's own snapshot or WAL entries: a server writes that when it learns a term by catching up (raft.go processAppendEntry writes tav.idx for new entries only), so it cannot be told from damage; the server starts from the higher term of its entries", srv.Name, file, tv.Term, ws.maxTerm)
	case tv.HasTerm && tv.Term > ws.maxTerm+maxTermJump && ws.maxTerm > 0:
		l.raftDamage(srv, group, file, 0, natsfmt.StructTermVote, "term %d is more than %d above term %d of the group's own snapshot or WAL entries", tv.Term, maxTermJump, ws.maxTerm)
	}
}

// maxTermJump bounds how far a term can run ahead of the group's entries:
// one election per term, a few seconds each; a server cut off for a year
// reaches some millions.
const maxTermJump = 1 << 24

// commitIndex reads a group's commit.idx (v2.15.2 _meta_): a checksum
// that fails or bytes after it are damage (the server then ignores the
// file and starts from its WAL).
func (l *loader) commitIndex(srv *Server, group, file string) {
	b, ok := l.raftFile(srv, group, file, 1<<10, natsfmt.StructCommitIdx)
	if !ok {
		return
	}
	ci, err := raftlog.DecodeCommitIndex(file, group, b)
	switch {
	case err != nil:
		l.raftCorrupt(srv, group, err)
	case ci.Trailing > 0:
		l.raftDamage(srv, group, file, int64(len(b)-ci.Trailing), natsfmt.StructCommitIdx, "%d bytes after the checksum", ci.Trailing)
	}
}
