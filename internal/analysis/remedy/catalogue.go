package remedy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/jsforensics/jsforensics/report"
)

// catalogueFile is the remedy catalogue as reviewed: remedies.yaml, whose
// header says what each key means.
//
//go:embed remedies.yaml
var catalogueFile []byte

// RemedyCatalogue is the embedded catalogue, its fragments expanded, and
// RemedyByID indexes it. The file is part of the build: one that does not
// load is a build bug, so the package panics at init (TestCatalogueLoads
// fails first).
var RemedyCatalogue, RemedyByID = mustLoad(catalogueFile)

func mustLoad(b []byte) ([]remedy, map[ID]*remedy) {
	c, err := Load(b)
	if err != nil {
		panic("remedies.yaml: " + err.Error())
	}
	byID := map[ID]*remedy{}
	for i := range c {
		byID[c[i].ID] = &c[i]
	}
	return c, byID
}

// catalogue is the file as written: shared step groups by name, and the
// entries, whose steps may name a group (use) instead of a kind.
type catalogue struct {
	Fragments map[string][]remedyStep `yaml:"fragments"`
	Remedies  []remedy                `yaml:"remedies"`
}

// remedy is one entry of the catalogue. Its texts are templates: {{name}}
// is the parameter name of the prescription, {{name|fn}} the parameter
// through one of stepFuncs, and in a step with Each, {{each}} is one value
// of that list parameter ({{field}} a field of a value that is Args).
type remedy struct {
	ID    ID           `yaml:"id"`
	Steps []remedyStep `yaml:"steps"`
	// Proven are the real-server runs that executed the remedy, each
	// recorded in a committed fixture; none means not proven by execution.
	Proven []proof `yaml:"proven"`
	// Variants are the ways of a remedy that has several (a consumer
	// group or a stream group, a peer removal or a scale-down): each
	// proof names the one its run carried out, and a prescription shows
	// only the proofs of the variants its parameters select (When/Unless
	// as for a step).
	Variants []variant `yaml:"variants"`
}

// variant is one way of carrying a remedy out.
type variant struct {
	Name   string `yaml:"name"`
	When   string `yaml:"when"`
	Unless string `yaml:"unless"`
}

// remedyStep is one step of a catalogue entry.
type remedyStep struct {
	// Use names a fragment whose steps stand in its place; a step with Use
	// has no other field, and Load replaces it.
	Use  string `yaml:"use"`
	Kind string `yaml:"kind"`
	// When names a parameter: the step is left out when it is empty;
	// Unless, when it is set.
	When   string `yaml:"when"`
	Unless string `yaml:"unless"`
	// Refers names the finding codes the step points the reader to: the
	// step is kept only where a finding of one of them is in the report,
	// and {{refs}} in its text names those present (ResolveRefs).
	// UnlessFound: kept only where none of these codes is.
	Refers      []report.Code `yaml:"refers"`
	UnlessFound []report.Code `yaml:"unless_found"`
	// Each names a list parameter: Commands are repeated once per value.
	Each string `yaml:"each"`
	// Destroys marks an action that removes, truncates, peer-removes,
	// scales down, moves aside or restarts a server on the state.
	Destroys bool     `yaml:"destroys"`
	Text     string   `yaml:"text"`
	Commands []string `yaml:"commands"`
}

// proof is one real-server run that carried a remedy out.
type proof struct {
	Release string `yaml:"release"`
	// Fixture is the committed fixture that records the run, relative to
	// the repository: for the repository's tests (TestProvenHeldToOutcomes),
	// never in a report.
	Fixture string `yaml:"fixture"`
	Outcome string `yaml:"outcome"`
	Failed  bool   `yaml:"failed"`
	// Variant names the entry's variant the run carried out (required
	// where the entry has variants, none where it has not).
	Variant string `yaml:"variant"`
}

// Step kinds, in the order a remedy lists them: what the actions destroy,
// what to save first, the actions, how to check; notes say what not to do.
const (
	StepCost   = "cost"
	StepSave   = "save"
	StepAction = "action"
	StepVerify = "verify"
	StepNote   = "note"
)

