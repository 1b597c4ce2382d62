// Package sources holds the checks of mirrors and sources: streams that
// take their messages from another stream, in their account, another
// account or another JetStream domain.
package sources

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// A mirror asks its origin for the messages after its own last sequence (a
// mirror keeps the origin's sequences), a source for those after the origin
// sequence its last sourced message carries (its Nats-Stream-Source
// header). When the origin is deleted and created again under its name, the
// new origin starts at sequence 1: the mirror keeps asking for sequences the
// new origin has not reached, takes nothing, and its /jsz says lag 0, an
// active origin and no error; /healthz is ok (nats-server #8346, 2.14.0).
// Seen on real servers (domains-recreated runs, a mirror and a source in a
// leaf domain of an origin in the hub domain, the origin recreated with 4
// messages after 10): on 2.14.10 the mirror and the source stall, and a
// restart of every server does not resume them; on 2.15.3 the mirror stalls
// and the source resets itself ("JetStream source stream … was recreated,
// resetting source state", PR #8384) and takes the new messages. Deleting
// the mirror and creating it again with its config took the new origin's
// messages on both.

var CheckSourceStalled = check.Check{
	Code:        string(report.CodeSourceStalled),
	Severity:    report.Warning,
	Description: "a mirror or source takes nothing from its origin because the origin moved on under it (deleted and created again: the mirror's last origin sequence is past the origin's last sequence, or its messages are older than the origin), across accounts, JetStream domains and leafnodes; lag 0 and no error in /jsz are no sign of health",
	Skip: func(p *check.Pass) string {
		for _, st := range p.Model.Streams {
			if len(st.Links) > 0 {
				return ""
			}
		}
		return "no stream of the bundle is a mirror or has sources"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, st := range m.Streams {
			for _, l := range st.Links {
				if f, ok := judge(p, st, l); ok {
					out = append(out, f)
				}
			}
		}
		return out
	},
}

// originView is what the bundle says of a link's origin, on the servers
// of its domain.
type originView struct {
	st       *model.Stream
	domain   string
	lastSeq  uint64
	lastFrom string
	created  time.Time
	createdF string
	// firstTS: the time of the first message its stores hold (zero when
	// no store of it is in the bundle).
	firstTS time.Time
	servers []string
}

// standing is where the link stands in its origin.
type standing struct {
	originSeq uint64 // the origin sequence its last message came from
	from      string
	lastTS    time.Time // its last message's time (a mirror keeps the origin's)
	tsFrom    string
	// firstSeq, firstTS: a mirror's first message in its stores.
	firstSeq uint64
	firstTS  time.Time
	firstF   string
}

