package acklog

import "github.com/jsforensics/jsforensics/internal/binfmt"

// The sentinels a LineError's Err wraps; test with errors.Is.
var (
	// ErrFormat: the line is neither a PubAck nor an error reply nor a
	// Jepsen EDN entry, or is cut off inside one.
	ErrFormat = binfmt.ErrFormat
	// ErrTooLarge: the line is longer than MaxLine.
	ErrTooLarge = binfmt.ErrTooLarge
)
