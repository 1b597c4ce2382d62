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
	Settings:    []Setting{maxExamples},
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		// An encrypted store makes every file unreadable without its key:
		// one finding per server says so, not one per file.
		encrypted := map[string][]string{}
		for _, c := range m.Corruptions {
			if c.Kind == natsfmt.CorruptEncrypted {
				encrypted[m.Name(c.Server)] = append(encrypted[m.Name(c.Server)], c.File)
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
				Remedy:   storeRemedy(m, Corruption{Kind: natsfmt.CorruptEncrypted}),
			})
		}
		var damage []*Corruption
		for i := range m.Corruptions {
			if m.Corruptions[i].Kind != natsfmt.CorruptEncrypted {
				damage = append(damage, &m.Corruptions[i])
			}
		}
		key := func(i int) (string, string) {
			c := damage[i]
			return m.Name(c.Server) + "\x00" + string(corruptionSeverity(m, *c)), corruptionCause(*c)
		}
		build := func(i int) report.Finding {
			c := *damage[i]
			f := report.Finding{
				Server: m.Name(c.Server), Account: c.Account, Stream: c.Stream,
				File: c.File, Seq: c.Seq, Kind: string(c.Kind), Ranges: c.Lost,
				Message: c.Message, Evidence: c.Evidence,
			}
			if len(c.Resurrected) > 0 {
				f.Ranges = c.Resurrected
			}
			if sev := corruptionSeverity(m, c); sev != report.Critical {
				f.Severity = sev // critical is the check's own
			}
			if c.HasOffset {
				f.Offset = report.Ptr(c.Offset)
			}
			f.Remedy = storeRemedy(m, c) + extractHint(m, c.Server, c.Account, c.Stream, c.Lost)
			if c.SnapshotPeers != "" {
				version := serverVersion(m, c.Server)
				yes, known := startsFromSnapshotPeers(version)
				switch {
				case yes:
					f.Message += fmt.Sprintf("; %s (%s) starts the group from the peer state of its snapshot %s and writes it to peers.idx at its next start: nothing is lost", f.Server, version, c.SnapshotPeers)
					f.Remedy = fmt.Sprintf("Nothing to do: at its next start the server restores the group's peers from %s and rewrites peers.idx. Keep that snapshot (the clean copy); back up the group folder before any other change.", c.SnapshotPeers)
				case !known:
					f.Evidence = append(f.Evidence, fmt.Sprintf("the group's snapshot %s holds a readable peer state: 2.12.5+ and 2.14+ start from it and rewrite peers.idx (nothing lost); 2.10, 2.11 and 2.12.0-2.12.4 read peers.idx", c.SnapshotPeers))
				}
			}
			if c.EmptyFolder {
				f.Message += ": nats-server warns \"Missing stream metafile\" and skips it at start, nothing else (no stream is loaded from it, none deleted); nothing is lost"
				f.Remedy = "nothing is lost: the folder holds no file. It is likely left by a stream created or restored halfway; once no server needs it, remove it with the server stopped to silence the warning"
			}
			return f
		}
		return append(out, collapse(len(damage), key, build, int(p.Setting(maxExamples.Key)))...)
	},
}

// corruptionSeverity is critical but where the server loses nothing:
// index.db is a cache it rebuilds from the blocks, an empty folder it skips.
// The record of a deleted message costs nothing unless the block is
// rebuilt, which a current index.db prevents.
//
// tav.idx and commit.idx are warnings too: a server reading a damaged one
// starts from no vote, or from its WAL's commit, and its peers correct it.
//
// A damaged peers.idx is a warning where the server starts the group from
// its snapshot's peer state and rewrites peers.idx from it (2.12.5+, 2.14+).
func corruptionSeverity(m *Model, c Corruption) report.Severity {
	if c.EmptyFolder || c.Kind == natsfmt.CorruptIndex || c.OfDeleted && !c.Rebuilds ||
		c.Structure == natsfmt.StructTermVote || c.Structure == natsfmt.StructCommitIdx {
		return report.Warning
	}
	if yes, _ := startsFromSnapshotPeers(serverVersion(m, c.Server)); yes && c.SnapshotPeers != "" {
		return report.Warning
	}
	return report.Critical
}

// serverVersion is the version server id runs, "" when not known.
func serverVersion(m *Model, id ServerID) string {
	if s := m.serverOf(id); s != nil {
		return s.Version
	}
	return ""
}

// corruptionCause is what store-corrupt findings share when they are one
// fault repeated: the kind of damage to the same structure.
func corruptionCause(c Corruption) string {
	s := string(c.Kind) + " " + string(c.Structure)
	if c.EmptyFolder {
		s = "empty stream folders"
	}
	return s
}

