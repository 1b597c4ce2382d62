package audit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// monitorEnabled is the metadata key with which a stream or consumer opts
// in to `nats server check` health checks (jsm.go monitor/stream.go
// MonitorMetaEnabled).
const monitorEnabled = "io.nats.monitor.enabled"

// CheckStreamMonitor is natscli's JETSTREAM_004
// (checkStreamMetadataMonitoring): the health checks a stream asks for in
// its io.nats.monitor.* metadata (`nats server check stream`), judged on
// its leader's stream info as jsm.go monitor CheckStreamInfoHealth judges
// it: the replicas (peer-expect, peer-lag-critical, peer-seen-critical,
// offline replicas), the messages (msgs-warn, msgs-critical) and the
// subjects (subjects-warn, subjects-critical). WARN for warnings, FAIL for
// a critical. A stream whose metadata does not parse is passed over, as
// natscli passes it over; one that asks for the source or mirror checks
// (lag-critical, seen-critical, min-sources, max-sources) makes it skip:
// the stream infos' sources are not read here.
var CheckStreamMonitor = check.Check{
	Code:        string(report.CodeStreamMonitor),
	NatscliCode: "JETSTREAM_004",
	Severity:    report.Critical,
	Description: "natscli JETSTREAM_004: a stream of the nats audit gather archive fails the health checks its io.nats.monitor.* metadata asks for (replicas, messages, subjects; skipped when it asks for the source or mirror checks, not computed here)",
	Skip:        skipper(needs(judgeStreamMonitor, streamAnswers)),
	Run:         runner(needs(judgeStreamMonitor, streamAnswers)),
}

// streamMonitor is what a stream's io.nats.monitor.* metadata asks for
// (jsm.go monitor CheckStreamHealthOptions), of the checks computed here.
type streamMonitor struct {
	peerExpect               int
	peerLagCrit              uint64
	peerSeenCrit             time.Duration
	msgsWarn, msgsCrit       uint64
	subjectsWarn, subjectsCr int
}

// streamMonitorOf reads metadata as jsm.go's populateStreamHealthCheckOptions
// does: ok is false when a value does not parse (natscli then passes the
// stream over); unsupported names a key asking for a check not computed
// here.
func streamMonitorOf(md map[string]string) (m streamMonitor, ok bool, unsupported string) {
	for _, k := range []string{"io.nats.monitor.lag-critical", "io.nats.monitor.seen-critical", "io.nats.monitor.min-sources", "io.nats.monitor.max-sources"} {
		if _, has := md[k]; has {
			unsupported = k
		}
	}
	var err error
	get := func(k string, parse func(string) error) {
		if v, has := md[k]; has && err == nil {
			err = parse(v)
		}
	}
	get("io.nats.monitor.peer-expect", func(v string) (e error) { m.peerExpect, e = strconv.Atoi(v); return })
	get("io.nats.monitor.peer-lag-critical", func(v string) (e error) { m.peerLagCrit, e = strconv.ParseUint(v, 10, 64); return })
	get("io.nats.monitor.peer-seen-critical", func(v string) (e error) {
		// jsm.go's ParseDuration also takes days and weeks; a value Go
		// does not read is not judged here.
		if m.peerSeenCrit, e = time.ParseDuration(v); e != nil {
			unsupported = "io.nats.monitor.peer-seen-critical " + v
		}
		return nil
	})
	get("io.nats.monitor.msgs-warn", func(v string) (e error) { m.msgsWarn, e = strconv.ParseUint(v, 10, 64); return })
	get("io.nats.monitor.msgs-critical", func(v string) (e error) { m.msgsCrit, e = strconv.ParseUint(v, 10, 64); return })
	get("io.nats.monitor.subjects-warn", func(v string) (e error) { m.subjectsWarn, e = strconv.Atoi(v); return })
	get("io.nats.monitor.subjects-critical", func(v string) (e error) { m.subjectsCr, e = strconv.Atoi(v); return })
	return m, err == nil, unsupported
}

