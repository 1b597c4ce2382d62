package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/consumers"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// aheadModel is a small model: one copy of stream S on server s1 (release
// version, clustered or not) ending at last, a consumer C whose o.dat says
// delivered and ack floor.
func aheadModel(version string, clustered bool, last, delivered, ackFloor uint64) *model.Model {
	return &model.Model{
		Servers: []*model.Server{{Name: "s1", Version: version, Sources: map[string]bool{"store": true}}},
		Streams: []*model.Stream{{Account: "A", Name: "S", Replicas: 1, Copies: []*model.StreamCopy{{
			Server: "s1", Path: "s1/A/streams/S", FirstSeq: 1, LastSeq: last, Messages: last, Clustered: clustered,
			Consumers: []report.Consumer{{Name: "C", DeliveredStream: delivered, AckFloorStream: ackFloor}},
		}}}},
	}
}

func TestConsumerAheadOnModel(t *testing.T) {
	// 2.12.15 keeps a standalone server's consumer past the stream: critical,
	// the sequences it passes over.
	fs := runCheck(consumers.CheckConsumerAhead, aheadModel("2.12.15", false, 24, 30, 30))
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	f := fs[0]
	if f.Severity != report.Critical || f.Kind != "skips" || f.Server != "s1" || f.Consumer != "C" || f.Seq != 30 ||
		len(f.Ranges) != 1 || f.Ranges[0] != (report.Range{First: 25, Last: 30}) || f.RemedyID != "consumer-ahead-recreate" {
		t.Errorf("finding %+v", f)
	}
	// 2.14.10 moves an R1 consumer back at its next start: a warning.
	fs = runCheck(consumers.CheckConsumerAhead, aheadModel("2.14.10", false, 24, 30, 30))
	if len(fs) != 1 || fs[0].Severity != report.Warning || fs[0].Kind != "reset-at-start" {
		t.Errorf("2.14.10 R1: %+v, want one warning reset-at-start", fs)
	}
	// An unknown release: critical, and it says it cannot tell.
	fs = runCheck(consumers.CheckConsumerAhead, aheadModel("2.13.0", false, 24, 30, 30))
	if len(fs) != 1 || fs[0].Severity != report.Critical || !strings.Contains(strings.Join(fs[0].Evidence, "\n"), "not read") {
		t.Errorf("2.13.0: %+v", fs)
	}
	// Only the ack floor past the stream (delivered at it) is ahead too.
	if fs := runCheck(consumers.CheckConsumerAhead, aheadModel("2.12.15", false, 24, 24, 26)); len(fs) != 1 || fs[0].Ranges[0] != (report.Range{First: 25, Last: 26}) {
		t.Errorf("ack floor ahead: %+v", fs)
	}
	// At the stream's last sequence, or below it: nothing.
	for _, d := range []uint64{24, 10, 0} {
		if fs := runCheck(consumers.CheckConsumerAhead, aheadModel("2.12.15", false, 24, d, d)); len(fs) != 0 {
			t.Errorf("delivered %d of 24: %+v", d, fs)
		}
	}
	// A current index.db remembering more than the blocks: the server keeps
	// that last sequence, so the consumer is not ahead.
	m := aheadModel("2.12.15", false, 24, 30, 30)
	m.Streams[0].Copies[0].Index = &model.IndexRecord{File: "s1/A/streams/S/msgs/index.db", LastSeq: 30}
	if fs := runCheck(consumers.CheckConsumerAhead, m); len(fs) != 0 {
		t.Errorf("index.db remembering 30: %+v", fs)
	}
	// A replicated stream another copy of which holds the tail: a catch-up
	// brings this copy there; nothing.
	m = aheadModel("2.12.15", true, 24, 30, 30)
	m.Servers = append(m.Servers, &model.Server{Name: "s2", Version: "2.12.15"})
	m.Streams[0].Replicas = 3
	m.Streams[0].Copies = append(m.Streams[0].Copies, &model.StreamCopy{Server: "s2", Path: "s2/A/streams/S", FirstSeq: 1, LastSeq: 30, Clustered: true})
	if fs := runCheck(consumers.CheckConsumerAhead, m); len(fs) != 0 {
		t.Errorf("another copy holds 30: %+v", fs)
	}
	// /jsz alone: the consumer and the stream in the same answer.
	m = &model.Model{
		Servers: []*model.Server{{Name: "s1", Version: "2.15.3"}},
		Streams: []*model.Stream{{Account: "A", Name: "S", Replicas: 3, Captured: []model.OnDisk{{Server: "s1", LastSeq: 32, Source: "jsz", Path: "s1-jsz.json",
			Consumers: []report.Consumer{{Name: "P", DeliveredStream: 40, AckFloorStream: 40}}}}}},
	}
	if fs := runCheck(consumers.CheckConsumerAhead, m); len(fs) != 1 || fs[0].Severity != report.Critical || fs[0].Ranges[0] != (report.Range{First: 33, Last: 40}) {
		t.Errorf("jsz alone: %+v", fs)
	}
	// Nothing holds consumer state: skipped, because of that.
	if r := consumers.CheckConsumerAhead.Skip(check.NewPass(&model.Model{}, facts.ComputeAll(&model.Model{}), &consumers.CheckConsumerAhead, defaultSettings(), nil)); !strings.Contains(r, "no consumer state") {
		t.Errorf("skip reason %q", r)
	}
}

