package analysis

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// Check is one independent unit of analysis: a pure function of the model
// and its facts that returns findings. Checks do no I/O; the facts they need
// are named in Requires, computed once (Facts) and handed to every check
// that requires them in its Pass.
type Check struct {
	Code        string
	Severity    report.Severity // the usual severity; a check may lower it per finding
	Description string          // what raises it, as README's table says
	// Settings are the check's thresholds with their defaults; Options can
	// override them by "code.key".
	Settings []Setting
	// Skip says why the check cannot judge this bundle at all ("" when it
	// can): such a check is reported as skipped, never as passed.
	Skip func(*Pass) string
	Run  func(*Pass) []report.Finding
	// Requires are the facts the check reads (Pass.Facts); reading any
	// other panics, and the check is reported as not run.
	Requires []Fact
}

// Setting is one threshold of a check.
type Setting struct {
	Key         string
	Default     float64
	Unit        string
	Description string
}

// Pass is what one check sees while it runs: the model, the facts it
// requires (computed once for every check), its settings, and the partial
// skips it records.
type Pass struct {
	Model *model.Model
	Facts *Facts
	check *Check
	// values are the settings of every check by "code.key".
	values map[string]float64
	// skipped are the parts of the bundle the check could not judge.
	skipped []string
}

// Setting returns the value of one of the running check's settings.
func (p *Pass) Setting(key string) float64 { return p.SettingOf(p.check.Code, key) }

// SettingOf returns the value of another check's setting, for checks that
// must draw the same line (peer-unknown leaves to peer-id-corrupt what it
// takes).
func (p *Pass) SettingOf(code, key string) float64 {
	if v, ok := p.values[code+"."+key]; ok {
		return v
	}
	if v, ok := defaultSettings[code+"."+key]; ok {
		return v
	}
	// A check asking for a setting nobody declared is a bug: runOne turns
	// the panic into "not run".
	panic(fmt.Sprintf("check %s: no setting %s.%s", p.check.Code, code, key))
}

// defaultSettings holds every registered check's settings by "code.key".
var defaultSettings = map[string]float64{}

func init() {
	for _, c := range Checks {
		for _, s := range c.Settings {
			defaultSettings[c.Code+"."+s.Key] = s.Default
		}
	}
}

// Skipf records a part of the bundle the check could not judge (a server
// without readable meta state, say); the check's outcome lists them.
func (p *Pass) Skipf(format string, args ...any) {
	p.skipped = append(p.skipped, fmt.Sprintf(format, args...))
}

// Checks is the one registered list. README.md's table of finding codes is
// kept in step with it by TestREADMEListsEveryCheck.
var Checks = []Check{
	checkStoreCorrupt,
	checkIndexMismatch,
	checkPeerIDCorrupt,
	checkPeerUnknown,
	checkQuorumUnreachable,
	checkMetaSplit,
	checkOrphanRisk,
	checkReplicaGap,
	checkReplicaDivergence,
	checkAckedLost,
	checkUnsafeMembershipChange,
	checkMetaNoLeader,
	checkServerRenamed,
	checkPeerOffline,
	checkAssetLost,
	checkDurabilityExposure,
	checkJetStreamDisabled,
	checkStreamWriteError,
}

// Outcome results of a check.
const (
	OutcomePassed  = "passed"  // judged, no finding
	OutcomeFailed  = "failed"  // judged, findings raised
	OutcomeSkipped = "skipped" // nothing in the bundle it could judge
	OutcomeNotRun  = "not-run" // the check itself broke
)

// runChecks runs every check over m with the facts they require, each
// computed once; a check that panics is reported as not run and the others
// still run.
func runChecks(m *model.Model, checks []Check, values map[string]float64) (findings []report.Finding, outcomes []report.CheckOutcome) {
	facts := computeFacts(m, requiredBy(checks))
	for i := range checks {
		c := &checks[i]
		p := &Pass{Model: m, Facts: facts.only(c.Requires), check: c, values: values}
		o := report.CheckOutcome{Code: c.Code}
		fs, reason, err := runOne(p)
		switch {
		case err != nil:
			o.Outcome, o.Reason = OutcomeNotRun, err.Error()
		case reason != "":
			o.Outcome, o.Reason = OutcomeSkipped, reason
		case len(fs) > 0:
			o.Outcome, o.Findings = OutcomeFailed, len(fs)
		default:
			o.Outcome = OutcomePassed
		}
		o.Skipped = p.skipped
		outcomes = append(outcomes, o)
		for i := range fs {
			if fs[i].Code == "" {
				fs[i].Code = c.Code
			}
			if fs[i].Severity == "" {
				fs[i].Severity = c.Severity
			}
		}
		findings = append(findings, fs...)
	}
	sort.SliceStable(findings, func(i, j int) bool {
		return findings[i].Severity.Rank() < findings[j].Severity.Rank()
	})
	return findings, outcomes
}

// outcomeNotes are the notes that say which checks did not judge
// everything: one line for the checks skipped (grouped by reason), one per
// check broken or skipped in part.
func outcomeNotes(outcomes []report.CheckOutcome) []string {
	var notes, reasons []string
	skipped := map[string][]string{}
	for _, o := range outcomes {
		switch o.Outcome {
		case OutcomeNotRun:
			notes = append(notes, fmt.Sprintf("check %s not run: %s", o.Code, o.Reason))
		case OutcomeSkipped:
			if skipped[o.Reason] == nil {
				reasons = append(reasons, o.Reason)
			}
			skipped[o.Reason] = append(skipped[o.Reason], o.Code)
		}
		if len(o.Skipped) > 0 {
			notes = append(notes, fmt.Sprintf("check %s skipped in part: %s", o.Code, strings.Join(o.Skipped, "; ")))
		}
	}
	if len(reasons) > 0 {
		var parts []string
		for _, r := range reasons {
			parts = append(parts, strings.Join(skipped[r], ", ")+" ("+r+")")
		}
		notes = append(notes, "checks skipped: "+strings.Join(parts, "; "))
	}
	return notes
}

func runOne(p *Pass) (fs []report.Finding, skipped string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if p.check.Skip != nil {
		if why := p.check.Skip(p); why != "" {
			return nil, why, nil
		}
	}
	return p.check.Run(p), "", nil
}

// runCheck runs one check over m with default settings, as a test does,
// with the facts it requires.
func runCheck(c Check, m *model.Model) []report.Finding {
	p := &Pass{Model: m, Facts: computeFacts(m, c.Requires).only(c.Requires), check: &c}
	return c.Run(p)
}