// storeRemedy says what an operator can do about a damaged file, chosen by
// the file and the kind of damage. Whatever rebuilds, removes, truncates or
// peer-removes is preceded by what it destroys and how to save it.
func storeRemedy(m *Model, c Corruption) string {
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
		if strings.Contains(c.File, "/obs/") {
			// A consumer's files. nats-server checks that both exist but
			// never compares meta.sum with meta.inf (jetstream.go: v2.10.22
			// l.1379, v2.12.1 l.1546, v2.15.2 l.1326): it loads meta.inf as
			// it is, and skips the consumer only when a file is missing or
			// meta.inf does not parse. The stream is served either way.
			next := "the server loads the consumer from meta.inf as it is (it never checks a consumer's meta.sum): a changed field changes the consumer's config, and a meta.inf that no longer parses makes it skip the consumer"
			if c.Kind == natsfmt.CorruptMissing {
				next = "the server skips this consumer at start (\"Missing consumer metafile\" or \"checksum\")"
			}
			return fmt.Sprintf("%s of a consumer: %s; its stream and messages are not affected. Keep the consumer folder %s (its o.dat holds the ack state); with the server stopped, copy the consumer's meta.inf and meta.sum from a healthy replica's folder of the same consumer, or recreate the consumer with the same config and a start sequence after its ack floor.", what, next, path.Dir(c.File))
		}
		return fmt.Sprintf("%s: the server skips this stream at start and serves none of its messages, but its blocks are intact. Keep the stream folder (do not delete or recreate the stream: that removes the blocks); with the server stopped, %s.", what, fix)
	case c.Structure == natsfmt.StructIndexDB:
		return fmt.Sprintf("index.db is a cache; nothing needs removing: the server finds it unusable and rebuilds the state from the blocks at start. A rebuild cuts every block at its first bad record: if store-corrupt names a block of this stream, copy the stream folder out first (cp -a %s SAVE/) so `jsforensics dump blk FILE --json` can read the records after the damage.", path.Dir(path.Dir(c.File)))
	case c.Structure == natsfmt.StructConsumerState:
		return fmt.Sprintf("the consumer's state or config is damaged: copy %s out first, then let the consumer be recreated from its config with a start sequence after its ack floor; the stream's messages are not affected", c.File)
	case isMetaSnapshot(c.File):
		return metaSnapshotRemedy(m, c)
	case c.Structure != natsfmt.StructBlockRecord:
		return fmt.Sprintf("copy %s out before the server starts on it again; inspect it with `jsforensics dump`", c.File)
	}
	var b strings.Builder
	keep := ""
	if c.IndexDB != "" {
		keep = fmt.Sprintf(" Keep %s: do not remove it.", c.IndexDB)
	}
	if len(c.Resurrected) > 0 {
		return resurrectedRemedy(m, c)
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
	if c.Kind == natsfmt.CorruptMissing {
		// The block file itself is gone: what is left to save is the rest.
		fmt.Fprintf(&b, " First save what is left: copy the stream folder %s (its other blocks and index.db) out, with the server stopped; a backup's copy of %s is the only other source of these messages on this server.", path.Dir(path.Dir(c.File)), path.Base(c.File))
	} else {
		fmt.Fprintf(&b, " First save it: copy %s (and the stream's index.db) out, with the server stopped; `jsforensics dump blk FILE --json` reads every record still intact.", c.File)
	}
	switch {
	case c.Stream != "" && c.Replicas > 1:
		fmt.Fprintf(&b, " The stream is R%d: once the other replicas are checked to hold these sequences (replica-gap), move a healthy replica's copy of the block in, or let this replica be rebuilt, which deletes this replica's copy (saved above): `nats stream cluster peer-remove %s %s`, then scale back up.", c.Replicas, c.Stream, m.Name(c.Server))
	case c.Stream != "":
		b.WriteString(" The stream has no other replica: republish what the dump recovers, or restore from a backup.")
	}
	return b.String()
}

// resurrectedRemedy is for deleted messages whose tombstones a damaged
// block lost: nothing is lost, but the rebuild at the next start serves them
// again (standalone v2.10.27, v2.12.15 and v2.15.3 did, testdata/perturbed;
// an R3 replica took the leader's snapshot in their place).
func resurrectedRemedy(m *Model, c Corruption) string {
	var b strings.Builder
	fmt.Fprintf(&b, "No message is lost; sequences %s were deleted, and index.db is the record of it: keep %s, do not remove it. At its next start the server rebuilds this stream from its blocks, whose tombstones for them are gone, and serves those deleted messages again.", rangesText(c.Resurrected), c.IndexDB)
	fmt.Fprintf(&b, " First copy the stream folder out (cp -a %s SAVE/) with the server stopped.", path.Dir(path.Dir(c.File)))
	if c.Replicas > 1 {
		fmt.Fprintf(&b, " The stream is R%d: after the start, check that %s's replica agrees with the others (`nats stream info %s`; a replica the stream leader catches up takes its state); if these sequences are served again, delete them again (`nats stream rmm %s SEQ`).", c.Replicas, m.Name(c.Server), c.Stream, c.Stream)
	} else if c.Stream != "" {
		fmt.Fprintf(&b, " After the start, delete them again: `nats stream rmm %s SEQ` for each.", c.Stream)
	}
	return b.String()
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
