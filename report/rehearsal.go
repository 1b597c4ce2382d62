package report

import (
	"fmt"
	"io"
	"strings"
)

// RehearsalSchema names the version of the rehearsal contract
// (`jsforensics rehearse --format json`).
const RehearsalSchema = "jsforensics.rehearsal/v1"

// Rehearsal is what the bundle's servers did when started, on a copy of
// their stores, in a sandbox that reaches nothing outside it.
type Rehearsal struct {
	Schema string `json:"schema"`
	// Bundle is the bundle as given.
	Bundle string `json:"bundle"`
	// ServerBinary is the nats-server the rehearsal ran and ServerVersion
	// its release as it prints it.
	ServerBinary  string `json:"server_binary"`
	ServerVersion string `json:"server_version"`
	// BundleVersions are the releases the bundle's servers ran, as the
	// bundle shows them (logs, captures).
	BundleVersions []string `json:"bundle_versions"`
	// VersionNote says what a release other than the bundle's changes in
	// what the rehearsal shows; absent when they are the same line.
	VersionNote string `json:"version_note,omitempty"`
	// Watch is how long the servers ran, from the last one's start.
	Watch string `json:"watch"`
	// Sandbox says where the copies were and what of the bundle's
	// configs was left out to keep the servers from reaching anything real.
	Sandbox RehearsalSandbox `json:"sandbox"`
	// Servers are the servers started, in name order.
	Servers []RehearsalServer `json:"servers"`
	// MetaLeader is the meta leader the servers agreed on at the end,
	// null when none was.
	MetaLeader *string `json:"meta_leader" jsonschema:"nullable"`
	// Streams are the streams each server served at the end of the watch.
	Streams []RehearsalStream `json:"streams"`
	// Deleted are the stream and consumer folders a server removed from
	// its copy while it ran.
	Deleted []RehearsalDeleted `json:"deleted"`
	// Statements are the report's statements of what the servers do next,
	// each set beside what the rehearsal saw.
	Statements []RehearsalStatement `json:"statements"`
}

// RehearsalSandbox is where the rehearsal ran and what it left out.
type RehearsalSandbox struct {
	// Dir is the scratch folder; it is removed after the run unless Kept.
	Dir  string `json:"dir"`
	Kept bool   `json:"kept"`
	// Copied is how many bytes of store were copied, and Cloned how many
	// of them the filesystem shared with the bundle (reflinks).
	Copied int64 `json:"copied"`
	Cloned int64 `json:"cloned"`
	// Left are the settings of the bundle's configs not carried into the
	// sandbox, each with why.
	Left []RehearsalLeft `json:"left,omitempty"`
}

// RehearsalLeft is one setting of a server's config the sandbox left out.
type RehearsalLeft struct {
	Server  string `json:"server"`
	Setting string `json:"setting"`
	Why     string `json:"why"`
}

// RehearsalServer is one server of the rehearsal.
type RehearsalServer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Started says the server answered its monitoring port and was still
	// running at the end of the watch.
	Started bool `json:"started"`
	// Fatal is the line that stopped it, null when it did not stop.
	Fatal *string `json:"fatal" jsonschema:"nullable"`
	// Lines are its warning, error and fatal log lines, in order (at most
	// 200).
	Lines []string `json:"lines,omitempty"`
}

// RehearsalStream is one stream as one server served it.
type RehearsalStream struct {
	Server  string `json:"server"`
	Account string `json:"account"`
	// AccountName is the account's JWT name in operator mode, where the
	// bundle has it (Account is then its public key).
	AccountName string `json:"account_name,omitempty"`
	Name        string `json:"name"`
	Messages    uint64 `json:"messages"`
	FirstSeq    uint64 `json:"first_seq"`
	LastSeq     uint64 `json:"last_seq"`
	// Leader says this server led the stream's group.
	Leader bool `json:"leader,omitempty"`
}

// RehearsalDeleted is a stream, or a consumer of it, whose folder a server
// removed while it ran.
type RehearsalDeleted struct {
	Server      string `json:"server"`
	Account     string `json:"account"`
	AccountName string `json:"account_name,omitempty"`
	Stream      string `json:"stream"`
	Consumer    string `json:"consumer,omitempty"`
}

