package consumers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// A consumer the meta layer assigns that no server holds (nats-server
// #8123): a create the stream layer refused (on a WorkQueue stream, a
// consumer whose filter overlaps another's: 10100 "filtered consumer not
// unique on workqueue stream") can stay committed in the meta state while
// no server creates the consumer: no obs/<consumer> folder, no C- raft
// group, no consumer_detail in any /jsz. Every server's /healthz then
// fails on it ("JetStream consumer '<account> > <stream> > <consumer>' is
// not current": "consumer not found", from 2.12.9 "consumer assignment
// error: <why>"), which keeps a Kubernetes startup probe failing, and the
// consumer list API reports it under "missing". The maintainers' remedy
// is to delete it through the API ($JS.API.CONSUMER.DELETE), run in the
// consumermissing runs.

var CheckConsumerMissing = check.Check{
	Code:        string(report.CodeConsumerMissing),
	Severity:    report.Critical,
	Description: "a consumer the meta state (snapshot and WAL) assigns that no server holds: no obs folder in any store of its servers, no raft group, in no /jsz (nats-server #8123: a create the stream layer refused left committed); every /healthz fails on it (\"consumer not found\" or \"consumer assignment error\"); which servers' stores and captures show it absent, what a restart does per release, and the remedy (delete it through the API), proven on real servers",
	Skip: func(p *check.Pass) string {
		for _, s := range p.Model.Servers {
			if s.Meta != nil {
				return ""
			}
		}
		return "no meta state in the bundle, no _meta_ snapshot or WAL: which consumers are assigned is only there"
	},
	Run: runConsumerMissing,
}

// assignedConsumer is a consumer as the bundle's meta states assign it.
type assignedConsumer struct {
	account, stream, name string
	peers                 []string // peer ids
	a                     model.ConsumerAssignment
	metaServers           []string // the servers whose meta state assigns it
}

func runConsumerMissing(p *check.Pass) []report.Finding {
	m := p.Model
	assigned := assignedConsumers(p)
	var out []report.Finding
	for _, ac := range assigned {
		if f, ok := missingFinding(p, m, ac); ok {
			out = append(out, f)
		}
	}
	return out
}

// assignedConsumers are the consumers every meta state of the bundle that
// holds their stream assigns (a consumer one server's meta state lacks
// while another's has it is a meta state behind or ahead, not a consumer
// no server created: left out, and said so).
func assignedConsumers(p *check.Pass) []assignedConsumer {
	m := p.Model
	type key struct{ acc, stream, name string }
	seen := map[key]*assignedConsumer{}
	holding := map[model.AssetKey]int{} // meta states holding the stream
	counts := map[key]int{}
	var order []key
	for _, s := range m.Servers {
		if s.Meta == nil {
			continue
		}
		name := m.Name(s.Ref())
		for ak, as := range s.Meta.Streams {
			holding[ak]++
			for c, peers := range as.Consumers {
				k := key{ak.Account, ak.Stream, c}
				counts[k]++
				if seen[k] == nil {
					seen[k] = &assignedConsumer{account: ak.Account, stream: ak.Stream, name: c, peers: peers, a: as.ConsumerAssignments[c]}
					order = append(order, k)
				}
				seen[k].metaServers = append(seen[k].metaServers, name)
			}
		}
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.acc != b.acc {
			return a.acc < b.acc
		}
		if a.stream != b.stream {
			return a.stream < b.stream
		}
		return a.name < b.name
	})
	var out []assignedConsumer
	for _, k := range order {
		ac := seen[k]
		if counts[k] < holding[model.AssetKey{Account: k.acc, Stream: k.stream}] {
			// Not judged: the meta states disagree on it.
			continue
		}
		sort.Strings(ac.metaServers)
		out = append(out, *ac)
	}
	return out
}