var stepKinds = []string{StepCost, StepSave, StepAction, StepVerify, StepNote}

// Load reads a catalogue file and checks it: no unknown key, every id one
// of IDs and each of IDs once, every fragment used and every use naming
// one, every step of a known kind with its text, every template well
// formed with known functions, every finding code known (report.Codes),
// every destructive action after a cost and a save step of its entry,
// every run it cites with its release, fixture and outcome, and no text,
// command or outcome citing the repository's files. It returns the entries
// with their fragments expanded, or every rule broken.
func Load(b []byte) ([]remedy, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c catalogue
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	used := map[string]bool{}
	for name, steps := range c.Fragments {
		if len(steps) == 0 {
			bad("fragment %s: no step", name)
		}
		for i, s := range steps {
			if s.Use != "" {
				bad("fragment %s step %d: uses fragment %s: fragments do not nest", name, i+1, s.Use)
			}
		}
	}
	seen := map[ID]bool{}
	for i := range c.Remedies {
		r := &c.Remedies[i]
		where := fmt.Sprintf("remedy %d (%s)", i+1, r.ID)
		switch {
		case r.ID == "":
			bad("%s: no id", where)
		case seen[r.ID]:
			bad("%s: id twice in the catalogue", where)
		case !slices.Contains(IDs, r.ID):
			bad("%s: no such ID in ids.go", where)
		}
		seen[r.ID] = true
		var steps []remedyStep
		for j, s := range r.Steps {
			if s.Use == "" {
				steps = append(steps, s)
				continue
			}
			frag, ok := c.Fragments[s.Use]
			if !ok {
				bad("%s step %d: no fragment %s", where, j+1, s.Use)
			}
			if s.Kind != "" || s.Text != "" || s.When != "" || s.Unless != "" || s.Each != "" || s.Destroys || s.Refers != nil || s.UnlessFound != nil || s.Commands != nil {
				bad("%s step %d: use %s has other keys", where, j+1, s.Use)
			}
			used[s.Use] = true
			steps = append(steps, frag...)
		}
		r.Steps = steps
		if len(steps) == 0 {
			bad("%s: no step", where)
		}
		for j, s := range steps {
			for _, err := range checkStep(s) {
				bad("%s step %d (%s): %v", where, j+1, s.Kind, err)
			}
			if !s.Destroys {
				continue
			}
			if !covered(steps[:j], StepSave, s) {
				bad("%s step %d: destructive action with no save step before it", where, j+1)
			}
			if !covered(steps[:j], StepCost, s) {
				bad("%s step %d: destructive action with no cost step before it", where, j+1)
			}
		}
		for j, p := range r.Proven {
			if !releaseRE.MatchString(p.Release) || p.Fixture == "" || p.Outcome == "" {
				bad("%s proof %d: needs a release (N.N.N), a fixture and an outcome: %+v", where, j+1, p)
			}
			if strings.Contains(p.Outcome, repoFiles) {
				bad("%s proof %d: the outcome cites %s, which a user does not have", where, j+1, repoFiles)
			}
			named := slices.ContainsFunc(r.Variants, func(v variant) bool { return v.Name == p.Variant })
			switch {
			case len(r.Variants) > 0 && !named:
				bad("%s proof %d: variant %q is none of the entry's variants", where, j+1, p.Variant)
			case len(r.Variants) == 0 && p.Variant != "":
				bad("%s proof %d: variant %q, but the entry has no variants", where, j+1, p.Variant)
			}
		}
		for j, v := range r.Variants {
			if v.Name == "" || strings.Contains(v.Name, repoFiles) {
				bad("%s variant %d: needs a name that cites no file", where, j+1)
			}
		}
	}
	for _, id := range IDs {
		if !seen[id] {
			bad("ID %q has no entry", id)
		}
	}
	for name := range c.Fragments {
		if !used[name] {
			bad("fragment %s: used by no entry", name)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c.Remedies, nil
}

var releaseRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// repoFiles are the repository's fixtures: a remedy cites none of them, a
// user does not have them (a proof's Fixture is for the tests).
const repoFiles = "testdata/"

// placeholder is one {{name}} or {{name|fn}} of a template.
var placeholder = regexp.MustCompile(`^([a-z][a-z0-9_]*)(?:\|([a-z-]+))?$`)

// checkStep says what is wrong with one step of an entry.
func checkStep(s remedyStep) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !slices.Contains(stepKinds, s.Kind) {
		bad("step kind %q: none of %v", s.Kind, stepKinds)
	}
	if strings.TrimSpace(s.Text) == "" {
		bad("no text")
	}
	if strings.Contains(s.Text, repoFiles) || slices.ContainsFunc(s.Commands, func(c string) bool { return strings.Contains(c, repoFiles) }) {
		bad("cites %s, which a user does not have", repoFiles)
	}
	if s.Destroys && s.Kind != StepAction {
		bad("a %s step marked destroys", s.Kind)
	}
	if s.When != "" && s.Unless != "" {
		bad("both when and unless")
	}
	if s.Refers != nil && s.UnlessFound != nil {
		bad("both refers and unless_found")
	}
	for _, code := range slices.Concat(s.Refers, s.UnlessFound) {
		if !slices.Contains(report.Codes, code) {
			bad("finding code %q: no check raises it", code)
		}
	}
	if s.Each != "" && len(s.Commands) == 0 {
		bad("each %s with no command", s.Each)
	}
	fields, err := templateFields(s.Text)
	if err != nil {
		bad("text: %v", err)
	}
	for _, f := range fields {
		switch {
		case f.fn == "server-remove":
			bad("text: server-remove is for commands")
		case f.name == "each":
			bad("text: {{each}} is for the commands of a step with each")
		case f.name == "refs" && s.Refers == nil:
			bad("text: {{refs}} in a step that refers to no finding")
		}
	}
	for _, c := range s.Commands {
		fields, err := templateFields(c)
		if err != nil {
			bad("command %q: %v", c, err)
		}
		removals := 0
		for _, f := range fields {
			if f.fn == "server-remove" {
				removals++
			}
			if f.name == "each" && s.Each == "" {
				bad("command %q: {{each}} in a step with no each", c)
			}
			if f.name == "refs" {
				bad("command %q: {{refs}} is for texts", c)
			}
		}
		if removals > 1 {
			bad("command %q: more than one server removal", c)
		}
	}
	return errs
}

// field is one parameter of a template, with the function it goes through.
type field struct{ name, fn string }

// templateFields are the parameters of tmpl, or why it is malformed: a
// {{ with no }}, a name that is not lower case, a function not in
// stepFuncs. A }} outside a parameter is text (JSON in a command).
func templateFields(tmpl string) ([]field, error) {
	var out []field
	for {
		i := strings.Index(tmpl, "{{")
		if i < 0 {
			return out, nil
		}
		j := strings.Index(tmpl[i:], "}}")
		if j < 0 {
			return out, fmt.Errorf("%q: {{ not closed", tmpl[i:])
		}
		inner := tmpl[i+2 : i+j]
		m := placeholder.FindStringSubmatch(inner)
		if m == nil {
			return out, fmt.Errorf("{{%s}}: not {{name}} or {{name|fn}}", inner)
		}
		if _, ok := stepFuncs[m[2]]; m[2] != "" && !ok {
			return out, fmt.Errorf("{{%s}}: no function %s", inner, m[2])
		}
		out = append(out, field{m[1], m[2]})
		tmpl = tmpl[i+j+2:]
	}
}

// covered says whether steps hold a step of kind in force wherever step s
// is: one with no condition, one with the same condition as s, or both
// sides of one parameter (when and unless). A step kept only where some
// finding is in the report covers nothing.
func covered(steps []remedyStep, kind string, s remedyStep) bool {
	whens, unlesses := map[string]bool{}, map[string]bool{}
	for _, p := range steps {
		if p.Kind != kind || p.Refers != nil || p.UnlessFound != nil {
			continue
		}
		if p.When == "" && p.Unless == "" || p.When == s.When && p.Unless == s.Unless {
			return true
		}
		whens[p.When], unlesses[p.Unless] = true, true
	}
	for w := range whens {
		if w != "" && unlesses[w] {
			return true
		}
	}
	return false
}
