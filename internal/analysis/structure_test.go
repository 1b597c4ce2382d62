package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// TestRemedyFollowsStructure: the remedy for damage is chosen by the
// structure the parser stamped on the error, not by the file's name (a
// bundle may hold renamed copies, e.g. index.db.bak or meta.sum.orig).
func TestRemedyFollowsStructure(t *testing.T) {
	for _, c := range []struct {
		c    model.Corruption
		want string
	}{
		{model.Corruption{File: "s/msgs/index.db.bak", Structure: natsfmt.StructIndexDB, Kind: natsfmt.CorruptIndex}, "index.db is a cache"},
		{model.Corruption{File: "s/meta.sum.orig", Structure: natsfmt.StructMetaSum, Kind: natsfmt.CorruptMetaChecksum, Stream: "S", Replicas: 3}, "copy meta.sum from a healthy replica"},
		{model.Corruption{File: "s/meta.inf.1", Structure: natsfmt.StructMetaInf, Kind: natsfmt.CorruptMissing, Stream: "S", Replicas: 3}, "meta.inf is missing"},
		{model.Corruption{File: "s/obs/C/o.dat~", Structure: natsfmt.StructConsumerState, Kind: natsfmt.CorruptUnparsable}, "The consumer's state or config is damaged"},
		{model.Corruption{File: "s/msgs/1.blk.saved", Structure: natsfmt.StructBlockRecord, Kind: natsfmt.CorruptChecksum, Stream: "S"}, "Only the bad record is unreadable"},
		// Named like a block but not one: no block remedy.
		{model.Corruption{File: "s/snapshots/9.blk", Structure: natsfmt.StructSnapshotTrailer, Kind: natsfmt.CorruptChecksum}, "Inspect it with `jsforensics dump`"},
	} {
		if got := remedy.RenderRemedy(store.StoreRemedy(&model.Model{}, c.c).Steps, nil); !strings.Contains(got, c.want) {
			t.Errorf("%s (%s): remedy %q, want it to say %q", c.c.File, c.c.Structure, got, c.want)
		}
	}
}
