package diagnosis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// disabledCauses chains what a server's disabled JetStream leaves behind
// into its cause (diagnose): its stream copies behind (replica-gap) and the
// index.db files it failed to write (store-corrupt of kind index).
func disabledCauses(fs []report.Finding, used []bool) []report.Cause {
	var out []report.Cause
	for di, d := range fs {
		if d.Code != "jetstream-disabled" || used[di] {
			continue
		}
		chain := []int{di}
		behind, indexes := 0, 0
		for i, f := range fs {
			if used[i] || i == di || f.Server != d.Server {
				continue
			}
			switch {
			case f.Code == "replica-gap" && f.Kind == "behind":
				chain = append(chain, i)
				behind++
			case f.Code == "store-corrupt" && f.Kind == string(natsfmt.CorruptIndex) && d.Kind == "disk-full":
				chain = append(chain, i)
				indexes++
			}
		}
		summary := d.Message
		if indexes > 0 {
			summary += fmt.Sprintf("; %d index.db file(s) it could not write are 0 bytes (store-corrupt; rebuilt from the blocks at start)", indexes)
		}
		step := remedy.RemedyFirstStep(d)
		for _, i := range chain {
			used[i] = true
		}
		out = append(out, report.Cause{Summary: summary + ".", FirstStep: step, Severity: d.Severity, Findings: chain})
	}
	return out
}

// departureCauses chains the servers gone without peer-remove into one
// cause, with the groups they left below quorum (quorum-unreachable whose
// missing peers are all departed) as its consequences (diagnose).
func departureCauses(fs []report.Finding, used []bool) []report.Cause {
	var chain []int
	gone := map[string]bool{}
	var names []string
	for i, f := range fs {
		if f.Code == "peer-offline" && !used[i] {
			chain = append(chain, i)
			gone[f.Peer] = true
			names = append(names, f.Server)
		}
	}
	if len(chain) == 0 {
		return nil
	}
	stalledChain, stalled := model.StalledBy(fs, used, gone)
	chain = append(chain, stalledChain...)
	var behind []string
	for i, f := range fs {
		// A departed server's copy missing what the group took since.
		if f.Code == "replica-gap" && !used[i] && slices.Contains(names, f.Server) {
			chain = append(chain, i)
			behind = append(behind, f.Server+"'s copy of "+f.Account+" > "+f.Stream)
		}
	}
	summary := fmt.Sprintf("%d server(s) left without peer-remove (%s) and still count as peers", len(names), some(names))
	if len(behind) > 0 {
		summary += fmt.Sprintf("; %s missed the writes since", some(behind))
	}
	sev := report.Warning
	if len(stalled) > 0 {
		summary += fmt.Sprintf("; %d group(s) kept less than a quorum of live peers and take no writes (%s)", len(stalled), some(stalled))
	}
	for _, i := range chain {
		used[i] = true
		if fs[i].Severity == report.Critical {
			sev = report.Critical
		}
	}
	return []report.Cause{{Summary: summary + ".", FirstStep: remedy.RemedyFirstStep(fs[chain[0]]), Severity: sev, Findings: chain}}
}

// renameCauses chains the servers renamed in place into one cause, with
// the leaderless meta group it leaves as its consequence (diagnose).
func renameCauses(fs []report.Finding, used []bool) []report.Cause {
	var chain []int
	var who []string
	var meta *report.Finding
	old := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		if f.Code != "server-renamed" || used[i] {
			continue
		}
		chain = append(chain, i)
		who = append(who, strings.SplitN(f.Message, ":", 2)[0])
		old[f.Peer] = true
		if f.Group == natsfmt.MetaGroup && meta == nil {
			meta = f
		}
	}
	if len(chain) == 0 {
		return nil
	}
	// The groups the old ids leave below quorum are its consequences.
	stalledChain, stalled := model.StalledBy(fs, used, old)
	chain = append(chain, stalledChain...)
	var b strings.Builder
	fmt.Fprintf(&b, "%d server(s) renamed in place, same stores (%s): their raft groups still count the old ids, which no server answers to", len(who), strings.Join(report.FirstOf(who, maxHeadlineItems), "; "))
	if meta != nil && meta.Reachable != nil && *meta.Reachable < meta.Quorum {
		fmt.Fprintf(&b, "; the meta group (size %d, quorum %d) has %d live peer(s) and elects no leader", meta.ClusterSize, meta.Quorum, *meta.Reachable)
		for i, f := range fs {
			if f.Code == "meta-no-leader" && !used[i] {
				chain = append(chain, i)
			}
		}
	}
	if len(stalled) > 0 {
		fmt.Fprintf(&b, "; %d group(s) cannot reach quorum without the old ids (%s: quorum-unreachable)", len(stalled), some(stalled))
	}
	b.WriteString(".")
	for _, i := range chain {
		used[i] = true
	}
	return []report.Cause{{Summary: b.String(), FirstStep: remedy.RemedyFirstStep(fs[chain[0]]), Severity: report.Critical, Findings: chain}}
}

// offlineCauses: the streams and consumers the servers' release cannot load
// (asset-offline, a downgrade) as one cause, with what follows from a
// consumer it cannot decode: the leaderless meta group (meta-no-leader,
// where the meta layer stopped) and the stops no log line records
// (unclean-stop, where the servers exited).
func offlineCauses(fs []report.Finding, used []bool) []report.Cause {
	var chain []int
	var servers, offline, undecodable []string
	kinds := map[string]bool{}
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for i, f := range fs {
		if f.Code != "asset-offline" || used[i] {
			continue
		}
		chain = append(chain, i)
		add(&servers, f.Server)
		kinds[f.Kind] = true
		if f.Consumer != "" {
			add(&undecodable, f.Account+" > "+f.Stream+" > "+f.Consumer)
		} else {
			add(&offline, f.Account+" > "+f.Stream)
		}
	}
	if len(chain) == 0 {
		return nil
	}
	for i, f := range fs {
		if used[i] || slices.Contains(chain, i) {
			continue
		}
		if f.Code == "meta-no-leader" && kinds["meta-stopped"] || f.Code == "unclean-stop" && kinds["crash"] {
			chain = append(chain, i)
		}
	}
	first := fs[chain[0]]
	var what []string
	if len(offline) > 0 {
		what = append(what, fmt.Sprintf("stream(s) %s are offline on %s: the release they run cannot load them", some(offline), some(servers)))
	}
	switch {
	case kinds["crash"]:
		what = append(what, fmt.Sprintf("%s exit at start on consumer(s) %s, which their release cannot decode", some(servers), some(undecodable)))
	case kinds["meta-stopped"]:
		what = append(what, fmt.Sprintf("%s elect no meta leader: their release cannot decode consumer(s) %s", some(servers), some(undecodable)))
	case len(undecodable) > 0:
		what = append(what, fmt.Sprintf("consumer(s) %s cannot be decoded by the release %s run", some(undecodable), some(servers)))
	}
	summary := strings.Join(what, "; ") + " (asset-offline). The data is intact"
	if _, serves, ok := strings.Cut(first.Message, "The data is intact"); ok {
		if i := strings.LastIndex(serves, ". "); i >= 0 {
			tail := serves[i+2:]
			if len(offline)+len(undecodable) > 1 {
				tail = strings.Replace(tail, "serves it again", "serves them again", 1)
			}
			summary += ": " + tail
		}
	}
	for _, i := range chain {
		used[i] = true
	}
	return []report.Cause{{Summary: summary + ".", FirstStep: remedy.RemedyFirstStep(first), Severity: report.Critical, Findings: chain}}
}