// missingFinding judges one assigned consumer: a finding when no server of
// the bundle runs it and at least one of its servers shows it absent: its
// store holds the stream without the consumer's folder or raft group, or
// its /jsz lists the stream without the consumer. A server whose store
// holds the consumer counts as running it unless its own /jsz lists the
// stream without it and its /healthz fails on it (a server that did not
// load it: assigned-not-loaded).
func missingFinding(p *check.Pass, m *model.Model, ac assignedConsumer) (report.Finding, bool) {
	st := m.Stream(ac.account, ac.stream)
	what := fmt.Sprintf("%s > %s > %s", ac.account, ac.stream, ac.name)
	if st != nil {
		for _, cc := range st.ConsumerCaptures {
			if cc.Name == ac.name {
				return report.Finding{}, false // a server answered for it
			}
		}
	}
	failing := healthFailing(m, ac)
	var absent, evidence []string
	onDisk := false
	for _, srv := range m.Servers {
		var folder, group, copyPath string
		if st != nil {
			for _, c := range st.Copies {
				if c.Server != srv.ID {
					continue
				}
				for _, cs := range c.Consumers {
					if cs.Name == ac.name {
						folder = c.Path + "/obs/" + ac.name
					}
				}
				if !c.NoMeta && !c.Encrypted {
					copyPath = c.Path
				}
			}
		}
		if ac.a.Group != "" {
			for _, r := range m.RaftRecords {
				if r.Group == ac.a.Group && r.Server == srv.ID {
					group = "raft group " + ac.a.Group
					if r.Dir != "" {
						group = r.Dir
					}
				}
			}
		}
		jsz := ""
		if st != nil {
			for _, od := range st.Captured {
				if od.Server == srv.ID && od.Source == "jsz" {
					jsz = od.Path
					break
				}
			}
		}
		name := m.Name(srv.Ref())
		peer := srv.PeerID != "" && slices.Contains(ac.peers, srv.PeerID)
		if folder != "" || group != "" {
			// It is on this server's disk: absent only if the server
			// itself says it did not load it.
			if jsz == "" || !failing[srv.ID] {
				return report.Finding{}, false
			}
			onDisk = true
			held := strings.Trim(strings.Join([]string{folder, group}, ", "), ", ")
			absent = append(absent, name)
			evidence = append(evidence, fmt.Sprintf("%s: its store holds the consumer (%s) but its /jsz (%s) lists the stream with no consumer %s and its /healthz fails on it: the server did not load it", name, held, jsz, ac.name))
			continue
		}
		if !peer {
			continue
		}
		var shown []string
		if copyPath != "" && !ac.a.Memory {
			txt := fmt.Sprintf("its store holds the stream (%s) with no obs/%s folder", copyPath, ac.name)
			if ac.a.Group != "" {
				txt += fmt.Sprintf(" and no raft group %s", ac.a.Group)
			}
			shown = append(shown, txt)
		}
		if jsz != "" {
			shown = append(shown, fmt.Sprintf("its /jsz (%s) lists the stream with no consumer %s", jsz, ac.name))
		}
		if len(shown) > 0 {
			absent = append(absent, name)
			evidence = append(evidence, name+": "+strings.Join(shown, "; "))
		}
	}
	if len(absent) == 0 {
		p.Skipf("consumer %s: none of its servers' stores or captures is in the bundle", what)
		return report.Finding{}, false
	}
	sort.Strings(absent)
	f := report.Finding{Account: ac.account, Stream: ac.stream, Consumer: ac.name, Group: ac.a.Group, Kind: "assigned-not-created", Servers: absent}
	holds := "no server holds it (no folder, no raft group, in no /jsz)"
	if onDisk {
		f.Kind, holds = "assigned-not-loaded", "no server runs it (in no /jsz; the servers holding its folder did not load it)"
	}
	assigned := "the meta state of " + strings.Join(ac.metaServers, ", ")
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s assigns consumer %s (raft group %s, servers %s)%s", assigned, what, orNone(ac.a.Group),
		strings.Join(model.NamesFor(m, ac.peers), ", "), createdText(ac.a.Created)))
	f.Evidence = append(f.Evidence, evidence...)
	health, refs := healthOf(m, ac)
	f.Evidence = append(f.Evidence, health...)
	f.TimelineRefs = refs
	f.Message = fmt.Sprintf("consumer %s is assigned in the meta state but %s", what, holds)
	if len(health) > 0 {
		f.Message += fmt.Sprintf("; /healthz fails on it on %d server(s)", len(health))
	} else {
		f.Message += "; every server's /healthz fails on it (\"JetStream consumer '" + what + "' is not current\")"
	}
	args := remedy.Args{"account": ac.account, "stream": ac.stream, "consumer": ac.name}
	if onDisk {
		// Its state is on disk: deleting it would lose it.
		remedy.Prescribe(remedy.ConsumerNotLoaded, args).Apply(&f)
		return f, true
	}
	f.Evidence = append(f.Evidence, restartNote(releases.MinVersion(m)))
	remedy.Prescribe(remedy.ConsumerMissingDelete, args).Apply(&f)
	return f, true
}

