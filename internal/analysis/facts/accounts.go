package facts

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// In operator mode a server loads an account's streams and consumers only
// once it can look the account up in its resolver: with the JWT missing
// from a full resolver's folder (removed, never pushed, or expired: the
// resolver deletes an expired JWT at start and every minute, dirstore.go
// startExpiring) the lookup fails with "account jwt not found", and the
// server logs `Account [KEY] lookup for stream create failed: …` (and for
// consumer create, `Update Stream Account KEY, error on lookup: …`) as the
// meta layer applies the assignments, and answers /healthz 503 `JetStream
// can not lookup account "KEY": …` (monitor.go). The streams stay on disk,
// untouched, and load again once the JWT is back and the server restarted
// (operator-unresolved-v2.12.15, operator-expired-v2.12.15, …-v2.15.3).

// UnresolvedAccount is one account one server could not look up.
type UnresolvedAccount struct {
	Server model.ServerID
	// Account is the account as the server names it (its public key).
	Account string
	// Kind: "not-in-resolver" (the server said "account jwt not found", or
	// the server's resolver folder in the bundle holds no JWT of it),
	// "expired" (the server said so, or its JWT there expired before the
	// bundle's time), "lookup-failed" (another error).
	Kind string
	// Reason is the server's error text ("account jwt not found"), "" when
	// only the resolver folder tells.
	Reason string
	// Since is the first failure of the last run of failures.
	Since time.Time
	// Events index Model.Timeline: the failures, oldest first.
	Events []int
	// Answers are the undated /healthz captures that said it ("file: text").
	Answers []string
	// Resolver says what the server's resolver folder in the bundle holds
	// of the account ("" when the bundle has no folder of that server's).
	Resolver string
	// JWTExpired is the exp of the account's JWT in that folder, when past.
	JWTExpired *time.Time
	// Streams are the account's streams the server holds on disk.
	Streams []model.AssetKey
	// Messages is what those copies hold, summed.
	Messages uint64
	// Back says why the server holds the account again after the failures
	// ("" when its last word on it is a failure or nothing says).
	Back string
}

// lookupAccountText is the /healthz (and "Healthcheck failed") error of an
// account the server cannot look up, and of one expired (monitor.go).
const (
	lookupAccountText  = `can not lookup account "`
	expiredAccountText = `JetStream account "`
)

// lookupFailure parses an event's account lookup failure: the account key
// and the server's reason; ok false when the event is none.
func lookupFailure(e *model.TimelineEvent) (acc, reason string, ok bool) {
	switch e.Kind {
	case "account-lookup-failed":
		if e.Account == "" {
			return "", "", false
		}
		reason = e.Text
		if i := strings.LastIndex(e.Text, ": "); i >= 0 {
			reason = e.Text[i+2:]
		}
		return e.Account, reason, true
	case string(natsfmt.EventHealthcheckFailed):
		t := strings.ReplaceAll(e.Text, `\"`, `"`)
		for _, marker := range []string{lookupAccountText, expiredAccountText} {
			i := strings.Index(t, marker)
			if i < 0 {
				continue
			}
			rest := t[i+len(marker):]
			j := strings.IndexByte(rest, '"')
			if j <= 0 {
				continue
			}
			acc, tail := rest[:j], rest[j+1:]
			if marker == expiredAccountText {
				if !strings.HasPrefix(tail, " is expired") {
					continue
				}
				return acc, "account expired", true
			}
			reason = strings.TrimPrefix(tail, ": ")
			if k := strings.IndexAny(reason, `";`); k >= 0 {
				reason = reason[:k]
			}
			return acc, strings.TrimSpace(reason), true
		}
	}
	return "", "", false
}

// backKinds are the log events that show a server holding an account's
// stream or consumer.
var backKinds = map[string]bool{string(natsfmt.EventRestoredStream): true, string(natsfmt.EventRestoringStream): true,
	string(natsfmt.EventStreamLeader): true, "consumer-leader": true}

