package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckGatewaysMismatch is natscli's CLUSTER_002
// (checkClusterUniformGatewayConfig): the servers of a cluster do not all
// name the same gateways in their configuration, outbound or inbound (the
// remote clusters of their /gatewayz connections marked configured). FAIL;
// SKIP when a server of a cluster has no /gatewayz in the archive.
//
// natscli compares the servers in map order and gives one example per
// neighbouring pair that differs, so its number of examples varies from
// run to run; here each cluster and direction that differs is one
// finding, naming every server's gateways.
var CheckGatewaysMismatch = check.Check{
	Code:        string(report.CodeGatewaysMismatch),
	NatscliCode: "CLUSTER_002",
	Severity:    report.Critical,
	Description: "natscli CLUSTER_002: the servers of a cluster of the nats audit gather archive do not configure the same gateways (their /gatewayz)",
	Skip:        skipper(needs(judgeGateways, gatewayzAnswers)),
	Run:         runner(needs(judgeGateways, gatewayzAnswers)),
}

func judgeGateways(_ *check.Pass, g *model.Gather) verdict {
	if why := missing(g, gatewayzPages, "/gatewayz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	var found []report.Finding
	for _, cl := range g.Clusters {
		out, in := map[string][]string{}, map[string][]string{}
		var files []string
		for i := range cl.Servers {
			s := &cl.Servers[i]
			for _, c := range s.Gatewayz {
				if c.Gatewayz == nil {
					continue
				}
				var o, n []string
				for remote, gw := range c.Gatewayz.Outbound {
					if gw.IsConfigured {
						o = append(o, remote)
					}
				}
				for remote, gws := range c.Gatewayz.Inbound {
					if slices.ContainsFunc(gws, func(gw capture.RemoteGatewayz) bool { return gw.IsConfigured }) {
						n = append(n, remote)
					}
				}
				sort.Strings(o)
				sort.Strings(n)
				out[s.Name], in[s.Name] = o, n
				files = append(files, fmt.Sprintf("%s line %d", c.File, c.Line))
			}
		}
		for _, dir := range []struct {
			name string
			by   map[string][]string
		}{{"inbound", in}, {"outbound", out}} {
			if uniform(dir.by) {
				continue
			}
			var parts []string
			for _, name := range sortedKeys(dir.by) {
				parts = append(parts, fmt.Sprintf("%s: %v", name, dir.by[name]))
			}
			f := report.Finding{Message: fmt.Sprintf("the servers of cluster %s configure different %s gateways: %s", cl.Name, dir.name, strings.Join(parts, ", ")),
				Evidence: files}
			remedy.Prescribe(remedy.GatewaysMismatch, remedy.Args{"cluster": cl.Name, "direction": dir.name, "gateways": strings.Join(parts, "; ")}).Apply(&f)
			found = append(found, f)
		}
	}
	return examples(found, fail)
}

func gatewayzPages(s *model.GatherServer) []capture.Capture { return s.Gatewayz }
func leafzPages(s *model.GatherServer) []capture.Capture    { return s.Leafz }
func accountzPages(s *model.GatherServer) []capture.Capture { return s.Accountz }

// uniform says whether every server's list in by is the same.
func uniform(by map[string][]string) bool {
	var first []string
	seen := false
	for _, l := range by {
		if seen && !slices.Equal(l, first) {
			return false
		}
		first, seen = l, true
	}
	return true
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
