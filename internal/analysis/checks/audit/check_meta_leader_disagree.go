package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// CheckMetaLeaderDisagree is natscli's META_002 (checkMetaClusterLeader):
// per cluster, a server's /jsz meta_cluster names no leader, or the
// servers name different leaders. FAIL; SKIP when a server of a cluster
// has no /jsz. meta-no-leader and meta-split say more of the meta group:
// when either reports it, this check's finding is left out.
var CheckMetaLeaderDisagree = check.Check{
	Code:        string(report.CodeMetaLeaderDisagree),
	NatscliCode: "META_002",
	Severity:    report.Critical,
	Description: "natscli META_002: the servers of a cluster of the nats audit gather archive have no meta leader, or do not agree on it (/jsz meta_cluster.leader)",
	CoveredBy:   []string{string(report.CodeMetaNoLeader), string(report.CodeMetaSplit)},
	Skip:        skipper(needs(judgeMetaLeader, jszAnswers)),
	Run:         runner(needs(judgeMetaLeader, jszAnswers)),
}

func judgeMetaLeader(_ *check.Pass, g *model.Gather) verdict {
	if why := missing(g, jszPages, "/jsz"); why != "" {
		return verdict{outcome: skip, reason: why}
	}
	var found []report.Finding
	for _, cl := range g.Clusters {
		followers := map[string][]string{}
		var evidence []string
		for _, s := range cl.Servers {
			for _, c := range s.Jsz {
				if c.Jsz.Disabled || c.Jsz.Meta == nil {
					continue
				}
				leader := c.Jsz.Meta.Leader
				if leader == "" {
					leader = "NO_LEADER"
				}
				followers[leader] = append(followers[leader], s.Name)
				evidence = append(evidence, fmt.Sprintf("%s: meta leader %s (%s line %d)", s.Name, leader, c.File, c.Line))
			}
		}
		f := report.Finding{Group: natsfmt.MetaGroup, Evidence: evidence}
		switch {
		case followers["NO_LEADER"] != nil:
			f.Message = fmt.Sprintf("members of %s have no meta leader: %s", cl.Name, strings.Join(followers["NO_LEADER"], ", "))
			f.Servers = followers["NO_LEADER"]
		case len(followers) > 1:
			leaders := make([]string, 0, len(followers))
			for l := range followers {
				leaders = append(leaders, l)
			}
			sort.Strings(leaders)
			var parts []string
			for _, l := range leaders {
				parts = append(parts, l+": "+strings.Join(followers[l], ", "))
			}
			f.Message = fmt.Sprintf("members of %s disagree on the meta leader (%s)", cl.Name, strings.Join(parts, "; "))
		default:
			continue
		}
		found = append(found, f)
	}
	return examples(found, fail)
}
