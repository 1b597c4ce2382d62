package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// storeModel is two servers with a store, the damage given and the
// streams whose copies they hold.
func storeModel(cs []model.Corruption, streams []*model.Stream) *model.Model {
	return &model.Model{IDs: map[string]string{}, Servers: []*model.Server{{Name: "n1", StoreDir: "s1"}, {Name: "n2", StoreDir: "s2"}},
		Corruptions: cs, Streams: streams}
}

// TestStoreCorruptOnModel: one finding per damage, its severity by what the
// damage costs, one finding per encrypted server however many files; a
// missing finding and an extra one both fail.
func TestStoreCorruptOnModel(t *testing.T) {
	blk := "s1/$G/streams/S/msgs/1.blk"
	cs := []model.Corruption{
		{Server: "n1", Account: "$G", Stream: "S", File: blk, Offset: 58, HasOffset: true, Seq: 2, Kind: natsfmt.CorruptChecksum,
			Structure: natsfmt.StructBlockRecord, Replicas: 3, Lost: []report.Range{{First: 2, Last: 2}}, IndexDB: "s1/$G/streams/S/msgs/index.db"},
		{Server: "n1", Account: "$G", Stream: "S", File: blk, Offset: 400, HasOffset: true, Seq: 9, Kind: natsfmt.CorruptChecksum,
			Structure: natsfmt.StructBlockRecord, Replicas: 3, OfDeleted: true},
		{Server: "n1", Account: "$G", Stream: "S", File: "s1/$G/streams/S/msgs/index.db", Kind: natsfmt.CorruptIndex, Structure: natsfmt.StructIndexDB},
		{Server: "n2", File: "s2/a.blk", Kind: natsfmt.CorruptEncrypted},
		{Server: "n2", File: "s2/b.blk", Kind: natsfmt.CorruptEncrypted},
	}
	fs := runCheck(store.CheckStoreCorrupt, storeModel(cs, nil))
	type got struct {
		server string
		seq    uint64
		sev    report.Severity
		kind   string
	}
	want := []got{
		{"n2", 0, report.Warning, "encrypted"},
		{"n1", 2, "", "checksum"},
		{"n1", 9, report.Warning, "checksum"},
		{"n1", 0, report.Warning, "index"},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings, want %d: %s", len(fs), len(want), summarize(fs))
	}
	for i, w := range want {
		g := got{fs[i].Server, fs[i].Seq, fs[i].Severity, fs[i].Kind}
		if g != w {
			t.Errorf("finding %d: %+v, want %+v", i, g, w)
		}
	}
	// The live record's remedy keeps index.db and saves the block before
	// the peer-remove that deletes this replica's copy.
	warnedBefore(t, fs[1].Remedy, "peer-remove", "Keep s1/$G/streams/S/msgs/index.db", "copy "+blk)
	if !strings.Contains(fs[2].Remedy, "deleted before the damage") {
		t.Errorf("deleted record's remedy: %s", fs[2].Remedy)
	}
	if fs := runCheck(store.CheckStoreCorrupt, storeModel(nil, nil)); len(fs) != 0 {
		t.Errorf("no damage, yet %s", summarize(fs))
	}
}

// TestConsumerMetaRemedy: damage to a consumer's meta files is no stream
// damage: the remedy says what the server does with the consumer (it never
// checks a consumer's meta.sum; a missing file skips the consumer) and never
// that the stream is skipped.
func TestConsumerMetaRemedy(t *testing.T) {
	for _, kind := range []natsfmt.CorruptionKind{natsfmt.CorruptMetaChecksum, natsfmt.CorruptMissing} {
		c := model.Corruption{Server: "n1", Account: "$G", Stream: "S", File: "s1/$G/streams/S/obs/C/meta.sum", Kind: kind, Structure: natsfmt.StructMetaSum}
		fs := runCheck(store.CheckStoreCorrupt, storeModel([]model.Corruption{c}, nil))
		if len(fs) != 1 {
			t.Fatalf("%s: %d findings", kind, len(fs))
		}
		r := fs[0].Remedy
		if !strings.Contains(r, "of a consumer") || strings.Contains(r, "skips this stream") || !strings.Contains(r, "s1/$G/streams/S/obs/C") {
			t.Errorf("%s: %s", kind, r)
		}
		if kind == natsfmt.CorruptMissing && !strings.Contains(r, "skips this consumer") {
			t.Errorf("missing file: %s", r)
		}
	}
}

