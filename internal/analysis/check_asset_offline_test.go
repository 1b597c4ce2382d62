package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/offline"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// A small model: s1 ran 2.14.10, then 2.11.17 (its log's boots); its store
// holds a counter stream (level 2), a TTL stream (level 1) and an ordinary
// one. s2 runs 2.14.10 on the same streams, s3 a release the bundle does
// not name. Only s1's counter stream is offline; s3 is left unjudged (said
// in the outcome); the finding names the release that served it before.
func TestAssetOfflineOnModel(t *testing.T) {
	at := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	ev := func(srv, kind, text string, line int) model.TimelineEvent {
		return model.TimelineEvent{Time: at.Add(time.Duration(line) * time.Second), Server: model.ServerID(srv), Source: "log", Kind: kind, Text: text, File: srv + ".log", Line: line}
	}
	m := &model.Model{IDs: map[string]string{}, Timeline: []model.TimelineEvent{
		ev("s1", "start", "Starting nats-server", 1),
		ev("s1", "version", "  Version:  2.14.10", 2),
		ev("s1", "start", "Starting nats-server", 30),
		ev("s1", "version", "  Version:  2.11.17", 31),
	}}
	for _, s := range []struct{ name, version string }{{"s1", "2.11.17"}, {"s2", "2.14.10"}, {"s3", ""}} {
		m.Servers = append(m.Servers, &model.Server{ID: model.ServerID(s.name), Name: s.name, Version: s.version, StoreDir: s.name + "/jetstream",
			Sources: map[string]bool{"store": true, "log": true}})
	}
	cfgs := map[string]string{
		"COUNTER": `{"name":"COUNTER","allow_msg_counter":true,"metadata":{"_nats.req.level":"2"}}`,
		"TTL":     `{"name":"TTL","allow_msg_ttl":true,"metadata":{"_nats.req.level":"1"}}`,
		"ORDERS":  `{"name":"ORDERS","metadata":{"_nats.req.level":"0"}}`,
	}
	for _, name := range []string{"COUNTER", "ORDERS", "TTL"} {
		st := &model.Stream{Account: "$G", Name: name, Replicas: 3}
		for _, s := range m.Servers {
			st.Copies = append(st.Copies, &model.StreamCopy{Server: s.ID, Path: s.Name + "/jetstream/$G/streams/" + name, Messages: 6, LastSeq: 6, MetaInf: []byte(cfgs[name])})
		}
		m.Streams = append(m.Streams, st)
	}
	fs, outcomes := runChecks(m, []check.Check{offline.CheckAssetOffline}, defaultSettings(), nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one (COUNTER on s1)", fs)
	}
	f := fs[0]
	if f.Code != "asset-offline" || f.Server != "s1" || f.Stream != "COUNTER" || f.Kind != "offline" || f.Severity != report.Critical {
		t.Errorf("finding %+v", f)
	}
	for _, want := range []string{"2.11.17 (API level 1)", "API level 2", "allow_msg_counter", "intact", "6 messages", "nats-server 2.14.10, which ran these servers before"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if f.Messages == nil || *f.Messages != 6 {
		t.Errorf("messages %v, want 6", f.Messages)
	}
	assertOfflineRemedy(t, "model", f, "2.14.10")
	if o := outcomes[0]; o.Outcome != check.OutcomeFailed || len(o.Skipped) != 1 || !strings.Contains(o.Skipped[0], "s3") {
		t.Errorf("outcome %+v, want failed with s3 left unjudged", o)
	}

	// One step earlier: s1 still on 2.14.10 (its second boot never
	// happened): nothing is offline.
	m.Servers[0].Version = "2.14.10"
	m.Timeline = m.Timeline[:2]
	if fs, _ := runChecks(m, []check.Check{offline.CheckAssetOffline}, defaultSettings(), nil); len(fs) != 0 {
		t.Errorf("on 2.14.10: %+v, want none", fs)
	}

	// A consumer whose ack policy 2.12.15 cannot decode, in the meta state:
	// the meta layer stops on every server, host or not.
	m.Servers[0].Version = "2.12.15"
	m.Servers[0].Meta = &model.MetaState{Source: "snapshot+wal", Streams: map[model.AssetKey]*model.Assignment{
		{Account: "$G", Stream: "ORDERS"}: {Account: "$G", Stream: "ORDERS", Peers: []string{"other"}, Config: json.RawMessage(cfgs["ORDERS"]),
			ConsumerConfigs: map[string]json.RawMessage{"FC": json.RawMessage(`{"durable_name":"FC","ack_policy":"flow_control","metadata":{"_nats.req.level":"4"}}`),
				"PROC": json.RawMessage(`{"durable_name":"PROC","ack_policy":"explicit","metadata":{"_nats.req.level":"0"}}`)}},
	}}
	fs, _ = runChecks(m, []check.Check{offline.CheckAssetOffline}, defaultSettings(), nil)
	if len(fs) != 1 || fs[0].Consumer != "FC" || fs[0].Kind != "meta-stopped" || fs[0].Server != "s1" {
		t.Fatalf("findings %+v, want meta-stopped for FC on s1", fs)
	}
	if !strings.Contains(fs[0].Message, "ack_policy flow_control") || !strings.Contains(fs[0].Message, "no meta leader") {
		t.Errorf("message: %s", fs[0].Message)
	}
}

// assertOfflineRemedy: the data is intact, so the remedy runs a release that
// supports the asset (release, when the servers ran one before) and no
// action deletes, purges or recreates anything.
func assertOfflineRemedy(t *testing.T, where string, f report.Finding, release string) {
	t.Helper()
	if f.RemedyID != "asset-offline-newer-release" {
		t.Fatalf("%s: remedy %q", where, f.RemedyID)
	}
	acted, noted := false, false
	for _, s := range f.RemedySteps {
		low := strings.ToLower(s.Text)
		switch s.Kind {
		case "action":
			for _, bad := range []string{"delete", "purge", "recreate", "remove"} {
				if strings.Contains(low, bad) {
					t.Errorf("%s: an action says %q: %s", where, bad, s.Text)
				}
			}
			if strings.Contains(s.Text, "nats-server "+release) {
				acted = true
			}
		case "note":
			noted = noted || strings.Contains(low, "intact")
		}
	}
	if !acted || !noted {
		t.Errorf("%s: remedy steps %+v: want an action running nats-server %s and a note that the data is intact", where, f.RemedySteps, release)
	}
	if strings.Contains(f.Remedy, "{{") {
		t.Errorf("%s: remedy holds a placeholder: %s", where, f.Remedy)
	}
}

// downgradeWant is the part of a downgrade bundle's want.json the tests read.
type downgradeWant struct {
	Servers []struct {
		Name string `json:"name"`
	} `json:"servers"`
	Stopped []struct {
		Name string `json:"name"`
	} `json:"stopped_servers"`
	Expect struct {
		From, To   string
		Consumer   bool   `json:"consumer"`
		Crash      bool   `json:"crash"`
		MetaLeader string `json:"meta_leader"`
		Streams    []struct {
			Name      string `json:"name"`
			Messages  uint64 `json:"messages"`
			Offline   bool   `json:"offline"`
			InfoError *struct {
				ErrCode int `json:"err_code"`
			} `json:"info_error"`
			Consumers map[string]struct {
				ReqLevel string `json:"req_level"`
			} `json:"consumers"`
		} `json:"streams"`
		Exited map[string][]string `json:"exited"`
		Rerun  struct {
			Intact bool `json:"intact"`
		} `json:"rerun"`
	} `json:"expect"`
}

var downgradeFixtures = []string{
	"downgrade-v2.14.10-to-v2.11.17",
	"downgrade-v2.15.3-to-v2.12.15",
	"downgrade-consumer-v2.14.10-to-v2.12.15",
	"downgrade-consumer-v2.14.10-to-v2.11.17",
}

// On the downgrade fixtures (real servers: streams and a consumer made on
// 2.14.10 or 2.15.3, the stores started on 2.11.17 or 2.12.15): per server,
// asset-offline for exactly the streams the older release answered 10194
// "stream is offline" for (the counter and atomic streams on 2.11.17, the
// fast-batch stream on 2.12.15; not the TTL stream on 2.11.17 nor the
// counter stream on 2.12.15, which they served), kind offline, with the
// stream's messages; for the flow_control consumer, crash where 2.11.17
// exited and meta-stopped where 2.12.15 elected no meta leader. Never
// asset-lost or orphan-risk; the remedy runs the release that made them,
// which served every message again (the runs' rerun).
func TestAssetOfflineFixtures(t *testing.T) {
	for _, name := range downgradeFixtures {
		dir := filepath.Join(bundlesDir, name)
		b, err := os.ReadFile(filepath.Join(dir, "want.json"))
		if err != nil {
			t.Fatal(err)
		}
		var w downgradeWant
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		x := w.Expect
		if !x.Rerun.Intact {
			t.Fatalf("%s: fixture: the newer release did not serve everything again", name)
		}
		var servers []string
		for _, s := range w.Servers {
			servers = append(servers, s.Name)
		}
		for _, s := range w.Stopped {
			servers = append(servers, s.Name)
		}
		sort.Strings(servers)
		rep := analyze(t, filepath.Join(dir, "bundle"))
		got := map[string][]string{} // server -> streams (or stream/consumer) with a finding
		for _, f := range rep.Findings {
			switch f.Code {
			case "asset-lost", "orphan-risk":
				t.Errorf("%s: %s on %s: %s", name, f.Code, f.Server, f.Message)
			case "asset-offline":
				subject := f.Stream
				if f.Consumer != "" {
					subject += "/" + f.Consumer
				}
				got[f.Server] = append(got[f.Server], subject)
				if f.Severity != report.Critical {
					t.Errorf("%s: %s severity %s", name, subject, f.Severity)
				}
				assertOfflineRemedy(t, name+" "+f.Server+" "+subject, f, x.From)
				checkOfflineFinding(t, name, f, w)
			}
		}
		// One cause on the first screen for all of them, saying the data
		// is intact.
		causes := 0
		for _, c := range rep.Diagnosis {
			for _, i := range c.Findings {
				if rep.Findings[i].Code == "asset-offline" {
					causes++
					if !strings.Contains(c.Summary, "The data is intact") || !strings.Contains(c.Summary, "nats-server "+x.From) {
						t.Errorf("%s: cause %q", name, c.Summary)
					}
					break
				}
			}
		}
		if causes != 1 {
			t.Errorf("%s: %d causes hold asset-offline findings, want 1", name, causes)
		}
		want := []string{}
		for _, st := range x.Streams {
			// With the consumer the older release cannot decode, every
			// stream fails (10008 where the meta layer stopped): that
			// finding is the consumer's.
			if st.Offline && !x.Consumer {
				if st.InfoError == nil || st.InfoError.ErrCode != 10194 {
					t.Errorf("%s: fixture: %s offline without 10194", name, st.Name)
				}
				want = append(want, st.Name)
			}
			for cn, c := range st.Consumers {
				if x.Consumer && c.ReqLevel == "4" {
					want = append(want, st.Name+"/"+cn)
				}
			}
		}
		sort.Strings(want)
		if len(want) == 0 {
			t.Fatalf("%s: fixture: nothing offline", name)
		}
		for _, s := range servers {
			sort.Strings(got[s])
			if !slices.Equal(got[s], want) {
				t.Errorf("%s: asset-offline on %s for %v, want %v", name, s, got[s], want)
			}
		}
	}
}

func checkOfflineFinding(t *testing.T, name string, f report.Finding, w downgradeWant) {
	t.Helper()
	x := w.Expect
	if f.Consumer == "" {
		if f.Kind != "offline" {
			t.Errorf("%s: %s kind %q, want offline", name, f.Stream, f.Kind)
		}
		for _, st := range x.Streams {
			if st.Name == f.Stream && (f.Messages == nil || *f.Messages != st.Messages) {
				t.Errorf("%s: %s messages %v, the newer release held %d", name, f.Stream, f.Messages, st.Messages)
			}
		}
		if !strings.Contains(f.Message, "10194") || !strings.Contains(f.Message, "intact") {
			t.Errorf("%s: message %s", name, f.Message)
		}
		logged := false
		for _, e := range f.Evidence {
			logged = logged || strings.Contains(e, "Detected unsupported stream '$G > "+f.Stream+"'")
		}
		if !logged {
			t.Errorf("%s: %s on %s: no log line in the evidence %v", name, f.Stream, f.Server, f.Evidence)
		}
		return
	}
	switch {
	case x.Crash:
		if f.Kind != "crash" || len(x.Exited[f.Server]) == 0 || !strings.Contains(x.Exited[f.Server][0], "panic") {
			t.Errorf("%s: %s kind %q, fixture exited %v", name, f.Server, f.Kind, x.Exited[f.Server])
		}
		if !strings.Contains(strings.Join(f.Evidence, "\n"), "with no shutdown logged") {
			t.Errorf("%s: %s: evidence %v lacks where its log ends", name, f.Server, f.Evidence)
		}
	case x.MetaLeader == "":
		if f.Kind != "meta-stopped" {
			t.Errorf("%s: %s kind %q, the fixture's servers elected no meta leader", name, f.Server, f.Kind)
		}
	default:
		t.Errorf("%s: fixture: the consumer neither crashed the servers nor stopped the meta layer", name)
	}
}

// No committed bundle other than the downgrade fixtures raises
// asset-offline: every stream of them is served by the release its servers
// run.
func TestAssetOfflineOnlyOnDowngrades(t *testing.T) {
	n := 0
	for _, dir := range committedBundles(t) {
		rep, err := Run(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		fixture := filepath.Base(filepath.Dir(dir))
		raised := 0
		for _, f := range rep.Findings {
			if f.Code == "asset-offline" {
				raised++
			}
		}
		if slices.Contains(downgradeFixtures, fixture) {
			n++
			if raised == 0 {
				t.Errorf("%s: no asset-offline", fixture)
			}
		} else if raised > 0 {
			t.Errorf("%s: %d asset-offline findings", fixture, raised)
		}
	}
	if n != len(downgradeFixtures) {
		t.Errorf("%d downgrade fixtures seen, want %d", n, len(downgradeFixtures))
	}
}

// The states next to the fixture: the same stores without the logs (the
// release then from the captures' /varz, the level from meta.inf and the
// meta state; no log line, and only the servers that hold a stream judge
// it: the R1 ATOMIC on its one server) and without the captures (the
// release from the logs): asset-offline still, for the same streams.
func TestAssetOfflineWithoutLogsOrCaptures(t *testing.T) {
	src := filepath.Join(bundlesDir, "downgrade-v2.14.10-to-v2.11.17", "bundle")
	// The R1 ATOMIC's one server (placed by the meta leader at the run).
	held, _ := filepath.Glob(filepath.Join(src, "*", "data", "jetstream", "$G", "streams", "ATOMIC"))
	if len(held) != 1 {
		t.Fatalf("fixture: ATOMIC held by %v", held)
	}
	holder := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(held[0]))))))
	noLogs := map[string][]string{"dg-0": {"COUNTER"}, "dg-1": {"COUNTER"}, "dg-2": {"COUNTER"}}
	noLogs[holder] = []string{"ATOMIC", "COUNTER"}
	for _, c := range []struct {
		drop string
		want map[string][]string
	}{
		{".log", noLogs},
		{"captures", map[string][]string{"dg-0": {"ATOMIC", "COUNTER"}, "dg-1": {"ATOMIC", "COUNTER"}, "dg-2": {"ATOMIC", "COUNTER"}}},
	} {
		dst := t.TempDir()
		err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if strings.HasSuffix(rel, c.drop) || strings.HasPrefix(rel, c.drop) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		rep := analyze(t, dst)
		got := map[string][]string{}
		for _, f := range rep.Findings {
			switch f.Code {
			case "asset-offline":
				got[f.Server] = append(got[f.Server], f.Stream)
				if f.Kind != "offline" || !strings.Contains(f.Message, "2.11.17 (API level 1)") {
					t.Errorf("without %s: %s", c.drop, f.Message)
				}
			case "asset-lost", "orphan-risk":
				t.Errorf("without %s: %s on %s: %s", c.drop, f.Code, f.Server, f.Message)
			}
		}
		for s := range got {
			sort.Strings(got[s])
		}
		for s, w := range c.want {
			if !slices.Equal(got[s], w) {
				t.Errorf("without %s: %s has %v, want %v", c.drop, s, got[s], w)
			}
		}
	}
}
