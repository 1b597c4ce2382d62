package remedy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/report"
)

// Args are a prescription's parameters: strings, ints, bools (for When and
// Unless), and for Each lists of strings or of Args (records whose fields
// the step's commands name).
type Args map[string]any

// stepFuncs turn a parameter into command text: {{name|fn}}.
var stepFuncs = map[string]func(string) string{
	"server-remove": PeerRemoveCommand,
	"shell":         shellWord,
	"json":          jsonString,
}

// Prescription is a catalogue entry with its parameters filled in.
type Prescription struct {
	ID     ID
	Steps  []report.RemedyStep
	Proven []report.RemedyProof
}

// Prescribe fills catalogue entry id with a. An id the catalogue does not
// hold is a bug: it panics, and the check is reported not run.
func Prescribe(id ID, a Args) Prescription {
	r, ok := RemedyByID[id]
	if !ok {
		panic("no remedy " + string(id) + " in the catalogue")
	}
	p := Prescription{ID: r.ID}
	// A run proves only the variant it carried out: the proofs of the
	// variants these parameters do not select are left out.
	var ways []string
	for _, v := range r.Variants {
		if a.holds(v.When, false) && a.holds(v.Unless, true) {
			ways = append(ways, v.Name)
		}
	}
	for _, x := range r.Proven {
		if len(r.Variants) > 0 && !slices.Contains(ways, x.Variant) {
			continue
		}
		p.Proven = append(p.Proven, report.RemedyProof{Version: x.Release, Outcome: x.Outcome, Failed: x.Failed, Variant: x.Variant})
	}
	for _, s := range r.Steps {
		if !a.holds(s.When, false) || !a.holds(s.Unless, true) {
			continue
		}
		text, _ := a.fill(s.Text, nil)
		st := report.RemedyStep{Kind: s.Kind, Text: text, Destructive: s.Destroys, Refers: refers(s)}
		items := []Args{nil}
		if s.Each != "" {
			items = a.list(s.Each)
		}
		removes := false
		for _, item := range items {
			for _, c := range s.Commands {
				cmd, removed := a.fill(c, item)
				st.Commands = append(st.Commands, cmd)
				st.Removes = append(st.Removes, removed)
				removes = removes || removed != ""
			}
		}
		if !removes {
			st.Removes = nil
		}
		p.Steps = append(p.Steps, st)
	}
	return p
}

// refers are the finding codes of a step as report.RemedyStep.Refers holds
// them: "!code" for a step kept only where no finding of code is.
func refers(s remedyStep) []string {
	var out []string
	for _, c := range s.Refers {
		out = append(out, string(c))
	}
	for _, c := range s.UnlessFound {
		out = append(out, "!"+string(c))
	}
	return out
}

// holds says whether parameter name is set (unset, for negate): whether a
// step guarded by it is part of the remedy. No name holds.
func (a Args) holds(name string, negate bool) bool {
	if name == "" {
		return true
	}
	set := false
	switch v := a[name].(type) {
	case string:
		set = v != ""
	case []string:
		set = len(v) > 0
	case []Args:
		set = len(v) > 0
	case bool:
		set = v
	}
	return set != negate
}

// list are the values of list parameter name, each as the parameters of
// one round of an Each step's commands: a string list's values as
// {{each}}, Args values as they are.
func (a Args) list(name string) []Args {
	var vs []string
	switch v := a[name].(type) {
	case []Args:
		return v
	case []string:
		vs = v
	case string:
		if v != "" {
			vs = []string{v}
		}
	}
	out := make([]Args, 0, len(vs))
	for _, v := range vs {
		out = append(out, Args{"each": v})
	}
	return out
}

// fill expands the {{…}} of a template from item (one value of an Each
// step's list), else from a. removed is the peer id of the server removal
// a {{…|server-remove}} rendered ("" for none): the command removes it.
func (a Args) fill(tmpl string, item Args) (filled, removed string) {
	var b strings.Builder
	for {
		i := strings.Index(tmpl, "{{")
		if i < 0 {
			b.WriteString(tmpl)
			return b.String(), removed
		}
		j := strings.Index(tmpl[i:], "}}")
		if j < 0 {
			b.WriteString(tmpl)
			return b.String(), removed
		}
		b.WriteString(tmpl[:i])
		name, fn, _ := strings.Cut(tmpl[i+2:i+j], "|")
		x, ok := item[name]
		if !ok {
			x = a[name]
		}
		var v string
		switch x := x.(type) {
		case string:
			v = x
		case []string:
			v = strings.Join(x, " ")
		case int:
			v = fmt.Sprint(x)
		case nil:
			switch name {
			case "each":
			case "refs":
				v = "{{refs}}" // filled by resolveRefs once every finding is known
			default:
				v = "{{" + name + "}}" // left visible: TestCommittedReportsRemedies fails on it
			}
		default:
			v = fmt.Sprint(x)
		}
		if fn == "server-remove" && utf8.ValidString(v) {
			// PeerRemoveCommand renders a request for a valid id, and a
			// comment that removes nothing for any other.
			removed = v
		}
		if f, ok := stepFuncs[fn]; ok {
			v = f(v)
		}
		b.WriteString(v)
		tmpl = tmpl[i+j+2:]
	}
}

