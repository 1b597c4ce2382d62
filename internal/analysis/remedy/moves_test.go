package remedy

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// TestResolveServerMovesModel: on small findings, a start of a server that
// another finding gates gets that gate's moves and caveat right before it;
// a finding about another server, one whose move is no start, and the gate
// itself are left as they are; a removal gate names itself as the other way.
func TestResolveServerMovesModel(t *testing.T) {
	gate := report.Finding{Code: "jetstream-disabled", Server: "s2", RemedySteps: []report.RemedyStep{
		{Kind: StepCost, Text: "nothing."},
		{Kind: StepAction, Text: "Make room first: free space. Set limits."},
		{Kind: StepNote, Text: "Do not restart it before there is room: it exits."},
		{Kind: StepAction, Text: "Then start nats-server on s2 again: its process is down. More."},
	}}
	start := func(srv string) report.Finding {
		return report.Finding{Code: "replica-gap", Server: srv, RemedySteps: []report.RemedyStep{
			{Kind: StepCost, Text: "its replica takes the leader's state."},
			{Kind: StepAction, Text: "Start " + srv + ": once up, it catches up."},
		}}
	}
	other := report.Finding{Code: "store-corrupt", Server: "s2", RemedySteps: []report.RemedyStep{{Kind: StepAction, Text: "Keep index.db."}}}
	fs := []report.Finding{start("s2"), gate, start("s3"), other}
	ResolveServerMoves(fs)
	screen := RemedyFirstStep(fs[0])
	for _, want := range []string{"as jetstream-disabled says for s2", "Make room first: free space.", "Then start nats-server on s2 again: its process is down.", "Do not restart it before there is room: it exits."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the gated start's first screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Index(screen, "Make room") > strings.Index(screen, "Start s2") {
		t.Errorf("the gate comes after the start:\n%s", screen)
	}
	if len(fs[1].RemedySteps) != 4 || len(fs[2].RemedySteps) != 2 || len(fs[3].RemedySteps) != 1 {
		t.Errorf("a finding without a gated start changed: %d %d %d steps", len(fs[1].RemedySteps), len(fs[2].RemedySteps), len(fs[3].RemedySteps))
	}
	ResolveServerMoves(fs) // once is enough
	if n := strings.Count(RemedyFirstStep(fs[0]), "as jetstream-disabled says"); n != 1 {
		t.Errorf("the gate given %d times", n)
	}

	left := report.Finding{Code: "peer-offline", Server: "s4", RemedySteps: []report.RemedyStep{
		{Kind: StepSave, Text: "copy the stores aside; do not start them again after the removal."},
		{Kind: StepAction, Text: "Then remove each departed server with a server removal."},
	}}
	fs = []report.Finding{left, start("s4")}
	ResolveServerMoves(fs)
	screen = RemedyFirstStep(fs[1])
	if !strings.Contains(screen, "do not start them again after the removal") || !strings.Contains(screen, "to bring s4 back instead, before any removal") {
		t.Errorf("the start of a server that has left does not say it is the other way:\n%s", screen)
	}
}
