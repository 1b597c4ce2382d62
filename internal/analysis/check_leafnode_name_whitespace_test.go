package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestLeafnodeNameWhitespaceOnModel(t *testing.T) {
	c := audit.CheckLeafnodeNameWhitespace
	wantVerdict(t, c, gatherModel(nil), "passed")
	wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Leafz[0].Leafz.Leafs = []capture.LeafInfo{{Name: "leaf-1", Account: "A"}}
	}), "passed")
	// The same leafnode seen by two servers: one finding for the cluster.
	fs := wantVerdict(t, c, gatherModel(func(g *model.Gather) {
		for _, i := range []int{0, 2} {
			g.Clusters[0].Servers[i].Leafz[0].Leafz.Leafs = []capture.LeafInfo{{Name: "leaf\t1", Account: "A"}, {Name: "leaf-2"}}
		}
	}), "critical")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, `"leaf\t1"`) || len(fs[0].Evidence) != 2 {
		t.Errorf("findings %+v", fs)
	}
	wantVerdict(t, c, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[1].Leafz = nil }), "skipped")
}
