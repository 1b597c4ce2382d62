package main

// Issue 30: two JetStream domains joined by leafnodes, and a mirror across
// them that stops ingesting when its origin is deleted and recreated.
//
// A hub cluster (hub-0..2, cluster hub, JetStream domain "hub") listens for
// leafnodes; a leaf cluster (leaf-0..2, cluster leaf, domain "leaf") has two
// remotes to it, one bound to APP and one to SYS (leafnode.go: the system
// account's connection logs "JetStream not extended, domains differ"; the
// others "JetStream using domains: local …, remote …"). Each side runs its
// own meta group by design. In the hub, stream ORIGIN (R3); in the leaf,
// MIRROR (R3, mirror of ORIGIN, external api $JS.hub.API) and SOURCED (R1,
// source ORIGIN, same external api).
//
// domains-<version>: that layout, healthy. domains-recreated-<version>:
// then ORIGIN is deleted and created again with the same config, and a few
// messages are published to it (fewer than before): what the mirror and the
// source show is recorded (lag, active, error, their last sequences against
// the origin's), the captures taken and the servers stopped (the bundle);
// then, on the same stores, the leaf restarted (does a restart resume it?)
// and the remedy carried out and recorded: MIRROR deleted and created again
// with its config, and what it ingests.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func domainsScenarios() []Scenario {
	return []Scenario{
		{Name: "domains-v2.15.3",
			Doc:     "issue 30: hub cluster (domain hub) and leaf cluster (domain leaf) over leafnodes, 3 x v2.15.3 each; ORIGIN in the hub, MIRROR and SOURCED of it in the leaf; healthy",
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return domains(ctx, env, "v2.15.3", false) }},
		{Name: "domains-recreated-v2.14.10",
			Doc:     "issue 30: the domains layout on v2.14.10, ORIGIN deleted and recreated with fewer messages: the mirror and the source stop ingesting; restart and remedy (recreate the mirror) recorded",
			Timeout: 10 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return domains(ctx, env, "v2.14.10", true) }},
		{Name: "domains-recreated-v2.15.3",
			Doc:     "issue 30: the same on v2.15.3",
			Timeout: 10 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return domains(ctx, env, "v2.15.3", true) }},
		{Name: "domains-overtaken-v2.15.3",
			Doc:     "issue 30: the domains layout on v2.15.3, ORIGIN recreated with more messages (13) than before (10): what the mirror takes then",
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return domainsRun(ctx, env, "v2.15.3", true, true) }},
	}
}

const (
	domOrigin  = "ORIGIN"
	domMirror  = "MIRROR"
	domSourced = "SOURCED"
	domBefore  = 10 // messages in ORIGIN before it is recreated
	domAfter   = 4  // messages in the recreated ORIGIN
	// domOvertaken: messages in the recreated ORIGIN of the overtaken
	// variant, more than before: the mirror resumes past its old end.
	domOvertaken = 13
)

// domainLogPattern: the servers' lines about domains, leafnodes and
// mirrors/sources.
var domainLogPattern = regexp.MustCompile(`JetStream using domains|JetStream not extended|\] +Domain: |(?i:mirror|source stream|sourc(e|ing) consumer)|Leafnode connection`)

