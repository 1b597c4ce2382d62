package store

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

var CheckIndexMismatch = check.Check{
	Code:        string(report.CodeIndexMismatch),
	Severity:    report.Warning,
	Description: "index.db (or a consumer's state) disagrees with what the blocks hold",
	Skip:        check.NoStores,
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, x := range indexMismatches(m) {
			if m.TornFolders[x.folder] {
				p.Skipf("%s: %s compared with blocks the archive did not deliver intact (see the bundle's archive damage note); not taken for an index mismatch (%s)", m.Name(x.Server), x.File, x.Detail)
				continue
			}
			f := report.Finding{
				Server: m.Name(x.Server), Account: x.Account, Stream: x.Stream, File: x.File,
				Message: x.Detail,
			}
			rx := remedy.Prescribe(remedy.IndexDBStaleRemove, remedy.Args{"file": x.File, "saved": x.File + ".saved"})
			switch {
			case x.Damaged:
				// The blocks lost what index.db still records: the mismatch
				// is that damage, reported as store-corrupt.
				f.Severity, f.Kind = report.Info, "damage"
				rx = remedy.Prescribe(remedy.IndexDBKeep, nil)
			case x.Outdated:
				f.Severity, f.Kind = report.Info, "outdated"
				rx = remedy.Prescribe(remedy.IndexDBOutdated, nil)
			}
			rx.Apply(&f)
			out = append(out, f)
		}
		return out
	},
}

// IndexMismatch is a copy's index.db disagreeing with its blocks.
type IndexMismatch struct {
	Server          model.ServerID
	Account, Stream string
	File            string
	Detail          string
	// Outdated: index.db stops before the blocks do, which the server
	// notices and repairs itself.
	Outdated bool
	// Damaged: blocks of this copy are damaged (store-corrupt); index.db
	// then records what they held and must be kept.
	Damaged bool
	folder  string // the stream folder
}

// indexMismatches are the copies whose index.db disagrees with the state
// the server recovers from the blocks, in the order the copies were read.
//
// index.db may rightly hold fewer messages than the blocks: removals by
// limits (max_msgs, max_bytes, max_msgs_per_subject, KV history) write no
// tombstone. When the state the server recovers (blocks, tombstones, the
// deletes of a current index.db, limits) equals index.db, the two agree;
// otherwise the differences the scan found are reported.
func indexMismatches(m *model.Model) []IndexMismatch {
	type held struct {
		st *model.Stream
		c  *model.StreamCopy
	}
	var copies []held
	for _, st := range m.Streams {
		for _, c := range st.Copies {
			if x := c.Index; x != nil && len(x.Mismatches) > 0 && !indexAgrees(x, c) {
				copies = append(copies, held{st, c})
			}
		}
	}
	sort.SliceStable(copies, func(i, j int) bool { return copies[i].c.Read < copies[j].c.Read })
	var out []IndexMismatch
	for _, h := range copies {
		x, c := h.c.Index, h.c
		var parts []string
		for _, mm := range x.Mismatches {
			parts = append(parts, fmt.Sprintf("%s %s: index.db %s, blocks %s", mm.Scope, mm.Field, mm.Index, mm.Blocks))
		}
		im := IndexMismatch{
			Server: c.Server, Account: h.st.Account, Stream: h.st.Name, File: x.File, folder: c.Path, Damaged: c.BlockDamage,
			Detail: fmt.Sprintf("index.db disagrees with the message blocks: %s", strings.Join(parts, "; ")),
		}
		if x.LastSeq < c.LastSeq {
			// The blocks go on past index.db: a crash, or a store copied
			// while running. The server sees its last block's checksum
			// differ and rebuilds ("Stream state outdated").
			im.Outdated = true
			im.Detail = fmt.Sprintf("index.db is older than the blocks (written at seq %d, blocks go on to %d): the server rebuilds it at start; expected after a crash or for a store copied while running. %s",
				x.LastSeq, c.LastSeq, strings.Join(parts, "; "))
		}
		out = append(out, im)
	}
	return out
}

// indexAgrees says whether index.db's stream figures equal the state
// recovered from the copy's blocks.
func indexAgrees(x *model.IndexRecord, c *model.StreamCopy) bool {
	return x.Msgs == c.Messages && x.Bytes == c.Bytes && x.LastSeq == c.LastSeq && (c.Messages == 0 || x.FirstSeq == c.FirstSeq)
}
