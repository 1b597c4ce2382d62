package meta

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var CheckMetaSplit = check.Check{
	Code:        string(report.CodeMetaSplit),
	Severity:    report.Critical,
	Description: "servers disagree on the meta group, or two meta groups were founded apart and met",
	Skip: func(p *check.Pass) string {
		if len(p.Facts.MetaSidesAll()) == 0 && len(p.Model.MetaFoundings) == 0 {
			return "no server's view of the meta group and no meta group founding is in the bundle"
		}
		return ""
	},
	Requires: []facts.Fact{facts.FactMetaSides, facts.FactFoundingSplits, facts.FactLostAssets, facts.FactSplitWinner},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		// Each JetStream domain runs a meta group of its own: views
		// disagree only within one.
		for _, sides := range facts.SidesByDomain(p.Facts.MetaSides()) {
			if len(sides) < 2 || oneLeaderOneTerm(sides) {
				continue
			}
			f := report.Finding{Group: natsfmt.MetaGroup}
			var desc []string
			for _, s := range sides {
				f.Views = append(f.Views, s.View)
				desc = append(desc, fmt.Sprintf("%s: cluster_size %d, peers %s, leader %s, term %d",
					strings.Join(s.Servers, ","), s.View.ClusterSize, strings.Join(s.View.Peers, " "), model.DashIfEmpty(s.View.Leader), s.View.Term))
			}
			f.Message = fmt.Sprintf("the servers hold %d different views of the meta group", len(sides))
			if d := sides[0].Domain; d != "" {
				f.Message = fmt.Sprintf("the servers of JetStream domain %s hold %d different views of its meta group", d, len(sides))
			}
			f.Evidence = desc
			MetaSplitRemedy(m, sides).Apply(&f)
			out = append(out, f)
		}
		for _, pair := range p.Facts.FoundingSplits() {
			a, b := pair[0], pair[1]
			f := report.Finding{Group: natsfmt.MetaGroup}
			founded := fmt.Sprintf("two meta groups were founded apart: %s elected %s, %s elected %s", facts.FoundersOf(m, a), a[0].Leader, facts.FoundersOf(m, b), b[0].Leader)
			for _, side := range [][]model.MetaFounding{a, b} {
				var srv []string
				for _, x := range side {
					srv = append(srv, m.Name(x.Server))
					f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s: first meta leader %s (%s)", x.Time.UTC().Format(time.RFC3339Nano), m.Name(x.Server), x.Leader, x.Source))
					if i := foundingEvent(m, x); i >= 0 {
						f.TimelineRefs = append(f.TimelineRefs, i)
					}
				}
				f.Views = append(f.Views, report.SplitView{Servers: srv, Leader: side[0].Leader, Peers: side[0].Peers, ClusterSize: len(side[0].Peers)})
			}
			var vanished []string
			for _, side := range [][]model.MetaFounding{a, b} {
				vanished = append(vanished, vanishedStreams(m, p.Facts, side)...)
			}
			f.Evidence = append(f.Evidence, vanished...)
			if j, ok := metaJoin(m, a, b); ok {
				met := fmt.Sprintf("%s; they met at %s", founded, j.Time.UTC().Format(time.RFC3339))
				if won, lost, why, ok := splitOutcome(p, a, b); ok {
					f.Message = fmt.Sprintf("%s, and the meta state of %s won: it replaced that of %s, %s", met, facts.FoundersOf(m, won), facts.FoundersOf(m, lost), lostSide(m, p.Facts, lost))
					f.Evidence = append([]string{why}, f.Evidence...)
				} else {
					f.Message = met + ": the meta state of the higher term replaced the other side's, whose streams were dropped without a warning"
				}
				f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s: meta leader %s, of the other side (%s)", j.Time.UTC().Format(time.RFC3339Nano), m.Name(j.Server), j.Leader, j.Source))
				f.Since = report.Ptr(j.Time)
				if j.Timeline >= 0 {
					f.TimelineRefs = append(f.TimelineRefs, j.Timeline)
				}
				remedy.Prescribe(remedy.MetaSplitMerged, remedy.Args{"v215": releases.VersionAtLeast(releases.MinVersion(m), 2, 15)}).Apply(&f)
			} else {
				f.Message = founded + "; when they meet the higher term wins and the other side's streams are dropped without a warning"
				MetaSplitRemedy(m, nil).Apply(&f)
			}
			slices.Sort(f.TimelineRefs)
			f.TimelineRefs = slices.Compact(f.TimelineRefs)
			out = append(out, f)
		}
		return out
	},
}