// SourceState is what a mirror's or source's stream info said.
type SourceState struct {
	Stream   string `json:"stream"`
	Kind     string `json:"kind"` // mirror, source
	Origin   string `json:"origin"`
	API      string `json:"api"`
	Lag      uint64 `json:"lag"`
	ActiveNs int64  `json:"active_ns"`
	Error    string `json:"error,omitempty"`
	// Seq is the last origin sequence seen (2.15 reports it for sources).
	Seq      uint64 `json:"seq,omitempty"`
	Messages uint64 `json:"messages"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// LastOriginSeq: the origin sequence of the stream's last message
	// (a mirror keeps the origin's sequences; a source's messages carry
	// Nats-Stream-Source).
	LastOriginSeq uint64 `json:"last_origin_seq"`
	LastHeader    string `json:"last_source_header,omitempty"`
	LastTime      string `json:"last_msg_time,omitempty"`
}

// DomainsExpect is want.json's expect for domains-*.
type DomainsExpect struct {
	Domains   map[string]string `json:"domains"` // server -> JetStream domain
	Recreated bool              `json:"recreated"`
	// Restarted: the domains-restarted bundle, both clusters stopped and
	// started again on the recreated bundle's stores; Stalled is then what
	// the mirror and source said after the restart.
	Restarted bool                `json:"restarted,omitempty"`
	Origin    DomOrigin           `json:"origin"`
	Before    []SourceState       `json:"before"` // mirror/source once caught up
	Stalled   []SourceState       `json:"stalled,omitempty"`
	Healthz   map[string]string   `json:"healthz"`
	LogLines  map[string][]string `json:"log_lines"`
	// AfterRestart: the leaf cluster restarted on the bundle's stores.
	AfterRestart []SourceState `json:"after_restart,omitempty"`
	// Remedy: MIRROR deleted and created again with its config.
	Remedy *DomRemedy `json:"remedy,omitempty"`
	// SourceRemedy: where SOURCED had stalled too, its source removed
	// (stream update) and added again with opt_start_seq 1.
	SourceRemedy *DomRemedy `json:"source_remedy,omitempty"`
}

// DomOrigin is the origin stream before and after its recreation.
type DomOrigin struct {
	Stream         string `json:"stream"`
	Domain         string `json:"domain"`
	CreatedBefore  string `json:"created_before"`
	LastSeqBefore  uint64 `json:"last_seq_before"`
	CreatedAfter   string `json:"created_after,omitempty"`
	LastSeqAfter   uint64 `json:"last_seq_after,omitempty"`
	MessagesAfter  uint64 `json:"messages_after,omitempty"`
	RecreatedAtUTC string `json:"recreated_at,omitempty"`
}

// DomRemedy is the run of "recreate the mirror".
type DomRemedy struct {
	Steps    []string      `json:"steps"`
	After    []SourceState `json:"after"`
	Proven   bool          `json:"proven"`
	Why      string        `json:"why"`
	LogLines []string      `json:"log_lines"`
}

func domains(ctx context.Context, env *Env, version string, recreate bool) error {
	return domainsRun(ctx, env, version, recreate, false)
}

// domainsRun: overtaken recreates ORIGIN with more messages than before
// (the incident a step later: what the mirror takes then), and carries no
// remedy out.
func domainsRun(ctx context.Context, env *Env, version string, recreate, overtaken bool) error {
	name := "domains-" + version
	after := domAfter
	switch {
	case overtaken:
		name, recreate, after = "domains-overtaken-"+version, true, domOvertaken
	case recreate:
		name = "domains-recreated-" + version
	}
	hub, err := NewCluster(ctx, env.Scratch, version, "hub", []string{"hub-0", "hub-1", "hub-2"})
	if err != nil {
		return err
	}
	defer hub.Kill()
	leaf, err := NewCluster(ctx, env.Scratch, version, "leaf", []string{"leaf-0", "leaf-1", "leaf-2"})
	if err != nil {
		return err
	}
	defer leaf.Kill()
	var appURLs, sysURLs []string
	for _, s := range hub.Servers {
		p, err := freePort()
		if err != nil {
			return err
		}
		s.JetStreamExtra = `domain: "hub"`
		s.Extra = sysAndAppAccounts + fmt.Sprintf("\nleafnodes { listen: \"127.0.0.1:%d\" }", p)
		s.User, s.Password = "app", "app"
		appURLs = append(appURLs, fmt.Sprintf("%q", fmt.Sprintf("nats-leaf://app:app@127.0.0.1:%d", p)))
		sysURLs = append(sysURLs, fmt.Sprintf("%q", fmt.Sprintf("nats-leaf://sys:sys@127.0.0.1:%d", p)))
	}
	for _, s := range leaf.Servers {
		s.JetStreamExtra = `domain: "leaf"`
		s.Extra = sysAndAppAccounts + fmt.Sprintf("\nleafnodes { remotes: [ {urls: [%s], account: APP}, {urls: [%s], account: SYS} ] }",
			strings.Join(appURLs, ", "), strings.Join(sysURLs, ", "))
		s.User, s.Password = "app", "app"
	}
	x := DomainsExpect{Domains: map[string]string{}, Recreated: recreate, Healthz: map[string]string{}, LogLines: map[string][]string{},
		Origin: DomOrigin{Stream: domOrigin, Domain: "hub"}}
	for _, s := range hub.Servers {
		x.Domains[s.Name] = "hub"
	}
	for _, s := range leaf.Servers {
		x.Domains[s.Name] = "leaf"
	}
	if err := hub.Start(ctx); err != nil {
		return err
	}
	if err := leaf.Start(ctx); err != nil {
		return err
	}
	hnc, hjs, err := connect(hub.Servers...)
	if err != nil {
		return err
	}
	defer hnc.Close()
	lnc, ljs, err := connect(leaf.Servers...)
	if err != nil {
		return err
	}
	defer lnc.Close()
	originCfg := jetstream.StreamConfig{Name: domOrigin, Subjects: []string{"origin.>"}, Replicas: 3, Storage: jetstream.FileStorage}
	if err := retry(ctx, "create "+domOrigin, func(ctx context.Context) error {
		_, err := hjs.CreateStream(ctx, originCfg)
		return err
	}); err != nil {
		return err
	}
	for i := 0; i < domBefore; i++ {
		if _, err := publish(ctx, hjs, fmt.Sprintf("origin.%d", i%3), payload("origin-a", i, 48), nil); err != nil {
			return err
		}
	}
	ext := &jetstream.ExternalStream{APIPrefix: "$JS.hub.API"}
	mirrorCfg := jetstream.StreamConfig{Name: domMirror, Replicas: 3, Storage: jetstream.FileStorage,
		Mirror: &jetstream.StreamSource{Name: domOrigin, External: ext}}
	sourcedCfg := jetstream.StreamConfig{Name: domSourced, Replicas: 1, Storage: jetstream.FileStorage,
		Sources: []*jetstream.StreamSource{{Name: domOrigin, External: ext}}}
	for _, cfg := range []jetstream.StreamConfig{mirrorCfg, sourcedCfg} {
		if err := retry(ctx, "create "+cfg.Name, func(ctx context.Context) error {
			_, err := ljs.CreateStream(ctx, cfg)
			return err
		}); err != nil {
			return err
		}
	}
	if err := waitIngested(ctx, ljs, domBefore, domBefore, 60*time.Second); err != nil {
		return err
	}
	oi, err := domStreamInfo(ctx, hjs, domOrigin)
	if err != nil {
		return err
	}
	x.Origin.CreatedBefore, x.Origin.LastSeqBefore = oi.Created.UTC().Format(time.RFC3339Nano), oi.State.LastSeq
	if x.Before, err = sourceStates(ctx, ljs); err != nil {
		return err
	}
	if recreate {
		if err := deleteOnce(ctx, "delete "+domOrigin, func(ctx context.Context) error { return hjs.DeleteStream(ctx, domOrigin) }, jetstream.ErrStreamNotFound); err != nil {
			return err
		}
		x.Origin.RecreatedAtUTC = time.Now().UTC().Format(time.RFC3339Nano)
		if err := retry(ctx, "recreate "+domOrigin, func(ctx context.Context) error {
			_, err := hjs.CreateStream(ctx, originCfg)
			return err
		}); err != nil {
			return err
		}
		for i := 0; i < after; i++ {
			if _, err := publish(ctx, hjs, fmt.Sprintf("origin.%d", i%3), payload("origin-b", i, 48), nil); err != nil {
				return err
			}
		}
		// Give the mirror and the source time to notice (their consumers
		// are checked every few seconds; a stalled one is recreated after
		// missing heartbeats).
		if err := pause(ctx, 25*time.Second); err != nil {
			return err
		}
		oi, err := domStreamInfo(ctx, hjs, domOrigin)
		if err != nil {
			return err
		}
		x.Origin.CreatedAfter, x.Origin.LastSeqAfter, x.Origin.MessagesAfter = oi.Created.UTC().Format(time.RFC3339Nano), oi.State.LastSeq, oi.State.Msgs
		if x.Stalled, err = sourceStates(ctx, ljs); err != nil {
			return err
		}
		for _, st := range x.Stalled {
			logf("%s: %s %s: lag %d active %v error %q, last seq %d (origin seq %d), origin last_seq %d", name, st.Kind, st.Stream, st.Lag, time.Duration(st.ActiveNs), st.Error, st.LastSeq, st.LastOriginSeq, x.Origin.LastSeqAfter)
		}
	}
	caps, err := quietCapture(ctx, hub, leaf)
	if err != nil {
		return err
	}
	for _, s := range append(append([]*Server{}, hub.Servers...), leaf.Servers...) {
		x.Healthz[s.Name] = httpBody(s, "/healthz")
	}
	hnc.Close()
	lnc.Close()
	if err := leaf.Stop(); err != nil {
		return err
	}
	if err := hub.Stop(); err != nil {
		return err
	}
	all := append(append([]*Server{}, hub.Servers...), leaf.Servers...)
	// The bundle: the stores and logs as the stop left them (copied before
	// any restart below).
	snap := filepath.Join(env.Scratch, "bundle-stores")
	roots := map[string]string{}
	logs := map[string]string{}
	for _, s := range all {
		roots[s.Name] = filepath.Join(snap, s.Name, "jetstream")
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
		logs[s.Name] = filepath.Join(snap, s.Name+".log")
		if err := copyFile(s.LogFile, logs[s.Name]); err != nil {
			return err
		}
		if x.LogLines[s.Name], err = linesMatching(s.LogFile, 0, domainLogPattern); err != nil {
			return err
		}
	}
	if recreate && !overtaken {
		if err := domainsAfter(ctx, env, version, &x, hub, leaf, mirrorCfg, sourcedCfg); err != nil {
			return err
		}
		if err := leaf.Stop(); err != nil {
			return err
		}
		if err := hub.Stop(); err != nil {
			return err
		}
	}
	for _, s := range all {
		s.LogFile = logs[s.Name]
	}
	b := &Bundle{Name: name, Version: strings.TrimPrefix(version, "v"), Layout: LayoutPerServer(), Servers: all, Captures: caps,
		StoreRoots: roots, Expect: x}
	if err := b.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	if !recreate || overtaken {
		return nil
	}
	// The remedies' runs, as the remedy runner records them (the
	// catalogue's proven cites this file).
	o := RemedyOutcomes{Bundle: name, Version: b.Version, Analyzer: "carried out by the domains-recreated scenario on the bundle's servers (want.json expect.remedy, expect.source_remedy)"}
	for id, r := range map[string]*DomRemedy{"mirror-recreate": x.Remedy, "source-readd": x.SourceRemedy} {
		if r == nil {
			continue
		}
		oc := RemedyOutcome{RemedyID: id, Findings: []string{"source-stalled"}, Steps: r.Steps, Proven: r.Proven}
		// The verify step, as the run waited for it (r.Proven: the wait held).
		check := map[string]string{"mirror-recreate": "the mirror's last sequence reaches the origin's",
			"source-readd": "the last sourced message carries the origin's new sequence"}[id]
		oc.Verified = []VerifyCheck{{Check: check, Held: r.Proven}}
		if !r.Proven {
			oc.Why = []string{r.Why}
		} else {
			oc.Note = r.Why
		}
		o.Outcomes = append(o.Outcomes, oc)
	}
	sort.Slice(o.Outcomes, func(i, j int) bool { return o.Outcomes[i].RemedyID < o.Outcomes[j].RemedyID })
	ob, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(env.Out, name, "remedy-outcome.json"), append(ob, '\n'), 0o644)
}

// domainsAfter restarts both clusters on the bundle's stores (their own
// copies), records the mirror and the source after the restart, then
// carries out the remedy: MIRROR deleted and created again.
func domainsAfter(ctx context.Context, env *Env, version string, x *DomainsExpect, hub, leaf *Cluster, mirrorCfg, sourcedCfg jetstream.StreamConfig) error {
	var offsets = map[string]int64{}
	for _, s := range leaf.Servers {
		if st, err := os.Stat(s.LogFile); err == nil {
			offsets[s.Name] = st.Size()
		}
	}
	if err := hub.Start(ctx); err != nil {
		return err
	}
	if err := leaf.Start(ctx); err != nil {
		return err
	}
	lnc, ljs, err := connect(leaf.Servers...)
	if err != nil {
		return err
	}
	defer lnc.Close()
	for _, n := range []string{domMirror, domSourced} {
		if err := waitAssetLeader(ctx, ljs, n, ""); err != nil {
			return err
		}
	}
	if err := pause(ctx, 20*time.Second); err != nil {
		return err
	}
	if x.AfterRestart, err = sourceStates(ctx, ljs); err != nil {
		return err
	}
	// The restart as a bundle of its own (the state beside the incident):
	// captured, stopped, written, then started again for the remedies.
	lnc.Close()
	caps, err := quietCapture(ctx, hub, leaf)
	if err != nil {
		return err
	}
	rx := DomainsExpect{Domains: x.Domains, Recreated: true, Restarted: true, Origin: x.Origin, Before: x.Before, Stalled: x.AfterRestart,
		Healthz: map[string]string{}, LogLines: map[string][]string{}}
	all := append(append([]*Server{}, hub.Servers...), leaf.Servers...)
	for _, s := range all {
		rx.Healthz[s.Name] = httpBody(s, "/healthz")
	}
	if err := leaf.Stop(); err != nil {
		return err
	}
	if err := hub.Stop(); err != nil {
		return err
	}
	for _, s := range all {
		if rx.LogLines[s.Name], err = linesMatching(s.LogFile, 0, domainLogPattern); err != nil {
			return err
		}
	}
	rb := &Bundle{Name: "domains-restarted-" + version, Version: strings.TrimPrefix(version, "v"), Layout: LayoutPerServer(), Servers: all, Captures: caps, Expect: rx}
	if err := rb.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	if err := hub.Start(ctx); err != nil {
		return err
	}
	if err := leaf.Start(ctx); err != nil {
		return err
	}
	lnc, ljs, err = connect(leaf.Servers...)
	if err != nil {
		return err
	}
	defer lnc.Close()
	for _, n := range []string{domMirror, domSourced} {
		if err := waitAssetLeader(ctx, ljs, n, ""); err != nil {
			return err
		}
	}
	r := &DomRemedy{}
	x.Remedy = r
	r.Steps = append(r.Steps, "nats stream info "+domMirror+" --json (config saved)", "nats stream rm "+domMirror+" -f", "nats stream add "+domMirror+" --config <saved config>")
	if err := deleteOnce(ctx, "delete "+domMirror, func(ctx context.Context) error { return ljs.DeleteStream(ctx, domMirror) }, jetstream.ErrStreamNotFound); err != nil {
		return err
	}
	if err := retry(ctx, "recreate "+domMirror, func(ctx context.Context) error {
		_, err := ljs.CreateStream(ctx, mirrorCfg)
		return err
	}); err != nil {
		return err
	}
	werr := waitFor(ctx, 60*time.Second, domMirror+" ingesting the recreated origin", func() (bool, error) {
		st, err := sourceStates(ctx, ljs)
		if err != nil {
			return false, nil
		}
		for _, s := range st {
			if s.Stream == domMirror && s.Messages == x.Origin.MessagesAfter && s.LastSeq == x.Origin.LastSeqAfter {
				return true, nil
			}
		}
		return false, nil
	})
	if r.After, err = sourceStates(ctx, ljs); err != nil {
		return err
	}
	r.Proven = werr == nil
	r.Why = fmt.Sprintf("the recreated %s holds the recreated %s's %d messages up to sequence %d", domMirror, domOrigin, x.Origin.MessagesAfter, x.Origin.LastSeqAfter)
	if werr != nil {
		r.Why = werr.Error()
	}
	for _, s := range leaf.Servers {
		lines, err := linesMatching(s.LogFile, offsets[s.Name], domainLogPattern)
		if err != nil {
			return err
		}
		for _, l := range lines {
			r.LogLines = append(r.LogLines, s.Name+": "+l)
		}
	}
	logf("remedy: proven %v (%s)", r.Proven, r.Why)
	var src *SourceState
	for i, st := range x.AfterRestart {
		if st.Stream == domSourced {
			src = &x.AfterRestart[i]
		}
	}
	if src == nil || src.LastOriginSeq <= x.Origin.LastSeqAfter {
		return nil // the source resumed on its own
	}
	// A source is known by its index name (origin, API prefix hash,
	// filter, transform: stream.go composeIName), and the server finds
	// where it stands from the last message whose Nats-Stream-Source
	// header carries that name (setStartingSequenceForSources): added
	// again unchanged it stands where it stood; with a filter subject
	// (the origin's own subjects) it is a new source.
	sr := &DomRemedy{Steps: []string{"nats stream edit " + domSourced + " (source " + domOrigin + " given filter_subject origin.>, the origin's subjects)"}}
	x.SourceRemedy = sr
	with := sourcedCfg
	with.Sources = []*jetstream.StreamSource{{Name: domOrigin, External: sourcedCfg.Sources[0].External, FilterSubject: "origin.>"}}
	for _, cfg := range []jetstream.StreamConfig{with} {
		if err := retry(ctx, "update "+domSourced, func(ctx context.Context) error {
			_, err := ljs.UpdateStream(ctx, cfg)
			return err
		}); err != nil {
			sr.Why = err.Error()
			return nil
		}
		if err := pause(ctx, 3*time.Second); err != nil {
			return err
		}
	}
	want := src.Messages + x.Origin.MessagesAfter
	werr = waitFor(ctx, 45*time.Second, domSourced+" ingesting the recreated origin", func() (bool, error) {
		st, err := sourceStates(ctx, ljs)
		if err != nil {
			return false, nil
		}
		for _, s := range st {
			if s.Stream == domSourced && s.Messages == want && s.LastOriginSeq == x.Origin.LastSeqAfter {
				return true, nil
			}
		}
		return false, nil
	})
	if sr.After, err = sourceStates(ctx, ljs); err != nil {
		return err
	}
	sr.Proven = werr == nil
	sr.Why = fmt.Sprintf("%s holds its %d messages and the recreated %s's %d, the last from origin sequence %d", domSourced, src.Messages, domOrigin, x.Origin.MessagesAfter, x.Origin.LastSeqAfter)
	if werr != nil {
		sr.Why = werr.Error()
	}
	logf("source remedy: proven %v (%s)", sr.Proven, sr.Why)
	return nil
}

func domStreamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	var info *jetstream.StreamInfo
	err := retry(ctx, "info "+name, func(ctx context.Context) error {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return err
		}
		info = st.CachedInfo()
		return nil
	})
	return info, err
}

// waitIngested waits until MIRROR holds mirrored and SOURCED sourced messages.
func waitIngested(ctx context.Context, js jetstream.JetStream, mirrored, sourced uint64, timeout time.Duration) error {
	return waitFor(ctx, timeout, "mirror and source caught up", func() (bool, error) {
		m, err1 := domStreamInfo(ctx, js, domMirror)
		s, err2 := domStreamInfo(ctx, js, domSourced)
		if err1 != nil || err2 != nil {
			return false, nil
		}
		return m.State.Msgs == mirrored && s.State.Msgs == sourced, nil
	})
}

// sourceStates reads MIRROR's and SOURCED's stream info and last message.
func sourceStates(ctx context.Context, js jetstream.JetStream) ([]SourceState, error) {
	var out []SourceState
	for _, n := range []string{domMirror, domSourced} {
		info, err := domStreamInfo(ctx, js, n)
		if err != nil {
			return nil, err
		}
		var sis []*jetstream.StreamSourceInfo
		kind := "mirror"
		if info.Mirror != nil {
			sis = []*jetstream.StreamSourceInfo{info.Mirror}
		} else {
			kind, sis = "source", info.Sources
		}
		for _, si := range sis {
			st := SourceState{Stream: n, Kind: kind, Origin: si.Name, Lag: si.Lag, ActiveNs: int64(si.Active),
				Messages: info.State.Msgs, FirstSeq: info.State.FirstSeq, LastSeq: info.State.LastSeq}
			if si.External != nil {
				st.API = si.External.APIPrefix
			}
			if si.Error != nil {
				b, _ := json.Marshal(si.Error)
				st.Error = string(b)
			}
			if info.State.LastSeq > 0 {
				stream, err := js.Stream(ctx, n)
				if err == nil {
					if m, err := stream.GetMsg(ctx, info.State.LastSeq); err == nil {
						st.LastTime = m.Time.UTC().Format(time.RFC3339Nano)
						st.LastHeader = m.Header.Get("Nats-Stream-Source")
						st.LastOriginSeq = m.Sequence
						if kind == "source" {
							st.LastOriginSeq = sourceHeaderSeq(st.LastHeader)
						}
					}
				}
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// sourceHeaderSeq is the origin sequence in a Nats-Stream-Source header
// ("<stream>[:<hash>] <seq> …"); 0 when none.
func sourceHeaderSeq(h string) uint64 {
	f := strings.Fields(h)
	if len(f) < 2 {
		return 0
	}
	var n uint64
	fmt.Sscan(f[1], &n)
	return n
}