// aheadWant is the ahead family's want.json expect (testdata/gen
// scen_ahead.go): what the real servers reported after the restart.
type aheadWant struct {
	Account string `json:"account"`
	Ahead   []struct {
		Server   string `json:"server"`
		Stream   string `json:"stream"`
		Consumer string `json:"consumer"`
		Skips    struct {
			First uint64 `json:"first"`
			Last  uint64 `json:"last"`
		} `json:"skips"`
	} `json:"ahead"`
	Reconciled []string            `json:"reconciled"`
	Stalled    []string            `json:"stalled"`
	Probes     map[string]string   `json:"probes"`
	LogLines   map[string][]string `json:"log_lines"`
}

func readAheadWant(t *testing.T, name string) (string, aheadWant, string) {
	t.Helper()
	dir := filepath.Join(bundlesDir, name)
	b, err := os.ReadFile(filepath.Join(dir, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		ServerVersion string    `json:"server_version"`
		Expect        aheadWant `json:"expect"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "bundle"), w.Expect, w.ServerVersion
}

var aheadFixtures = []string{"ahead-v2.12.15", "ahead-v2.14.10", "ahead-v2.15.3"}

// On the ahead fixtures (real 2.12.15, 2.14.10 and 2.15.3 servers restarted
// after every replica lost the same tail): a consumer-ahead finding for
// exactly the consumers each server's /jsz showed past the stream, with the
// sequences it passes over; none for the consumers 2.14+ moved back at its
// start (their log line is the evidence of that); critical on every
// release (the R3 consumer is never moved back). The same with the
// captures left out: the stores (o.dat, the consumer groups' snapshots)
// alone show the same consumers.
func TestConsumerAheadFixtures(t *testing.T) {
	for _, name := range aheadFixtures {
		t.Run(name, func(t *testing.T) {
			path, x, version := readAheadWant(t, name)
			if len(x.Ahead) == 0 {
				t.Fatal("fixture: no consumer ahead")
			}
			want := map[string]report.Range{}
			for _, a := range x.Ahead {
				want[a.Server+" "+a.Stream+" "+a.Consumer] = report.Range{First: a.Skips.First, Last: a.Skips.Last}
			}
			check := func(t *testing.T, rep *report.Report, captures bool) {
				got := map[string]report.Range{}
				resets := map[string]bool{}
				for _, f := range rep.Findings {
					if f.Code != "consumer-ahead" {
						continue
					}
					if f.Kind == "reset" {
						if f.Severity != report.Info || len(f.TimelineRefs) != 1 {
							t.Errorf("reset %s: %+v", f.Consumer, f)
						}
						resets[f.Server+" "+f.Stream+" "+f.Consumer] = true
						continue
					}
					k := f.Server + " " + f.Stream + " " + f.Consumer
					if len(f.Ranges) != 1 {
						t.Errorf("%s: ranges %v", k, f.Ranges)
						continue
					}
					got[k] = f.Ranges[0]
					if f.Severity != report.Critical {
						t.Errorf("%s: %s, want critical (%s keeps it)", k, f.Severity, version)
					}
					ev := strings.Join(f.Evidence, "\n")
					if !strings.Contains(ev, "o.dat of ") || captures && !strings.Contains(ev, "jsz ") {
						t.Errorf("%s: evidence %v", k, f.Evidence)
					}
				}
				for k, r := range want {
					g, ok := got[k]
					if !ok {
						t.Errorf("no consumer-ahead for %s", k)
						continue
					}
					// Without captures the stream's last is the blocks': the
					// same as /jsz (the probe's message is in the blocks).
					if g != r {
						t.Errorf("%s: ranges %v, the server's figures say %v", k, g, r)
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("consumer-ahead for %s, which the servers did not show ahead", k)
					}
				}
				for _, rc := range x.Reconciled {
					srv, c, _ := strings.Cut(rc, ": ")
					parts := strings.Split(c, " > ")
					k := srv + " " + parts[1] + " " + parts[2]
					if got[k] != (report.Range{}) {
						t.Errorf("%s was moved back at the start, yet reported", k)
					}
					if captures && !resets[k] {
						t.Errorf("%s was moved back at the start (its log line): no info finding", k)
					}
				}
			}
			check(t, analyze(t, path), true)
			tmp := copyWithout(t, path, func(rel string) bool {
				return strings.HasSuffix(rel, ".json") && !strings.Contains(rel, "store-")
			})
			check(t, analyze(t, tmp), false)
		})
	}
	// The release rule holds to the runs: 2.12.15 moved nothing back,
	// 2.14.10 and 2.15.3 both R1 consumers (one of the R3 stream, one of
	// the standalone server) and logged it.
	for _, name := range aheadFixtures {
		_, x, version := readAheadWant(t, name)
		sort.Strings(x.Reconciled)
		switch version {
		case "2.12.15":
			if len(x.Reconciled) != 0 {
				t.Errorf("%s: reconciled %v", name, x.Reconciled)
			}
		default:
			if len(x.Reconciled) != 2 {
				t.Errorf("%s: reconciled %v, want the two R1 consumers", name, x.Reconciled)
			}
		}
	}
}

// copyWithout copies the bundle folder src into a temporary folder,
// leaving out the files drop says (paths relative to src).
func copyWithout(t *testing.T, src string, drop func(rel string) bool) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if drop(filepath.ToSlash(rel)) {
			return nil
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
	return dst
}

// On the ahead-*-cut fixtures (the stores as the loss left them, never
// started again, the first run's logs, no captures): consumer-ahead for
// exactly the consumers the real servers then showed ahead after their
// start (kind skips, critical) and those a 2.14+ start moved back (kind
// reset-at-start, a warning), from o.dat and the groups' snapshots alone;
// group-stalled predicted for the streams no server led after the start.
func TestConsumerAheadCutFixtures(t *testing.T) {
	ms, _ := filepath.Glob(filepath.Join(bundlesDir, "ahead-*-cut"))
	if len(ms) < 3 {
		t.Fatalf("cut fixtures %v", ms)
	}
	for _, dir := range ms {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Expect struct {
					Findings []map[string]string `json:"findings"`
				} `json:"expect"`
			}
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatal(err)
			}
			key := func(code, server, stream, consumer, kind string) string {
				return strings.Join([]string{code, server, stream, consumer, kind}, " ")
			}
			want := map[string]bool{}
			for _, f := range w.Expect.Findings {
				if f["code"] != "consumer-ahead" && f["code"] != "group-stalled" {
					continue
				}
				want[key(f["code"], f["server"], f["stream"], f["consumer"], f["kind"])] = true
			}
			got := map[string]bool{}
			for _, f := range analyze(t, filepath.Join(dir, "bundle")).Findings {
				if f.Code != "consumer-ahead" && f.Code != "group-stalled" {
					continue
				}
				got[key(f.Code, f.Server, f.Stream, f.Consumer, f.Kind)] = true
				sev := report.Critical
				if f.Kind == "reset-at-start" {
					sev = report.Warning
				}
				if f.Severity != sev {
					t.Errorf("%s %s %s: %s, want %s", f.Code, f.Server, f.Consumer, f.Severity, sev)
				}
			}
			for k := range want {
				if !got[k] {
					t.Errorf("missing %s", k)
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("unexpected %s (not what the servers did at their start)", k)
				}
			}
		})
	}
}
