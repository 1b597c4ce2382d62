package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

const ackedLostBundle = bundlesDir + "/acked-lost-v2.15.2"

// realAckLog is the ack log the real v2.15.2 servers' replies make
// (acknowledged sequences 1..240 of LEDGER).
func realAckLog(t *testing.T) *acklog.Summary {
	t.Helper()
	f, err := os.Open(ackedLostBundle + "/bundle/client/ledger-acks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := acklog.Read("client/ledger-acks.jsonl", f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ackModel is a stream LEDGER with one copy per given state.
func ackModel(sum *acklog.Summary, copies ...*model.StreamCopy) *model.Model {
	m := &model.Model{IDs: map[string]string{}, AckLogs: []*acklog.Summary{sum}}
	st := &model.Stream{Account: "$G", Name: "LEDGER", Replicas: len(copies), Copies: copies}
	for _, c := range copies {
		m.Servers = append(m.Servers, &model.Server{Name: string(c.Server), Sources: map[string]bool{"store": true}})
	}
	m.Streams = []*model.Stream{st}
	return m
}

func copyAt(server string, first, last uint64, unreadable ...report.Range) *model.StreamCopy {
	return &model.StreamCopy{Server: model.ServerID(server), Path: "store-" + server + "/$G/streams/LEDGER", FirstSeq: first, LastSeq: last,
		Messages: last - first + 1, Unreadable: unreadable}
}

// TestAckedLostModel: on small models, the finding is raised exactly when no
// copy holds an acknowledged sequence, with exactly those ranges; a missing
// and an unexpected finding both fail.
func TestAckedLostModel(t *testing.T) {
	sum := realAckLog(t)
	cases := []struct {
		name   string
		copies []*model.StreamCopy
		want   []report.Range // nil: no finding
	}{
		{"same tail lost everywhere", []*model.StreamCopy{copyAt("a", 1, 210), copyAt("b", 1, 210), copyAt("c", 1, 210)}, []report.Range{{First: 211, Last: 240}}},
		{"one replica kept the tail", []*model.StreamCopy{copyAt("a", 1, 210), copyAt("b", 1, 240), copyAt("c", 1, 200)}, nil},
		{"tails differ: the longest counts", []*model.StreamCopy{copyAt("a", 1, 230), copyAt("b", 1, 200)}, []report.Range{{First: 231, Last: 240}}},
		{"damage on every copy", []*model.StreamCopy{copyAt("a", 1, 240, report.Range{First: 100, Last: 101}), copyAt("b", 1, 240, report.Range{First: 101, Last: 102})}, []report.Range{{First: 101, Last: 101}}},
		{"damage on one copy only", []*model.StreamCopy{copyAt("a", 1, 240, report.Range{First: 100, Last: 101}), copyAt("b", 1, 240)}, nil},
		{"removed below first by limits", []*model.StreamCopy{copyAt("a", 50, 240), copyAt("b", 60, 240)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := runCheck(replicas.CheckAckedLost, ackModel(sum, c.copies...))
			if c.want == nil {
				if len(fs) != 0 {
					t.Fatalf("unexpected finding: %s", fs[0].Message)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1", len(fs))
			}
			f := fs[0]
			var n uint64
			for _, r := range c.want {
				n += r.Last - r.First + 1
			}
			if !reflect.DeepEqual(f.Ranges, c.want) || f.Messages == nil || *f.Messages != n || f.Stream != "LEDGER" || f.Account != "$G" {
				t.Errorf("ranges %v messages %v; want %v and %d", f.Ranges, f.Messages, c.want, n)
			}
			warnedBefore(t, f.Remedy, "jsforensics extract", "copy every server's stream folder")
		})
	}
}

// TestAckedLostEDNNotCompared: a Jepsen history whose operations were not
// decoded gives no finding and the check says it could not use it.
func TestAckedLostEDNNotCompared(t *testing.T) {
	sum := &acklog.Summary{File: "history.edn", Format: acklog.FormatEDN, EDNPublishes: 3}
	m := ackModel(sum, copyAt("a", 1, 10))
	fs, outcomes := runChecks(m, []check.Check{replicas.CheckAckedLost}, defaultSettings(), nil)
	if len(fs) != 0 {
		t.Fatalf("finding from an EDN history: %s", fs[0].Message)
	}
	if o := outcomes[0]; len(o.Skipped) != 1 || !strings.Contains(o.Skipped[0], "not decoded: not compared") {
		t.Errorf("outcome %+v", o)
	}
}

type ackedLostExpect struct {
	Expect struct {
		AckedLost []report.Range      `json:"acked_lost"`
		Before    map[string]struct{} `json:"before"`
	} `json:"expect"`
}

func ackedLostWant(t *testing.T) ackedLostExpect { return ackedLostWantOf(t, ackedLostBundle) }

func ackedLostWantOf(t *testing.T, bundle string) ackedLostExpect {
	t.Helper()
	var w ackedLostExpect
	wb, err := os.ReadFile(bundle + "/want.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// ackedLost211Bundle: the same scenario on 2.11.17, whose restarted servers
// kept the last sequence the stale index.db remembered (last_seq 240, 30
// deleted) while serving only 1-210.
const ackedLost211Bundle = bundlesDir + "/acked-lost-v2.11.17"

// TestAckedLostBundle: on the bundles of the real servers restarted after
// the same tail was cut off every replica (2.15.2 and 2.11.17), the finding
// names exactly the sequences the generator derived (ack log vs what the
// restarted stream served, or its /jsz last_seq), the servers whose earlier
// /jsz held them, their rebuild lines, and an extract remedy naming the raft
// WAL that still holds them; no other bundle raises it.
func TestAckedLostBundle(t *testing.T) {
	for _, b := range []string{ackedLostBundle, ackedLost211Bundle} {
		t.Run(filepath.Base(b), func(t *testing.T) { ackedLostBundleMatches(t, b) })
	}
	noAckedLostElsewhere(t)
}

func ackedLostBundleMatches(t *testing.T, bundle string) {
	w := ackedLostWantOf(t, bundle)
	rep := analyze(t, bundle+"/bundle")
	fs := byCode(rep.Findings, "acked-lost")
	if len(fs) != 1 {
		t.Fatalf("%d acked-lost findings, want 1", len(fs))
	}
	f := fs[0]
	if !reflect.DeepEqual(f.Ranges, w.Expect.AckedLost) {
		t.Errorf("ranges %v, want %v", f.Ranges, w.Expect.AckedLost)
	}
	if want := model.SortedKeys(w.Expect.Before); !reflect.DeepEqual(f.Servers, want) {
		t.Errorf("servers %v, want %v (their /jsz before the loss held the tail)", f.Servers, want)
	}
	rebuilt := 0
	for _, e := range f.Evidence {
		if strings.Contains(e, "Stream state outdated") {
			rebuilt++
		}
	}
	if rebuilt != len(w.Expect.Before) {
		t.Errorf("%d rebuild lines in the evidence, want one per server:\n%s", rebuilt, strings.Join(f.Evidence, "\n"))
	}
	if !strings.Contains(f.Remedy, "raft WAL still holds") || !strings.Contains(f.Remedy, "jsforensics extract") {
		t.Errorf("remedy does not point to the WAL and extract: %s", f.Remedy)
	}
}

// noAckedLostElsewhere: no bundle but the acked-lost ones raises it.
func noAckedLostElsewhere(t *testing.T) {
	var dirs []string
	for _, pat := range []string{"/*/bundle", "/*/bundle.zip", "/*/bundle.tar.gz"} {
		m, _ := filepath.Glob(bundlesDir + pat)
		dirs = append(dirs, m...)
	}
	if len(dirs) < 10 {
		t.Fatalf("only %d bundles", len(dirs))
	}
	for _, d := range dirs {
		if strings.HasPrefix(d, ackedLostBundle) || strings.HasPrefix(d, ackedLost211Bundle) || strings.HasPrefix(d, jepsenBundle) {
			continue
		}
		if n := len(byCode(analyze(t, d).Findings, "acked-lost")); n != 0 {
			t.Errorf("%s: %d acked-lost findings", d, n)
		}
	}
}

// TestStoreRemedyPointsToExtract: a payload bit flipped in n1's record of
// ORDERS seq 28 (the record spans offsets 2434-2501 of 1.blk, as `jsforensics
// dump blk` shows) costs n1 that message; the remedy says extract finds it in
// the other replicas' blocks. The same damage to R1 EVENTS, which nothing
// else holds, gets no such pointer.
func TestStoreRemedyPointsToExtract(t *testing.T) {
	dir := copyTree(t, corruptBundle)
	orders := "store-n1/$G/streams/ORDERS/msgs/1.blk"
	rewrite(t, filepath.Join(dir, filepath.FromSlash(orders)), flipBit(2490, 2))
	rewrite(t, filepath.Join(dir, filepath.FromSlash(eventsBlock)), flipBit(58+22+15+5, 3))
	rep, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := findingsOn(rep, "store-corrupt", orders)
	if len(got) != 1 || got[0].Seq != 28 {
		t.Fatalf("findings on %s: %s", orders, summarize(got))
	}
	if want := "finds these sequences: 28 in n2's blocks; 28 in n3's blocks"; !strings.Contains(got[0].Remedy, want) {
		t.Errorf("remedy lacks %q: %s", want, got[0].Remedy)
	}
	ev := findingsOn(rep, "store-corrupt", eventsBlock)
	if len(ev) != 1 || strings.Contains(ev[0].Remedy, "jsforensics extract") {
		t.Errorf("R1 damage nothing else holds: %s", summarize(ev))
	}
}

// TestAckLogFoundByContent: the ack log moved and renamed (no .jsonl, no
// "ack" in its path) is still found and gives the same finding; with its
// lines wrapped by a publisher's own record (value, time) too.
func TestAckLogFoundByContent(t *testing.T) {
	dir := copyTree(t, ackedLostBundle+"/bundle")
	src := filepath.Join(dir, "client", "ledger-acks.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	var wrapped bytes.Buffer
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fmt.Fprintf(&wrapped, "{\"time\":\"2026-12-01T12:00:54Z\",\"value\":\"entry %d\",\"reply\":%s}\n", i+1, l)
	}
	want := ackedLostWant(t).Expect.AckedLost
	for name, content := range map[string][]byte{"plain": data, "wrapped": wrapped.Bytes()} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, "misc", "publisher-"+name+".out")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(p)
			fs := byCode(analyze(t, dir).Findings, "acked-lost")
			if len(fs) != 1 || !reflect.DeepEqual(fs[0].Ranges, want) {
				t.Fatalf("findings %+v", fs)
			}
			if !strings.Contains(fs[0].Message, "misc/publisher-"+name+".out") {
				t.Errorf("message does not name the log: %s", fs[0].Message)
			}
		})
	}
}
