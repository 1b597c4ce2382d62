package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/report"
)

const jepsenBundle = bundlesDir + "/acked-lost-jepsen-v2.15.2"

type jepsenWant struct {
	Expect struct {
		AckedLost []report.Range `json:"acked_lost"`
		Jepsen    struct {
			Histories  []string `json:"histories"`
			Ok         int      `json:"ok"`
			Fail       []string `json:"fail"`
			Info       []string `json:"info"`
			InfoStored []string `json:"info_stored"`
			Lost       []struct {
				Value string `json:"value"`
				Seq   uint64 `json:"seq"`
			} `json:"lost"`
			Nemesis []string `json:"nemesis"`
		} `json:"jepsen"`
	} `json:"expect"`
}

var lostNamed = regexp.MustCompile(`"([^"]+)"(?: \(seq (\d+)\))?`)

// lostValues reads the finding's "lost values:" evidence: value -> seq (0
// when not named).
func lostValues(t *testing.T, f report.Finding) map[string]uint64 {
	t.Helper()
	for _, e := range f.Evidence {
		if rest, ok := strings.CutPrefix(e, "lost values: "); ok {
			out := map[string]uint64{}
			for _, m := range lostNamed.FindAllStringSubmatch(rest, -1) {
				var seq uint64
				fmt.Sscan(m[2], &seq)
				out[m[1]] = seq
			}
			return out
		}
	}
	t.Fatalf("no lost values in the evidence of %s", f.Message)
	return nil
}

// TestAckedLostJepsenBundle: on the real v2.15.2 servers restarted after
// the same tail was cut off every replica, each of the two Jepsen histories
// of the client run (with and without :seq) yields acked-lost with exactly
// the values the generator derived (the :ok publishes whose PubAck sequence
// is beyond every restarted server's last_seq) and exactly their sequences:
// from :seq, or worked out from the copies when the history has none; no
// :info or :fail value among them; the nemesis ops named.
func TestAckedLostJepsenBundle(t *testing.T) {
	var w jepsenWant
	wb, err := os.ReadFile(jepsenBundle + "/want.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wb, &w); err != nil {
		t.Fatal(err)
	}
	x := w.Expect.Jepsen
	wantLost := map[string]uint64{}
	for _, l := range x.Lost {
		wantLost[l.Value] = l.Seq
	}
	if len(wantLost) == 0 || len(x.Histories) != 2 {
		t.Fatalf("want.json: %d lost, histories %v", len(wantLost), x.Histories)
	}
	rep := analyze(t, jepsenBundle+"/bundle")
	fs := byCode(rep.Findings, "acked-lost")
	if len(fs) != 2 {
		t.Fatalf("%d acked-lost findings, want one per history", len(fs))
	}
	seen := map[string]bool{}
	for _, f := range fs {
		file := ""
		for _, h := range x.Histories {
			if strings.Contains(f.Message, "history "+h+" ") {
				file = h
			}
		}
		if file == "" || seen[file] {
			t.Fatalf("finding names no history or one twice: %s", f.Message)
		}
		seen[file] = true
		withSeq := strings.Contains(file, "-seq")
		t.Run(file, func(t *testing.T) {
			if f.Account != "$G" || f.Stream != "LEDGER" || f.Messages == nil || *f.Messages != uint64(len(wantLost)) {
				t.Errorf("%s > %s, %v messages; want $G > LEDGER, %d", f.Account, f.Stream, f.Messages, len(wantLost))
			}
			if !reflect.DeepEqual(f.Ranges, w.Expect.AckedLost) {
				t.Errorf("ranges %v, want %v", f.Ranges, w.Expect.AckedLost)
			}
			got := lostValues(t, f)
			if withSeq {
				if !reflect.DeepEqual(got, wantLost) {
					t.Errorf("lost values and seqs %v\nwant %v", got, wantLost)
				}
			} else {
				if len(got) != len(wantLost) {
					t.Errorf("%d lost values, want %d", len(got), len(wantLost))
				}
				for v, seq := range got {
					if _, ok := wantLost[v]; !ok || seq != 0 {
						t.Errorf("lost %q (seq %d): not a lost value, or a sequence the history does not give", v, seq)
					}
				}
			}
			for _, v := range append(append([]string(nil), x.Info...), x.Fail...) {
				if _, ok := got[v]; ok {
					t.Errorf("%q (:info or :fail) counted lost", v)
				}
			}
			ev := strings.Join(f.Evidence, "\n")
			for _, want := range []string{":stop", ":lose-unfsynced-writes", "no copy", "the stream held it then"} {
				if !strings.Contains(ev, want) {
					t.Errorf("evidence lacks %q", want)
				}
			}
			warnedBefore(t, f.Remedy, "jsforensics extract", "copy every server's stream folder")
		})
	}
}

