package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/sources"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// sourceStalledModel is a hub server holding ORIGIN (recreated at created, last
// sequence originLast, its messages written after it) and a leaf server
// holding MIRROR of it through $JS.hub.API (last sequence mirrorLast,
// written at mirrorTS) and SOURCED with a source of it whose last message
// carries header.
func sourceStalledModel(originLast, mirrorLast uint64, created, mirrorTS time.Time, header string) *model.Model {
	m := &model.Model{IDs: map[string]string{}}
	hub := &model.Server{Name: "hub-0", Domain: "hub", DomainFrom: "test", StoreDir: "hub-0"}
	leaf := &model.Server{Name: "leaf-0", Domain: "leaf", DomainFrom: "test", StoreDir: "leaf-0"}
	m.Servers = []*model.Server{hub, leaf}
	origin := &model.Stream{Account: "APP", Name: "ORIGIN", Replicas: 1,
		Copies: []*model.StreamCopy{{Server: hub.Ref(), Path: "hub-0/APP/streams/ORIGIN", FirstSeq: 1, LastSeq: originLast, Messages: originLast,
			Blocks: []model.BlockSpan{{FirstSeq: 1, LastSeq: originLast, FirstTS: created.Add(time.Second).UnixNano(), LastTS: created.Add(2 * time.Second).UnixNano(), Msgs: originLast}}}},
		Created: []model.CreatedAt{{Server: hub.Ref(), Time: created, From: "meta.inf hub-0/APP/streams/ORIGIN/meta.inf"}}}
	mirror := &model.Stream{Account: "APP", Name: "MIRROR", Replicas: 1,
		Copies: []*model.StreamCopy{{Server: leaf.Ref(), Path: "leaf-0/APP/streams/MIRROR", FirstSeq: 1, LastSeq: mirrorLast, Messages: mirrorLast,
			Blocks: []model.BlockSpan{{FirstSeq: 1, LastSeq: mirrorLast, FirstTS: mirrorTS.Add(-time.Second).UnixNano(), LastTS: mirrorTS.UnixNano(), Msgs: mirrorLast}}}}}
	mirror.Link("mirror", "ORIGIN", "$JS.hub.API", "meta.inf leaf-0/APP/streams/MIRROR/meta.inf").States = []model.LinkState{{Server: leaf.Ref(), Active: 200 * time.Millisecond, File: "leaf-0-jsz.json"}}
	sourced := &model.Stream{Account: "APP", Name: "SOURCED", Replicas: 1,
		Copies: []*model.StreamCopy{{Server: leaf.Ref(), Path: "leaf-0/APP/streams/SOURCED", FirstSeq: 1, LastSeq: 10, Messages: 10, SourceSeq: 10, SourceHeader: header}}}
	sourced.Link("source", "ORIGIN", "$JS.hub.API", "meta.inf leaf-0/APP/streams/SOURCED/meta.inf")
	m.Streams = []*model.Stream{origin, mirror, sourced}
	return m
}

