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
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
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

// lostNamed is one item of the "lost values:" evidence: a value with its
// sequence, or a run `"1-25".."1-48" (24 values, seq 216-239)`.
var lostNamed = regexp.MustCompile(`^"([^"]+)"(?: \(seq (\d+)\))?$|^"([^"]*?)(\d+)"\.\."([^"]*?)(\d+)" \((\d+) values(?:, seq (\d+)-(\d+))?\)$`)

// lostItems reads the finding's "lost values:" evidence, runs unfolded:
// each value as LostName writes it ("v" or "v" (seq n)), in order.
func lostItems(t *testing.T, f report.Finding) []string {
	t.Helper()
	for _, e := range f.Evidence {
		rest, ok := strings.CutPrefix(e, "lost values: ")
		if !ok {
			continue
		}
		var out []string
		// Each item begins with a quote (one inside a value is escaped).
		for i, item := range strings.Split(rest, `, "`) {
			if i > 0 {
				item = `"` + item
			}
			m := lostNamed.FindStringSubmatch(item)
			switch {
			case m == nil:
				t.Fatalf("lost values: item %q is no value and no run", item)
			case m[1] != "":
				out = append(out, item)
				continue
			}
			var from, to, n, seq, last uint64
			fmt.Sscan(m[4], &from)
			fmt.Sscan(m[6], &to)
			fmt.Sscan(m[7], &n)
			fmt.Sscan(m[8], &seq)
			fmt.Sscan(m[9], &last)
			if m[3] != m[5] || to < from || to-from+1 != n || (seq != 0 && last-seq != to-from) {
				t.Fatalf("lost values: run %q does not add up", item)
			}
			for v := from; v <= to; v++ {
				if seq != 0 {
					out = append(out, fmt.Sprintf("%q (seq %d)", m[3]+fmt.Sprint(v), seq+v-from))
				} else {
					out = append(out, fmt.Sprintf("%q", m[3]+fmt.Sprint(v)))
				}
			}
		}
		return out
	}
	t.Fatalf("no lost values in the evidence of %s", f.Message)
	return nil
}

// lostValues reads the finding's "lost values:" evidence: value -> seq (0
// when not named).
func lostValues(t *testing.T, f report.Finding) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, item := range lostItems(t, f) {
		m := lostNamed.FindStringSubmatch(item)
		var seq uint64
		fmt.Sscan(m[2], &seq)
		out[m[1]] = seq
	}
	return out
}

