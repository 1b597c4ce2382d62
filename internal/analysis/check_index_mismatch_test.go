package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// TestIndexMismatchOnModel judges index.db records against the blocks'
// figures: index.db claiming what the blocks lack is a warning whose remedy
// saves index.db before removing it; one that merely stops before the
// blocks, or records what damaged blocks held, is info and says to keep it;
// differences the recovered state explains (limits write no tombstone), a
// copy without index.db and one whose folder the archive tore raise none
// (the last is said among what the check skipped). A missing finding and
// an unexpected one both fail.
func TestIndexMismatchOnModel(t *testing.T) {
	mm := func(field, idx, blk string) []storeparse.Mismatch {
		return []storeparse.Mismatch{{Scope: "stream", Field: field, Index: idx, Blocks: blk}}
	}
	cp := func(server, path string, first, last, msgs uint64, x *model.IndexRecord) *model.StreamCopy {
		if x != nil {
			x.File = path + "/msgs/index.db"
		}
		return &model.StreamCopy{Server: model.ServerID(server), Path: path, FirstSeq: first, LastSeq: last, Messages: msgs, Bytes: msgs * 10, Index: x}
	}
	claims := cp("n1", "s1/$G/streams/A", 1, 10, 10, &model.IndexRecord{FirstSeq: 1, LastSeq: 10, Msgs: 12, Bytes: 120, Mismatches: mm("msgs", "12", "10")})
	outdated := cp("n1", "s1/$G/streams/B", 1, 10, 10, &model.IndexRecord{FirstSeq: 1, LastSeq: 5, Msgs: 5, Bytes: 50, Mismatches: mm("last_seq", "5", "10")})
	damaged := cp("n1", "s1/$G/streams/C", 1, 10, 9, &model.IndexRecord{FirstSeq: 1, LastSeq: 10, Msgs: 10, Bytes: 90, Mismatches: mm("msgs", "10", "9")})
	damaged.BlockDamage = true
	limits := cp("n1", "s1/$G/streams/D", 3, 10, 8, &model.IndexRecord{FirstSeq: 3, LastSeq: 10, Msgs: 8, Bytes: 80, Mismatches: mm("msgs", "8", "10")})
	noIndex := cp("n1", "s1/$G/streams/E", 1, 10, 10, nil)
	torn := cp("n2", "s2/$G/streams/A", 1, 10, 10, &model.IndexRecord{FirstSeq: 1, LastSeq: 10, Msgs: 12, Bytes: 120, Mismatches: mm("msgs", "12", "10")})
	streams := []*model.Stream{
		{Account: "$G", Name: "A", Copies: []*model.StreamCopy{claims, torn}},
		{Account: "$G", Name: "B", Copies: []*model.StreamCopy{outdated}},
		{Account: "$G", Name: "C", Copies: []*model.StreamCopy{damaged}},
		{Account: "$G", Name: "D", Copies: []*model.StreamCopy{limits}},
		{Account: "$G", Name: "E", Copies: []*model.StreamCopy{noIndex}},
	}
	m := storeModel(nil, streams)
	m.TornFolders = map[string]bool{torn.Path: true}
	c := store.CheckIndexMismatch
	p := check.NewPass(m, facts.ComputeAll(m), &c, defaultSettings(), nil)
	fs := c.Run(p)
	type got struct {
		file, kind string
		sev        report.Severity
		message    string
	}
	want := []got{
		{claims.Index.File, "", "", "index.db disagrees with the message blocks: stream msgs: index.db 12, blocks 10"},
		{outdated.Index.File, "outdated", report.Info, "index.db is older than the blocks (written at seq 5, blocks go on to 10): the server rebuilds it at start; expected after a crash or for a store copied while running. stream last_seq: index.db 5, blocks 10"},
		{damaged.Index.File, "damage", report.Info, "index.db disagrees with the message blocks: stream msgs: index.db 10, blocks 9"},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings, want %d: %s", len(fs), len(want), summarize(fs))
	}
	for i, w := range want {
		if g := (got{fs[i].File, fs[i].Kind, fs[i].Severity, fs[i].Message}); g != w {
			t.Errorf("finding %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	warnedBefore(t, fs[0].Remedy, "remove "+claims.Index.File, "copy it out")
	if strings.Contains(fs[2].Remedy, "remove "+damaged.Index.File) {
		t.Errorf("damage: remedy removes index.db: %s", fs[2].Remedy)
	}
	if len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0], torn.Index.File) || !strings.Contains(p.Skipped[0], "not taken for an index mismatch") {
		t.Errorf("the torn folder's mismatch is not said skipped: %q", p.Skipped)
	}
	if fs := runCheck(store.CheckIndexMismatch, storeModel(nil, nil)); len(fs) != 0 {
		t.Errorf("no mismatch, yet %s", summarize(fs))
	}
}

// TestIndexMismatchReadOrder: findings come in the order the copies were
// read (store, account, folder), not the order of the model's streams.
func TestIndexMismatchReadOrder(t *testing.T) {
	x := func(p string) *model.IndexRecord {
		return &model.IndexRecord{File: p + "/msgs/index.db", LastSeq: 1, Msgs: 2, Mismatches: []storeparse.Mismatch{{Scope: "stream", Field: "msgs", Index: "2", Blocks: "1"}}}
	}
	a := &model.StreamCopy{Server: "n1", Path: "s1/$G/streams/A", LastSeq: 1, Messages: 1, Index: x("s1/$G/streams/A"), Read: 1}
	b := &model.StreamCopy{Server: "n1", Path: "s1/$G/streams/B", LastSeq: 1, Messages: 1, Index: x("s1/$G/streams/B"), Read: 0}
	fs := runCheck(store.CheckIndexMismatch, storeModel(nil, []*model.Stream{{Name: "A", Copies: []*model.StreamCopy{a}}, {Name: "B", Copies: []*model.StreamCopy{b}}}))
	if len(fs) != 2 || fs[0].Stream != "B" || fs[1].Stream != "A" {
		t.Errorf("want B then A: %s", summarize(fs))
	}
}
