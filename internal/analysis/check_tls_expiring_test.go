package analysis

import (
	"testing"

	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestTLSExpiringOnModel(t *testing.T) {
	day := 24 * time.Hour
	// No certificate anywhere: natscli skips.
	wantVerdict(t, audit.CheckTLSExpiring, gatherModel(nil), "skipped")
	wantVerdict(t, audit.CheckTLSExpiring, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Varz[0].Varz.TLSCertNotAfter = gatherNow.Add(90 * day)
	}), "passed")
	wantVerdict(t, audit.CheckTLSExpiring, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Varz[0].Varz.Cluster.TLSCertNotAfter = gatherNow.Add(20 * day)
	}), "warning")
	fs := wantVerdict(t, audit.CheckTLSExpiring, gatherModel(func(g *model.Gather) {
		g.Clusters[0].Servers[0].Varz[0].Varz.Cluster.TLSCertNotAfter = gatherNow.Add(20 * day)
		g.Clusters[0].Servers[1].Varz[0].Varz.LeafNode.TLSCertNotAfter = gatherNow.Add(-day)
	}), "critical")
	if len(fs) != 2 {
		t.Errorf("findings %+v", fs)
	}
}
