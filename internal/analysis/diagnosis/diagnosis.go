package diagnosis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// MaxHeadline bounds a cause's headline (Cause.Summary), in characters:
// the first lines a reader sees, a few lines of a terminal. The lists a
// headline names are folded to maxHeadlineItems; a headline still longer
// (a finding's own message of that length) is cut at a clause (capHeadline).
const MaxHeadline = 600

// maxHeadlineItems bounds each list a headline names (ids, servers,
// streams, groups); the findings name them all.
const maxHeadlineItems = 6

// some is list folded for a headline: "a, b, c and 4 more".
func some(list []string) string { return report.JoinFirst(list, maxHeadlineItems) }

// capHeadline keeps s within MaxHeadline: when longer, it ends at the last
// clause boundary ("; ", else ", ", else a space) that leaves room to say
// the rest is in the cause's findings.
func capHeadline(s string) string {
	if len([]rune(s)) <= MaxHeadline {
		return s
	}
	const more = " … (the rest in this cause's findings)"
	r := []rune(s)[:MaxHeadline-len([]rune(more))]
	cut := string(r)
	for _, sep := range []string{"; ", ", ", " "} {
		if i := strings.LastIndex(cut, sep); i > len(cut)/2 {
			cut = cut[:i]
			break
		}
	}
	return strings.TrimRight(cut, " ,;:") + more
}

// diagnose links findings into causes and consequences, in the order an
// operator reads them: each chain names its cause, what follows from it, and
// the first thing to do. Findings no chain explains stand as causes of
// their own (critical and warning ones; info findings are left to the list).
// It reads only the findings (their codes, groups, peers, figures), so it is
// the same whatever the renderer. Each headline is at most MaxHeadline
// characters.
func Diagnose(fs []report.Finding) []report.Cause {
	used := make([]bool, len(fs))
	var out []report.Cause
	for _, c := range []func([]report.Finding, []bool) []report.Cause{renameCauses, departureCauses, quorumCauses, splitCauses, membershipCauses, disabledCauses, storeCauses, orphanCauses, offlineCauses} {
		out = append(out, c(fs, used)...)
	}
	for i, f := range fs {
		if used[i] || f.Severity == report.Info {
			continue
		}
		out = append(out, report.Cause{Summary: f.Message, FirstStep: remedy.RemedyFirstStep(f), Severity: f.Severity, Findings: []int{i}})
		used[i] = true
	}
	for i := range out {
		out[i].TimelineRefs = chainRefs(fs, out[i].Findings)
		out[i].Summary = capHeadline(out[i].Summary)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() < out[j].Severity.Rank() })
	return out
}

