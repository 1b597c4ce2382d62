package analysis

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/storeparse"
)

// TestMetaBlameOnModel: store-corrupt tells which of meta.inf and meta.sum
// changed from the records alone (the real ORDERS files of v2.15.2-flat,
// one copy broken by a small function): against the meta state's config
// and another replica's meta.inf whose meta.sum verifies; without either
// the parser's message stands. Each case wants exactly one finding on the
// file named, with every phrase listed and none of those it must not say.
func TestMetaBlameOnModel(t *testing.T) {
	read := func(server, file string) []byte {
		b, err := os.ReadFile(filepath.Join(corruptBundle, "store-"+server, "$G", "streams", "ORDERS", file))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	inf, sum := read("n1", "meta.inf"), read("n1", "meta.sum")
	dir1, dir2 := "s1/$G/streams/ORDERS", "s2/$G/streams/ORDERS"
	at := func(s string) int { return bytes.Index(inf, []byte(s)) }
	flip := func(b []byte, off int, mask byte) []byte {
		b = append([]byte(nil), b...)
		b[off] ^= mask
		return b
	}
	for _, tc := range []struct {
		name      string
		inf, sum  []byte
		meta      bool // n1's meta state holds the config
		refOK     bool // n2's meta.sum verifies its meta.inf
		consumer  bool
		file      string
		offset    int64 // -1: none
		want, not []string
	}{
		{name: "meta.inf field", inf: flip(inf, at(`"old"`)+1, 1), sum: sum, meta: true, refOK: true, file: dir1 + "/meta.inf", offset: int64(at(`"old"`) + 1),
			want: []string{"changed, not meta.sum", `field "discard"`, "bit 0", "n1's meta state (snapshot+wal)"}},
		{name: "meta.inf key", inf: flip(inf, at(`"num_replicas"`)+12, 8), sum: sum, meta: true, file: dir1 + "/meta.inf", offset: int64(at(`"num_replicas"`) + 12),
			want: []string{`field "num_replica{"`, `names "num_replicas"`, "bit 3"}},
		{name: "meta.inf not utf-8", inf: flip(inf, at(`"old"`)+1, 0x80), sum: sum, meta: true, file: dir1 + "/meta.inf", offset: int64(at(`"old"`) + 1),
			want: []string{"is not UTF-8 text"}},
		{name: "meta.inf two fields", inf: flip(flip(inf, at(`"old"`)+1, 1), at(`"file"`)+1, 1), sum: sum, meta: true, file: dir1 + "/meta.inf", offset: int64(at(`"old"`) + 1),
			want: []string{`field "discard"`}, not: []string{`"storage"`}},
		{name: "meta.inf two bits", inf: flip(inf, at(`"old"`)+1, 3), sum: sum, meta: true, refOK: true, file: dir1 + "/meta.inf", offset: 0,
			want: []string{`it differs in "discard" (against the stream config in n1's meta state (snapshot+wal); n2's meta.inf`}},
		{name: "meta.sum", inf: inf, sum: flip(sum, 3, 2), meta: true, refOK: true, file: dir1 + "/meta.sum", offset: 3,
			want: []string{"changed, not meta.inf", "byte 3 differs by one bit, bit 1"}},
		{name: "replica only", inf: flip(inf, at(`"old"`)+1, 1), sum: sum, refOK: true, file: dir1 + "/meta.inf", offset: int64(at(`"old"`) + 1),
			want: []string{"n2's meta.inf (" + dir2 + "/meta.inf, its meta.sum verifies)"}, not: []string{"meta state"}},
		{name: "no reference", inf: flip(inf, at(`"old"`)+1, 1), sum: sum, file: dir1 + "/meta.sum", offset: 0,
			want: []string{"meta.sum " + string(sum)}, not: []string{"changed"}},
		{name: "consumer", inf: inf, sum: flip(sum, 3, 2), meta: true, refOK: true, consumer: true, file: dir1 + "/obs/C/meta.sum", offset: 0,
			want: []string{"either " + dir1 + "/obs/C/meta.inf or " + dir1 + "/obs/C/meta.sum changed"}, not: []string{"not meta.inf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sumFile := dir1 + "/meta.sum"
			if tc.consumer {
				sumFile = dir1 + "/obs/C/meta.sum"
			}
			err := storeparse.CheckMetaSum(sumFile, tc.sum, tc.inf, "ORDERS")
			if err == nil {
				t.Fatal("the damage left meta.sum verifying")
			}
			c := model.CorruptionFrom("n1", "$G", "ORDERS", dir1, err)
			c.Replicas = 3
			if c.Kind != natsfmt.CorruptMetaChecksum || c.Structure != natsfmt.StructMetaSum {
				t.Fatalf("parser error %v is %s %s", err, c.Kind, c.Structure)
			}
			mine := &model.StreamCopy{Server: "n1", Path: dir1, MetaInf: tc.inf, MetaSum: tc.sum}
			if tc.consumer {
				mine.MetaInf, mine.MetaSum, mine.MetaSumOK = inf, sum, true
			}
			other := &model.StreamCopy{Server: "n2", Path: dir2, MetaInf: read("n2", "meta.inf"), MetaSum: read("n2", "meta.sum"), MetaSumOK: tc.refOK}
			m := storeModel([]model.Corruption{c}, []*model.Stream{{Account: "$G", Name: "ORDERS", Replicas: 3, Copies: []*model.StreamCopy{mine, other}}})
			if tc.meta {
				m.Servers[0].Meta = &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{{Account: "$G", Stream: "ORDERS"}: {Config: read("n3", "meta.inf")}}}
			}
			fs := runCheck(store.CheckStoreCorrupt, m)
			if len(fs) != 1 || fs[0].File != tc.file {
				t.Fatalf("want one finding on %s: %s", tc.file, summarize(fs))
			}
			f := fs[0]
			switch {
			case tc.offset < 0 && f.Offset != nil, tc.offset >= 0 && (f.Offset == nil || *f.Offset != tc.offset):
				t.Errorf("offset %v, want %d", f.Offset, tc.offset)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message lacks %q: %s", w, f.Message)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(f.Message, w) {
					t.Errorf("message says %q: %s", w, f.Message)
				}
			}
			if m.Corruptions[0].File != sumFile || m.Corruptions[0].Message != err.Error() {
				t.Errorf("the check changed the model's record: %+v", m.Corruptions[0])
			}
		})
	}
}
