package analysis

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestClientHistoriesFixture: the real Jepsen-style fixture's two histories
// (with and without :seq) are plotted with the acked-lost finding's own
// judgement: 30 lost in each, the same values the finding names, 208 held,
// 4 unknown, 1 fail, in at most MaxHistoryBuckets buckets; the servers'
// stop until their start is one nemesis window. A bundle without a history
// has none.
func TestClientHistoriesFixture(t *testing.T) {
	rep, err := Run(bundlesDir+"/acked-lost-jepsen-v2.15.2/bundle", Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	lostBy := map[string][]string{} // history file -> the finding's lost values
	for _, f := range rep.Findings {
		if f.Code != "acked-lost" {
			continue
		}
		file := strings.Fields(f.Message[strings.Index(f.Message, "history ")+len("history "):])[0]
		lostBy[file] = lostItems(t, f)
	}
	if len(rep.Histories) != 2 {
		t.Fatalf("%d histories, want 2", len(rep.Histories))
	}
	for _, h := range rep.Histories {
		if !h.Judged || h.Stream != "LEDGER" {
			t.Errorf("%s: judged %v (%s) against %q", h.File, h.Judged, h.Reason, h.Stream)
		}
		if want := (report.HistoryCounts{OK: 208, Lost: 30, Unknown: 4, Fail: 1}); h.Totals != want {
			t.Errorf("%s: totals %+v, want %+v", h.File, h.Totals, want)
		}
		if n := len(h.Buckets); n == 0 || n > report.MaxHistoryBuckets {
			t.Errorf("%s: %d buckets", h.File, n)
		}
		var sum report.HistoryCounts
		var named []string
		omitted := 0
		for _, b := range h.Buckets {
			sum.OK, sum.Lost, sum.Unknown, sum.Fail = sum.OK+b.OK, sum.Lost+b.Lost, sum.Unknown+b.Unknown, sum.Fail+b.Fail
			named = append(named, b.LostValues...)
			omitted += b.LostOmitted
		}
		if sum != h.Totals || h.Untimed != 0 {
			t.Errorf("%s: buckets add up to %+v (untimed %d), totals %+v", h.File, sum, h.Untimed, h.Totals)
		}
		want := lostBy[h.File]
		if len(named)+omitted != len(want) {
			t.Errorf("%s: %d lost values named and %d omitted, the finding names %d", h.File, len(named), omitted, len(want))
		}
		inFinding := map[string]bool{}
		for _, v := range want {
			inFinding[v] = true
		}
		for _, v := range named {
			if !inFinding[v] {
				t.Errorf("%s: the plot names %s, the finding does not", h.File, v)
			}
		}
		if len(h.Nemesis) != 2 {
			t.Fatalf("%s: nemesis %+v", h.File, h.Nemesis)
		}
		w := h.Nemesis[0]
		if w.Kind != "window" || w.F != "stop" || w.StartIndex != 482 || w.StopF != "start" || w.StopIndex == nil || *w.StopIndex != 493 {
			t.Errorf("%s: first nemesis window %+v", h.File, w)
		}
		if i := h.Nemesis[1]; i.Kind != "instant" || i.F != "lose-unfsynced-writes" {
			t.Errorf("%s: second nemesis op %+v", h.File, i)
		}
	}
	other, err := Run(bundlesDir+"/acked-lost-v2.15.2/bundle", Options{ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Histories) != 0 {
		t.Errorf("an ack log of JSON lines gave %d histories", len(other.Histories))
	}
}

// TestNemesisWindows: each nemesis request is merged with its completion
// (same :f), a fault lasts until the operation that heals it, one never
// healed is open, and what is no fault is an instant.
func TestNemesisWindows(t *testing.T) {
	hist := op(1, "info", ":nemesis", "start-partition", ":majority") + op(2, "info", ":nemesis", "start-partition", `[:isolated {"n1" #{"n2"}}]`) +
		op(3, "info", ":nemesis", "kill", ":majority") + op(4, "info", ":nemesis", "kill", `{"n1" :killed}`) +
		op(5, "info", ":nemesis", "bump-clock", "100") +
		op(6, "info", ":nemesis", "stop-partition", "nil") + op(7, "info", ":nemesis", "stop-partition", ":network-healed") +
		op(8, "info", ":nemesis", "leave", `"n4"`) + op(9, "info", ":nemesis", "leave", `"n4"`) +
		op(10, "info", ":nemesis", "start", ":all") + op(11, "info", ":nemesis", "start", `{"n1" :started}`)
	m := historyModel(t, hist+op(12, "invoke", "0", "publish", `"0-1"`)+op(13, "ok", "0", "publish", `"0-1"`), 1, nil)
	got, omitted := nemesisWindows(m.AckLogs[0].History)
	type w struct {
		kind, f, stopF string
		from, to       int64
	}
	var short []w
	for _, x := range got {
		to := int64(-1)
		if x.StopIndex != nil {
			to = *x.StopIndex
		}
		short = append(short, w{x.Kind, x.F, x.StopF, x.StartIndex, to})
	}
	want := []w{
		{"window", "start-partition", "stop-partition", 1, 7},
		{"window", "kill", "start", 3, 11},
		{"instant", "bump-clock", "", 5, -1},
		{"open", "leave", "", 8, -1},
	}
	sort.SliceStable(short, func(i, j int) bool { return short[i].from < short[j].from })
	if !reflect.DeepEqual(short, want) || omitted != 0 {
		t.Errorf("windows %+v (omitted %d), want %+v", short, omitted, want)
	}
	if got[1].Value != `{"n1" :killed}` {
		t.Errorf("the kill's value %q, want its completion's", got[1].Value)
	}
}
