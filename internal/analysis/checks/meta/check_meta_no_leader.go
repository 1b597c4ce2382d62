package meta

import (
	"fmt"
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

var CheckMetaNoLeader = check.Check{
	Code:        string(report.CodeMetaNoLeader),
	Severity:    report.Critical,
	Description: "logs or captured JSON show the meta group without a leader, persistently",
	Settings:    []check.Setting{noLeaderPersist},
	Skip: func(p *check.Pass) string {
		if len(p.Model.MetaLeaderStates) == 0 {
			return "no log line or capture says who leads the meta group"
		}
		return ""
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var servers []string
		var since *time.Time
		var evidence []string
		var refs []int
		for _, srv := range stuckServers(m, time.Duration(p.Setting(noLeaderPersist.Key)*float64(time.Second))) {
			servers = append(servers, srv.server)
			if !srv.since.IsZero() && (since == nil || srv.since.Before(*since)) {
				t := srv.since
				since = &t
			}
			evidence = append(evidence, srv.evidence...)
			refs = append(refs, srv.refs...)
		}
		if len(servers) == 0 {
			return nil
		}
		sort.Ints(refs)
		f := report.Finding{
			Group: natsfmt.MetaGroup, Servers: servers, Since: since, Evidence: evidence, TimelineRefs: refs,
			Message: fmt.Sprintf("the meta group has no leader on %s", strings.Join(servers, ", ")),
		}
		remedy.Prescribe(remedy.MetaNoLeader, nil).Apply(&f)
		if since != nil && !since.IsZero() {
			f.Message += " since " + since.UTC().Format(time.RFC3339)
		}
		return []report.Finding{f}
	},
}

// noLeaderPersist is how long a no-leader state must last to count: a healthy
// cluster's first seconds log "no meta leader" too, and elections settle in
// well under this.
var noLeaderPersist = check.Setting{Key: "persist", Default: 30, Unit: "seconds",
	Description: "how long logs must show the meta group leaderless before it counts (a capture showing it counts at once)"}

type stuckServer struct {
	server   string
	since    time.Time
	evidence []string
	refs     []int
}

// stuckServers finds servers whose last known meta-leader state is "none"
// and stayed so for persist, or whose capture shows no leader.
func stuckServers(m *model.Model, persist time.Duration) []stuckServer {
	by := map[string][]model.MetaLeaderState{}
	for _, s := range m.MetaLeaderStates {
		by[m.Name(s.Server)] = append(by[m.Name(s.Server)], s)
	}
	var out []stuckServer
	for _, srv := range model.SortedKeys(by) {
		if s := m.Server(srv); s != nil && facts.JetStreamOffAtEnd(s) {
			continue // its meta layer is stopped: no view of the group (jetstream-disabled)
		}
		states := by[srv]
		sort.SliceStable(states, func(i, j int) bool { return states[i].Time.Before(states[j].Time) })
		last := states[len(states)-1]
		if last.Leader != "" {
			continue
		}
		// Walk back to where this leaderless stretch began.
		start := len(states) - 1
		for start > 0 && states[start-1].Leader == "" {
			start--
		}
		first := states[start]
		captured := false
		var st stuckServer
		st.server = srv
		// A capture without a time (a bare /raftz) is evidence but no date.
		for _, s := range states[start:] {
			if !s.Time.IsZero() {
				st.since = s.Time
				break
			}
		}
		for _, s := range states[start:] {
			if s.Source != "log" {
				captured = true
			}
			if s.Timeline >= 0 {
				st.refs = append(st.refs, s.Timeline)
			}
		}
		span := last.Time.Sub(first.Time)
		if !captured && span < persist {
			continue
		}
		if st.since.IsZero() {
			st.evidence = append(st.evidence, fmt.Sprintf("%s: no meta leader in an undated capture (%s)", srv, sourcesOf(states[start:])))
		} else {
			st.evidence = append(st.evidence, fmt.Sprintf("%s: no meta leader from %s to %s (%d observations: %s)", srv,
				st.since.UTC().Format(time.RFC3339Nano), last.Time.UTC().Format(time.RFC3339Nano), len(states)-start, sourcesOf(states[start:])))
		}
		out = append(out, st)
	}
	return out
}

func sourcesOf(states []model.MetaLeaderState) string {
	var out []string
	for _, s := range states {
		out = model.AppendUnique(out, s.Source)
	}
	return strings.Join(out, ",")
}
