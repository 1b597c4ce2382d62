package analysis

import (
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/jsforensics/jsforensics/report"
)

// Check is one independent unit of analysis: a pure function of the model
// that returns findings. Checks do no I/O; the facts they need are computed
// once in the model.
type Check struct {
	Code        string
	Severity    report.Severity // the usual severity; a check may lower it per finding
	Description string          // what raises it, as README's table says
	Run         func(*Model) []report.Finding
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
	checkUnsafeMembershipChange,
	checkMetaNoLeader,
	checkServerRenamed,
	checkPeerOffline,
}

// runChecks runs every check; a check that panics is reported as not run and
// the others still run.
func runChecks(m *Model, checks []Check) (findings []report.Finding, notes []string) {
	for _, c := range checks {
		fs, err := runOne(m, c)
		if err != nil {
			notes = append(notes, fmt.Sprintf("check %s not run: %v", c.Code, err))
			continue
		}
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
	return findings, notes
}

func runOne(m *Model, c Check) (fs []report.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return c.Run(m), nil
}