// quorumCauses: a group that cannot reach quorum, the peer ids that
// inflated it (corrupt or unknown), the leaderless meta group it leaves,
// and the orphan deletions that follow when the meta layer recovers.
func quorumCauses(fs []report.Finding, used []bool) []report.Cause {
	var out []report.Cause
	for qi, q := range fs {
		if q.Code != "quorum-unreachable" || used[qi] {
			continue
		}
		missing := map[string]bool{}
		for _, p := range q.Missing {
			missing[p] = true
		}
		var corrupt, origins []string
		chain := []int{}
		for i, f := range fs {
			if f.Code == "peer-id-corrupt" && f.Group == q.Group && missing[f.Peer] && !used[i] {
				chain = append(chain, i)
				corrupt = append(corrupt, fmt.Sprintf("%q", f.Peer))
				if f.LikelyOrigin != nil {
					origins = model.AppendUnique(origins, f.LikelyOrigin.Server)
				}
			}
		}
		chain = append(chain, qi)
		reachable := 0
		if q.Reachable != nil {
			reachable = *q.Reachable
		}
		var b strings.Builder
		if len(corrupt) > 0 {
			fmt.Fprintf(&b, "%d corrupted peer id(s) (%s", len(corrupt), some(corrupt))
			if len(origins) > 0 {
				sort.Strings(origins)
				fmt.Fprintf(&b, ": bit flips of the ids of %s", some(origins))
			}
			fmt.Fprintf(&b, ") inflated raft group %s to %d peers", q.Group, q.ClusterSize)
		} else {
			fmt.Fprintf(&b, "raft group %s counts %d peers, %d of which no server of the bundle is (%s)", q.Group, q.ClusterSize, len(q.Missing), some(q.Missing))
		}
		fmt.Fprintf(&b, "; its quorum of %d cannot be reached with the %d peers that exist, so no leader can be elected", q.Quorum, reachable)
		if q.Group == natsfmt.MetaGroup {
			for i, f := range fs {
				if f.Code == "meta-no-leader" && !used[i] {
					chain = append(chain, i)
					fmt.Fprintf(&b, " (%s)", f.Message)
				}
			}
			var streams, consumers int
			for i, f := range fs {
				if f.Code != "orphan-risk" || used[i] {
					continue
				}
				chain = append(chain, i)
				if f.Consumer != "" {
					consumers++
				} else {
					streams++
				}
			}
			if streams+consumers > 0 {
				fmt.Fprintf(&b, ". When the meta layer recovers, %d stream cop(ies) and %d consumer(s) it does not assign are deleted as orphans: save them first (orphan-risk)", streams, consumers)
			}
		}
		b.WriteString(".")
		for _, i := range chain {
			used[i] = true
		}
		out = append(out, report.Cause{Summary: b.String(), FirstStep: remedy.RemedyFirstStep(q), Severity: report.Critical, Findings: chain})
	}
	return out
}

// splitCauses: meta groups that disagree or were founded apart, and the
// copies the surviving side deletes.
func splitCauses(fs []report.Finding, used []bool) []report.Cause {
	var out []report.Cause
	for si, s := range fs {
		if s.Code != "meta-split" || used[si] {
			continue
		}
		chain := []int{si}
		var atRisk, lost []string
		for i, f := range fs {
			if used[i] || i == si {
				continue
			}
			split := slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.HasPrefix(e, "meta-split") })
			switch {
			case f.Code == "orphan-risk" && split:
				chain = append(chain, i)
				atRisk = model.AppendUnique(atRisk, f.Account+" > "+f.Stream)
			case f.Code == "asset-lost":
				chain = append(chain, i)
				if name := f.Account + " > " + f.Stream; !strings.Contains(s.Message, name) { // named by the split already
					lost = model.AppendUnique(lost, name)
				}
			}
		}
		summary := s.Message
		if len(lost) > 0 {
			summary += fmt.Sprintf("; %s (%d stream(s)) %s in no store of the bundle now", some(lost), len(lost), model.Plural(len(lost), "is", "are"))
		}
		if len(atRisk) > 0 {
			summary += fmt.Sprintf("; the side that loses drops %s (%d stream(s)): save them before the groups meet again", some(atRisk), len(atRisk))
		}
		for _, i := range chain {
			used[i] = true
		}
		out = append(out, report.Cause{Summary: summary + ".", FirstStep: remedy.RemedyFirstStep(s), Severity: report.Critical, Findings: chain})
	}
	return out
}

// membershipCauses: peers removed faster than a stream's group could catch
// up, and the divergence, gaps and lost writes on that stream that follow.
func membershipCauses(fs []report.Finding, used []bool) []report.Cause {
	var out []report.Cause
	for ui, u := range fs {
		if u.Code != "unsafe-membership-change" || used[ui] || u.Stream == "" {
			continue
		}
		chain := []int{ui}
		var effects []string
		for i, f := range fs {
			if !used[i] && i != ui && f.Account == u.Account && f.Stream == u.Stream &&
				(f.Code == "replica-divergence" || f.Code == "replica-gap" || f.Code == "acked-lost") {
				chain = append(chain, i)
				effects = append(effects, f.Message)
			}
		}
		if len(chain) == 1 {
			continue // a risk with no consequence seen: it stands alone
		}
		for _, i := range chain {
			used[i] = true
		}
		out = append(out, report.Cause{
			Summary:   u.Message + "; and so: " + strings.Join(report.FirstOf(effects, 2), "; ") + ".",
			FirstStep: remedy.RemedyFirstStep(fs[chain[1]]), Severity: report.Critical, Findings: chain,
		})
	}
	return out
}

