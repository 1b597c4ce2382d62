// Package analysis builds the model of a bundle once (servers, stores,
// streams, raft groups, log events, captures), runs the registered checks
// over it, and assembles the report. It is the one place where the parsers
// (storeparse, raftlog, logscan, capture) and the bundle reader meet.
package analysis

import (
	"fmt"
	"slices"
	"sort"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/accounts"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/audit"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/consumers"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/groups"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/jetstream"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/offline"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/peers"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/replicas"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/sources"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/diagnosis"
	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/progress"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/analysis/timeline"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// Options tunes a run.
type Options struct {
	ToolVersion string
	Limits      bundle.Limits
	Timeline    timeline.Options
	// Settings override checks' thresholds, by "code.key" (see Check.Settings).
	Settings map[string]float64
	// Only, when set, runs just these checks; Skip leaves these out. Codes
	// are validated against the registered checks.
	Only, Skip []string
	// Progress, when set, is told how far the run has got.
	Progress progress.Progress
	// Keys open stores encrypted at rest: the servers' jetstream `key`,
	// then any `prev_encryption_key`. Never printed nor reported.
	Keys []string
	// LooseAudit: in a bundle without a `nats audit gather` archive,
	// natscli's checks judge the loose captures of the same endpoints
	// (/varz, /jsz, /healthz, /gatewayz, /leafz, /accountz), each skipping
	// when they lack what it reads. Off by default: on captures of
	// servers without authentication it warns on every one of them
	// (SERVER_007), which changes the exit code of most bundles.
	LooseAudit bool
}

// SelectChecks returns the registered checks that only and skip leave,
// in registration order; an unknown code is an error.
func SelectChecks(only, skip []string) ([]check.Check, error) {
	known := map[string]bool{}
	for _, c := range Checks {
		known[c.Code] = true
	}
	for _, code := range append(append([]string(nil), only...), skip...) {
		if !known[code] {
			return nil, fmt.Errorf("no check %q (jsforensics checks lists them)", code)
		}
	}
	var out []check.Check
	for _, c := range Checks {
		if (len(only) == 0 || slices.Contains(only, c.Code)) && !slices.Contains(skip, c.Code) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CheckSettings validates settings against the registered checks.
func CheckSettings(settings map[string]float64) error {
	for k := range settings {
		if _, ok := defaultSettings()[k]; !ok {
			return fmt.Errorf("no check setting %q (jsforensics checks lists them)", k)
		}
	}
	return nil
}

// Run opens the bundle at path read-only, analyzes it and returns the report.
// Problems inside the bundle become findings or notes; an error means the
// bundle could not be read at all.
func Run(path string, opts Options) (*report.Report, error) {
	if err := CheckSettings(opts.Settings); err != nil {
		return nil, err
	}
	checks, err := SelectChecks(opts.Only, opts.Skip)
	if err != nil {
		return nil, err
	}
	var unpacked func(read, size int64)
	if opts.Progress != nil {
		staged := false
		unpacked = func(read, size int64) {
			if !staged {
				opts.Progress.Stage(progress.StageUnpacking, 0, size)
				staged = true
			}
			opts.Progress.Advance(0, read)
		}
	}
	b, err := bundle.OpenWatched(path, opts.Limits, unpacked)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	m := LoadWith(b, opts)
	rep := Build(m, checks, opts.Settings)
	rep.ToolVersion = opts.ToolVersion
	rep.Bundle = path
	return rep, nil
}

// Build runs checks over m and assembles the report.
func Build(m *model.Model, checks []check.Check, settings map[string]float64) *report.Report {
	rep := &report.Report{Schema: report.Schema, Bundle: m.Bundle}
	for _, s := range m.Servers {
		srv := report.Server{Name: s.Name, PeerID: s.PeerID, Cluster: s.Cluster, Version: s.Version, NameSource: s.NameSource}
		srv.Sources = model.SortedKeys(s.Sources)
		rep.Servers = append(rep.Servers, srv)
	}
	for _, g := range m.Groups {
		rg := report.Group{Name: g.Name, Kind: string(g.Kind), Account: g.Account, Asset: g.Asset}
		for _, h := range g.History {
			rg.History = append(rg.History, report.HistoryEvent{Time: h.Time, Term: h.Term, Index: h.Index, Event: h.Event,
				Peer: h.Peer, Peers: h.Peers, Server: m.Name(h.Server), Source: h.Source})
		}
		for _, v := range g.Views {
			rg.Views = append(rg.Views, m.ReportView(v))
		}
		rep.Groups = append(rep.Groups, rg)
	}
	for _, st := range m.Streams {
		rs := report.Stream{Account: st.Account, AccountName: m.AccountName(st.Account), Name: st.Name, Replicas: st.Replicas, Group: st.Group}
		if st.AssignedTo != nil {
			rs.AssignedTo = m.Names(st.AssignedTo)
			sort.Strings(rs.AssignedTo)
		}
		for _, d := range st.Captured {
			rs.Captured = append(rs.Captured, m.ReportOnDisk(d))
		}
		for _, c := range st.Copies {
			rs.OnDisk = append(rs.OnDisk, report.OnDisk{Server: m.Name(c.Server), FirstSeq: c.FirstSeq, LastSeq: c.LastSeq,
				Messages: c.Messages, Bytes: c.Bytes, Deleted: c.Deleted, Path: c.Path, Source: "blocks", Consumers: c.Consumers, Unreadable: c.Unreadable})
			if c.Encrypted {
				rs.OnDisk[len(rs.OnDisk)-1].Source = report.SourceSealed
			}
		}
		rep.Streams = append(rep.Streams, rs)
	}
	rep.Timeline = m.ReportTimeline()
	findings, outcomes := check.Run(m, checks, defaultSettings(), settings)
	remedy.GuardRemedies(m, findings)
	remedy.GuardServerRemovals(m, findings)
	remedy.GuardPartialBundle(m, findings)
	remedy.ResolveRefs(findings)
	remedy.ResolveServerMoves(findings)
	nameAccounts(m, findings)
	for i := range findings {
		if findings[i].Severity == report.Critical && len(findings[i].TimelineRefs) == 0 {
			findings[i].TimelineRefs = relatedEvents(rep.Timeline, findings[i])
		}
	}
	rep.Findings = findings
	rep.Diagnosis = diagnosis.Diagnose(findings)
	rep.Checks = outcomes
	rep.Coverage = bundleCoverage(m, rep.Streams, outcomes)
	rep.Histories = clientHistories(m, outcomes)
	rep.Notes = append(append([]string(nil), m.Notes...), check.OutcomeNotes(outcomes)...)
	rep.Normalize()
	return rep
}

// Load builds the model from an opened bundle. It never fails: what cannot
// be read becomes a corruption or a note.
func Load(b *bundle.Bundle) *model.Model { return LoadWith(b, Options{}) }

// LoadWith is Load with the timeline options, progress and keys of opts.
func LoadWith(b *bundle.Bundle, opts Options) *model.Model {
	return load.Model(b, load.Options{Timeline: opts.Timeline, Progress: opts.Progress, Keys: opts.Keys, LooseAudit: opts.LooseAudit})
}

// relatedEvents picks the timeline events behind a finding: the meta group's
// elections and membership for meta findings, the stream's own events for
// stream findings, the server's filestore lines for store damage.
func relatedEvents(tl []report.TimelineEvent, f report.Finding) []int {
	var refs []int
	for i, e := range tl {
		match, kind := false, natsfmt.EventKind(e.Kind)
		switch {
		case f.Stream != "":
			match = e.Stream == f.Stream && (f.Account == "" || e.Account == "" || e.Account == f.Account) &&
				(f.Server == "" || e.Server == f.Server || kind == natsfmt.EventStreamLeader)
		case f.Group == natsfmt.MetaGroup:
			match = timeline.MetaKinds[kind] && (e.Group == "" || e.Group == natsfmt.MetaGroup) && e.Source != "varz"
		case f.Group != "":
			match = e.Group == f.Group
		case f.Server != "":
			match = e.Server == f.Server && (kind == natsfmt.EventFilestoreCorrupt || kind == natsfmt.EventIndexRebuilt || kind == natsfmt.EventBlockMissing || kind == natsfmt.EventUncleanStop)
		}
		if match {
			refs = append(refs, i)
		}
	}
	return refs
}

// Checks is the one registered list. README.md's table of finding codes is
// kept in step with it by TestREADMEListsEveryCheck.
var Checks = []check.Check{
	store.CheckStoreCorrupt,
	store.CheckIndexMismatch,
	peers.CheckPeerIDCorrupt,
	peers.CheckPeerUnknown,
	peers.CheckQuorumUnreachable,
	meta.CheckMetaSplit,
	meta.CheckOrphanRisk,
	replicas.CheckReplicaGap,
	replicas.CheckReplicaDivergence,
	replicas.CheckAckedLost,
	peers.CheckUnsafeMembershipChange,
	meta.CheckMetaNoLeader,
	peers.CheckServerRenamed,
	peers.CheckPeerOffline,
	meta.CheckAssetLost,
	store.CheckDurabilityExposure,
	jetstream.CheckJetStreamDisabled,
	jetstream.CheckStreamWriteError,
	store.CheckUncleanStop,
	sources.CheckSourceStalled,
	offline.CheckAssetOffline,
	groups.CheckGroupStalled,
	consumers.CheckConsumerAhead,
	consumers.CheckConsumerMissing,
	consumers.CheckConsumerStuck,
	// natscli's `nats audit analyze` checks, on a gather archive.
	audit.CheckServerUnhealthy,
	audit.CheckVersionsMixed,
	audit.CheckCPUHigh,
	audit.CheckSlowConsumers,
	audit.CheckJetStreamUsageHigh,
	audit.CheckDomainWhitespace,
	audit.CheckAuthNotRequired,
	audit.CheckTLSExpiring,
	audit.CheckMemoryOutlier,
	audit.CheckHAAssetsHigh,
	audit.CheckClusterNameWhitespace,
	audit.CheckMetaPeerOffline,
	audit.CheckMetaLeaderDisagree,
	audit.CheckReplicaLagging,
	audit.CheckSubjectsHigh,
	audit.CheckStreamLimitsNear,
	audit.CheckStreamMonitor,
	audit.CheckConsumerMonitor,
	audit.CheckAccountLimitsNear,
	audit.CheckGatewaysMismatch,
	audit.CheckLeafnodeNameWhitespace,
	// Issue 30: operator mode.
	accounts.CheckAccountUnresolved,
}

// defaultSettings are every registered check's settings by "code.key".
func defaultSettings() map[string]float64 { return check.Defaults(Checks) }