// TestSourceStalledModel: the check on small models of the states the
// real runs showed (domains-recreated-*), and the states next to them.
func TestSourceStalledModel(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 4, 44, 9, 0, time.UTC)
	find := func(fs []report.Finding, stream string) *report.Finding {
		for i := range fs {
			if fs[i].Code == "" {
				fs[i].Code = "source-stalled"
			}
			if fs[i].Stream == stream {
				return &fs[i]
			}
		}
		return nil
	}
	// The origin recreated with 4 messages after 10: the mirror stands at
	// 10, the source's last message came from origin sequence 10.
	m := sourceStalledModel(4, 10, t0.Add(time.Second), t0, "ORIGIN:bTMUkJQk 10 > > origin.0")
	fs := runCheck(sources.CheckSourceStalled, m)
	mf, sf := find(fs, "MIRROR"), find(fs, "SOURCED")
	if mf == nil || sf == nil || len(fs) != 2 {
		t.Fatalf("want a finding for MIRROR and one for SOURCED: %+v", fs)
	}
	if mf.Kind != "mirror" || sf.Kind != "source" || !strings.Contains(mf.Message, "origin sequence 10") || !strings.Contains(mf.Message, "last sequence is 4") || !strings.Contains(mf.Message, "domain hub") {
		t.Errorf("mirror finding %+v", mf)
	}
	if len(mf.RemedySteps) == 0 || !strings.Contains(mf.Remedy, "nats stream rm MIRROR") || !strings.Contains(sf.Remedy, "nats stream edit SOURCED") {
		t.Errorf("remedies: %q / %q", mf.Remedy, sf.Remedy)
	}
	// The source reset itself (2.15.3): its last message came from origin
	// sequence 4 of the new origin: only the mirror.
	m = sourceStalledModel(4, 10, t0.Add(time.Second), t0, "ORIGIN:bTMUkJQk 4 > > origin.0 3mXJ7Eb0")
	if fs := runCheck(sources.CheckSourceStalled, m); len(fs) != 1 || find(fs, "MIRROR") == nil {
		t.Errorf("source reset: want the mirror only: %+v", fs)
	}
	// A step later: the recreated origin past the mirror's end (13 after
	// 10), the mirror's last message older than the origin's creation.
	m = sourceStalledModel(13, 10, t0.Add(time.Second), t0, "ORIGIN:bTMUkJQk 10 > > origin.0")
	fs = runCheck(sources.CheckSourceStalled, m)
	if f := find(fs, "MIRROR"); f == nil || !strings.Contains(f.Message, "before the origin was created") {
		t.Errorf("overtaken origin: want the mirror's older lineage: %+v", fs)
	}
	// Healthy: the origin ahead of both, created before the mirror's
	// messages.
	m = sourceStalledModel(12, 10, t0.Add(-time.Hour), t0, "ORIGIN:bTMUkJQk 10 > > origin.0")
	if fs := runCheck(sources.CheckSourceStalled, m); len(fs) != 0 {
		t.Errorf("healthy mirror and source flagged: %+v", fs)
	}
	// The origin's domain not in the bundle: skipped, not judged.
	m = sourceStalledModel(4, 10, t0.Add(time.Second), t0, "ORIGIN:bTMUkJQk 10 > > origin.0")
	m.Servers[0].Domain = "other"
	if fs := runCheck(sources.CheckSourceStalled, m); len(fs) != 0 {
		t.Errorf("origin of another domain taken for the hub's: %+v", fs)
	}
}

// domainsExpect is want.json's expect of the domains-* fixtures.
type domainsExpect struct {
	Domains   map[string]string `json:"domains"`
	Recreated bool              `json:"recreated"`
	Origin    struct {
		LastSeqAfter uint64 `json:"last_seq_after"`
		CreatedAfter string `json:"created_after"`
	} `json:"origin"`
	Stalled []struct {
		Stream        string `json:"stream"`
		Kind          string `json:"kind"`
		Lag           uint64 `json:"lag"`
		Error         string `json:"error"`
		LastOriginSeq uint64 `json:"last_origin_seq"`
		LastTime      string `json:"last_msg_time"`
	} `json:"stalled"`
	Healthz  map[string]string   `json:"healthz"`
	LogLines map[string][]string `json:"log_lines"`
}