func judge(p *check.Pass, st *model.Stream, l *model.StreamLink) (report.Finding, bool) {
	m := p.Model
	selfDomain := streamDomain(m, st)
	dom, named := l.OriginDomain()
	if !named {
		dom = selfDomain
	}
	o := origin(m, st, l, dom)
	if o == nil {
		p.Skipf("%s > %s: its %s %s is not in the bundle%s", st.Account, st.Name, l.Kind, l.Origin, domainNote(dom, named))
		return report.Finding{}, false
	}
	if o.lastFrom == "" {
		p.Skipf("%s > %s: no store or capture of its %s %s says the origin's last sequence", st.Account, st.Name, l.Kind, l.Origin)
		return report.Finding{}, false
	}
	s := stand(m, st, l)
	if s.from == "" {
		return report.Finding{}, false // it took nothing yet: nothing to compare
	}
	ahead := s.originSeq > o.lastSeq
	// A mirror whose first messages were written before its origin was
	// created, at sequences the origin holds messages of its own at, all
	// written after its creation (so no restore of older messages): the
	// mirror holds an older origin's messages under the new one's
	// sequences.
	older := l.Kind == "mirror" && !o.created.IsZero() && !s.firstTS.IsZero() && s.firstTS.Before(o.created) &&
		!o.firstTS.IsZero() && !o.firstTS.Before(o.created) && s.firstSeq <= o.lastSeq
	if !ahead && !older {
		return report.Finding{}, false
	}
	servers := holders(m, st)
	f := report.Finding{Account: st.Account, Stream: st.Name, Servers: servers, Kind: l.Kind}
	where := ""
	if named && dom != selfDomain {
		where = fmt.Sprintf(" in JetStream domain %s", dom)
	} else if l.API != "" {
		where = " through " + l.API
	}
	what := map[string]string{"mirror": "the mirror", "source": "the source"}[l.Kind]
	switch {
	case ahead:
		f.Message = fmt.Sprintf("stream %s > %s takes nothing from its %s %s%s: its last message came from origin sequence %d, and the origin's last sequence is %d: the origin was deleted and created again, and %s asks for sequences the new origin has not reached. It stays this way without an error: lag 0 and an active origin in /jsz, /healthz ok",
			st.Account, st.Name, l.Kind, l.Origin, where, s.originSeq, o.lastSeq, what)
	case s.lastTS.Before(o.created):
		f.Message = fmt.Sprintf("stream %s > %s takes nothing from its %s %s%s: its messages, up to origin sequence %d, were written before the origin was created (%s), whose messages are others under the same sequences; it stays this way without an error (lag 0 in /jsz, /healthz ok)",
			st.Account, st.Name, l.Kind, l.Origin, where, s.originSeq, o.created.UTC().Format(time.RFC3339Nano))
	default:
		f.Message = fmt.Sprintf("stream %s > %s holds messages of an older %s %s%s under the new origin's sequences: its messages from sequence %d were written before the origin was created (%s), and it went on past them with the new origin's (up to %d), without the new origin's messages up to its old end",
			st.Account, st.Name, "origin", l.Origin, where, s.firstSeq, o.created.UTC().Format(time.RFC3339Nano), s.originSeq)
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s > %s: %s of %s%s (%s)", st.Account, st.Name, l.Kind, l.Origin, apiNote(l.API), l.From))
	f.Evidence = append(f.Evidence, fmt.Sprintf("its last message: origin sequence %d (%s)", s.originSeq, s.from))
	if !s.firstTS.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("its first message (sequence %d) written %s (%s)", s.firstSeq, s.firstTS.UTC().Format(time.RFC3339Nano), s.firstF))
	}
	if !s.lastTS.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("its last message written %s (%s)", s.lastTS.UTC().Format(time.RFC3339Nano), s.tsFrom))
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("origin %s > %s%s on %s: last sequence %d (%s)", o.st.Account, o.st.Name, domainNote(o.domain, o.domain != ""), strings.Join(o.servers, ", "), o.lastSeq, o.lastFrom))
	if !o.created.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("origin created %s (%s)", o.created.UTC().Format(time.RFC3339Nano), o.createdF))
	}
	if !o.firstTS.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("origin's first message written %s (its stores)", o.firstTS.UTC().Format(time.RFC3339Nano)))
	}
	// The logs: the origin's stream leader elected anew at its creation
	// (the servers log nothing about the stalled mirror itself).
	if !o.created.IsZero() {
		f.Since = report.Ptr(o.created)
		seen := map[model.ServerID]bool{}
		for i, e := range m.Timeline {
			if e.Source != "log" || e.Kind != string(natsfmt.EventStreamLeader) || e.Account != o.st.Account || e.Stream != o.st.Name ||
				seen[e.Server] || e.Time.Before(o.created) || model.MetaDomain(m, m.ServerOf(e.Server)) != o.domain {
				continue
			}
			seen[e.Server] = true
			f.TimelineRefs = append(f.TimelineRefs, i)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s log %s line %d at %s: new stream leader for the origin, after its creation: %q", m.Name(e.Server), e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), e.Text))
		}
	}
	for _, ls := range l.States {
		e := "no error"
		if ls.Error != "" {
			e = "error " + ls.Error
		}
		seq := ""
		if ls.Seq > 0 {
			seq = fmt.Sprintf(", last origin sequence taken %d", ls.Seq)
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s /jsz (%s): %s lag %d, origin last active %s ago, %s%s", m.Name(ls.Server), ls.File, l.Kind, ls.Lag, ls.Active.Round(time.Millisecond), e, seq))
	}
	v := releases.MinVersion(m)
	args := remedy.Args{"stream": st.Name, "account": st.Account, "origin": l.Origin, "seq": strconv.FormatUint(o.lastSeq, 10)}
	if l.Kind == "mirror" {
		remedy.Prescribe(remedy.MirrorRecreate, args).Apply(&f)
	} else {
		args["v215"] = releases.VersionAtLeast(v, 2, 15)
		remedy.Prescribe(remedy.SourceReadd, args).Apply(&f)
	}
	return f, true
}

func apiNote(api string) string {
	if api == "" {
		return ""
	}
	return " through " + api
}

func domainNote(dom string, named bool) string {
	if !named || dom == "" {
		return ""
	}
	return " (JetStream domain " + dom + ")"
}

// streamDomain is the JetStream domain of the servers holding st.
func streamDomain(m *model.Model, st *model.Stream) string {
	for _, c := range st.Copies {
		return model.MetaDomain(m, m.ServerOf(c.Server))
	}
	for _, c := range st.Captured {
		return model.MetaDomain(m, m.ServerOf(c.Server))
	}
	return ""
}

// holders are the servers holding st (copies, then captures), sorted.
func holders(m *model.Model, st *model.Stream) []string {
	var out []string
	for _, c := range st.Copies {
		out = model.AppendUnique(out, m.Name(c.Server))
	}
	for _, c := range st.Captured {
		out = model.AppendUnique(out, m.Name(c.Server))
	}
	slices.Sort(out)
	return out
}

