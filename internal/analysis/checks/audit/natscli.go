// Package audit holds natscli's `nats audit analyze` checks (jsm.go v0.5.0
// audit/*_checks.go), each computed from the bundle's `nats audit gather`
// archives (model.Gather) as natscli computes it on the same archive: its
// PASS is passed, its WARN and FAIL are failed with findings of severity
// warning and critical (one per natscli example), its SKIP is skipped with
// the reason. Thresholds are natscli's configuration, under the same keys
// and with the same defaults.
package audit

import (
	"fmt"
	"strings"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// outcome is natscli's answer of one check (audit/checks.go Outcome).
type outcome int

const (
	pass outcome = iota // PASS
	warn                // WARN (PassWithIssues)
	fail                // FAIL
	skip                // SKIP
)

// verdict is what one check makes of one archive: natscli's outcome, the
// findings that stand for its examples, or why it skipped.
type verdict struct {
	outcome outcome
	found   []report.Finding
	reason  string
}

// judgement computes one natscli check on one archive.
type judgement func(p *check.Pass, g *model.Gather) verdict

// examples is the verdict of a check that raises its outcome when it has
// an example and passes otherwise (most of natscli's).
func examples(found []report.Finding, o outcome) verdict {
	if len(found) == 0 {
		return verdict{outcome: pass}
	}
	return verdict{outcome: o, found: found}
}

// skipper is a check's Skip: the bundle holds no gather archive, or
// natscli skips on every archive it holds.
func skipper(judge judgement) func(*check.Pass) string {
	return func(p *check.Pass) string {
		if len(p.Model.Gathers) == 0 {
			return check.NoAuditArchive
		}
		reason := ""
		for i := range p.Model.Gathers {
			v := judge(p, &p.Model.Gathers[i])
			if v.outcome != skip {
				return ""
			}
			if reason == "" {
				reason = "natscli skips it: " + v.reason
				if g := &p.Model.Gathers[i]; g.Loose {
					reason = v.reason
				}
			}
		}
		return reason
	}
}

// runner is a check's Run: the findings of every archive, with the
// severity natscli's outcome gives them where the judgement left it open;
// an archive natscli skips is recorded as a part not judged.
func runner(judge judgement) func(*check.Pass) []report.Finding {
	return func(p *check.Pass) []report.Finding {
		var out []report.Finding
		for i := range p.Model.Gathers {
			g := &p.Model.Gathers[i]
			v := judge(p, g)
			switch v.outcome {
			case skip:
				p.Skipf("%s: %s", g.Source(), v.reason)
				continue
			case pass:
				continue
			}
			sev := report.Warning
			if v.outcome == fail {
				sev = report.Critical
			}
			for _, f := range v.found {
				if f.Severity == "" {
					f.Severity = sev
				}
				out = append(out, f)
			}
		}
		return out
	}
}

// eachAnswer calls fn for every page of one kind of every server of g, by
// cluster then server, as archive.Reader.EachClusterServerArtifact does;
// servers without such a page are passed over, as natscli's server checks
// pass over a missing artifact. It returns how many pages it saw.
func eachAnswer(g *model.Gather, pages func(*model.GatherServer) []capture.Capture, fn func(cluster string, s *model.GatherServer, c capture.Capture)) int {
	n := 0
	for _, cl := range g.Clusters {
		for i := range cl.Servers {
			s := &cl.Servers[i]
			for _, c := range pages(s) {
				n++
				fn(cl.Name, s, c)
			}
		}
	}
	return n
}

// answers is one kind of answer a check reads, for a reader and of each
// server.
type answers struct {
	what  string
	pages func(*model.GatherServer) []capture.Capture
}

var (
	varzAnswers     = answers{"/varz", varzPages}
	jszAnswers      = answers{"/jsz", jszPages}
	healthzAnswers  = answers{"/healthz", healthzPages}
	gatewayzAnswers = answers{"/gatewayz", gatewayzPages}
	leafzAnswers    = answers{"/leafz", leafzPages}
	accountzAnswers = answers{"account info (/accountz?acc=)", accountzPages}
	// streamAnswers are the stream infos (no pages of a server).
	streamAnswers = answers{what: "stream info with its configuration (a /jsz with streams=1&config=1)"}
)

// needs is judge, except on loose captures (model.Gather.Loose) that hold
// none of the answers it reads: natscli has an archive that holds every
// kind, so it is skipped, saying which it lacks.
func needs(judge judgement, a answers) judgement {
	return func(p *check.Pass, g *model.Gather) verdict {
		if g.Loose {
			has := len(g.Streams) > 0
			if a.pages != nil {
				has = eachAnswer(g, a.pages, func(string, *model.GatherServer, capture.Capture) {}) > 0
			}
			if !has {
				return verdict{outcome: skip, reason: "the loose captures hold no " + a.what}
			}
		}
		return judge(p, g)
	}
}

func varzPages(s *model.GatherServer) []capture.Capture    { return s.Varz }
func jszPages(s *model.GatherServer) []capture.Capture     { return s.Jsz }
func healthzPages(s *model.GatherServer) []capture.Capture { return s.Healthz }

// missing is natscli's skip of a check that needs one kind of answer of
// every server of every cluster (the cluster and meta checks): the first
// server without one, "" if none lacks it.
func missing(g *model.Gather, pages func(*model.GatherServer) []capture.Capture, what string) string {
	for _, cl := range g.Clusters {
		for i := range cl.Servers {
			if len(pages(&cl.Servers[i])) == 0 {
				return fmt.Sprintf("no %s of server %s in cluster %s", what, cl.Servers[i].Name, cl.Name)
			}
		}
	}
	return ""
}

// serverFinding is one example of a check about one server's answer.
func serverFinding(s *model.GatherServer, c capture.Capture, format string, args ...any) report.Finding {
	return report.Finding{Server: s.Name, File: c.File, Message: fmt.Sprintf(format, args...),
		Evidence: []string{fmt.Sprintf("%s line %d", c.File, c.Line)}}
}

// streamPages are the stream infos of g by account and stream, each with
// the servers natscli reads it from (archive.Reader.StreamServerNames) and
// the last page each holds, in account, stream, server order.
type streamReplicas struct {
	Account, Stream string
	Replicas        []capture.AuditStream
}

func streamsOf(g *model.Gather) []streamReplicas {
	var out []streamReplicas
	for _, s := range g.Streams {
		if s.Info == nil {
			continue
		}
		if n := len(out); n == 0 || out[n-1].Account != s.Account || out[n-1].Stream != s.Stream {
			out = append(out, streamReplicas{Account: s.Account, Stream: s.Stream})
		}
		r := &out[len(out)-1]
		if n := len(r.Replicas); n > 0 && r.Replicas[n-1].Server == s.Server {
			r.Replicas[n-1] = s // a later page of the same replica
			continue
		}
		r.Replicas = append(r.Replicas, s)
	}
	return out
}

// whitespace says whether s holds a blank natscli refuses in a name.
func whitespace(s, blanks string) bool { return strings.ContainsAny(s, blanks) }

// serverID is the server id of s from its last /varz ("" when it has
// none): the id `nats server config reload` takes.
func serverID(s *model.GatherServer) string {
	for i := len(s.Varz) - 1; i >= 0; i-- {
		if v := s.Varz[i].Varz; v != nil && v.ServerID != "" {
			return v.ServerID
		}
	}
	return ""
}
