package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
)

// serverVersion is the version server id runs, "" when not known.
func ServerVersion(m *Model, id ServerID) string {
	if s := m.ServerOf(id); s != nil {
		return s.Version
	}
	return ""
}

// stalledBy finds the quorum-unreachable findings not yet used whose
// missing peers are all in peers: the groups those peers leave below
// quorum, a cause's consequences. It returns their indexes and groups.
func StalledBy(fs []report.Finding, used []bool, peers map[string]bool) (chain []int, groups []string) {
	for i, f := range fs {
		if f.Code != "quorum-unreachable" || used[i] || len(f.Missing) == 0 {
			continue
		}
		all := true
		for _, p := range f.Missing {
			all = all && peers[p]
		}
		if all {
			chain = append(chain, i)
			groups = AppendUnique(groups, f.Group)
		}
	}
	return chain, groups
}

// History is a Jepsen history as acklog decodes it; HistoryPub one value
// it published.
type (
	History    = acklog.History
	HistoryPub = acklog.Pub
)

const MaxHistoryPubs = acklog.MaxHistoryPubs

// sealedAssets names what a server's sealed files hold: the streams, the
// consumers (stream/consumer) and the raft WALs (by group), each once.
func SealedAssets(files []string) (streams, consumers, wals []string) {
	seen := map[string]bool{}
	add := func(list *[]string, name string) {
		if !seen[name] {
			seen[name] = true
			*list = append(*list, name)
		}
	}
	for _, f := range files {
		p := strings.Split(f, "/")
		for i := 0; i+1 < len(p); i++ {
			switch {
			case p[i] == "_js_":
				add(&wals, p[i+1])
			case p[i] == "streams" && i+3 < len(p) && p[i+2] == "obs":
				add(&consumers, p[i+1]+"/"+p[i+3])
			case p[i] == "streams":
				add(&streams, p[i+1])
			default:
				continue
			}
			break
		}
	}
	return streams, consumers, wals
}

// peerIssueInvalidID is the peer state issue peer-id-corrupt reports, not
// store-corrupt.
const PeerIssueInvalidID = raftlog.IssueInvalidID

// structure is the structure a corruption names (binfmt's).
type Structure = binfmt.Structure

// raftFileCorruption is damage to the structure s of a raft group's file at
// off, worded as the parsers word a format error.
func RaftFileCorruption(server ServerID, group, file string, off int64, s Structure, msg string) Corruption {
	c := CorruptionFrom(server, "", "", "", binfmt.Stamp(binfmt.Errorf(file, off, binfmt.ErrFormat, "%s", msg), s))
	c.Message = fmt.Sprintf("raft group %s: %s", group, c.Message)
	return c
}

// maxTermJump bounds how far a term can run ahead of the group's entries:
// one election per term, a few seconds each; a server cut off for a year
// reaches some millions.
const MaxTermJump = 1 << 24

// corruptionFrom turns a parser error into a corruption fact.
func CorruptionFrom(server ServerID, account, stream, dir string, err error) Corruption {
	c := Corruption{Server: server, Account: account, Stream: stream, File: dir, Message: err.Error()}
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		if ce.File != "" {
			c.File = ce.File
		}
		c.Offset, c.HasOffset, c.Seq = ce.Offset, true, ce.Seq
	}
	// The kind and structure come from the error, stamped by the parser's
	// reader of the file, not from the file's name.
	c.Kind, c.Structure = natsfmt.KindOf(err), binfmt.StructureOf(err)
	return c
}
