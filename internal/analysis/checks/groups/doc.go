// Package groups holds the checks of stream and consumer raft groups that
// do not make progress: no leader while a quorum of their peers is there,
// or members that are not current (a catch-up aborted or stalled, applied
// trailing commit, reset loops), why, and what brings them back.
package groups
