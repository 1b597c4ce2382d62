package storeparse

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jsforensics/jsforensics/seqset"
)

// TestLossesAgreeWithServer scans the damaged standalone stores of
// testdata/perturbed (a real server wrote them; testdata/gen cut, tore or
// removed their blocks) and holds Losses and Resurrected to what a server of
// the same version served on a copy (oracle.json): Lost is every sequence it
// served before and not after, Resurrected every deleted one it served again.
func TestLossesAgreeWithServer(t *testing.T) {
	files, _ := filepath.Glob("../testdata/perturbed/perturbed-blocks-*/oracle.json")
	if len(files) == 0 {
		t.Fatal("no perturbed-blocks oracle")
	}
	type state struct {
		Served []SeqRange `json:"served"`
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Name    string `json:"name"`
			Streams []struct {
				Server, Stream string
				Before, After  state
			} `json:"streams"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		root := os.DirFS(filepath.Join(filepath.Dir(f), "bundle"))
		for _, st := range o.Streams {
			scan, err := ScanStream(root, "store-"+st.Server+"/$G/streams/"+st.Stream, ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var lost, back []SeqRange
			for _, l := range scan.Losses {
				lost, back = append(lost, l.Lost...), append(back, l.Resurrected...)
			}
			// The torn tail's loss is told by noteLost, in Lost.
			if len(lost) == 0 {
				lost = scan.Lost
			}
			before, after := seqset.Of(st.Before.Served...), seqset.Of(st.After.Served...)
			wantLost, wantBack := before.Subtract(after), after.Subtract(before)
			if seqset.Format(lost, 0) != wantLost.String() || seqset.Format(back, 0) != wantBack.String() {
				t.Errorf("%s %s: scan says lost %s, back %s; the server lost %s, served again %s", o.Name, st.Stream,
					seqset.Format(lost, 0), seqset.Format(back, 0), wantLost, wantBack)
			}
		}
	}
}
