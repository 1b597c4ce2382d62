package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// storeModel is two servers with a store, the damage given and the
// streams whose copies they hold.
func storeModel(cs []Corruption, streams []*Stream) *Model {
	return &Model{IDs: map[string]string{}, Servers: []*Server{{Name: "n1", StoreDir: "s1"}, {Name: "n2", StoreDir: "s2"}},
		Corruptions: cs, Streams: streams}
}

// TestStoreCorruptOnModel: one finding per damage, its severity by what the
// damage costs, one finding per encrypted server however many files; a
// missing finding and an extra one both fail.
func TestStoreCorruptOnModel(t *testing.T) {
	blk := "s1/$G/streams/S/msgs/1.blk"
	cs := []Corruption{
		{Server: "n1", Account: "$G", Stream: "S", File: blk, Offset: 58, HasOffset: true, Seq: 2, Kind: natsfmt.CorruptChecksum,
			Structure: natsfmt.StructBlockRecord, Replicas: 3, Lost: []report.Range{{First: 2, Last: 2}}, IndexDB: "s1/$G/streams/S/msgs/index.db"},
		{Server: "n1", Account: "$G", Stream: "S", File: blk, Offset: 400, HasOffset: true, Seq: 9, Kind: natsfmt.CorruptChecksum,
			Structure: natsfmt.StructBlockRecord, Replicas: 3, OfDeleted: true},
		{Server: "n1", Account: "$G", Stream: "S", File: "s1/$G/streams/S/msgs/index.db", Kind: natsfmt.CorruptIndex, Structure: natsfmt.StructIndexDB},
		{Server: "n2", File: "s2/a.blk", Kind: natsfmt.CorruptEncrypted},
		{Server: "n2", File: "s2/b.blk", Kind: natsfmt.CorruptEncrypted},
	}
	fs := runCheck(checkStoreCorrupt, storeModel(cs, nil))
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
	if fs := runCheck(checkStoreCorrupt, storeModel(nil, nil)); len(fs) != 0 {
		t.Errorf("no damage, yet %s", summarize(fs))
	}
}

// TestConsumerMetaRemedy: damage to a consumer's meta files is no stream
// damage: the remedy says what the server does with the consumer (it never
// checks a consumer's meta.sum; a missing file skips the consumer) and never
// that the stream is skipped.
func TestConsumerMetaRemedy(t *testing.T) {
	for _, kind := range []natsfmt.CorruptionKind{natsfmt.CorruptMetaChecksum, natsfmt.CorruptMissing} {
		c := Corruption{Server: "n1", Account: "$G", Stream: "S", File: "s1/$G/streams/S/obs/C/meta.sum", Kind: kind, Structure: natsfmt.StructMetaSum}
		fs := runCheck(checkStoreCorrupt, storeModel([]Corruption{c}, nil))
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