// orphanCauses: per server, the stored streams and consumers its own meta
// state does not assign, deleted once its meta layer recovers.
func orphanCauses(fs []report.Finding, used []bool) []report.Cause {
	var order []string
	by := map[string][]int{}
	for i, f := range fs {
		if f.Code == "orphan-risk" && !used[i] {
			if by[f.Server] == nil {
				order = append(order, f.Server)
			}
			by[f.Server] = append(by[f.Server], i)
		}
	}
	var out []report.Cause
	for _, srv := range order {
		chain := by[srv]
		var streams, consumers []string
		for _, i := range chain {
			used[i] = true
			if f := fs[i]; f.Consumer != "" {
				consumers = append(consumers, f.Stream+" > "+f.Consumer)
			} else {
				streams = append(streams, f.Account+" > "+f.Stream)
			}
		}
		var what []string
		if len(streams) > 0 {
			what = append(what, fmt.Sprintf("%d stream(s) (%s)", len(streams), some(streams)))
		}
		if len(consumers) > 0 {
			what = append(what, fmt.Sprintf("%d consumer(s) (%s)", len(consumers), some(consumers)))
		}
		out = append(out, report.Cause{
			Summary:   fmt.Sprintf("%s stores %s that its own meta state does not assign: it deletes them as orphans once its meta layer recovers.", srv, strings.Join(what, " and ")),
			FirstStep: fmt.Sprintf("Before %s starts again, copy the stream folders named in its orphan-risk findings out of its store.", srv),
			Severity:  report.Critical, Findings: chain,
		})
	}
	return out
}

// storeCauses: damage to one stream's files, with the replica gaps and lost
// writes on that stream it explains.
func storeCauses(fs []report.Finding, used []bool) []report.Cause {
	type key struct{ account, stream string }
	var order []key
	by := map[key][]int{}
	for i, f := range fs {
		if f.Code == "store-corrupt" && f.Stream != "" && f.Severity != report.Info && !used[i] {
			k := key{f.Account, f.Stream}
			if by[k] == nil {
				order = append(order, k)
			}
			by[k] = append(by[k], i)
		}
	}
	var out []report.Cause
	for _, k := range order {
		chain := by[k]
		var servers []string
		sev := report.Warning
		for _, i := range chain {
			servers = model.AppendUnique(servers, fs[i].Server)
			if fs[i].Severity == report.Critical {
				sev = report.Critical
			}
		}
		for i, f := range fs {
			if !used[i] && f.Account == k.account && f.Stream == k.stream && (f.Code == "replica-gap" || f.Code == "acked-lost") && !slices.Contains(chain, i) {
				chain = append(chain, i)
			}
		}
		summary := fmt.Sprintf("stream %s > %s is damaged on %s: %s", k.account, k.stream, some(servers), fs[chain[0]].Message)
		if n := len(by[k]); n > 1 {
			summary += fmt.Sprintf(" (and %d more damaged file(s))", n-1)
		}
		for _, i := range chain {
			used[i] = true
		}
		out = append(out, report.Cause{Summary: summary, FirstStep: remedy.RemedyFirstStep(fs[chain[0]]), Severity: sev, Findings: chain})
	}
	return out
}

// chainRefs is the union of the chain's findings' timeline references.
func chainRefs(fs []report.Finding, chain []int) []int {
	var refs []int
	for _, i := range chain {
		refs = append(refs, fs[i].TimelineRefs...)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}
