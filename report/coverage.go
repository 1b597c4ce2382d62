package report

import (
	"fmt"
	"slices"
)

// Coverage says what the analysis read of the bundle, what it could not,
// and why the report may be no verdict on it. A report whose Unjudged is
// not empty and that holds no critical finding is "unknown" (Status), never
// an all-clear. Added field.
type Coverage struct {
	// Stores are the servers' store directories read.
	Stores int `json:"stores"`
	// StreamCopies are the stream copies found in those stores; SealedCopies
	// of them stayed sealed (encrypted at rest, no key or not their key).
	StreamCopies int `json:"stream_copies"`
	SealedCopies int `json:"sealed_copies"`
	// Logs, Captures and AckLogs are the server logs, monitoring captures
	// and publishers' ack logs recognized by content.
	Logs     int `json:"logs"`
	Captures int `json:"captures"`
	AckLogs  int `json:"ack_logs"`
	// Unread are the bundle's files that could not be read: refused or
	// unreadable entries, files the archive did not deliver intact.
	Unread []UnreadFile `json:"unread,omitempty"`
	// ChecksJudged are the codes of the checks that judged the bundle
	// (passed or failed); the others were skipped or did not run (Checks).
	ChecksJudged []string `json:"checks_judged"`
	// Unjudged says, reason by reason, what the report could not judge.
	Unjudged []Unjudged `json:"unjudged,omitempty"`
}

// UnreadFile is one file of the bundle that was not read.
type UnreadFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// UnjudgedKind is why a part of the bundle could not be judged.
type UnjudgedKind string

const (
	// UnjudgedNothingRecognized: no store, log, capture or ack log was
	// found in the bundle by content.
	UnjudgedNothingRecognized UnjudgedKind = "nothing-recognized"
	// UnjudgedSealed: stores encrypted at rest stayed sealed.
	UnjudgedSealed UnjudgedKind = "sealed"
	// UnjudgedUnread: files of the bundle could not be read (the archive's
	// own damage, refused or unreadable entries).
	UnjudgedUnread UnjudgedKind = "unread"
	// UnjudgedFilterUnmatched: a --server, --account or --stream name
	// matches nothing in the report.
	UnjudgedFilterUnmatched UnjudgedKind = "filter-unmatched"
)

// Unjudged is one reason the report is not a verdict on all of the bundle.
type Unjudged struct {
	Kind UnjudgedKind `json:"kind" jsonschema:"enum=nothing-recognized,enum=sealed,enum=unread,enum=filter-unmatched"`
	// Server is the server concerned, when there is one.
	Server string `json:"server,omitempty"`
	Reason string `json:"reason"`
}

// Status is a report's outcome in the convention of `nats server check`
// (Nagios): ok, warning, critical, unknown.
type Status int

const (
	StatusOK       Status = 0
	StatusWarning  Status = 1
	StatusCritical Status = 2
	StatusUnknown  Status = 3
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusWarning:
		return "warning"
	case StatusCritical:
		return "critical"
	}
	return "unknown"
}

// Status is critical when a finding is, else unknown when something could
// not be judged (Coverage.Unjudged), else warning when a finding is, else
// ok. A critical finding in what was read stands whatever was not read; a
// report with nothing critical in it is no all-clear while part of the
// bundle went unjudged.
func (r *Report) Status() Status {
	counts := r.CountBySeverity()
	switch {
	case counts[Critical] > 0:
		return StatusCritical
	case r.Coverage != nil && len(r.Coverage.Unjudged) > 0:
		return StatusUnknown
	case counts[Warning] > 0:
		return StatusWarning
	}
	return StatusOK
}

// UnjudgedHeadline says in one line per reason what could not be judged,
// for the first lines of every format; nil when everything read was judged.
func (r *Report) UnjudgedHeadline() []string {
	if r.Coverage == nil {
		return nil
	}
	var out []string
	for _, u := range r.Coverage.Unjudged {
		out = append(out, u.Reason)
	}
	return out
}

// unmatched returns an Unjudged for every name of s that matches nothing
// in r (before narrowing): a typo must not read as a clean server.
func (s Selection) unmatched(r *Report) []Unjudged {
	var out []Unjudged
	for _, name := range s.Servers {
		if !slices.ContainsFunc(r.Servers, func(sv Server) bool { return sv.Name == name }) {
			var names []string
			for _, sv := range r.Servers {
				names = append(names, sv.Name)
			}
			out = append(out, Unjudged{Kind: UnjudgedFilterUnmatched, Reason: fmt.Sprintf("--server %s matches no server of the bundle (%s): nothing was judged for it", name, orNone(names))})
		}
	}
	for _, acc := range s.Accounts {
		if !slices.ContainsFunc(r.Streams, func(st Stream) bool { return st.Account == acc }) &&
			!slices.ContainsFunc(r.Groups, func(g Group) bool { return g.Account == acc }) {
			out = append(out, Unjudged{Kind: UnjudgedFilterUnmatched, Reason: fmt.Sprintf("--account %s matches no account of the bundle's streams and raft groups: nothing was judged for it", acc)})
		}
	}
	for _, name := range s.Streams {
		acc, n := splitStreamName(name)
		if !slices.ContainsFunc(r.Streams, func(st Stream) bool {
			return st.Name == n && (acc == "" || st.Account == acc)
		}) && !slices.ContainsFunc(r.Groups, func(g Group) bool {
			return groupStream(g.Asset) == n && (acc == "" || g.Account == acc)
		}) {
			known := "it names none"
			if k := r.KnownStreams(); len(k) > 0 {
				known = StreamList(k)
			}
			out = append(out, Unjudged{Kind: UnjudgedFilterUnmatched, Reason: fmt.Sprintf("--stream %s matches no stream of the bundle (%s): nothing was judged for it", name, known)})
		}
	}
	return out
}

// splitStreamName reads NAME, ACCOUNT/NAME or the report's own form
// "ACCOUNT > NAME" into account ("" for any) and name, as ParseStreamName
// does; a name it refuses is taken whole, a bare name no stream has.
func splitStreamName(s string) (account, name string) {
	ref, err := ParseStreamName(s)
	if err != nil {
		return "", s
	}
	return ref.Account, ref.Name
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "it names none"
	}
	return SomeNames(names)
}