// historyModel is stream LEDGER with one copy holding 1..last, whose
// blocks hold the given values at the given sequences, and the history in.
func historyModel(t *testing.T, in string, last uint64, held map[string]uint64) *Model {
	t.Helper()
	sum, err := acklog.Read("history.edn", strings.NewReader(in))
	if err != nil || sum.History == nil {
		t.Fatalf("history: %v", err)
	}
	m := ackModel(sum, copyAt("a", 1, last))
	st := m.Streams[0]
	hm := &HistoryMatch{Log: sum, Copies: 1}
	if len(held) > 0 {
		hs := &HistoryStream{Stream: st, Held: map[string][]ValueHeld{}}
		for v, seq := range held {
			hs.Held[v] = []ValueHeld{{Server: "a", Seq: seq}}
		}
		hs.Values = len(held)
		hm.Streams = []*HistoryStream{hs}
	}
	m.HistoryMatches = []*HistoryMatch{hm}
	return m
}

func op(i int, typ, proc, f, value string, extra ...string) string {
	return fmt.Sprintf("{:index %d, :time %d, :type :%s, :process %s, :f :%s, :value %s%s}\n", i, 1000*i, typ, proc, f, value, strings.Join(extra, ""))
}

// TestAckedLostJepsenModel: on small models, an :ok publish is lost exactly
// when no copy holds its value (at its :seq when it has one) and no read
// after the last nemesis op returned it; :info and :fail are never lost; a
// history whose values no copy holds is compared by :seq, or not at all.
func TestAckedLostJepsenModel(t *testing.T) {
	pub := func(i int, proc, v, outcome string, extra ...string) string {
		return op(i, "invoke", proc, "publish", `"`+v+`"`) + op(i+1, outcome, proc, "publish", `"`+v+`"`, extra...)
	}
	base := pub(0, "0", "0-1", "ok", ", :seq 1") + pub(2, "1", "1-1", "ok", ", :seq 2")
	kill := op(10, "info", ":nemesis", "kill", ":all")
	cases := []struct {
		name    string
		hist    string
		last    uint64
		held    map[string]uint64
		want    []string // lost values; nil: no finding
		skipped string
	}{
		{name: "all held", hist: base, last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}},
		{name: "ok lost", hist: base + pub(4, "2", "2-1", "ok", ", :seq 3"), last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}, want: []string{"2-1"}},
		{name: "info not held is no loss", hist: base + pub(4, "2", "2-1", "info", ", :error :timeout"), last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}},
		{name: "fail not held is no loss", hist: base + pub(4, "2", "2-1", "fail"), last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}},
		{name: "never completed is no loss", hist: base + op(4, "invoke", "2", "publish", `"2-1"`), last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}},
		{name: "seq held by another value", hist: base + pub(4, "2", "2-1", "ok", ", :seq 2"), last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}, want: []string{"2-1"}},
		{name: "read after the nemesis: held", hist: base + pub(4, "2", "2-1", "ok") + kill + op(11, "invoke", "3", "fetch", "nil") + op(12, "ok", "3", "fetch", `["0-1" "1-1" "2-1"]`),
			last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}},
		{name: "read before the nemesis: still lost", hist: base + pub(4, "2", "2-1", "ok") + op(6, "invoke", "3", "fetch", "nil") + op(7, "ok", "3", "fetch", `["0-1" "1-1" "2-1"]`) + kill,
			last: 2, held: map[string]uint64{"0-1": 1, "1-1": 2}, want: []string{"2-1"}},
		{name: "no value held: by seq", hist: base + pub(4, "2", "2-1", "ok", ", :seq 3"), last: 2, want: []string{"2-1"}},
		{name: "no value held, no seq: not judged", hist: pub(0, "0", "0-1", "ok"), last: 1, skipped: "nothing to compare"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, outcomes := runChecks(historyModel(t, c.hist, c.last, c.held), []Check{checkAckedLost}, nil)
			if c.skipped != "" {
				if len(fs) != 0 || len(outcomes[0].Skipped) == 0 || !strings.Contains(outcomes[0].Skipped[0], c.skipped) {
					t.Fatalf("findings %d, outcome %+v", len(fs), outcomes[0])
				}
				return
			}
			if c.want == nil {
				if len(fs) != 0 {
					t.Fatalf("unexpected finding: %s", fs[0].Message)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1", len(fs))
			}
			var got []string
			for v := range lostValues(t, fs[0]) {
				got = append(got, v)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("lost %v, want %v", got, c.want)
			}
		})
	}
}
