package report

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The one grammar of a stream named on the command line (analyze, render
// and extract --stream; Selection.Streams):
//
//	ACCOUNT/NAME      $G/ORDERS
//	ACCOUNT > NAME    '$G > ORDERS', the form the report prints
//	NAME              ORDERS, when one account of the bundle has it
//
// A stream name has no spaces and none of . * > / \ (nats-server refuses
// them), so the last / or the > splits the account from the name.

// StreamRef is a stream as named: Account is "" for a bare name.
type StreamRef struct {
	Account, Name string
}

// String is the report's form, "ACCOUNT > NAME", or the bare name.
func (s StreamRef) String() string {
	if s.Account == "" {
		return s.Name
	}
	return s.Account + " > " + s.Name
}

// streamGrammar is what a malformed name is answered with.
const streamGrammar = "give ACCOUNT/NAME, 'ACCOUNT > NAME' or a NAME one account has"

// ParseStreamName reads a stream as the command line names it (see the
// grammar above).
func ParseStreamName(s string) (StreamRef, error) {
	var ref StreamRef
	switch {
	case strings.Contains(s, ">"):
		a, n, _ := strings.Cut(s, ">")
		ref = StreamRef{Account: strings.TrimSpace(a), Name: strings.TrimSpace(n)}
		if ref.Account == "" {
			return StreamRef{}, fmt.Errorf("stream %q: no account before >: %s", s, streamGrammar)
		}
	case strings.Contains(s, "/"):
		i := strings.LastIndexByte(s, '/')
		ref = StreamRef{Account: s[:i], Name: s[i+1:]}
		if ref.Account == "" {
			return StreamRef{}, fmt.Errorf("stream %q: no account before /: %s", s, streamGrammar)
		}
	default:
		ref = StreamRef{Name: strings.TrimSpace(s)}
	}
	switch {
	case ref.Name == "":
		return StreamRef{}, fmt.Errorf("stream %q: no stream name: %s", s, streamGrammar)
	case strings.ContainsAny(ref.Name, " \t\r\n.*>/\\"):
		return StreamRef{}, fmt.Errorf("stream %q: %q is not a stream name (no spaces, nor . * > / \\): %s", s, ref.Name, streamGrammar)
	case strings.ContainsAny(ref.Account, " \t\r\n"):
		return StreamRef{}, fmt.Errorf("stream %q: %q is not an account name (no spaces): %s", s, ref.Account, streamGrammar)
	}
	return ref, nil
}

// ErrNoSuchStream is wrapped by ResolveStream's error for a name no stream
// of the bundle has; ErrAmbiguousStream for a bare name two accounts have.
var (
	ErrNoSuchStream    = errors.New("no such stream")
	ErrAmbiguousStream = errors.New("stream name in several accounts")
)

// streamError says what is wrong with a stream name; errors.Is finds its
// kind.
type streamError struct {
	kind error
	msg  string
}

func (e *streamError) Error() string { return e.msg }
func (e *streamError) Unwrap() error { return e.kind }

// ResolveStream finds ref among the streams the bundle knows: a bare name
// gets its account when one account has it. An unknown name is answered
// with the streams there are (SomeNames), a bare name several accounts
// have with those accounts.
func ResolveStream(ref StreamRef, known []StreamRef) (StreamRef, error) {
	var found []StreamRef
	for _, k := range known {
		if k.Name == ref.Name && (ref.Account == "" || k.Account == ref.Account) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var accs []string
		for _, f := range found {
			accs = append(accs, f.Account)
		}
		return StreamRef{}, &streamError{ErrAmbiguousStream, fmt.Sprintf("accounts %s each have a stream %s: give ACCOUNT/NAME or 'ACCOUNT > NAME'", strings.Join(accs, ", "), ref.Name)}
	}
	if len(known) == 0 {
		return StreamRef{}, &streamError{ErrNoSuchStream, fmt.Sprintf("no stream %s in the bundle: it holds none", ref)}
	}
	return StreamRef{}, &streamError{ErrNoSuchStream, fmt.Sprintf("no stream %s in the bundle; its streams: %s", ref, StreamList(known))}
}

// StreamList names streams in the report's form: the first 20, then how
// many more.
func StreamList(refs []StreamRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	return SomeNames(names)
}

// maxNamesListed bounds the names an answer lists; the rest are counted.
const maxNamesListed = 20

// SomeNames lists names, comma-separated: the first 20, then how many more.
func SomeNames(names []string) string {
	return JoinFirst(names, maxNamesListed)
}

// KnownStreams are the streams the report names, with their accounts:
// those it describes and those only a raft group's asset names, sorted
// by account, then name.
func (r *Report) KnownStreams() []StreamRef {
	var out []StreamRef
	for _, st := range r.Streams {
		out = append(out, StreamRef{Account: st.Account, Name: st.Name})
	}
	for _, g := range r.Groups {
		if n := groupStream(g.Asset); g.Account != "" && n != "" {
			out = append(out, StreamRef{Account: g.Account, Name: n})
		}
	}
	slices.SortFunc(out, func(a, b StreamRef) int {
		if c := strings.Compare(a.Account, b.Account); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return slices.Compact(out)
}
