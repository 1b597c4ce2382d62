// Command jsforensics analyzes NATS JetStream support bundles offline.
package main

import (
	"fmt"
	"os"
)

// Exit codes, named so scripts and CI gates can rely on them.
const (
	exitOK       = 0 // no critical finding
	exitFailure  = 1 // the tool itself failed
	exitCritical = 3 // the analysis found critical findings
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries an exit code through cobra without printing an error.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }
