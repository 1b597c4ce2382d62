package peers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// unsafeWindow is how close two removals must be to count as one burst: a
// group needs a few heartbeats (1 s each) and an election (4-9 s) to settle.
var unsafeWindow = check.Setting{Key: "window", Default: 30, Unit: "seconds",
	Description: "removals closer than this count as one burst"}

var CheckUnsafeMembershipChange = check.Check{
	Code:        string(report.CodeUnsafeMembershipChange),
	Severity:    report.Warning,
	Description: "peers were removed faster than the group could catch up, or a removal left fewer peers than a majority of the previous set",
	Settings:    []check.Setting{unsafeWindow},
	Requires:    []facts.Fact{facts.FactMetaSides},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, g := range m.Groups {
			removals := removalsOf(g)
			if len(removals) == 0 {
				continue
			}
			var burst []model.HistoryEvent
			flush := func() {
				if len(burst) < 2 && !leavesMinority(g, burst) {
					burst = nil
					return
				}
				var ev []string
				for _, e := range burst {
					ev = append(ev, describeHistory(m, e))
				}
				out = append(out, remedy.WithRemedy(report.Finding{Group: g.Name, Account: g.Account, Stream: g.Asset, Events: ev,
					Message: fmt.Sprintf("raft group %s lost %d peer(s) in quick succession; replicas that had not caught up may have been left as the only copies", g.Name, len(burst)),
				}, remedy.Prescribe(remedy.MembershipOneAtATime, remedy.Args{"meta": g.Kind == natsfmt.GroupMeta})))
				burst = nil
			}
			for _, e := range removals {
				if len(burst) > 0 && !within(burst[len(burst)-1], e, time.Duration(p.Setting(unsafeWindow.Key)*float64(time.Second))) {
					flush()
				}
				burst = append(burst, e)
			}
			flush()
		}
		return append(out, replacedMajorities(p)...)
	},
}

// replacedMajorities compares, stream by stream, the assignments the servers'
// own meta states hold. Where a server's older state places the stream on a
// peer set of which the current assignment keeps fewer than a majority, the
// group was moved onto new, empty peers faster than they could catch up: the
// new majority can elect a leader that never held the data.
func replacedMajorities(p *check.Pass) []report.Finding {
	m := p.Model
	removed := map[string]bool{}
	for _, s := range p.Facts.Removed() {
		removed[s] = true
	}
	type holding struct {
		peers   []string
		group   string
		servers []string
	}
	byStream := map[model.AssetKey]map[string]*holding{}
	for _, srv := range m.Servers {
		if srv.Meta == nil {
			continue
		}
		for k, a := range srv.Meta.Streams {
			ps := model.SortedCopy(a.Peers)
			key := strings.Join(ps, ",")
			if byStream[k] == nil {
				byStream[k] = map[string]*holding{}
			}
			h := byStream[k][key]
			if h == nil {
				h = &holding{peers: ps, group: a.Group}
				byStream[k][key] = h
			}
			h.servers = append(h.servers, srv.Name)
		}
	}
	var out []report.Finding
	var keys []model.AssetKey
	for k := range byStream {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].Account+keys[i].Stream < keys[j].Account+keys[j].Stream
	})
	for _, k := range keys {
		hs := byStream[k]
		if len(hs) < 2 {
			continue
		}
		// The current assignment: held by the most servers still in the
		// meta group.
		var cur *holding
		best := -1
		for _, key := range model.SortedKeys(hs) {
			n := 0
			for _, s := range hs[key].servers {
				if !removed[s] {
					n++
				}
			}
			if n > best {
				cur, best = hs[key], n
			}
		}
		for _, key := range model.SortedKeys(hs) {
			prev := hs[key]
			if prev == cur || len(prev.peers) < 2 {
				continue
			}
			kept := 0
			for _, p := range prev.peers {
				if slices.Contains(cur.peers, p) {
					kept++
				}
			}
			if kept >= natsfmt.Quorum(len(prev.peers)) {
				continue
			}
			out = append(out, remedy.WithRemedy(report.Finding{
				Group: cur.group, Account: k.Account, Stream: k.Stream,
				Events: []string{
					fmt.Sprintf("meta state of %s: %s > %s on %s", strings.Join(prev.servers, ","), k.Account, k.Stream, strings.Join(model.NamesFor(m, prev.peers), ", ")),
					fmt.Sprintf("meta state of %s: %s > %s on %s", strings.Join(cur.servers, ","), k.Account, k.Stream, strings.Join(model.NamesFor(m, cur.peers), ", ")),
				},
				Message: fmt.Sprintf("stream %s > %s was moved from %d replicas to a set that keeps only %d of them, fewer than a majority: new, empty replicas could elect a leader that never held the data", k.Account, k.Stream, len(prev.peers), kept),
			}, remedy.Prescribe(remedy.MembershipReplaceOneAtATime, nil)))
		}
	}
	return out
}

func removalsOf(g *model.Group) []model.HistoryEvent {
	var out []model.HistoryEvent
	seen := map[string]bool{}
	for _, e := range g.History {
		if e.Event != "remove-peer" || seen[e.Peer] {
			continue
		}
		seen[e.Peer] = true
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return historyBefore(out[i], out[j]) })
	return out
}

func historyBefore(a, b model.HistoryEvent) bool {
	if a.Time != nil && b.Time != nil {
		return a.Time.Before(*b.Time)
	}
	return a.Index < b.Index
}

// within says whether two events are close: by time when both are dated,
// else by raft index (consecutive entries leave no room to catch up).
func within(a, b model.HistoryEvent, d time.Duration) bool {
	if a.Time != nil && b.Time != nil {
		return b.Time.Sub(*a.Time) <= d
	}
	return b.Index > 0 && a.Index > 0 && b.Index-a.Index <= 2
}

// leavesMinority says whether a removal left fewer peers than a majority of
// the set before it, judged from the last peer-state before it.
func leavesMinority(g *model.Group, burst []model.HistoryEvent) bool {
	if len(burst) == 0 {
		return false
	}
	var before []string
	for _, e := range g.History {
		if historyBefore(burst[0], e) {
			break
		}
		if e.Event == "peer-state" && len(e.Peers) > 0 {
			before = e.Peers
		}
	}
	if len(before) == 0 {
		return false
	}
	left := len(before) - len(burst)
	return left < natsfmt.Quorum(len(before))
}

func describeHistory(m *model.Model, e model.HistoryEvent) string {
	t := "undated"
	if e.Time != nil {
		t = e.Time.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s index %d term %d %s %s (%s, %s)", t, e.Index, e.Term, e.Event, e.Peer, m.Name(e.Server), e.Source)
}