// RehearsalStatement is one statement of the report about what a server
// does next, and whether the rehearsal saw it happen.
type RehearsalStatement struct {
	// Finding is the code of the finding that makes the statement.
	Finding   string `json:"finding"`
	Server    string `json:"server,omitempty"`
	Statement string `json:"statement"`
	// Held is true when the rehearsal saw it, false when it saw otherwise
	// (a bug of the analysis), null when the run could not show it.
	Held *bool `json:"held" jsonschema:"nullable"`
	// Observed is what the rehearsal saw that decides it.
	Observed string `json:"observed"`
}

// WriteRehearsalText prints a rehearsal for a reader.
func WriteRehearsalText(w io.Writer, r *Rehearsal) error {
	ew := &errWriter{w: w}
	ew.printf("Rehearsal of %s on nats-server %s (%s), watched %s\n", r.Bundle, r.ServerVersion, r.ServerBinary, r.Watch)
	if r.VersionNote != "" {
		ew.printf("  ! %s\n", r.VersionNote)
	}
	ew.printf("\nServers\n")
	for _, s := range r.Servers {
		state := "running"
		if !s.Started {
			state = "not running"
		}
		if s.Fatal != nil {
			state += ": " + *s.Fatal
		}
		ew.printf("  %-12s %-10s %s\n", s.Name, s.Version, state)
	}
	if r.MetaLeader != nil {
		ew.printf("  meta leader: %s\n", *r.MetaLeader)
	} else {
		ew.printf("  meta leader: none\n")
	}
	ew.printf("\nStreams served at the end\n")
	if len(r.Streams) == 0 {
		ew.printf("  none\n")
	}
	for _, s := range r.Streams {
		lead := ""
		if s.Leader {
			lead = " (leader)"
		}
		ew.printf("  %-12s %s > %s: %d messages, %d..%d%s\n", s.Server, accountLabel(s.Account, s.AccountName), s.Name, s.Messages, s.FirstSeq, s.LastSeq, lead)
	}
	ew.printf("\nDeleted by the servers\n")
	if len(r.Deleted) == 0 {
		ew.printf("  nothing\n")
	}
	for _, d := range r.Deleted {
		what := "stream " + accountLabel(d.Account, d.AccountName) + " > " + d.Stream
		if d.Consumer != "" {
			what = "consumer " + d.Consumer + " of " + what
		}
		ew.printf("  %-12s %s\n", d.Server, what)
	}
	if len(r.Statements) > 0 {
		ew.printf("\nWhat the report said the servers do next\n")
		for _, s := range r.Statements {
			verdict := "not observable"
			if s.Held != nil && *s.Held {
				verdict = "held"
			} else if s.Held != nil {
				verdict = "DID NOT HOLD (a bug of jsforensics: please report it)"
			}
			ew.printf("  [%s] %s: %s\n      %s; %s\n", s.Finding, s.Server, s.Statement, verdict, s.Observed)
		}
	}
	if len(r.Sandbox.Left) > 0 {
		ew.printf("\nLeft out of the sandbox\n")
		for _, l := range r.Sandbox.Left {
			ew.printf("  %-12s %s: %s\n", l.Server, l.Setting, l.Why)
		}
	}
	for _, s := range r.Servers {
		if len(s.Lines) == 0 {
			continue
		}
		ew.printf("\nLog lines of %s (warnings, errors)\n", s.Name)
		for _, l := range s.Lines {
			ew.printf("  %s\n", strings.TrimSpace(l))
		}
	}
	kept := "removed"
	if r.Sandbox.Kept {
		kept = "kept"
	}
	ew.printf("\nSandbox %s (%s), %s of store copied (%s shared with the bundle)\n", r.Sandbox.Dir, kept, sizeText(r.Sandbox.Copied), sizeText(r.Sandbox.Cloned))
	return ew.err
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// accountLabel is "NAME (KEY)" for an account of operator mode whose name
// is known, else the account as the server names it.
func accountLabel(acc, name string) string {
	if name == "" || name == acc {
		return acc
	}
	return name + " (" + acc + ")"
}
