package analysis

import (
	"encoding/json"
	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"testing"
)

// TestWALReplayPastTheCap: a stream WAL longer than the messages the raft
// loader's pass holds (maxReplayMsgs, lowered here to 2) is read again
// where a replay or a Jepsen history needs its messages, and the report is
// the one the held pass gives: the bundles whose stream WALs hold a
// filtered purge, and the Jepsen fixture whose WALs hold lost values.
func TestWALReplayPastTheCap(t *testing.T) {
	for _, name := range []string{"emptyfolders-v2.12.1/bundle.zip", "v2.10.22-per-server/bundle", "acked-lost-jepsen-v2.15.2/bundle"} {
		path := bundlesDir + "/" + name
		want, err := json.Marshal(analyze(t, path))
		if err != nil {
			t.Fatal(err)
		}
		saved := load.MaxReplayMsgs
		load.MaxReplayMsgs = 2
		got, err := json.Marshal(analyze(t, path))
		load.MaxReplayMsgs = saved
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the report differs when the WAL's messages are read again past the cap", name)
		}
	}
}
