package analysis

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// refToFinding finds a remedy's or diagnosis' pointer to other findings:
// "see the orphan-risk findings", "see quorum-unreachable, …", "The
// asset-lost findings name …".
var refToFinding = regexp.MustCompile(`(?:[Ss]ee (?:the )?|The )([a-z]+(?:-[a-z]+)+)(?: findings)?`)

// TestRemediesReferToFindingsPresent: in every committed fixture, a remedy
// or a diagnosis step that sends the reader to a finding code names one the
// report holds.
func TestRemediesReferToFindingsPresent(t *testing.T) {
	codes := map[string]bool{}
	for _, c := range Checks {
		codes[c.Code] = true
	}
	for _, fx := range fixtures(t) {
		if len(fx.forms) == 0 {
			continue
		}
		rep := analyze(t, fx.forms[0])
		present := map[string]bool{}
		for _, f := range rep.Findings {
			present[f.Code] = true
		}
		check := func(where, text string) {
			for _, m := range refToFinding.FindAllStringSubmatch(text, -1) {
				if codes[m[1]] && !present[m[1]] {
					t.Errorf("%s: %s refers to %s, which the report does not hold: %q", fx.name, where, m[1], m[0])
				}
			}
		}
		for _, f := range rep.Findings {
			check(f.Code+" remedy", f.Remedy)
		}
		for _, c := range rep.Diagnosis {
			check("diagnosis", c.Summary+" "+c.FirstStep)
		}
	}
}

func TestResolveRefs(t *testing.T) {
	fs := []report.Finding{
		{Code: "meta-no-leader", RemedySteps: []report.RemedyStep{
			{Kind: remedy.StepNote, Refers: []string{"quorum-unreachable", "peer-offline"}, Text: "see {{refs}} for why"},
			{Kind: remedy.StepNote, Refers: []string{"!quorum-unreachable", "!peer-offline"}, Text: "no cause named"},
			{Kind: remedy.StepAction, Text: "check the routes"},
		}},
		{Code: "peer-offline"},
	}
	remedy.ResolveRefs(fs)
	if got := fs[0].Remedy; got != "see peer-offline for why\ncheck the routes\n"+remedy.ProofLine(nil) {
		t.Errorf("remedy %q", got)
	}
	fs = fs[:1]
	fs[0].RemedySteps = []report.RemedyStep{
		{Kind: remedy.StepNote, Refers: []string{"orphan-risk"}, Text: "see the orphan-risk findings"},
		{Kind: remedy.StepNote, Refers: []string{"!orphan-risk"}, Text: "streams are deleted"},
	}
	remedy.ResolveRefs(fs)
	if len(fs[0].RemedySteps) != 1 || fs[0].RemedySteps[0].Text != "streams are deleted" {
		t.Errorf("steps %+v", fs[0].RemedySteps)
	}
}

// TestSplitSuperclusterWording: the split-supercluster fixture's groups
// met and a stream was lost, so the report says so in the past tense and
// never asks to save what is already gone before a meeting that happened.
func TestSplitSuperclusterWording(t *testing.T) {
	rep := analyze(t, bundlesDir+"/v2.15.2-supercluster-split/bundle")
	var split *report.Finding
	for i, f := range rep.Findings {
		if f.Code == "meta-split" {
			split = &rep.Findings[i]
		}
	}
	if split == nil {
		t.Fatal("no meta-split finding")
	}
	if !strings.Contains(split.Message, "they met at 2026-11-30T01:41:02Z") {
		t.Errorf("meta-split does not say when the groups met: %q", split.Message)
	}
	if split.Since == nil || split.Since.Format("15:04:05") != "01:41:02" {
		t.Errorf("meta-split since %v, want the join", split.Since)
	}
	if split.RemedyID != "meta-split-merged" {
		t.Errorf("remedy %s, want meta-split-merged once the groups met", split.RemedyID)
	}
	for _, c := range rep.Diagnosis {
		if strings.Contains(c.Summary, "before the groups meet again") || strings.Contains(c.FirstStep, "keep running together") {
			t.Errorf("diagnosis speaks of a meeting to come: %q / %q", c.Summary, c.FirstStep)
		}
		if strings.Contains(c.Summary, "meta groups were founded apart") && !strings.Contains(c.Summary, "which lost $G > NEW_EVENTS (1 stream(s), in no store of the bundle now)") {
			t.Errorf("diagnosis does not name the lost stream in the past: %q", c.Summary)
		}
	}
}

// TestScaledownQuorumNamesStreamAndServers: on the scale-down fixture the
// stalled stream group's quorum-unreachable names the stream it stalls and
// the departed servers behind its missing ids, never bare ids alone.
func TestScaledownQuorumNamesStreamAndServers(t *testing.T) {
	rep := analyze(t, bundlesDir+"/scaledown-v2.12.1/bundle")
	found := false
	for _, f := range rep.Findings {
		if f.Code != "quorum-unreachable" || f.Group != "S-R3F-R4pp5ogu" {
			continue
		}
		found = true
		if f.Account != "APP" || f.Stream != "STUCK" || !strings.Contains(f.Message, "(stream APP > STUCK)") {
			t.Errorf("stream not named: %s/%s %q", f.Account, f.Stream, f.Message)
		}
		ev := strings.Join(f.Evidence, "\n")
		for _, want := range []string{"n3 (BXScrY9i)", "n4 (C7B8kAbl), a server that left", "n5 (C8OtEtgR), a server that left"} {
			if !strings.Contains(ev, want) {
				t.Errorf("evidence lacks %q:\n%s", want, ev)
			}
		}
	}
	if !found {
		t.Fatal("no quorum-unreachable on S-R3F-R4pp5ogu")
	}
}

// TestPhantomPeersWording: on the phantom-peer fixtures whose servers
// start from peers.idx, the meta group's quorum-unreachable names the
// servers behind the ids that exist and says of each corrupt id that no
// server holds it; no unknown figure is printed as zero.
func TestPhantomPeersWording(t *testing.T) {
	for _, v := range []string{"v2.10.22", "v2.12.4"} {
		rep := analyze(t, bundlesDir+"/"+v+"-incident-phantom-peers/bundle")
		found := false
		for _, f := range rep.Findings {
			if strings.Contains(f.Message, "cluster size 0") || strings.Contains(f.Message, "in term 0") {
				t.Errorf("%s %s prints an unknown as zero: %q", v, f.Code, f.Message)
			}
			if f.Code != "quorum-unreachable" || f.Group != "_meta_" {
				continue
			}
			found = true
			ev := strings.Join(f.Evidence, "\n")
			for _, want := range []string{"nats-3 (bkCGheKT)", "nats-2 (cnrtt3eg)", "cnr4t3eg, an id no server of the bundle holds", "yrzKKR@u, an id no server of the bundle holds"} {
				if !strings.Contains(ev, want) {
					t.Errorf("%s: evidence lacks %q:\n%s", v, want, ev)
				}
			}
		}
		if !found {
			t.Errorf("%s: no quorum-unreachable on _meta_", v)
		}
	}
}