// apply sets f's remedy: its id, its steps and their text.
func (p Prescription) Apply(f *report.Finding) {
	f.RemedyID, f.RemedySteps, f.RemedyProven = string(p.ID), p.Steps, p.Proven
	f.Remedy = RenderRemedy(p.Steps, p.Proven)
}

// withRemedy is f with p applied, for findings built in one expression.
func WithRemedy(f report.Finding, p Prescription) report.Finding {
	p.Apply(&f)
	return f
}

// text is p as the report's remedy text.
func (p Prescription) Text() string { return RenderRemedy(p.Steps, p.Proven) }

// withNote is p with a note step added at its end ("" adds nothing).
func (p Prescription) WithNote(text string) Prescription {
	if text = strings.TrimSpace(text); text != "" {
		p.Steps = append(slices.Clone(p.Steps), report.RemedyStep{Kind: StepNote, Text: text})
	}
	return p
}

// renderRemedy lays the steps out as text, in their order (the cost and
// the save steps before the actions), then says which runs proved it, for
// a remedy with actions.
func RenderRemedy(steps []report.RemedyStep, proven []report.RemedyProof) string {
	text := renderSteps(steps)
	if slices.ContainsFunc(steps, func(s report.RemedyStep) bool { return s.Kind == StepAction }) {
		text += "\n" + ProofLine(proven)
	}
	return text
}