func readDomainsExpect(t *testing.T, name string) domainsExpect {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundlesDir, name, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Expect domainsExpect `json:"expect"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return w.Expect
}

// TestSourceStalledFixtures: on the real runs (a hub cluster in domain hub,
// a leaf cluster in domain leaf over leafnodes, the origin in the hub
// recreated with fewer messages), source-stalled names exactly the
// mirror and sources the servers showed stalled (their last origin
// sequence past the recreated origin's last sequence, lag 0, no error,
// every /healthz ok): the mirror and the source on 2.14.10, the mirror
// alone on 2.15.3 (whose source reset itself); the same after a restart of
// every server (domains-restarted: a restart resumes neither); a step
// later (the origin past the mirror's old end) the mirror's older
// messages; nothing on the healthy layout.
func TestSourceStalledFixtures(t *testing.T) {
	for _, name := range []string{"domains-recreated-v2.14.10", "domains-recreated-v2.15.3", "domains-restarted-v2.14.10", "domains-restarted-v2.15.3", "domains-overtaken-v2.15.3", "domains-v2.15.3"} {
		t.Run(name, func(t *testing.T) {
			x := readDomainsExpect(t, name)
			var want []string
			for _, s := range x.Stalled {
				if s.Lag != 0 || s.Error != "" {
					t.Fatalf("fixture: %s lag %d error %q, not the silent stall", s.Stream, s.Lag, s.Error)
				}
				if s.LastOriginSeq > x.Origin.LastSeqAfter {
					want = append(want, s.Stream)
					continue
				}
				// A mirror that took the new origin's messages after its
				// own older ones (origin sequences reused).
				if s.Kind == "mirror" && s.LastOriginSeq > 0 && strings.Contains(name, "overtaken") {
					want = append(want, s.Stream)
				}
			}
			for srv, h := range x.Healthz {
				if !strings.Contains(h, `"ok"`) {
					t.Fatalf("fixture: %s healthz %s", srv, h)
				}
			}
			rep := analyze(t, filepath.Join(bundlesDir, name, "bundle"))
			var got []string
			for _, f := range rep.Findings {
				if f.Code == "source-stalled" {
					got = append(got, f.Stream)
					if f.Severity != report.Warning || f.Account != "APP" || len(f.RemedySteps) == 0 {
						t.Errorf("finding %+v", f)
					}
					// Since is the origin's creation (its meta.inf), and the
					// log line of its new stream leader is on the timeline.
					created, err := time.Parse(time.RFC3339Nano, x.Origin.CreatedAfter)
					if err != nil {
						t.Fatal(err)
					}
					if f.Since == nil || f.Since.Sub(created).Abs() > time.Millisecond || len(f.TimelineRefs) == 0 {
						t.Errorf("%s: since %v (origin created %v), timeline refs %v", f.Stream, f.Since, created, f.TimelineRefs)
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("source-stalled on %v, the servers showed %v stalled", got, want)
			}
		})
	}
}

// TestSourceStalledPartialBundles: the states beside the incident's bundle
// (domains-recreated-v2.14.10: the mirror and the source stalled). With the
// captures gone (stores and logs only), the stores tell both: the mirror's
// last sequence and the source's last Nats-Stream-Source header against
// the origin's meta.inf and blocks, the domains from the logs' "Domain:"
// lines; and no meta-split. With the stores gone (captures and logs
// only), /jsz tells the mirror's last sequence against the origin's (2.14
// reports no source seq, and no message header is in a capture: the source
// cannot be judged, and is not).
func TestSourceStalledPartialBundles(t *testing.T) {
	src := filepath.Join(bundlesDir, "domains-recreated-v2.14.10", "bundle")
	judge := func(t *testing.T, dir string) []string {
		t.Helper()
		rep := analyze(t, dir)
		var got []string
		for _, f := range rep.Findings {
			switch f.Code {
			case "source-stalled":
				got = append(got, f.Stream)
			case "meta-split", "orphan-risk", "peer-unknown", "asset-lost":
				t.Errorf("%s: %s", f.Code, f.Message)
			}
		}
		slices.Sort(got)
		return got
	}
	t.Run("captures-missing", func(t *testing.T) {
		dir := copyTree(t, src)
		if err := os.RemoveAll(filepath.Join(dir, "captures")); err != nil {
			t.Fatal(err)
		}
		if got := judge(t, dir); !slices.Equal(got, []string{"MIRROR", "SOURCED"}) {
			t.Errorf("source-stalled on %v from the stores, want MIRROR and SOURCED", got)
		}
	})
	t.Run("stores-missing", func(t *testing.T) {
		dir := copyTree(t, src)
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() && e.Name() != "captures" {
				if err := os.RemoveAll(filepath.Join(dir, e.Name(), "data")); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := judge(t, dir); !slices.Equal(got, []string{"MIRROR"}) {
			t.Errorf("source-stalled on %v from the captures, want MIRROR", got)
		}
	})
}
