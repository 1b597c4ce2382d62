package analysis

import (
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func TestMetaNoLeaderNeedsPersistence(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &model.Model{}
	// A healthy start: no leader, then a leader 3 s later.
	m.MetaLeaderStates = []model.MetaLeaderState{
		{Time: t0, Server: "a", Leader: "", Source: "log", Timeline: -1},
		{Time: t0.Add(3 * time.Second), Server: "a", Leader: "b", Source: "log", Timeline: -1},
		// A short blip at the end of a log is not persistent either.
		{Time: t0.Add(time.Minute), Server: "b", Leader: "", Source: "log", Timeline: -1},
		{Time: t0.Add(time.Minute + time.Second), Server: "b", Leader: "", Source: "log", Timeline: -1},
	}
	if fs := runCheck(meta.CheckMetaNoLeader, m); len(fs) != 0 {
		t.Fatalf("flagged a healthy election: %+v", fs)
	}
	m.MetaLeaderStates = append(m.MetaLeaderStates, model.MetaLeaderState{Time: t0.Add(5 * time.Minute), Server: "b", Leader: "", Source: "log", Timeline: 3})
	fs := runCheck(meta.CheckMetaNoLeader, m)
	if len(fs) != 1 || len(fs[0].Servers) != 1 || fs[0].Servers[0] != "b" || !fs[0].Since.Equal(t0.Add(time.Minute)) {
		t.Fatalf("want b stuck since t0+1m: %+v", fs)
	}
}
