package check

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/facts"
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
	Requires []facts.Fact
	// NatscliCode is the code of the natscli `nats audit analyze` check
	// this one computes ("SERVER_001"…), "" for the others.
	NatscliCode string
	// CoveredBy are checks that say more of the same fault: a finding of
	// this check with the same subject as one of theirs (Covers) is left
	// out, and the outcome names them, so one fault is reported once.
	CoveredBy []string
}

// NoAuditArchive is the reason natscli's audit checks are skipped on a
// bundle without a `nats audit gather` archive. It is the usual case, so
// OutcomeNotes does not repeat it; the checks' outcomes say it.
const NoAuditArchive = "no nats audit gather archive in the bundle"

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
	Facts *facts.Facts
	Check *Check
	// values are the settings of every check by "code.key"; defaults those
	// every registered check declares.
	values, defaults map[string]float64
	// skipped are the parts of the bundle the check could not judge.
	Skipped []string
}

// NewPass is what check c sees of m with facts f: defaults are every
// registered check's settings (Defaults), values override them.
func NewPass(m *model.Model, f *facts.Facts, c *Check, defaults, values map[string]float64) *Pass {
	return &Pass{Model: m, Facts: f, Check: c, defaults: defaults, values: values}
}

// Setting returns the value of one of the running check's settings.
func (p *Pass) Setting(key string) float64 { return p.SettingOf(p.Check.Code, key) }

// SettingOf returns the value of another check's setting, for checks that
// must draw the same line (peer-unknown leaves to peer-id-corrupt what it
// takes).
func (p *Pass) SettingOf(code, key string) float64 {
	if v, ok := p.values[code+"."+key]; ok {
		return v
	}
	if v, ok := p.defaults[code+"."+key]; ok {
		return v
	}
	// A check asking for a setting nobody declared is a bug: runOne turns
	// the panic into "not run".
	panic(fmt.Sprintf("check %s: no setting %s.%s", p.Check.Code, code, key))
}

// Defaults are the settings of checks with their defaults, by "code.key".
func Defaults(checks []Check) map[string]float64 {
	out := map[string]float64{}
	for _, c := range checks {
		for _, s := range c.Settings {
			out[c.Code+"."+s.Key] = s.Default
		}
	}
	return out
}

// Skipf records a part of the bundle the check could not judge (a server
// without readable meta state, say); the check's outcome lists them.
func (p *Pass) Skipf(format string, args ...any) {
	p.Skipped = append(p.Skipped, fmt.Sprintf(format, args...))
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
//
// defaults are the settings every registered check declares (Defaults): a
// check may read another's (SettingOf) even when that one is not run.
func Run(m *model.Model, checks []Check, defaults, values map[string]float64) (findings []report.Finding, outcomes []report.CheckOutcome) {
	computed := facts.Compute(m, RequiredBy(checks))
	for i := range checks {
		c := &checks[i]
		p := &Pass{Model: m, Facts: computed.Only(c.Requires), Check: c, values: values, defaults: defaults}
		o := report.CheckOutcome{Code: c.Code, NatscliCode: c.NatscliCode}
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
		o.Skipped = p.Skipped
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
	findings = cover(checks, findings, outcomes)
	sort.SliceStable(findings, func(i, j int) bool {
		return findings[i].Severity.Rank() < findings[j].Severity.Rank()
	})
	return findings, outcomes
}

// outcomeNotes are the notes that say which checks did not judge
// everything: one line for the checks skipped (grouped by reason), one per
// check broken or skipped in part.
func OutcomeNotes(outcomes []report.CheckOutcome) []string {
	var notes, reasons []string
	skipped := map[string][]string{}
	for _, o := range outcomes {
		switch o.Outcome {
		case OutcomeNotRun:
			notes = append(notes, fmt.Sprintf("check %s not run: %s", o.Code, o.Reason))
		case OutcomeSkipped:
			if o.Reason == NoAuditArchive {
				continue
			}
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

// cover leaves out the findings of checks with CoveredBy that a finding of
// one of those checks already reports (Covers), and names the covering
// checks in the outcome; the outcome stays failed, its Findings counting
// what is left.
func cover(checks []Check, findings []report.Finding, outcomes []report.CheckOutcome) []report.Finding {
	covered := map[string]int{} // check code -> its index in checks and outcomes
	for i, c := range checks {
		if len(c.CoveredBy) > 0 {
			covered[c.Code] = i
		}
	}
	if len(covered) == 0 {
		return findings
	}
	out := findings[:0:0] // nil stays nil, empty stays empty
	for _, f := range findings {
		i, ok := covered[f.Code]
		by := ""
		for _, g := range findings {
			if ok && slices.Contains(checks[i].CoveredBy, g.Code) && Covers(g, f) {
				by = g.Code
				break
			}
		}
		if by == "" {
			out = append(out, f)
			continue
		}
		o := &outcomes[i]
		o.Findings--
		if !slices.Contains(o.CoveredBy, by) {
			o.CoveredBy = append(o.CoveredBy, by)
		}
	}
	return out
}

// Covers says whether finding g reports the fault of f: the same stream
// when f names one, else the same server when f names one, else the same
// raft group.
func Covers(g, f report.Finding) bool {
	switch {
	case f.Stream != "":
		return g.Account == f.Account && g.Stream == f.Stream
	case f.Server != "":
		return g.Server == f.Server || slices.Contains(g.Servers, f.Server)
	default:
		return f.Group != "" && g.Group == f.Group
	}
}

func runOne(p *Pass) (fs []report.Finding, skipped string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if p.Check.Skip != nil {
		if why := p.Check.Skip(p); why != "" {
			return nil, why, nil
		}
	}
	return p.Check.Run(p), "", nil
}

// RunOne runs one check over m, as a test does, with the facts it
// requires and the given default settings.
func RunOne(c Check, m *model.Model, defaults map[string]float64) []report.Finding {
	p := &Pass{Model: m, Facts: facts.Compute(m, c.Requires).Only(c.Requires), Check: &c, defaults: defaults}
	return c.Run(p)
}

// requiredBy is every fact the checks require, directly or not.
func RequiredBy(checks []Check) []facts.Fact {
	var needs []facts.Fact
	for _, c := range checks {
		needs = append(needs, c.Requires...)
	}
	return facts.Closure(needs)
}
