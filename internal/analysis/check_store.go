package analysis

import (
	"fmt"

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
			if c.Kind == "encrypted" {
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
				Message:  fmt.Sprintf("the store of %s is encrypted at rest (%d files sealed): without its key its message blocks, index.db, meta.inf and raft WALs cannot be read or checked, so its stream figures are not recomputed here (its raft snapshots, peers.idx and tav.idx are not encrypted and are read)", srv, len(files)),
				Evidence: shown,
				Remedy:   storeRemedy(Corruption{Kind: "encrypted"}),
			})
		}
		for _, c := range m.Corruptions {
			if c.Kind == "encrypted" {
				continue
			}
			f := report.Finding{
				Server: c.Server, Account: c.Account, Stream: c.Stream,
				File: c.File, Seq: c.Seq, Kind: c.Kind, Ranges: c.Lost,
				Message: c.Message,
			}
			if c.HasOffset {
				f.Offset = report.Ptr(c.Offset)
			}
			f.Remedy = storeRemedy(c)
			switch c.Kind {
			case "index":
				// index.db is a cache the server rebuilds from the blocks.
				f.Severity = report.Warning
			}
			out = append(out, f)
		}
		return out
	},
}

// storeRemedy says what an operator can do about a damaged file.
func storeRemedy(c Corruption) string {
	switch c.Kind {
	case "encrypted":
		return "the store is encrypted; analyze the data on the server itself or with its jetstream key"
	case "meta-checksum":
		return fmt.Sprintf("the server skips this stream at start (\"checksums do not match\"); restore %s from a backup or from a healthy replica, or recreate the stream", c.File)
	case "index":
		return "index.db is a cache: the server rebuilds it from the blocks at start; remove it on the server to force a rebuild"
	}
	save := fmt.Sprintf("Copy %s out before the server starts on it again: at start the server cuts a block at its first bad record and counts the rest as deleted. `jsforensics dump blk FILE --json` reads every record still intact after the damage.", c.File)
	switch {
	case c.Stream != "" && c.Replicas > 1:
		return save + fmt.Sprintf(" The stream is R%d: let this replica be rebuilt from a healthy one (nats stream cluster peer-remove %s %s, then scale back up).", c.Replicas, c.Stream, c.Server)
	case c.Stream != "":
		return save + " The stream has no other replica: republish what the dump recovers, or restore from a backup."
	}
	return "save the file before restarting the server; inspect it with `jsforensics dump`"
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
				Remedy:  "index.db claims what the blocks do not hold, and the server trusts a current index.db at start without re-reading the blocks: stop the server and remove " + x.File + " so it rebuilds the state from the blocks",
			}
			if x.Outdated {
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
