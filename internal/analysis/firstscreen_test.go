package analysis

import (
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
)

// TestFirstScreenCarriesCaveats: on every committed fixture, the first
// step a diagnosis cause prints holds, in order, the cost and save steps of
// the remedy it comes from, its first action, and every note right after
// that action (its caveats: releases where it is not reliable or refused,
// what not to do if it fails), so the first screen never promises what the
// full remedy withdraws.
func TestFirstScreenCarriesCaveats(t *testing.T) {
	bundles := committedBundles(t)
	causes, caveats := 0, 0
	for _, dir := range bundles {
		rep, err := Run(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, c := range rep.Diagnosis {
			for _, i := range c.Findings {
				f := rep.Findings[i]
				if len(f.RemedySteps) == 0 || c.FirstStep != remedy.RemedyFirstStep(f) {
					continue
				}
				causes++
				first := -1
				for k, s := range f.RemedySteps {
					if s.Kind == remedy.StepAction {
						first = k
						break
					}
				}
				if first < 0 {
					continue
				}
				want := f.RemedySteps[:first+1]
				for k := first + 1; k < len(f.RemedySteps) && f.RemedySteps[k].Kind == remedy.StepNote; k++ {
					want = append(want, f.RemedySteps[k])
					caveats++
				}
				at := 0
				for _, s := range want {
					j := strings.Index(c.FirstStep[at:], s.Text)
					if j < 0 {
						t.Errorf("%s: %s's first screen lacks (in order) its %s step %q:\n%s", dir, f.Code, s.Kind, s.Text, c.FirstStep)
						break
					}
					at += j + len(s.Text)
				}
				break
			}
		}
	}
	if causes < 20 || caveats == 0 {
		t.Fatalf("%d causes from a remedy, %d caveats checked: the fixtures no longer exercise this", causes, caveats)
	}
}