// TestAckedLostJepsenBundle: on the real v2.15.2 servers restarted after
// the same tail was cut off every replica, each of the two Jepsen histories
// of the client run (with and without :seq) yields acked-lost with exactly
// the values the generator derived (the :ok publishes whose PubAck sequence
// is beyond every restarted server's last_seq) and exactly their sequences:
// from :seq, or from the stream group's WAL (which still holds them) when
// the history has none; no :info or :fail value among them; the nemesis ops
// named.
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
				// The sequence of each comes from the WAL that still holds
				// it, or is not given (the ranges are then worked out).
				for v, seq := range got {
					if want, ok := wantLost[v]; !ok || (seq != 0 && seq != want) {
						t.Errorf("lost %q (seq %d): not a lost value, or not its sequence (%d)", v, seq, want)
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
func historyModel(t *testing.T, in string, last uint64, held map[string]uint64) *model.Model {
	t.Helper()
	sum, err := acklog.Read("history.edn", strings.NewReader(in))
	if err != nil || sum.History == nil {
		t.Fatalf("history: %v", err)
	}
	m := ackModel(sum, copyAt("a", 1, last))
	st := m.Streams[0]
	hm := &model.HistoryMatch{Log: sum, Copies: 1}
	if len(held) > 0 {
		hs := &model.HistoryStream{Stream: st, Held: map[string][]model.ValueHeld{}}
		for v, seq := range held {
			hs.Held[v] = []model.ValueHeld{{Server: "a", Seq: seq}}
		}
		hs.Values = len(held)
		hm.Streams = []*model.HistoryStream{hs}
	}
	m.HistoryMatches = []*model.HistoryMatch{hm}
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
			fs, outcomes := runChecks(historyModel(t, c.hist, c.last, c.held), []check.Check{replicas.CheckAckedLost}, defaultSettings(), nil)
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

// incident002 is the history the public Jepsen report quotes (incident 002,
// nats-server 2.12.1): lines 2022-2038 as printed, then a publish of
// 158-5 (the value the final read jumps to, its own lines not quoted) and
// the final read as quoted, its elision dropped.
const incident002 = `{:index 2022, :time 16109960074, :type :ok, :process 4, :f :publish, :value "4-63"}
{:index 2023, :time 16112167773, :type :invoke, :process 5, :f :publish, :value "5-63"}
{:index 2024, :time 16114235936, :type :info, :process :nemesis, :f :start-partition, :value [:isolated {"n1" #{"n2" "n5" "n4" "n3"}, "n2" #{"n1"}, "n5" #{"n1"}, "n4" #{"n1"}, "n3" #{"n1"}}]}
{:index 2025, :time 16114263329, :type :info, :process :nemesis, :f :kill, :value :majority}
{:index 2026, :time 16122492214, :type :invoke, :process 7, :f :publish, :value "7-63"}
{:index 2027, :time 16123329080, :type :ok, :process 7, :f :publish, :value "7-63"}
{:index 2028, :time 16124539204, :type :invoke, :process 8, :f :publish, :value "8-63"}
{:index 2029, :time 16125058438, :type :ok, :process 8, :f :publish, :value "8-63"}
{:index 2030, :time 16132755900, :type :invoke, :process 9, :f :publish, :value "9-63"}
{:index 2031, :time 16133716428, :type :ok, :process 9, :f :publish, :value "9-63"}
{:index 2032, :time 16134796130, :type :invoke, :process 10, :f :publish, :value "10-63"}
{:index 2033, :time 16145849910, :type :invoke, :process 11, :f :publish, :value "11-63"}
{:index 2034, :time 16146687908, :type :ok, :process 11, :f :publish, :value "11-63"}
{:index 2035, :time 16164675317, :type :invoke, :process 12, :f :publish, :value "12-63"}
{:index 2036, :time 16165734007, :type :ok, :process 12, :f :publish, :value "12-63"}
{:index 2037, :time 16179824530, :type :info, :process :nemesis, :f :kill, :value {"n1" :killed, "n3" :killed, "n2" :killed}}
{:index 2038, :time 16179871864, :type :info, :process :nemesis, :f :leave, :value "n4"}
{:index 9000, :time 200000000000, :type :invoke, :process 158, :f :publish, :value "158-5"}
{:index 9001, :time 200000100000, :type :ok, :process 158, :f :publish, :value "158-5"}
{:index 15568, :time 319383763266, :type :invoke, :process 362, :f :fetch, :value nil}
{:index 15569, :time 319384992110, :type :ok, :process 362, :f :fetch, :value ["1-58" "4-63" "158-5" "158-6"]}
`

// TestAckedLostIncident002: the report's own history, against a stream
// whose payloads are not the values (so only its final read can judge):
// exactly the five values the report names are lost, 10-63 and 5-63
// (never acknowledged) are not; each was acknowledged between 4-63 and
// 158-5; the partition and the kill before them and the kills and the
// leave after them are named.
func TestAckedLostIncident002(t *testing.T) {
	fs, outcomes := runChecks(historyModel(t, incident002, 5000, nil), []check.Check{replicas.CheckAckedLost}, defaultSettings(), nil)
	if len(fs) != 1 {
		t.Fatalf("%d findings (outcome %+v)", len(fs), outcomes[0])
	}
	f := fs[0]
	var got []string
	for v := range lostValues(t, f) {
		got = append(got, v)
	}
	sort.Strings(got)
	if want := []string{"11-63", "12-63", "7-63", "8-63", "9-63"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lost %v, want %v", got, want)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{
		`"7-63" (process 7): invoked at index 2026 (16.122 s), acknowledged at index 2027 (16.123 s, line 6)`,
		`held by no copy and returned by no read after the last nemesis op; acknowledged between the held "4-63" and "158-5"`,
		"by the reads invoked after the last nemesis op",
		"nemesis at index 2024 (16.114 s, before the lost writes): :info :start-partition [:isolated",
		"nemesis at index 2025 (16.114 s, before the lost writes): :info :kill :majority",
		`nemesis at index 2037 (16.180 s, after the lost writes): :info :kill {"n1" :killed`,
		"nemesis at index 2038 (16.180 s, after the lost writes): :info :leave n4",
	} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if !strings.Contains(f.Message, "between 16.122 s and 16.166 s") {
		t.Errorf("window: %s", f.Message)
	}
}

// TestAckedLostJepsenInferred: with no :seq and no WAL, the lost values'
// sequences are worked out only when exact: a copy holding 1..H, every one
// a value of the history, and no publish of unknown outcome missing from
// it invoked before the last lost value was acknowledged.
func TestAckedLostJepsenInferred(t *testing.T) {
	pub := func(i int, proc, v, outcome string) string {
		return op(i, "invoke", proc, "publish", `"`+v+`"`) + op(i+1, outcome, proc, "publish", `"`+v+`"`)
	}
	held := map[string]uint64{"0-1": 1, "1-1": 2}
	base := pub(0, "0", "0-1", "ok") + pub(2, "1", "1-1", "ok") + pub(4, "0", "0-2", "ok") + pub(6, "1", "1-2", "ok")
	cases := []struct {
		name string
		hist string
		want []report.Range
		says string
	}{
		{"exact", base + pub(8, "2", "2-1", "info"), []report.Range{{First: 3, Last: 4}}, "stored at exactly 3..4"},
		{"an unknown outcome before them", pub(0, "0", "0-1", "ok") + pub(2, "1", "1-1", "ok") + pub(4, "2", "2-1", "info") + pub(6, "0", "0-2", "ok") + pub(8, "1", "1-2", "ok"),
			nil, "within 3..5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := runCheck(replicas.CheckAckedLost, historyModel(t, c.hist, 2, held))
			if len(fs) != 1 {
				t.Fatalf("%d findings", len(fs))
			}
			if !reflect.DeepEqual(fs[0].Ranges, c.want) || !strings.Contains(strings.Join(fs[0].Evidence, "\n"), c.says) {
				t.Errorf("ranges %v, evidence %v; want %v and %q", fs[0].Ranges, fs[0].Evidence, c.want, c.says)
			}
		})
	}
}

// TestAckedLostJepsenFolded: 200 acknowledged integer values (3350..3549,
// seq 10..209) past a copy that ends at 9, the stream's WAL on n4 still
// holding them all, and ten more values that form no run. The message
// names the run once ("3350".."3549" (200 values, seq 10-209)) within a
// list of eight, the rest counted in values; the evidence opens with the
// WAL that still holds them, names the values in one folded line, and
// tells three of them one by one.
func TestAckedLostJepsenFolded(t *testing.T) {
	var b strings.Builder
	i := 0
	pub := func(v string, seq int) {
		b.WriteString(op(i, "invoke", "0", "publish", v) + op(i+1, "ok", "0", "publish", v, fmt.Sprintf(", :seq %d", seq)))
		i += 2
	}
	for k := range 200 {
		pub(fmt.Sprint(3350+k), 10+k)
	}
	for k, v := range []string{`"a-7"`, `"b-1"`, `"a-9"`, `"c"`, `"d-1"`, `"e-2"`, `"a-10"`, `"x"`, `"y"`, `"z"`} {
		pub(v, 210+k)
	}
	m := historyModel(t, b.String(), 9, nil)
	m.Streams[0].Group = "S-R3F-x"
	m.Streams[0].WALSeqs = map[model.ServerID][]report.Range{"n4": {{First: 10, Last: 219}}}
	fs := runCheck(replicas.CheckAckedLost, m)
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	f := fs[0]
	run := `"3350".."3549" (200 values, seq 10-209)`
	if !strings.Contains(f.Message, "(seq 10-219): "+run+`, "a-7" (seq 210)`) || !strings.Contains(f.Message, `"a-10" (seq 216) and 3 more values;`) || len(f.Message) > 500 {
		t.Errorf("message (%d chars): %s", len(f.Message), f.Message)
	}
	if want := "the raft WAL of S-R3F-x still holds all 210 lost sequences (n4: 10-219)"; len(f.Evidence) == 0 || !strings.HasPrefix(f.Evidence[0], want) {
		t.Errorf("evidence opens with %q, want %q", f.Evidence[0], want)
	}
	if got := lostItems(t, f); len(got) != 210 || got[0] != `"3350" (seq 10)` || got[199] != `"3549" (seq 209)` || got[200] != `"a-7" (seq 210)` {
		t.Errorf("lost values, unfolded: %d, %q", len(got), got)
	}
	told, named := 0, 0
	for _, e := range f.Evidence {
		if strings.HasPrefix(e, `"`) {
			told++
		}
		named += strings.Count(e, `"3400"`)
		if strings.Contains(e, "the held the start") {
			t.Errorf("evidence: %s", e)
		}
	}
	if told != 3 || named != 0 {
		t.Errorf("%d values told one by one (want 3), 3400 named %d times (want 0, inside the run):\n%s", told, named, strings.Join(f.Evidence, "\n"))
	}
}