// healthFailing: the servers whose newest health check naming the
// consumer fails on it.
func healthFailing(m *model.Model, ac assignedConsumer) map[model.ServerID]bool {
	needle := fmt.Sprintf("'%s > %s > %s'", ac.account, ac.stream, ac.name)
	out := map[model.ServerID]bool{}
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if strings.Contains(e.Text, needle) && strings.Contains(e.Text, "is not current") {
			out[m.ServerOf(e.Server).Ref()] = true
		}
	}
	return out
}

// healthOf is each server's newest /healthz (or logged health check) that
// fails on the consumer, with its timeline index.
func healthOf(m *model.Model, ac assignedConsumer) ([]string, []int) {
	needle := fmt.Sprintf("'%s > %s > %s'", ac.account, ac.stream, ac.name)
	last := map[model.ServerID]int{}
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if strings.Contains(e.Text, needle) && strings.Contains(e.Text, "is not current") {
			last[e.Server] = i
		}
	}
	var ids []model.ServerID
	for id := range last {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b model.ServerID) int { return strings.Compare(m.Name(a), m.Name(b)) })
	var out []string
	var refs []int
	for _, id := range ids {
		e := m.Timeline[last[id]]
		out = append(out, fmt.Sprintf("%s %s at %s (%s): %s", m.Name(id), e.Source, e.Time.UTC().Format(time.RFC3339), e.File, e.Text))
		refs = append(refs, last[id])
	}
	sort.Ints(refs)
	return out, refs
}

// restartNote is what a restart does with such an assignment, per release
// (the consumermissing runs; releases.RestartCreatesMissingConsumer).
func restartNote(v string) string {
	yes, first, known := releases.RestartCreatesMissingConsumer(v)
	refuses, _ := releases.RestartRefusesOtherConsumer(v)
	switch {
	case !known:
		return "what a restart does with it on " + orUnknown(v) + " was not run (2.12.1 and 2.12.15 created it when restarted twice, 2.15.3 at the first start and then refused the consumer it overlaps): delete it before restarting"
	case yes && refuses:
		return "a restart makes it worse on " + v + ": servers started on this state create it (\"has a filter subject that overlaps with other consumers … should be administratively deleted\"), and restarted again refuse the consumer it overlaps, which the list API then reports missing instead: delete it before restarting"
	case yes && !first:
		return "a restart does not clear it on " + v + ": servers started on this state go on failing /healthz on it; restarted again one at a time they create it (\"has a filter subject that overlaps with other consumers … should be administratively deleted\") beside the consumer it overlaps: delete it all the same"
	}
	return "a restart does not clear it on " + v
}

func orNone(s string) string {
	if s == "" {
		return "none named"
	}
	return s
}

func orUnknown(v string) string {
	if v == "" {
		return "this bundle's release"
	}
	return v
}

func createdText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ", created " + t.UTC().Format(time.RFC3339)
}
