// Command jsforensics analyzes NATS JetStream support bundles offline.
package main

import (
	"fmt"
	"os"
)

// Exit codes, as `nats server check` gives them (the Nagios convention),
// so monitoring wrappers read them as they read natscli's.
const (
	exitOK       = 0 // no critical or warning finding, and everything was judged
	exitWarning  = 1 // warnings, no critical finding
	exitCritical = 2 // a critical finding
	exitUnknown  = 3 // could not judge: nothing recognized, part unread, sealed, a filter matching nothing; also usage errors and the tool failing
)

// exitCodes says the exit codes in the commands' help.
const exitCodes = "Exit codes (as nats server check): 0 ok, 1 warnings, 2 critical findings, 3 could not judge (nothing recognized, part of the bundle unread or sealed, a filter matching nothing) or the tool failed."

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries an exit code through cobra without printing an error.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }
