package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/jetstream"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// On streamfull-v2.15.3 (three real 2.15.3 servers, an R1 stream whose
// msgs directory is a full 256k tmpfs; the server logged "JetStream stream
// '$G > FULL1' critical write error … no space left on device", its /jsz
// stayed enabled and its /healthz said "stream write error"):
// stream-write-error on that server and stream only, critical, kind
// disk-full, since the log line, with the save step before the restart; no
// jetstream-disabled anywhere. Old main reports only a 0-byte index.db.
func TestStreamWriteErrorFixture(t *testing.T) {
	dir := filepath.Join(bundlesDir, "streamfull-v2.15.3")
	b, err := os.ReadFile(filepath.Join(dir, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Expect struct {
			FullServer  string              `json:"full_server"`
			Stream      string              `json:"stream"`
			Account     string              `json:"account"`
			Healthz     map[string]string   `json:"healthz"`
			JSZDisabled map[string]bool     `json:"jsz_disabled"`
			LogLines    map[string][]string `json:"log_lines"`
		} `json:"expect"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	x := w.Expect
	// What the servers did, as recorded: the premise of the test.
	if x.JSZDisabled[x.FullServer] || !strings.Contains(x.Healthz[x.FullServer], "stream write error") {
		t.Fatalf("fixture: %s jsz disabled %v, healthz %s", x.FullServer, x.JSZDisabled[x.FullServer], x.Healthz[x.FullServer])
	}
	var errLine string
	for _, l := range x.LogLines[x.FullServer] {
		if strings.Contains(l, "critical write error") && strings.Contains(l, "JetStream stream '") {
			errLine = l
		}
		if strings.Contains(l, "DISABLED") {
			t.Fatalf("fixture: %s disabled JetStream: %s", x.FullServer, l)
		}
	}
	if errLine == "" {
		t.Fatalf("fixture: no stream write error in %s's log lines", x.FullServer)
	}
	rep := analyze(t, filepath.Join(dir, "bundle"))
	var got []report.Finding
	for _, f := range rep.Findings {
		switch f.Code {
		case "stream-write-error":
			got = append(got, f)
		case "jetstream-disabled":
			t.Errorf("jetstream-disabled on %s, whose JetStream stayed enabled", f.Server)
		}
		if f.Severity == report.Critical && f.Server != x.FullServer {
			t.Errorf("critical %s on %s: %s", f.Code, f.Server, f.Message)
		}
	}
	if len(got) != 1 {
		t.Fatalf("stream-write-error findings %+v, want one", got)
	}
	f := got[0]
	if f.Server != x.FullServer || f.Stream != x.Stream || f.Account != x.Account || f.Severity != report.Critical || f.Kind != "disk-full" {
		t.Errorf("finding %+v, want critical disk-full on %s %s > %s", f, x.FullServer, x.Account, x.Stream)
	}
	// "[pid] 2026/12/02 03:28:24.798966 [ERR] …"
	fl := strings.Fields(errLine)
	if f.Since == nil || f.Since.Format("2006/01/02 15:04:05.000000") != fl[1]+" "+fl[2] {
		t.Errorf("since %v, the log line says %s %s", f.Since, fl[1], fl[2])
	}
	if f.RemedyID != "stream-write-error" || len(f.RemedySteps) < 2 {
		t.Fatalf("remedy %q %+v", f.RemedyID, f.RemedySteps)
	}
	save, restart := -1, -1
	for i, s := range f.RemedySteps {
		if s.Kind == "save" && save < 0 {
			save = i
		}
		if strings.Contains(s.Text, "restart nats-server") {
			restart = i
		}
	}
	if save < 0 || restart < 0 || save > restart {
		t.Errorf("save step %d, restart step %d: the save must come first", save, restart)
	}
}

// Without a server log there is nothing to judge: skipped, and why.
func TestStreamWriteErrorSkippedWithoutLog(t *testing.T) {
	m := &model.Model{IDs: map[string]string{}}
	_, outcomes := runChecks(m, []check.Check{jetstream.CheckStreamWriteError}, defaultSettings(), nil)
	if o := outcomes[0]; o.Outcome != check.OutcomeSkipped || !strings.Contains(o.Reason, "no server log") {
		t.Errorf("%+v, want skipped because there is no server log", o)
	}
}
