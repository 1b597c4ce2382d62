package analysis

import (
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// runCheck runs one check over m with default settings, as a test does,
// with the facts it requires.
func runCheck(c check.Check, m *model.Model) []report.Finding {
	return check.RunOne(c, m, defaultSettings())
}

// runChecks runs checks over m as Build does.
func runChecks(m *model.Model, checks []check.Check, defaults, values map[string]float64) ([]report.Finding, []report.CheckOutcome) {
	return check.Run(m, checks, defaults, values)
}