// renderSteps lays steps out one a line, commands indented below their step.
func renderSteps(steps []report.RemedyStep) string {
	var lines []string
	saves := 0
	for _, s := range steps {
		var line string
		switch s.Kind {
		case StepCost:
			line = "What this destroys: " + s.Text
		case StepSave:
			saves++
			line = "Save first: " + s.Text
			if saves > 1 {
				line = "Save also: " + s.Text
			}
		case StepVerify:
			line = "Check: " + s.Text
		default:
			line = s.Text
		}
		for _, c := range s.Commands {
			line += "\n  " + c
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// ProofLine says on which releases real-server runs carried the remedy
// out with success, on which it failed (its verify step did not hold), how
// many runs each, and that no other release was run: "Proven by execution
// on nats-server 2.12.15 and 2.15.3 (3 runs); failed on 2.10.27 (1 run).
// Not proven on any other version." For a remedy with variants, each run
// proves only its own, named before its releases ("For a stream group, by
// stream peer removal: proven by execution on …"), and no other way is
// proven. The runs' outcomes are in the report's remedy_proven, not in
// this line.
func ProofLine(proven []report.RemedyProof) string {
	if len(proven) == 0 {
		return "Not proven by execution: no real-server run of the fixtures has carried out this remedy."
	}
	var ways []string
	for _, p := range proven {
		ways = model.AppendUnique(ways, p.Variant)
	}
	var lines []string
	for _, way := range ways {
		var ok, failed []report.RemedyProof
		for _, p := range proven {
			switch {
			case p.Variant != way:
			case p.Failed:
				failed = append(failed, p)
			default:
				ok = append(ok, p)
			}
		}
		var parts []string
		if len(ok) > 0 {
			parts = append(parts, "proven by execution on nats-server "+releasesRun(ok))
		}
		switch {
		case len(failed) > 0 && len(ok) == 0:
			parts = append(parts, "carried out on nats-server "+releasesRun(failed)+" and failed: its check did not hold")
		case len(failed) > 0:
			parts = append(parts, "failed on "+releasesRun(failed))
		}
		line := strings.Join(parts, "; ")
		if way != "" {
			line = way + ": " + line
		}
		lines = append(lines, strings.ToUpper(line[:1])+line[1:]+".")
	}
	tail := " Not proven on any other version."
	if ways[0] != "" {
		tail = " Not proven on any other version, nor any other way."
	}
	return strings.Join(lines, " ") + tail
}

// releasesRun names the releases of runs, oldest first, and how many runs
// there were: "2.12.15 and 2.15.3 (3 runs)".
func releasesRun(runs []report.RemedyProof) string {
	var rs []string
	for _, p := range runs {
		rs = model.AppendUnique(rs, p.Version)
	}
	slices.SortFunc(rs, func(a, b string) int {
		a1, a2, a3, _ := releases.ParseVersion(a)
		b1, b2, b3, _ := releases.ParseVersion(b)
		return cmp.Or(cmp.Compare(a1, b1), cmp.Compare(a2, b2), cmp.Compare(a3, b3))
	})
	return fmt.Sprintf("%s (%d run%s)", joinAnd(rs), len(runs), model.Plural(len(runs), "", "s"))
}

// firstSteps are the steps a diagnosis puts first: every step before the
// remedy's first action (what it destroys, what to save, what not to do),
// that action, and the notes right after it, which are its caveats (the
// releases where it is not reliable or refused, what not to do if it
// fails): the first screen never promises what the full remedy then
// withdraws. A destructive remedy's save steps come before its first
// action in every catalogue entry (Load, TestRemedyCatalogue), so they are
// always part of it.
func firstSteps(steps []report.RemedyStep) []report.RemedyStep {
	i := slices.IndexFunc(steps, func(s report.RemedyStep) bool { return s.Kind == StepAction })
	if i < 0 {
		return steps
	}
	j := i + 1
	for j < len(steps) && steps[j].Kind == StepNote {
		j++
	}
	return steps[:j]
}

// remedyFirstStep is the first step of a finding's remedy as text.
func RemedyFirstStep(f report.Finding) string {
	if len(f.RemedySteps) == 0 {
		return firstStep(f.Remedy)
	}
	return renderSteps(firstSteps(f.RemedySteps))
}

// addRemedyNote adds a note before the first step matching at (the end when
// none does) and renders the text again.
func addRemedyNote(f *report.Finding, note string, at func(report.RemedyStep) bool) {
	i := slices.IndexFunc(f.RemedySteps, at)
	if i < 0 {
		i = len(f.RemedySteps)
	}
	f.RemedySteps = slices.Insert(slices.Clone(f.RemedySteps), i, report.RemedyStep{Kind: StepNote, Text: note})
	f.Remedy = RenderRemedy(f.RemedySteps, f.RemedyProven)
}

// resolveRefs keeps each remedy step that points to other findings only
// where such a finding is in the report, and names in it those present: a
// remedy never sends the reader to a finding that does not exist.
func ResolveRefs(findings []report.Finding) {
	present := map[string]bool{}
	for _, f := range findings {
		present[f.Code] = true
	}
	for i := range findings {
		f := &findings[i]
		if !slices.ContainsFunc(f.RemedySteps, func(s report.RemedyStep) bool { return len(s.Refers) > 0 }) {
			continue
		}
		var steps []report.RemedyStep
		for _, s := range f.RemedySteps {
			if len(s.Refers) > 0 {
				var have []string
				keep := true
				for _, code := range s.Refers {
					if c, ok := strings.CutPrefix(code, "!"); ok {
						keep = keep && !present[c]
					} else if present[code] {
						have = append(have, code)
					}
				}
				if !keep || len(have) == 0 && !strings.HasPrefix(s.Refers[0], "!") {
					continue
				}
				s.Text = strings.ReplaceAll(s.Text, "{{refs}}", joinAnd(have))
				s.Refers = nil
			}
			steps = append(steps, s)
		}
		f.RemedySteps = steps
		f.Remedy = RenderRemedy(steps, f.RemedyProven)
	}
}

// joinAnd lists words as prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// firstStep is the first instruction of a remedy given as text only (a
// finding with no RemedySteps): its first line without the list number
// (with the indented commands it introduces when it ends in a colon), or
// the first sentence of a one-paragraph remedy.
func firstStep(remedy string) string {
	lines := strings.Split(strings.TrimSpace(remedy), "\n")
	first := strings.TrimSpace(lines[0])
	if n := strings.IndexByte(first, ' '); n > 0 && strings.TrimLeft(first[:n], "0123456789") == "." {
		first = strings.TrimSpace(first[n:])
	}
	if len(lines) == 1 {
		if i := strings.Index(first, ". "); i > 0 {
			first = first[:i+1]
		}
		return first
	}
	if strings.HasSuffix(first, ":") {
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, " ") {
				break
			}
			first += "\n" + l
		}
	}
	return first
}

// SealedRemedy is the remedy text of a sealed store (remedies.yaml
// store-sealed). Starting a server on a config whose key is redacted
// destroys the data (issue 12: v2.12.1 brought every stream back empty and
// deleted block files and consumer folders).
var SealedRemedy = Prescribe(StoreSealed, nil).Text()
