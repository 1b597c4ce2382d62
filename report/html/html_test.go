package html

import (
	"bytes"
	"encoding/json"
	stdhtml "html"
	"os"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// The renderer's own tests read the report package's saved sample (a report
// as the JSON contract holds it); every fixture is rendered and checked in a
// browser by cmd/jsforensics/html_test.go.
func loadSample(t *testing.T) *report.Report {
	t.Helper()
	b, err := os.ReadFile("../testdata/sample.json")
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestWriteEmptyReport(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, &report.Report{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No dated event", `<svg id="timeline"`, "No stream."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty report: page lacks %q", want)
		}
	}
}

// TestSampleHooks checks the DOM hooks on the sample: one lane per server,
// one marker and one card per finding, a replica map per stream, and an
// undated finding in the undated column.
func TestSampleHooks(t *testing.T) {
	r := loadSample(t)
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range r.Servers {
		if !strings.Contains(out, `class="lane" data-server="`+stdhtml.EscapeString(s.Name)+`"`) {
			t.Errorf("no lane for %s", s.Name)
		}
	}
	if n := strings.Count(out, `class="fmark `); n != len(r.Findings) {
		t.Errorf("%d finding markers for %d findings", n, len(r.Findings))
	}
	if n := strings.Count(out, `data-finding-card=`); n != len(r.Findings) {
		t.Errorf("%d cards for %d findings", n, len(r.Findings))
	}
	if n := strings.Count(out, `class="card stream" data-stream=`); n != len(r.Streams) {
		t.Errorf("%d replica maps for %d streams", n, len(r.Streams))
	}
	// index-mismatch and store-corrupt carry no time: they stand in the
	// undated column, right of the plot.
	if !strings.Contains(out, `>undated</text>`) {
		t.Error("no undated column for the findings without a time")
	}
}

// TestFirstStepLines: a cause's first step is a paragraph a line, its
// backquoted commands code, its command lines one block; its text is
// escaped.
func TestFirstStepLines(t *testing.T) {
	r := loadSample(t)
	r.Diagnosis[0].FirstStep = "What this destroys: nothing <b>yet</b>.\nSave first: copy it out.\nRemove it:\n  nats a 'x'\n  nats b\nCheck: `nats server report jetstream` shows a leader."
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `<div class="first"><p><strong>First:</strong> What this destroys: nothing &lt;b&gt;yet&lt;/b&gt;.</p><p>Save first: copy it out.</p><p>Remove it:</p><pre><code>nats a &#39;x&#39;
nats b</code></pre><p>Check: <code>nats server report jetstream</code> shows a leader.</p></div>`
	if !strings.Contains(b.String(), want) {
		i := strings.Index(b.String(), `<div class="first">`)
		t.Errorf("first step:\n got %.400s\nwant %s", b.String()[max(i, 0):], want)
	}
}