// metaJoin is the first time after both foundings that a founder of one
// side followed a meta leader that founded the other side: the moment the
// groups met. The founders' leaders are servers of their own side.
func metaJoin(m *model.Model, a, b []model.MetaFounding) (model.MetaLeaderState, bool) {
	var after time.Time
	for _, x := range append(slices.Clone(a), b...) {
		if x.Time.After(after) {
			after = x.Time
		}
	}
	sideOf := map[string]int{}
	for i, side := range [][]model.MetaFounding{a, b} {
		for _, x := range side {
			sideOf[m.Name(x.Server)] = i + 1
		}
	}
	var join model.MetaLeaderState
	found := false
	for _, s := range m.MetaLeaderStates {
		if s.Time.IsZero() || !s.Time.After(after) || found && !s.Time.Before(join.Time) {
			continue
		}
		from, to := sideOf[m.Name(s.Server)], sideOf[s.Leader]
		if from != 0 && to != 0 && from != to {
			join, found = s, true
		}
	}
	return join, found
}

// splitOutcome tells which of two sides founded apart won when they met:
// the side of the split's winner (facts.SplitWinner), with the evidence
// line that says why. False when the winner is a founder of neither.
func splitOutcome(p *check.Pass, a, b []model.MetaFounding) (won, lost []model.MetaFounding, why string, ok bool) {
	m := p.Model
	win := p.Facts.SplitWinner()
	if win == nil {
		return nil, nil, "", false
	}
	founds := func(side []model.MetaFounding) bool {
		return slices.ContainsFunc(side, func(x model.MetaFounding) bool { return m.Name(x.Server) == win.Name })
	}
	switch {
	case founds(a):
		won, lost = a, b
	case founds(b):
		won, lost = b, a
	default:
		return nil, nil, "", false
	}
	why = fmt.Sprintf("the meta state kept is that of %s: every stream gone from the stores was held by %s alone", facts.FoundersOf(m, won), facts.FoundersOf(m, lost))
	if p.Facts.SplitWinnerBy() != "lost assets" {
		why = fmt.Sprintf("the meta state kept is that of %s: %s's meta view carries the highest term (no stream gone from the stores tells the sides apart)", facts.FoundersOf(m, won), win.Name)
	}
	return won, lost, why, true
}

// lostSide says what the side that lost a merge lost: its streams the
// stores no longer hold (asset-lost), or, when none is known gone, that
// what only it assigned was dropped.
func lostSide(m *model.Model, f *facts.Facts, side []model.MetaFounding) string {
	var gone []string
	for _, a := range f.LostAssets() {
		if a.Consumer == "" && slices.ContainsFunc(side, func(x model.MetaFounding) bool { return slices.Contains(a.Holders, m.Name(x.Server)) }) {
			gone = append(gone, a.Account+" > "+a.Stream)
		}
	}
	if len(gone) == 0 {
		return "whose streams and consumers only it assigned were dropped without a warning (none of them is known gone from the stores)"
	}
	return fmt.Sprintf("which lost %s (%d stream(s), in no store of the bundle now), dropped without a warning", report.JoinFirst(gone, 6), len(gone))
}

// foundingEvent is the timeline index of the meta leader state a founding
// was read from, -1 if none.
func foundingEvent(m *model.Model, x model.MetaFounding) int {
	for _, s := range m.MetaLeaderStates {
		if s.Server == x.Server && s.Time.Equal(x.Time) && s.Leader == x.Leader {
			return s.Timeline
		}
	}
	return -1
}

// oneLeaderOneTerm says whether every side names the same meta leader in
// the same known term: one group whose followers have not yet applied the
// leader's membership change, not two groups. rename-v2.11.17 (run
// 2026-12-02, not committed): the leader js-0 ran the meta group at size 5
// with two renamed servers' new ids, js-1 and js-2 still at 3, all three
// naming leader LRlSnhTd in term 3; keeping one side and moving the other's
// _meta_ aside was not what recovered it (the old names beside did).
func oneLeaderOneTerm(sides []*facts.MetaSide) bool {
	for _, s := range sides {
		if s.View.Leader == "" || s.View.Term == 0 || s.View.Leader != sides[0].View.Leader || s.View.Term != sides[0].View.Term {
			return false
		}
	}
	return true
}

// metaSplitRemedy: v215 only chooses between two notes on preventing a
// new cluster's own meta group (docs/verification.md versions table, row
// supercluster-split: run on 2.15.2 only; older lines get the note that
// holds on every version).
func MetaSplitRemedy(m *model.Model, sides []*facts.MetaSide) remedy.Prescription {
	return remedy.Prescribe(remedy.MetaSplitKeepOneSide, remedy.Args{"v215": releases.VersionAtLeast(releases.MinVersion(m), 2, 15)})
}

// vanishedStreams names the lost assets (asset-lost) that the founders of
// one side held: what a merge of meta groups dropped.
func vanishedStreams(m *model.Model, f *facts.Facts, side []model.MetaFounding) []string {
	var out []string
	for _, a := range f.LostAssets() {
		for _, x := range side {
			if slices.Contains(a.Holders, m.Name(x.Server)) {
				out = append(out, fmt.Sprintf("stream %s > %s, held on this side (%s), is in no store of the bundle now: dropped when the groups met (asset-lost)", a.Account, a.Stream, strings.Join(a.Holders, ",")))
				break
			}
		}
	}
	return out
}
