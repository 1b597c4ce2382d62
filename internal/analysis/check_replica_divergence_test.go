package analysis

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/storeparse"
)

// TestReplicaDivergenceOneSequence: one record rewritten with a valid
// checksum on one replica (the generator's small function, here on a copy
// of the flat bundle through the same reader) is one diverging sequence
// with the servers on each side.
func TestReplicaDivergenceOneSequence(t *testing.T) {
	dir := copyTree(t, flatBundle)
	p := filepath.Join(dir, "store-n1", filepath.FromSlash(ordersBlock))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Seq 40 gets another payload of the same length under a checksum
	// recomputed with the stream's key, as a replica that took a different
	// write would hold.
	key := "ORDERS-1"
	br, err := storeparse.NewBlockReader(p, strings.NewReader(string(b)), int64(len(b)), key)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := br.Next()
		if err != nil {
			t.Fatalf("seq 40 not found: %v", err)
		}
		if r.Seq == 40 && !r.Tombstone {
			resealPayload(b, r, key)
			break
		}
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if sc, err := storeparse.ScanStream(os.DirFS(dir), "store-n1/$G/streams/ORDERS", storeparse.ScanOptions{}); err != nil || len(sc.Problems) > 0 {
		t.Fatalf("the rewritten record does not pass its checksum: %v %v", err, sc.Problems)
	}
	var div []report.Finding
	for _, f := range analyze(t, dir).Findings {
		if f.Code == "replica-divergence" {
			div = append(div, f)
		}
	}
	if len(div) != 1 || !reflect.DeepEqual(div[0].Ranges, []report.Range{{First: 40, Last: 40}}) ||
		!strings.Contains(div[0].Evidence[0], "content differs between n1 | n2,n3") {
		t.Fatalf("%+v", div)
	}
}
