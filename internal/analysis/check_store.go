package analysis

import (
	"fmt"
	"path"
	"strings"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var checkStoreCorrupt = Check{
	Code:        "store-corrupt",
	Severity:    report.Critical,
	Description: "a store file fails its checksum, is truncated, or does not parse",
	Skip:        noStores,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		// An encrypted store makes every file unreadable without its key:
		// one finding per server says so, not one per file.
		encrypted := map[string][]string{}
		for _, c := range m.Corruptions {
			if c.Kind == natsfmt.CorruptEncrypted {
				encrypted[c.Server] = append(encrypted[c.Server], c.File)
			}
		}
		for _, srv := range sortedKeys(encrypted) {
			files := encrypted[srv]
			shown := files
			if len(shown) > 5 {
				shown = append(append([]string(nil), shown[:5]...), fmt.Sprintf("and %d more", len(files)-5))
			}
			out = append(out, report.Finding{Server: srv, Kind: "encrypted", Severity: report.Warning, File: files[0],
				Message:  sealedMessage(srv, files, m.KeysGiven),
				Evidence: shown,
				Remedy:   storeRemedy(Corruption{Kind: natsfmt.CorruptEncrypted}),
			})
		}
		for _, c := range m.Corruptions {
			if c.Kind == natsfmt.CorruptEncrypted {
				continue
			}
			f := report.Finding{
				Server: c.Server, Account: c.Account, Stream: c.Stream,
				File: c.File, Seq: c.Seq, Kind: string(c.Kind), Ranges: c.Lost,
				Message: c.Message, Evidence: c.Evidence,
			}
			if c.HasOffset {
				f.Offset = report.Ptr(c.Offset)
			}
			f.Remedy = storeRemedy(c) + extractHint(m, c.Server, c.Account, c.Stream, c.Lost)
			switch {
			case c.Kind == natsfmt.CorruptIndex:
				// index.db is a cache the server rebuilds from the blocks.
				f.Severity = report.Warning
			case c.OfDeleted && !c.Rebuilds:
				// The record of a deleted message: nothing is lost unless
				// the block is rebuilt, which a current index.db prevents.
				f.Severity = report.Warning
			}
			out = append(out, f)
		}
		return out
	},
}

