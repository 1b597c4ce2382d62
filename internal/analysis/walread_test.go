package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/seqset"
)

// TestRaftWALBlocksReadOnce: a full analysis of every committed bundle
// opens each raft WAL block once. The stream groups whose WAL holds a purge
// filtered by subject (emptyfolders-v2.12.1, emptyfolders-v2.15.2,
// v2.10.22-per-server) are replayed from what the raft loader's one pass
// kept; they used to take two more scans of that WAL, and every scan
// opened a block a second time for the first message's timestamp, which
// the raft loader does not use (6 opens per block).
func TestRaftWALBlocksReadOnce(t *testing.T) {
	replayed := map[string]bool{"emptyfolders-v2.12.1": true, "emptyfolders-v2.15.2": true, "v2.10.22-per-server": true}
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			_, opens, _ := loadCounting(t, fx.forms[0])
			wal := 0
			for name, n := range opens {
				if strings.Contains(name, "/_js_/") && strings.HasSuffix(name, ".blk") {
					wal++
					if n != 1 {
						t.Errorf("%s opened %d times, want 1", name, n)
					}
				}
			}
			if replayed[fx.name] && wal == 0 {
				t.Error("no raft WAL block opened")
			}
		})
		delete(replayed, fx.name)
	}
	for name := range replayed {
		t.Errorf("fixture %s (a filtered purge replayed from the WAL) is gone", name)
	}
}

// TestWALReplayOnePassAsSalvage: for every stream group's WAL of every
// committed bundle, the sequences the raft loader's one pass keeps
// (walReplay.record, then kept) are those extract's two passes
// (walMessages) give, in the same order.
func TestWALReplayOnePassAsSalvage(t *testing.T) {
	groups := 0
	for _, fx := range fixtures(t) {
		b, err := bundle.Open(fx.forms[0], bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		m := Load(b)
		for _, st := range m.Streams {
			for _, srv := range m.Servers {
				dir := ""
				if st.Group != "" {
					dir = groupDir(b, srv, st.Group)
				}
				if dir == "" {
					continue
				}
				var two seqset.Set
				if err := load.WALMessages(b.FS, dir, st.Group, nil, func(_ string, _ int64, _, _ uint64, sm *raftlog.StreamMsg) error {
					two.Add(sm.Seq())
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				rp := &load.WALReplay{}
				if _, err := load.WALRecords(b.FS, dir, st.Group, func(rec *raftlog.WALRecord) error { rp.Record(rec); return nil }); err != nil {
					t.Fatal(err)
				}
				if one := rp.Kept(); !slices.Equal(one, two) {
					t.Errorf("%s %s: one pass keeps %v, two passes %v", fx.name, dir, one, two)
				}
				groups++
			}
		}
		b.Close()
	}
	if groups == 0 {
		t.Fatal("no stream group WAL")
	}
}