// health is jsm.go's CheckStreamInfoHealth of the checks computed here:
// the warnings and criticals of stream info si.
func (m streamMonitor) health(si *capture.StreamDetail) (warnings, criticals []string) {
	crit := func(format string, args ...any) { criticals = append(criticals, fmt.Sprintf(format, args...)) }
	// streamCheckCluster
	if nfo := si.Cluster; !((nfo == nil || si.Config.Replicas <= 1) && m.peerExpect <= 0) {
		switch {
		case nfo == nil || si.Config.Replicas <= 1:
			crit("Stream is not clustered")
		case nfo.Leader == "":
			crit("No leader")
		case len(nfo.Replicas)+1 != m.peerExpect:
			crit("Expected %d replicas got %d", m.peerExpect, len(nfo.Replicas)+1)
		default:
			lagged, inactive, offline := 0, 0, 0
			for _, p := range nfo.Replicas {
				if m.peerLagCrit > 0 && p.Lag > m.peerLagCrit {
					lagged++
				}
				if m.peerSeenCrit > 0 && p.Active > m.peerSeenCrit {
					inactive++
				}
				if p.Offline {
					offline++
				}
			}
			if offline > 0 {
				crit("%d replicas offline", offline)
			}
			if m.peerLagCrit > 0 && lagged > 0 {
				crit("%d replicas lagged", lagged)
			}
			if m.peerSeenCrit > 0 && inactive > 0 {
				crit("%d replicas inactive", inactive)
			}
		}
	}
	// streamCheckMessages
	msgs := si.State.Messages
	switch {
	case m.msgsCrit <= 0 && m.msgsWarn <= 0:
	case m.msgsCrit > 0 && msgs <= m.msgsCrit:
		crit("%d messages", msgs)
	case m.msgsWarn > 0 && msgs <= m.msgsWarn:
		warnings = append(warnings, fmt.Sprintf("%d messages", msgs))
	}
	// streamCheckSubjects
	if m.subjectsWarn > 0 || m.subjectsCr > 0 {
		ns, lt := si.State.NumSubjects, m.subjectsWarn < m.subjectsCr
		switch {
		case lt && ns >= m.subjectsCr, !lt && ns <= m.subjectsCr:
			crit("%d subjects", ns)
		case lt && ns >= m.subjectsWarn, !lt && ns <= m.subjectsWarn:
			warnings = append(warnings, fmt.Sprintf("%d subjects", ns))
		}
	}
	return warnings, criticals
}

func judgeStreamMonitor(_ *check.Pass, g *model.Gather) verdict {
	var found []report.Finding
	failed := false
	for _, st := range streamsOf(g) {
		for _, r := range st.Replicas {
			if r.Info.Cluster != nil && r.Info.Cluster.Leader != r.Server {
				continue
			}
			if r.Info.Config == nil {
				continue
			}
			md := r.Info.Config.Metadata
			m, ok, unsupported := streamMonitorOf(md)
			if !ok || !optedIn(md) {
				continue
			}
			if unsupported != "" {
				return verdict{outcome: skip, reason: fmt.Sprintf("stream %s in %s asks for %s, a check not computed here", st.Stream, st.Account, unsupported)}
			}
			warnings, criticals := m.health(r.Info)
			add := func(sev report.Severity, level, text string) {
				f := report.Finding{Server: r.Server, Account: st.Account, Stream: st.Stream, File: r.File, Severity: sev,
					Message:  fmt.Sprintf("%s: stream %s in %s: %s", level, st.Stream, st.Account, text),
					Evidence: []string{fmt.Sprintf("%s: metadata %v", r.File, monitorKeys(md))}}
				remedy.Prescribe(remedy.StreamMonitor, remedy.Args{"stream": st.Stream, "account": st.Account, "problem": text}).Apply(&f)
				found = append(found, f)
			}
			for _, w := range warnings {
				add(report.Warning, "WARNING", w)
			}
			for _, c := range criticals {
				add(report.Critical, "CRITICAL", c)
				failed = true
			}
		}
	}
	if failed {
		return verdict{outcome: fail, found: found}
	}
	return examples(found, warn)
}

// monitorKeys are the io.nats.monitor.* entries of md, sorted.
func monitorKeys(md map[string]string) []string {
	var out []string
	for k, v := range md {
		if strings.HasPrefix(k, "io.nats.monitor.") {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// optedIn says whether metadata enables the monitor checks: natscli parses
// the value as a Go bool; a value that does not parse makes natscli pass
// the asset over, as here.
func optedIn(md map[string]string) bool {
	switch md[monitorEnabled] {
	case "1", "t", "T", "TRUE", "true", "True":
		return true
	}
	return false
}