// storeRemedy says what an operator can do about a damaged file, chosen by
// the file and the kind of damage. Whatever rebuilds, removes, truncates or
// peer-removes is preceded by what it destroys and how to save it.
func storeRemedy(c Corruption) string {
	name := string(c.Structure) // meta.inf, meta.sum: the structure is named after its file
	switch {
	case c.Kind == natsfmt.CorruptEncrypted:
		return sealedRemedy
	case c.Structure == natsfmt.StructMetaInf || c.Structure == natsfmt.StructMetaSum:
		what := "meta.inf and meta.sum disagree"
		if c.Kind == natsfmt.CorruptMissing {
			what = name + " is missing"
		}
		fix := fmt.Sprintf("put back the file named here: copy %s from a healthy replica of the stream (meta.inf and meta.sum together)", name)
		if c.Stream != "" && c.Replicas <= 1 {
			fix = "rewrite it from the stream config (meta.inf is the stream config as JSON, meta.sum its checksum; see `jsforensics dump meta`)"
		}
		return fmt.Sprintf("%s: the server skips this stream at start and serves none of its messages, but its blocks are intact. Keep the stream folder (do not delete or recreate the stream: that removes the blocks); with the server stopped, %s.", what, fix)
	case c.Structure == natsfmt.StructIndexDB:
		return fmt.Sprintf("index.db is a cache; nothing needs removing: the server finds it unusable and rebuilds the state from the blocks at start. A rebuild cuts every block at its first bad record: if store-corrupt names a block of this stream, copy the stream folder out first (cp -a %s SAVE/) so `jsforensics dump blk FILE --json` can read the records after the damage.", path.Dir(path.Dir(c.File)))
	case c.Structure == natsfmt.StructConsumerState:
		return fmt.Sprintf("the consumer's state or config is damaged: copy %s out first, then let the consumer be recreated from its config with a start sequence after its ack floor; the stream's messages are not affected", c.File)
	case isMetaSnapshot(c.File):
		return metaSnapshotRemedy(c)
	case c.Structure != natsfmt.StructBlockRecord:
		return fmt.Sprintf("copy %s out before the server starts on it again; inspect it with `jsforensics dump`", c.File)
	}
	var b strings.Builder
	keep := ""
	if c.IndexDB != "" {
		keep = fmt.Sprintf(" Keep %s: do not remove it.", c.IndexDB)
	}
	switch c.Kind {
	case natsfmt.CorruptChecksum:
		if c.OfDeleted {
			fmt.Fprintf(&b, "The bad record is of seq %d, a message deleted before the damage: no message is lost while the block is not rebuilt.%s Removing index.db (or any rebuild) makes the server truncate the block at this record and lose the intact messages after it.", c.Seq, keep)
			break
		}
		fmt.Fprintf(&b, "Only the bad record is unreadable (seq %s); every other record of the block is intact.%s A current index.db keeps the server from rebuilding the block; removing it (or any rebuild) makes the server truncate the block at its first bad record and lose the intact messages after it.", rangesText(c.Lost), keep)
	default:
		lost := "what the block held from the damage on"
		if len(c.Lost) > 0 {
			lost = "sequences " + rangesText(c.Lost)
		}
		fmt.Fprintf(&b, "This copy no longer holds %s.%s index.db is the record of what the block held.", lost, keep)
	}
	fmt.Fprintf(&b, " First save it: copy %s (and the stream's index.db) out, with the server stopped; `jsforensics dump blk FILE --json` reads every record still intact.", c.File)
	switch {
	case c.Stream != "" && c.Replicas > 1:
		fmt.Fprintf(&b, " The stream is R%d: once the other replicas are checked to hold these sequences (replica-gap), move a healthy replica's copy of the block in, or let this replica be rebuilt, which deletes this replica's copy (saved above): `nats stream cluster peer-remove %s %s`, then scale back up.", c.Replicas, c.Stream, c.Server)
	case c.Stream != "":
		b.WriteString(" The stream has no other replica: republish what the dump recovers, or restore from a backup.")
	}
	return b.String()
}

var checkIndexMismatch = Check{
	Code:        "index-mismatch",
	Severity:    report.Warning,
	Description: "index.db (or a consumer's state) disagrees with what the blocks hold",
	Skip:        noStores,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, x := range m.IndexMismatches {
			f := report.Finding{
				Server: x.Server, Account: x.Account, Stream: x.Stream, File: x.File,
				Message: x.Detail,
				Remedy:  "index.db claims what the blocks do not hold, and the server trusts a current index.db at start without re-reading the blocks. Removing index.db destroys its record of those messages, and the rebuild that follows cuts every damaged block at its first bad record: first copy it out (cp " + x.File + " " + x.File + ".saved) with the stream folder, then, with the server stopped, remove " + x.File + " so it rebuilds the state from the blocks",
			}
			switch {
			case x.Damaged:
				// The blocks lost what index.db still records: the mismatch
				// is that damage, reported as store-corrupt.
				f.Severity, f.Kind = report.Info, "damage"
				f.Remedy = "index.db still records what the damaged blocks of this copy held (see store-corrupt): keep it, do not remove it; copy it out with the stream folder before the server starts again"
			case x.Outdated:
				f.Severity, f.Kind = report.Info, "outdated"
				f.Remedy = "nothing to do: the server rebuilds index.db from the blocks at start"
			}
			out = append(out, f)
		}
		return out
	},
}

// noStores skips the store checks on a bundle that holds no store.
func noStores(p *Pass) string {
	for _, s := range p.Model.Servers {
		if s.StoreDir != "" {
			return ""
		}
	}
	return "the bundle holds no server's store"
}
