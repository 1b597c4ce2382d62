package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// loadFixtures loads the first form of every committed bundle (with its
// key, when encrypted).
func loadFixtures(t *testing.T) map[string]*model.Model {
	t.Helper()
	out := map[string]*model.Model{}
	for _, fx := range fixtures(t) {
		if len(fx.forms) == 0 {
			continue
		}
		b, err := bundle.Open(fx.forms[0], bundle.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", fx.forms[0], err)
		}
		out[fx.name] = LoadWith(b, Options{Keys: fixtureKeys(t, fx)})
		b.Close()
	}
	return out
}

// `--only CODE` computes the facts that check requires and no other, and
// the check finds alone, over every committed bundle, what it finds beside
// all the others: its Requires are complete (reading a fact it does not
// require would leave it not run).
func TestOnlyComputesRequiredFacts(t *testing.T) {
	for name, m := range loadFixtures(t) {
		all, _ := runChecks(m, Checks, nil)
		for _, c := range Checks {
			only, err := SelectChecks([]string{c.Code}, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := computeFacts(m, requiredBy(only))
			if want := closure(c.Requires); !slices.Equal(sortedFacts(f.computed), want) {
				t.Errorf("%s: --only %s computed facts %v, want %v", name, c.Code, f.computed, want)
			}
			got, outcomes := runChecks(m, only, nil)
			if len(outcomes) != 1 || outcomes[0].Outcome == OutcomeNotRun {
				t.Errorf("%s: --only %s: %+v", name, c.Code, outcomes)
				continue
			}
			if want := ofCode(all, c.Code); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: --only %s found %d finding(s), beside the other checks %d", name, c.Code, len(got), len(want))
			}
		}
	}
}

// Each fact is computed once however many checks require it, after the
// facts it requires; no check is left without the facts it names.
func TestFactsComputedOnce(t *testing.T) {
	m := &model.Model{IDs: map[string]string{}}
	f := computeFacts(m, requiredBy(Checks))
	seen := map[Fact]bool{}
	for _, k := range f.computed {
		if seen[k] {
			t.Errorf("fact %s computed twice", k)
		}
		for _, r := range factDefs[k].requires {
			if !seen[r] {
				t.Errorf("fact %s computed before %s, which it requires", k, r)
			}
		}
		seen[k] = true
	}
	for k := range numFacts {
		if factNames[k] == "" || factDefs[k].compute == nil {
			t.Errorf("fact %d has no name or no computation", k)
		}
	}
}

// A check that reads a fact it does not require is not run, and says which.
func TestUndeclaredFactNotRun(t *testing.T) {
	c := Check{Code: "reads-undeclared", Run: func(p *Pass) []report.Finding {
		_ = p.Facts.LostAssets()
		return nil
	}}
	_, outcomes := runChecks(&model.Model{IDs: map[string]string{}}, []Check{c}, nil)
	if len(outcomes) != 1 || outcomes[0].Outcome != OutcomeNotRun || !strings.Contains(outcomes[0].Reason, "lost-assets") {
		t.Errorf("outcome %+v, want not run for lost-assets", outcomes)
	}
	c.Requires = []Fact{FactLostAssets}
	if _, outcomes := runChecks(&model.Model{IDs: map[string]string{}}, []Check{c}, nil); outcomes[0].Outcome != OutcomePassed {
		t.Errorf("with the fact required: %+v", outcomes[0])
	}
}

func sortedFacts(fs []Fact) []Fact {
	out := slices.Clone(fs)
	slices.Sort(out)
	return out
}

func ofCode(fs []report.Finding, code string) []report.Finding {
	var out []report.Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}