// origin reads the origin of l on the servers of domain dom: the stream
// of that name in st's account, or, when the link goes through an API
// prefix and that account has none, the one stream of that name in any
// account. nil when the bundle holds none.
func origin(m *model.Model, st *model.Stream, l *model.StreamLink, dom string) *originView {
	o := m.Stream(st.Account, l.Origin)
	if o == nil && l.API != "" {
		for _, s := range m.Streams {
			if s.Name == l.Origin && s != st {
				if o != nil {
					return nil // more than one: which it is cannot be told
				}
				o = s
			}
		}
	}
	if o == nil || o == st {
		return nil
	}
	in := func(id model.ServerID) bool { return model.MetaDomain(m, m.ServerOf(id)) == dom }
	v := &originView{st: o, domain: dom}
	seen := false
	for _, c := range o.Copies {
		if !in(c.Server) {
			continue
		}
		seen = true
		v.servers = model.AppendUnique(v.servers, m.Name(c.Server))
		if v.lastFrom == "" || c.LastSeq > v.lastSeq {
			v.lastSeq, v.lastFrom = c.LastSeq, fmt.Sprintf("%s's store, %s", m.Name(c.Server), c.Path)
		}
		if len(c.Blocks) > 0 && c.Blocks[0].FirstTS > 0 {
			if ts := time.Unix(0, c.Blocks[0].FirstTS); v.firstTS.IsZero() || ts.Before(v.firstTS) {
				v.firstTS = ts
			}
		}
	}
	for _, c := range o.Captured {
		if !in(c.Server) {
			continue
		}
		seen = true
		v.servers = model.AppendUnique(v.servers, m.Name(c.Server))
		if v.lastFrom == "" || c.LastSeq > v.lastSeq {
			v.lastSeq, v.lastFrom = c.LastSeq, fmt.Sprintf("%s's /jsz, %s", m.Name(c.Server), c.Path)
		}
	}
	for _, c := range o.Created {
		if in(c.Server) && c.Time.After(v.created) {
			v.created, v.createdF = c.Time, fmt.Sprintf("%s's %s", m.Name(c.Server), c.From)
		}
	}
	if !seen {
		return nil
	}
	slices.Sort(v.servers)
	return v
}

// stand is where l stands in its origin: for a mirror its last sequence
// (the origin's), for a source the origin sequence of the last sourced
// message's Nats-Stream-Source header; the highest any copy holds, and
// from 2.15 a source's /jsz seq.
func stand(m *model.Model, st *model.Stream, l *model.StreamLink) standing {
	var s standing
	for _, c := range st.Copies {
		seq, from := uint64(0), ""
		switch l.Kind {
		case "mirror":
			if c.LastSeq > 0 {
				seq, from = c.LastSeq, fmt.Sprintf("%s's store, %s: last sequence %d, a mirror keeps the origin's sequences", m.Name(c.Server), c.Path, c.LastSeq)
			}
		case "source":
			if n, ok := headerSeq(c.SourceHeader, l.Origin); ok {
				seq, from = n, fmt.Sprintf("%s's store, %s: message %d carries Nats-Stream-Source %q", m.Name(c.Server), c.Path, c.SourceSeq, c.SourceHeader)
			}
		}
		if from != "" && (s.from == "" || seq > s.originSeq) {
			s.originSeq, s.from = seq, from
		}
		if len(c.Blocks) > 0 && l.Kind == "mirror" && c.Blocks[0].FirstTS > 0 {
			if ts := time.Unix(0, c.Blocks[0].FirstTS); s.firstTS.IsZero() || ts.Before(s.firstTS) {
				s.firstSeq, s.firstTS, s.firstF = c.Blocks[0].FirstSeq, ts, fmt.Sprintf("%s's first message block, %s", m.Name(c.Server), c.Path)
			}
		}
		if n := len(c.Blocks); n > 0 && l.Kind == "mirror" {
			if ts := time.Unix(0, c.Blocks[n-1].LastTS); c.Blocks[n-1].LastTS > 0 && ts.After(s.lastTS) {
				s.lastTS, s.tsFrom = ts, fmt.Sprintf("%s's last message block, %s", m.Name(c.Server), c.Path)
			}
		}
	}
	if s.from == "" && l.Kind == "mirror" {
		for _, c := range st.Captured {
			if c.LastSeq > 0 && c.LastSeq > s.originSeq {
				s.originSeq, s.from = c.LastSeq, fmt.Sprintf("%s's /jsz, %s: last sequence %d, a mirror keeps the origin's sequences", m.Name(c.Server), c.Path, c.LastSeq)
			}
		}
	}
	for _, ls := range l.States {
		if l.Kind == "source" && ls.Seq > 0 && s.from == "" {
			s.originSeq, s.from = ls.Seq, fmt.Sprintf("%s's /jsz, %s: source seq %d", m.Name(ls.Server), ls.File, ls.Seq)
		}
	}
	return s
}

// headerSeq is the origin sequence of a Nats-Stream-Source header value
// ("<origin>[:<hash>] <seq> …") naming origin.
func headerSeq(h, origin string) (uint64, bool) {
	f := strings.Fields(h)
	if len(f) < 2 {
		return 0, false
	}
	name, _, _ := strings.Cut(f[0], ":")
	if name != origin {
		return 0, false
	}
	n, err := strconv.ParseUint(f[1], 10, 64)
	return n, err == nil
}
