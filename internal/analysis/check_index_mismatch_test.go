package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestIndexMismatchOnModel: index.db claiming what the blocks lack is a
// warning whose remedy saves index.db before removing it; one that merely
// stops before the blocks, or records what damaged blocks held, is info and
// says to keep it.
func TestIndexMismatchOnModel(t *testing.T) {
	ms := []IndexMismatch{
		{Server: "n1", Stream: "A", File: "s1/A/msgs/index.db", Detail: "claims more"},
		{Server: "n1", Stream: "B", File: "s1/B/msgs/index.db", Outdated: true},
		{Server: "n1", Stream: "C", File: "s1/C/msgs/index.db", Damaged: true},
	}
	fs := runCheck(checkIndexMismatch, storeModel(nil, ms))
	if len(fs) != 3 {
		t.Fatalf("%d findings: %s", len(fs), summarize(fs))
	}
	if fs[0].Severity != "" && fs[0].Severity != report.Warning {
		t.Errorf("claims more: %s", fs[0].Severity)
	}
	warnedBefore(t, fs[0].Remedy, "remove s1/A/msgs/index.db", "copy it out")
	if fs[1].Severity != report.Info || fs[1].Kind != "outdated" {
		t.Errorf("outdated: %+v", fs[1])
	}
	if fs[2].Severity != report.Info || fs[2].Kind != "damage" || strings.Contains(fs[2].Remedy, "remove "+ms[2].File) {
		t.Errorf("damage: %+v", fs[2])
	}
	if fs := runCheck(checkIndexMismatch, storeModel(nil, nil)); len(fs) != 0 {
		t.Errorf("no mismatch, yet %s", summarize(fs))
	}
}
