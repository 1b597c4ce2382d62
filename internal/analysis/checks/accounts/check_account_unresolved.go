// Package accounts holds the checks of accounts in operator mode (issue
// 30): accounts the servers name by public key and look up in a resolver.
package accounts

import (
	"fmt"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// CheckAccountUnresolved: a server that cannot look an account up (its JWT
// not in the resolver, expired, revoked) loads none of the account's
// streams and consumers: they stay on disk, answer nothing, and /healthz
// says 503 `JetStream can not lookup account "KEY": …`. Seen on 2.10.27,
// 2.11.17, 2.12.15 and 2.15.3 (operator-unresolved-*, operator-expired-*): the JWT pushed again
// ($SYS.REQ.CLAIMS.UPDATE, what `nsc push` sends) is stored by every
// server ("jwt updated") but the streams do not load until the server is
// restarted; after a restart one server at a time every stream is back
// with all its messages.
const unresolvedDescription = "operator mode: a server cannot look up an account whose streams it holds (its JWT not in the resolver, " +
	"expired, revoked: log `Account [KEY] lookup for stream create failed: account jwt not found`, /healthz " +
	"`JetStream can not lookup account \"KEY\"`, the resolver folder without the JWT or with it expired), so it loads none " +
	"of them; a finding per server, naming the account by key and JWT name, its streams on disk (not lost: they come " +
	"back with the account) and how to restore the JWT"

var CheckAccountUnresolved = check.Check{
	Code:        string(report.CodeAccountUnresolved),
	Severity:    report.Critical,
	Description: unresolvedDescription,
	Requires:    []facts.Fact{facts.FactUnresolvedAccounts},
	Skip: func(p *check.Pass) string {
		if len(p.Model.Accounts) > 0 {
			return ""
		}
		for _, s := range p.Model.Servers {
			if s.Sources["log"] || s.Sources["healthz"] {
				return ""
			}
		}
		return "no log, /healthz capture or account JWT in the bundle says whether the servers could look their accounts up"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, u := range p.Facts.UnresolvedAccounts() {
			if f, ok := unresolvedFinding(m, u); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

func unresolvedFinding(m *model.Model, u *facts.UnresolvedAccount) (report.Finding, bool) {
	srv := m.Name(u.Server)
	label := m.AccountLabel(u.Account)
	f := report.Finding{Server: srv, Account: u.Account, AccountName: m.AccountName(u.Account), Kind: u.Kind,
		Servers: []string{srv}, TimelineRefs: append([]int(nil), u.Events...)}
	if !u.Since.IsZero() {
		t := u.Since.UTC()
		f.Since = &t
	}
	why := map[string]string{
		"not-in-resolver": "its JWT is not in the server's resolver",
		"expired":         "its JWT expired",
		"lookup-failed":   "the lookup failed",
	}[u.Kind]
	if u.Reason != "" {
		why += fmt.Sprintf(" (%q)", u.Reason)
	}
	streams := make([]string, 0, len(u.Streams))
	for _, s := range u.Streams {
		streams = append(streams, s.Stream)
	}
	held := "it holds none of the account's streams on disk"
	if len(streams) > 0 {
		held = fmt.Sprintf("its %s %s (%d messages) on disk %s offline, not lost: they load again with the account",
			model.Plural(len(streams), "stream", "streams"), strings.Join(streams, ", "), u.Messages,
			map[bool]string{true: "is", false: "are"}[len(streams) == 1])
		f.Messages = &u.Messages
		if len(streams) == 1 {
			f.Stream = streams[0]
		}
	}
	f.Message = fmt.Sprintf("%s cannot look up account %s: %s, so it loads none of its streams and consumers; %s", srv, label, why, held)
	switch {
	case len(u.Events) == 0 && len(u.Answers) == 0:
		// Only the resolver folder tells: no log line or /healthz of it.
		f.Severity = report.Warning
		f.Message = fmt.Sprintf("%s holds streams of account %s whose JWT it cannot resolve: %s; no log line or /healthz of the bundle shows the lookup, but at its next start it loads none of them; %s",
			srv, label, u.Resolver, held)
	case u.Back != "":
		f.Severity = report.Warning
		f.Message = fmt.Sprintf("%s could not look up account %s (%s) and holds it again: %s", srv, label, why, u.Back)
	default:
		f.Severity = report.Critical
	}
	// Evidence: the first and last failures, how many, the resolver folder,
	// the streams.
	if n := len(u.Events); n > 0 {
		f.Evidence = append(f.Evidence, "first failure: "+eventLine(m.Timeline[u.Events[0]]))
		if n > 1 {
			f.Evidence = append(f.Evidence, "last failure: "+eventLine(m.Timeline[u.Events[n-1]]))
		}
		if n > 2 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%d failures in all (log lines and /healthz answers)", n))
		}
	}
	for _, a := range u.Answers {
		f.Evidence = append(f.Evidence, "captured /healthz "+a)
	}
	if u.Resolver != "" {
		f.Evidence = append(f.Evidence, srv+": "+u.Resolver)
	}
	if a := m.Accounts[u.Account]; a != nil && a.Name != "" {
		f.Evidence = append(f.Evidence, fmt.Sprintf("the account's name %s: from %s", a.Name, a.NameSource))
	}
	for _, s := range u.Streams {
		if st := m.Stream(s.Account, s.Stream); st != nil {
			for _, c := range st.Copies {
				if m.Same(c.Server, u.Server) {
					f.Evidence = append(f.Evidence, fmt.Sprintf("on disk: %s, %d messages, sequences %d-%d (its folder under the account's key in %s's store)",
						s.Stream, c.Messages, c.FirstSeq, c.LastSeq, srv))
				}
			}
		}
	}
	if u.Kind == "not-in-resolver" {
		f.Evidence = append(f.Evidence, "a full resolver deletes an account JWT once it expires (at start, and every minute while running), so an expired JWT is not found either (seen on 2.10.27, 2.11.17, 2.12.15 and 2.15.3)")
	}
	nscname := u.Account
	if n := m.AccountName(u.Account); n != "" {
		nscname = n
	}
	remedy.Prescribe(remedy.AccountJWTRestore, remedy.Args{"server": srv, "account": u.Account, "label": label, "nscname": nscname,
		"expired": u.Kind == "expired", "back": u.Back != ""}).Apply(&f)
	return f, true
}

func eventLine(e model.TimelineEvent) string {
	return fmt.Sprintf("%s line %d (%s) %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), e.Text)
}
