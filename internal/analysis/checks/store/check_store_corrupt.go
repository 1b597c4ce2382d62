package store

import (
	"fmt"
	"path"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var CheckStoreCorrupt = check.Check{
	Code:        string(report.CodeStoreCorrupt),
	Severity:    report.Critical,
	Description: "a store file fails its checksum, is truncated, or does not parse",
	Skip:        check.NoStores,
	Settings:    []check.Setting{check.MaxExamples},
	Run: func(p *check.Pass) []report.Finding {
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
		for _, srv := range model.SortedKeys(encrypted) {
			files := encrypted[srv]
			shown := report.FirstOf(files, 5)
			out = append(out, remedy.WithRemedy(report.Finding{Server: srv, Kind: "encrypted", Severity: report.Warning, File: files[0],
				Message:  sealedMessage(srv, files, m.KeysGiven),
				Evidence: shown,
			}, StoreRemedy(m, model.Corruption{Kind: natsfmt.CorruptEncrypted})))
		}
		sized, covered := peerSizeFindings(m) // peer_size.go
		var damage []*model.Corruption
		for i := range m.Corruptions {
			if covered[m.Corruptions[i].File] && isSizeDamage(&m.Corruptions[i]) {
				continue
			}
			if m.Corruptions[i].Kind != natsfmt.CorruptEncrypted {
				damage = append(damage, &m.Corruptions[i])
			}
		}
		for _, c := range raftFileDamage(p) {
			if covered[c.File] && isSizeDamage(&c) {
				continue // peer_size.go reports it with what the server does
			}
			damage = append(damage, &c)
		}
		key := func(i int) (string, string) {
			c := damage[i]
			return m.Name(c.Server) + "\x00" + string(corruptionSeverity(m, *c)), corruptionCause(*c)
		}
		copies := copiesByPath(m)
		build := func(i int) report.Finding {
			c := *damage[i]
			blameMeta(m, copies, &c)
			f := report.Finding{
				Server: m.Name(c.Server), Account: c.Account, Stream: c.Stream,
				File: c.File, Seq: c.Seq, Kind: string(c.Kind), Ranges: c.Lost,
				Message: resurrectedMessage(m, c), Evidence: append(blockEvidence(c), c.Evidence...),
				Next: c.Next,
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
			StoreRemedy(m, c).WithNote(extractHint(m, c.Server, c.Account, c.Stream, c.Lost)).Apply(&f)
			if c.SnapshotPeers != "" {
				version := model.ServerVersion(m, c.Server)
				yes, known := releases.StartsFromSnapshotPeers(version)
				switch {
				case yes:
					f.Message += fmt.Sprintf("; %s (%s) starts the group from the peer state of its snapshot %s and writes it to peers.idx at its next start: nothing is lost", f.Server, version, c.SnapshotPeers)
					remedy.Prescribe(remedy.PeersIdxHealedBySnapshot, remedy.Args{"group": path.Base(path.Dir(c.File)), "snapshots": c.SnapshotPeers, "dropping": ""}).Apply(&f)
				case !known:
					f.Evidence = append(f.Evidence, fmt.Sprintf("the group's snapshot %s holds a readable peer state: 2.12.5+ and 2.14+ start from it and rewrite peers.idx (nothing lost); 2.10, 2.11 and 2.12.0-2.12.4 read peers.idx", c.SnapshotPeers))
				}
			}
			if c.FieldErrors {
				// json.Unmarshal into StreamConfig fails on them.
				f.Message += ": the server cannot unmarshal it and skips the stream"
			}
			if c.EmptyFolder {
				f.Message += ": nats-server warns \"Missing stream metafile\" and skips it at start, nothing else (no stream is loaded from it, none deleted); nothing is lost"
				remedy.Prescribe(remedy.StoreEmptyFolder, remedy.Args{"folder": path.Dir(c.File)}).Apply(&f)
			}
			return f
		}
		out = append(out, check.Collapse(len(damage), key, build, int(p.Setting(check.MaxExamples.Key)))...)
		return append(out, sized...)
	},
}

// blockEvidence says what the server does at its next start with a block
// record that fails its checksum: a deleted message's costs nothing while
// the block is not rebuilt; a current index.db is trusted and only that
// message fails to read; else the block is rebuilt, cut at its first bad
// record (rebuildStateFromBufLocked).
func blockEvidence(c model.Corruption) []string {
	if !c.BadRecord {
		return nil
	}
	var out []string
	switch {
	case c.OfDeleted:
		out = append(out, fmt.Sprintf("seq %d was deleted before the damage (a tombstone or index.db records it): no message is lost on this copy while the server does not rebuild the block", c.BadSeq))
	case c.IndexCurrent:
		out = append(out, fmt.Sprintf("next start, index.db current (its last block and checksum match the blocks): the server trusts it and serves every message but seq %d, whose read fails its checksum (%q)", c.BadSeq, "no message found"))
	default:
		out = append(out, "next start: index.db is missing or stale, so the server rebuilds this block from its records")
	}
	if r := c.RebuildCut; r != nil {
		out = append(out, fmt.Sprintf("on a rebuild (index.db removed or stale) the server truncates %s at offset %d, its first bad record (rebuildStateFromBufLocked in v2.10.22, v2.12.1 and v2.15.2; v2.15.2 leaves a compressed or encrypted file uncut but stops counting there): sequences %d-%d go, the bad record and %d intact messages after it",
			c.File, r.Offset, r.Lost.First, r.Lost.Last, r.Msgs))
	}
	return out
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
func corruptionSeverity(m *model.Model, c model.Corruption) report.Severity {
	if c.Unproven {
		return report.Info
	}
	if c.EmptyFolder || c.Kind == natsfmt.CorruptIndex || c.OfDeleted && !c.Rebuilds ||
		c.Structure == natsfmt.StructTermVote || c.Structure == natsfmt.StructCommitIdx {
		return report.Warning
	}
	if yes, _ := releases.StartsFromSnapshotPeers(model.ServerVersion(m, c.Server)); yes && c.SnapshotPeers != "" {
		return report.Warning
	}
	return report.Critical
}

// corruptionCause is what store-corrupt findings share when they are one
// fault repeated: the kind of damage to the same structure.
func corruptionCause(c model.Corruption) string {
	s := string(c.Kind) + " " + string(c.Structure)
	if c.EmptyFolder {
		s = "empty stream folders"
	}
	return s
}

// storeRemedy says what an operator can do about a damaged file, chosen by
// the file and the kind of damage (remedies.yaml: store-*,
// meta-snapshot-move-aside).
func StoreRemedy(m *model.Model, c model.Corruption) remedy.Prescription {
	name := string(c.Structure) // meta.inf, meta.sum: the structure is named after its file
	switch {
	case c.Kind == natsfmt.CorruptEncrypted:
		return remedy.Prescribe(remedy.StoreSealed, nil)
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
			return remedy.Prescribe(remedy.StoreConsumerMetaFiles, remedy.Args{"what": what, "next": next, "folder": path.Dir(c.File)})
		}
		return remedy.Prescribe(remedy.StoreStreamMetaFiles, remedy.Args{"what": what, "fix": fix, "folder": path.Dir(c.File)})
	case c.Structure == natsfmt.StructIndexDB:
		return remedy.Prescribe(remedy.StoreIndexDB, remedy.Args{"folder": path.Dir(path.Dir(c.File))})
	case c.Structure == natsfmt.StructConsumerState:
		return remedy.Prescribe(remedy.StoreConsumerState, remedy.Args{"file": c.File})
	case isMetaSnapshot(c.File):
		return metaSnapshotRemedy(m, c)
	case c.Structure != natsfmt.StructBlockRecord:
		return remedy.Prescribe(remedy.StoreOtherFile, remedy.Args{"file": c.File})
	}
	a := remedy.Args{"file": c.File, "indexdb": c.IndexDB, "seq": fmt.Sprint(c.Seq), "seqs": model.RangesText(c.Lost), "stream": c.Stream,
		"replicas": c.Replicas, "replicated": c.Stream != "" && c.Replicas > 1, "single": c.Stream != "" && c.Replicas <= 1}
	if c.Stream != "" {
		a["removal"] = remedy.StreamPeerRemoveCommand(c.Stream, m.Name(c.Server))
		a["server"], a["fewer"] = m.Name(c.Server), c.Replicas-1
	}
	// A rebuild copies from the leader: it brings back only what another
	// replica holds (acked-lost-v2.11.17: every copy lost 211-240, the
	// rebuilt one came back without them).
	if a["replicated"] == true && len(c.Lost) > 0 && !otherCopyHolds(m, c) {
		a["replicated"], a["noneheld"] = false, true
	}
	if len(c.Resurrected) > 0 {
		return resurrectedRemedy(m, c)
	}
	switch {
	case c.Kind == natsfmt.CorruptChecksum && c.OfDeleted:
		return remedy.Prescribe(remedy.StoreBlockDeletedRecord, a)
	case c.Kind == natsfmt.CorruptChecksum:
		return remedy.Prescribe(remedy.StoreBlockRecord, a)
	}
	a["lost"] = "what the block held from the damage on"
	if len(c.Lost) > 0 {
		a["lost"] = "sequences " + model.RangesText(c.Lost)
	}
	if c.Kind == natsfmt.CorruptMissing {
		// The block file itself is gone: what is left to save is the rest.
		a["folder"], a["block"] = path.Dir(path.Dir(c.File)), path.Base(c.File)
		return remedy.Prescribe(remedy.StoreBlockMissing, a)
	}
	return remedy.Prescribe(remedy.StoreBlockLost, a)
}

// otherCopyHolds: some other copy of c's stream holds every sequence c
// lost in its blocks.
func otherCopyHolds(m *model.Model, c model.Corruption) bool {
	st := m.Stream(c.Account, c.Stream)
	if st == nil {
		return false
	}
	lost := seqset.Of(c.Lost...)
	for _, o := range st.Copies {
		if m.Same(o.Server, c.Server) || o.Encrypted {
			continue
		}
		if held := lost.Clip(o.FirstSeq, o.LastSeq).Subtract(model.CopyMissing(m, st, o)); lost.Subtract(held).Count() == 0 {
			return true
		}
	}
	return false
}

// resurrectedRemedy is for deleted messages whose tombstones a damaged
// block lost: nothing is lost, but the rebuild at the next start serves them
// again (standalone v2.10.27, v2.12.15 and v2.15.3 did, testdata/perturbed;
// an R3 replica took the leader's snapshot in their place on 2.12.15 and
// 2.15.3, not on 2.10.27: testdata/remedies/perturbed-replica-*.json). An
// unknown version is taken for 2.10, whose step is the more careful.
func resurrectedRemedy(m *model.Model, c model.Corruption) remedy.Prescription {
	old := !releases.VersionAtLeast(model.ServerVersion(m, c.Server), 2, 11)
	return remedy.Prescribe(remedy.StoreBlockResurrected, remedy.Args{"resurrected": model.RangesText(c.Resurrected), "indexdb": c.IndexDB,
		"folder": path.Dir(path.Dir(c.File)), "stream": c.Stream, "server": m.Name(c.Server), "replicas": c.Replicas, "fewer": c.Replicas - 1,
		"catchup": c.Replicas > 1 && !old, "nocatchup": c.Replicas > 1 && old, "single": c.Stream != "" && c.Replicas <= 1,
		"othersdeleted": othersRecordDeleted(m, c)})
}

// resurrectedServed is how the scan's message ends for a block that lost
// tombstones (storeparse): what a standalone server does at its next start.
const resurrectedServed = "the server rebuilds from the blocks at its next start and serves them again"

// othersRecordDeleted: c's stream is replicated and every other copy of it
// (at least one) lacks the sequences c's lost tombstones had deleted. Then
// the cluster deletes them again on c's replica at its start
// (perturbed-tombstones-* on 2.10.27, 2.12.15 and 2.15.3: none served).
func othersRecordDeleted(m *model.Model, c model.Corruption) bool {
	st := m.Stream(c.Account, c.Stream)
	if st == nil || c.Replicas <= 1 || len(c.Resurrected) == 0 {
		return false
	}
	cmp := st.Comparison
	if cmp == nil {
		return false
	}
	res := seqset.Of(c.Resurrected...)
	others := 0
	for i, o := range cmp.Copies {
		if m.Same(o.Server, c.Server) {
			continue
		}
		// Deleted there: not a message its blocks hold (the comparison's
		// coverage), nor one whose tombstone it lost too.
		if o.Encrypted || res.Clip(o.FirstSeq, o.LastSeq).Count() != res.Count() || len(res.Intersect(seqset.Of(o.Resurrected...))) > 0 {
			return false
		}
		for _, sp := range cmp.Coverage {
			if sp.Holders&(1<<i) != 0 && len(res.Intersect(seqset.Of(sp.Range))) > 0 {
				return false
			}
		}
		others++
	}
	return others > 0
}

// resurrectedMessage is c's message with what its start does in the
// cluster when the other replicas record the deletes.
func resurrectedMessage(m *model.Model, c model.Corruption) string {
	if !othersRecordDeleted(m, c) {
		return c.Message
	}
	return strings.Replace(c.Message, resurrectedServed, fmt.Sprintf("at its next start %s holds them again, and the stream leader deletes them again from the other replicas' record (2.10.27, 2.12.15 and 2.15.3, R3: none served)", m.Name(c.Server)), 1)
}

// sealedMessage says what could not be read of a server's store sealed at
// rest: by asset, with why (no key, or not this key), and that the figures
// shown for its copies are not their content.
func sealedMessage(server string, files []string, keysGiven bool) string {
	why := "no key was given"
	if keysGiven {
		why = "the key given does not open it (see notes)"
	}
	streams, consumers, wals := model.SealedAssets(files)
	var what []string
	for _, k := range []struct {
		names []string
		one   string
	}{{streams, "stream"}, {consumers, "consumer"}, {wals, "raft WAL"}} {
		if n := len(k.names); n == 1 {
			what = append(what, fmt.Sprintf("1 %s (%s)", k.one, k.names[0]))
		} else if n > 1 {
			what = append(what, fmt.Sprintf("%d %ss (%s)", n, k.one, report.JoinFirst(k.names, 5)))
		}
	}
	return fmt.Sprintf("the store of %s is encrypted at rest and %s: %s could not be read (%d files sealed). "+
		"This says nothing of their state: their copies are listed as sealed, not as empty, and the replica comparison, index and WAL checks leave them out; "+
		"its raft snapshots, peers.idx and tav.idx are not encrypted and are read", server, why, strings.Join(what, ", "), len(files))
}

// metaSnapshotRemedy is what to do about a corrupt meta snapshot. What the
// generator's remedy run proved (metasnap-v2.12.1, metasnap-v2.15.2): with
// the damaged servers' snapshots and meta WALs moved out of their stores,
// the server with the intact snapshot is elected and installs it on them,
// and every stream comes back whole.
func metaSnapshotRemedy(m *model.Model, c model.Corruption) remedy.Prescription {
	meta := path.Dir(path.Dir(c.File))
	v := model.ServerVersion(m, c.Server)
	order := MetaSnapStartOrder(v)
	return remedy.Prescribe(remedy.MetaSnapshotMoveAside, remedy.Args{"server": m.Name(c.Server), "meta": meta, "version": model.DashIfEmpty(v),
		"stagger": order == "stagger", "together": order == "together", "ordercannottell": order == ""})
}

// metaSnapStartOrder is the start order of the damaged servers, with a
// majority of the meta peers damaged, that the remedy runs proved on v's
// release line (go run . remedies; testdata/remedies/metasnap-v2.11.17*.json,
// testdata/bundles/metasnap-*/remedy-outcome.json): "stagger" (the intact
// server and one damaged one, then the others once the intact one leads)
// on 2.11, where all together elected a damaged server; "together" on
// 2.12, 2.14 and 2.15, where 2.12.1 elected no leader from the intact
// server and one damaged one; "" where the runs show no order that works
// (2.10.27: together elected a damaged server in 2 runs of 2, the intact
// server and one damaged one no leader in 2 runs of 3; testdata/remedies/metasnap-v2.10.27*)
// or where no run was made (2.13, 2.16+).
func MetaSnapStartOrder(v string) string {
	ma, mi, _, ok := releases.ParseVersion(v)
	switch {
	case !ok || ma != 2:
		return ""
	case mi == 11:
		return "stagger"
	case mi == 12 || mi == 14 || mi == 15:
		return "together"
	}
	return ""
}

// extractHint tells a remedy what `jsforensics extract` finds of the lost
// sequences of one copy (server's; "" for none) elsewhere in the bundle:
// in other copies' blocks and in the stream group's raft WALs. "" when it
// finds none of them.
func extractHint(m *model.Model, server model.ServerID, account, stream string, lost []report.Range) string {
	st := m.Stream(account, stream)
	if st == nil || len(lost) == 0 {
		return ""
	}
	lostSet := seqset.Of(lost...)
	var parts []string
	for _, c := range st.Copies {
		if m.Same(c.Server, server) || c.Encrypted {
			continue
		}
		held := lostSet.Clip(c.FirstSeq, c.LastSeq).Subtract(model.CopyMissing(m, st, c))
		if len(held) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s's blocks", model.RangesText(held), m.Name(c.Server)))
		}
	}
	for _, srv := range model.ServersOf(m, st.WALSeqs) {
		if in := seqset.Set(st.WALSeqs[srv]).Intersect(lostSet); len(in) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s's raft WAL of %s", model.RangesText(in), m.Name(srv), st.Group))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" `jsforensics extract BUNDLE --stream '%s/%s' -o msgs.jsonl` (it writes nothing into the bundle) finds these sequences: %s.", account, stream, strings.Join(parts, "; "))
}
