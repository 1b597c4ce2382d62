package analysis

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestDomainWhitespaceOnModel(t *testing.T) {
	wantVerdict(t, audit.CheckDomainWhitespace, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz[0].Jsz.Config.Domain = "hub" }), "passed")
	wantVerdict(t, audit.CheckDomainWhitespace, gatherModel(func(g *model.Gather) { g.Clusters[0].Servers[0].Jsz[0].Jsz.Config.Domain = "my hub" }), "warning")
}