func unresolvedAccounts(m *model.Model) []*UnresolvedAccount {
	type key struct {
		srv string
		acc string
	}
	byKey := map[key]*UnresolvedAccount{}
	var order []key
	get := func(srv model.ServerID, acc string) *UnresolvedAccount {
		k := key{m.Name(srv), acc}
		u := byKey[k]
		if u == nil {
			u = &UnresolvedAccount{Server: srv, Account: acc}
			if s := m.ServerOf(srv); s != nil {
				u.Server = s.Ref()
			}
			byKey[k] = u
			order = append(order, k)
		}
		return u
	}
	for i := range m.Timeline {
		e := &m.Timeline[i]
		acc, reason, ok := lookupFailure(e)
		if ok {
			u := get(e.Server, acc)
			if u.Back != "" || len(u.Events) == 0 {
				u.Since, u.Back = e.Time, ""
			}
			u.Events = append(u.Events, i)
			u.Reason = reason
			continue
		}
		// What shows the server holding the account again.
		var u *UnresolvedAccount
		if e.Account != "" {
			u = byKey[key{m.Name(e.Server), e.Account}]
		}
		switch {
		case u != nil && len(u.Events) > 0 && backKinds[e.Kind]:
			u.Back = fmt.Sprintf("%s line %d (%s): %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339), e.Text)
		case e.Kind == string(natsfmt.EventHealthcheckOK):
			for _, k := range order {
				if k.srv == m.Name(e.Server) && len(byKey[k].Events) > 0 {
					byKey[k].Back = fmt.Sprintf("its /healthz said ok at %s (%s)", e.Time.UTC().Format(time.RFC3339), e.File)
				}
			}
		}
	}
	// Undated /healthz captures (the dated ones are in the timeline): taken
	// when the bundle was, so the server's last word.
	for _, h := range m.Healthz {
		if !h.Time.IsZero() {
			continue
		}
		e := model.TimelineEvent{Server: h.Server, Source: "healthz", Kind: string(natsfmt.EventHealthcheckFailed), Text: h.Text, File: h.File}
		if acc, reason, ok := lookupFailure(&e); ok {
			u := get(h.Server, acc)
			u.Back = ""
			u.Reason = reason
			u.Answers = append(u.Answers, fmt.Sprintf("%s: %s", h.File, h.Text))
			continue
		}
		if h.Status == "ok" {
			for _, k := range order {
				if u := byKey[k]; k.srv == m.Name(h.Server) && (len(u.Events) > 0 || len(u.Answers) > 0) {
					u.Back = fmt.Sprintf("its /healthz said ok (%s)", h.File)
				}
			}
		}
	}
	// The stores and resolver folders.
	held := map[key][]model.AssetKey{}
	msgs := map[key]uint64{}
	for _, st := range m.Streams {
		if !model.IsAccountKey(st.Account) {
			continue
		}
		for _, c := range st.Copies {
			k := key{m.Name(c.Server), st.Account}
			held[k] = append(held[k], model.AssetKey{Account: st.Account, Stream: st.Name})
			msgs[k] += c.Messages
		}
	}
	folders := map[string]string{} // server -> its resolver folder
	jwts := map[key]*model.AccountJWT{}
	for _, a := range m.Accounts {
		for i := range a.JWTs {
			j := &a.JWTs[i]
			if j.Server == "" {
				continue
			}
			n := m.Name(j.Server)
			folders[n] = j.Dir
			k := key{n, a.Key}
			if old := jwts[k]; old == nil || j.IssuedAt.After(old.IssuedAt) {
				jwts[k] = j
			}
		}
	}
	for k := range held {
		if _, ok := folders[k.srv]; !ok {
			continue
		}
		if s := m.Server(k.srv); s != nil {
			j := jwts[k]
			at := bundleTime(m, s.Ref())
			if j == nil || !j.Expires.IsZero() && !at.IsZero() && j.Expires.Before(at) {
				if byKey[k] == nil {
					get(s.Ref(), k.acc)
				}
			}
		}
	}
	var out []*UnresolvedAccount
	for _, k := range order {
		u := byKey[k]
		u.Streams, u.Messages = held[k], msgs[k]
		sort.Slice(u.Streams, func(i, j int) bool { return u.Streams[i].Stream < u.Streams[j].Stream })
		if dir, ok := folders[k.srv]; ok {
			switch j := jwts[k]; {
			case j == nil:
				u.Resolver = fmt.Sprintf("its resolver folder %s holds no JWT of the account", dir)
			case !j.Expires.IsZero() && j.Expires.Before(bundleTime(m, u.Server)):
				t := j.Expires
				u.JWTExpired = &t
				u.Resolver = fmt.Sprintf("its JWT %s expired at %s", j.Path, t.Format(time.RFC3339))
			default:
				u.Resolver = fmt.Sprintf("its resolver folder holds the account's JWT %s", j.Path)
				if !j.Expires.IsZero() {
					u.Resolver += ", expiring " + j.Expires.Format(time.RFC3339)
				}
			}
		}
		switch {
		case strings.Contains(u.Reason, "expired") || u.JWTExpired != nil:
			u.Kind = "expired"
		case strings.Contains(u.Reason, "not found") || u.Reason == "" && strings.Contains(u.Resolver, "holds no JWT"):
			u.Kind = "not-in-resolver"
		default:
			u.Kind = "lookup-failed"
		}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := m.Name(out[i].Server), m.Name(out[j].Server); a != b {
			return a < b
		}
		return out[i].Account < out[j].Account
	})
	return out
}

// bundleTime is the last time the bundle knows of server id: its last
// timeline event (log line or capture).
func bundleTime(m *model.Model, id model.ServerID) time.Time {
	var t time.Time
	for i := len(m.Timeline) - 1; i >= 0; i-- {
		if e := &m.Timeline[i]; m.Same(e.Server, id) && !e.Time.IsZero() {
			return e.Time
		}
	}
	return t
}
