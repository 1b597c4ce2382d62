// Package consumers holds the checks of a consumer's state against its
// stream: what each server's copy of a consumer records (o.dat, the
// consumer group's snapshot, /jsz, its log lines) held against what that
// server's copy of the stream holds, and what the server does with it next.
package consumers