// TestStoreCorruptEvidenceOnModel: what the server does at its next start
// with a bad block record is said from the record's facts (deleted, index.db
// current or not, what a rebuild cuts), and a meta.inf whose fields have
// the wrong type is said to make the server skip the stream; a damage
// without such facts gets no evidence of them.
func TestStoreCorruptEvidenceOnModel(t *testing.T) {
	blk := "s1/$G/streams/S/msgs/1.blk"
	bad := func(seq uint64, c model.Corruption) model.Corruption {
		c.Server, c.Account, c.Stream, c.File, c.Seq, c.Kind, c.Structure, c.Replicas = "n1", "$G", "S", blk, seq, natsfmt.CorruptChecksum, natsfmt.StructBlockRecord, 3
		c.BadRecord, c.BadSeq, c.Offset, c.HasOffset = true, seq, int64(seq)*100, true
		return c
	}
	for _, tc := range []struct {
		name    string
		c       model.Corruption
		message string // the finding's message ends so
		want    []string
	}{
		{name: "index current", c: bad(2, model.Corruption{IndexCurrent: true, Message: "m"}), message: "m",
			want: []string{`next start, index.db current (its last block and checksum match the blocks): the server trusts it and serves every message but seq 2, whose read fails its checksum ("no message found")`}},
		{name: "rebuilt", c: bad(2, model.Corruption{Rebuilds: true, RebuildCut: &model.RebuildCut{Offset: 200, Lost: report.Range{First: 2, Last: 40}, Msgs: 38}, Message: "m"}), message: "m",
			want: []string{"next start: index.db is missing or stale, so the server rebuilds this block from its records",
				"on a rebuild (index.db removed or stale) the server truncates " + blk + " at offset 200, its first bad record (rebuildStateFromBufLocked in v2.10.22, v2.12.1 and v2.15.2; v2.15.2 leaves a compressed or encrypted file uncut but stops counting there): sequences 2-40 go, the bad record and 38 intact messages after it"}},
		{name: "deleted", c: bad(9, model.Corruption{OfDeleted: true, IndexCurrent: true, Evidence: []string{"later"}, Message: "m"}), message: "m",
			want: []string{"seq 9 was deleted before the damage (a tombstone or index.db records it): no message is lost on this copy while the server does not rebuild the block", "later"}},
		{name: "torn tail", c: model.Corruption{Server: "n1", Stream: "S", File: blk, Kind: natsfmt.CorruptTornTail, Structure: natsfmt.StructBlockRecord, Message: "m"}, message: "m"},
		{name: "meta.inf fields", c: model.Corruption{Server: "n1", Stream: "S", File: "s1/$G/streams/S/meta.inf", Kind: natsfmt.CorruptUnparsable, Structure: natsfmt.StructMetaInf,
			FieldErrors: true, Message: "s1/$G/streams/S/meta.inf: fields of the wrong type (x)"},
			message: "s1/$G/streams/S/meta.inf: fields of the wrong type (x): the server cannot unmarshal it and skips the stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := runCheck(store.CheckStoreCorrupt, storeModel([]model.Corruption{tc.c}, nil))
			if len(fs) != 1 {
				t.Fatalf("%d findings: %s", len(fs), summarize(fs))
			}
			if fs[0].Message != tc.message {
				t.Errorf("message %q, want %q", fs[0].Message, tc.message)
			}
			if strings.Join(fs[0].Evidence, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("evidence:\n%s\nwant:\n%s", strings.Join(fs[0].Evidence, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
