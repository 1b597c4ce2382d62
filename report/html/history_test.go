package html

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestHistoryPlotBounded: a history of the most buckets, each with every
// outcome and more lost values than named, and the most nemesis windows,
// draws a bounded page: one bar per bucket of at most four segments, one
// mark per window, labels that never overlap; text from the history
// (values, nemesis values) is escaped.
func TestHistoryPlotBounded(t *testing.T) {
	h := report.ClientHistory{File: "client/history.edn", Judged: true, Account: "$G", Stream: "S", StartNs: 0, BucketNs: 1e9}
	for i := range report.MaxHistoryBuckets {
		b := report.HistoryBucket{HistoryCounts: report.HistoryCounts{OK: 1000 + i, Lost: 20, Unknown: 1, Fail: 1}, LostOmitted: 20 - report.MaxBucketValues}
		for k := range report.MaxBucketValues {
			b.LostValues = append(b.LostValues, fmt.Sprintf(`"%d-%d<b>"`, i, k))
		}
		h.Buckets = append(h.Buckets, b)
		h.Totals.OK, h.Totals.Lost, h.Totals.Unknown, h.Totals.Fail = h.Totals.OK+b.OK, h.Totals.Lost+20, h.Totals.Unknown+1, h.Totals.Fail+1
	}
	for i := range report.MaxNemesisWindows {
		w := report.NemesisWindow{Kind: "window", F: "kill", Value: `{"n1" :killed}<script>`, StartIndex: int64(2 * i), StartNs: int64(i) * 4e8,
			StopF: "start", StopIndex: report.Ptr(int64(2*i + 1)), StopNs: report.Ptr(int64(i)*4e8 + 2e8)}
		h.Nemesis = append(h.Nemesis, w)
	}
	h.Nemesis[0].Kind, h.Nemesis[0].StopNs, h.Nemesis[0].StopIndex = "open", nil, nil
	h.Nemesis[1].Kind, h.Nemesis[1].StopNs, h.Nemesis[1].StopIndex = "instant", nil, nil
	var b bytes.Buffer
	if err := Write(&b, &report.Report{Histories: []report.ClientHistory{h}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	sec := out[strings.Index(out, `<section id="histories">`):strings.Index(out, `<section id="findings">`)]
	if n := strings.Count(sec, `<g class="hbar"`); n != report.MaxHistoryBuckets {
		t.Errorf("%d bars for %d buckets", n, report.MaxHistoryBuckets)
	}
	if n := strings.Count(sec, `data-kind="lost" data-count="20"`); n != report.MaxHistoryBuckets {
		t.Errorf("%d lost segments", n)
	}
	if n := strings.Count(sec, `<g class="nemesis"`); n != report.MaxNemesisWindows {
		t.Errorf("%d nemesis marks for %d windows", n, report.MaxNemesisWindows)
	}
	for _, k := range []string{"window", "open", "instant"} {
		if !strings.Contains(sec, `data-kind="`+k+`"`) {
			t.Errorf("no nemesis mark of kind %s", k)
		}
	}
	if labels := strings.Count(sec, `<text class="nem-t"`); labels == 0 || labels > 1200/20 {
		t.Errorf("%d nemesis labels on a 1200-wide plot", labels)
	}
	if tags := strings.Count(sec, "<"); tags > report.MaxHistoryBuckets*8+report.MaxNemesisWindows*6+200 {
		t.Errorf("%d tags in the history section", tags)
	}
	if strings.Contains(sec, "<script>") || strings.Contains(sec, "<b>") {
		t.Error("history text was not escaped")
	}
	if !strings.Contains(sec, "and 8 more") {
		t.Error("a bar's title does not count the lost values it leaves out")
	}
	// No history, no section and no history style.
	b.Reset()
	if err := Write(&b, &report.Report{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "histories") || strings.Contains(b.String(), ".h-ok") {
		t.Error("a report without a history has a history section or its style")
	}
}
