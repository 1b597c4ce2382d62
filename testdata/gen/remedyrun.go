package main

// `go run . remedies [-versions v…] [-families f…] -out DIR`: for each
// scenario family and version, the family's bundle is made, the analyzer
// (../../cmd/jsforensics) is run on it, and each destructive remedy of its
// JSON report is carried out from its structured steps (save step first,
// then the actions: the requests of its commands, moving files aside,
// starting servers) on a fresh copy of the bundle's stores with real
// servers of that version. The outcome (meta leader, each stream's leader
// and messages before and after, stream folders deleted, log lines) is
// written to DIR/<bundle>/remedy-outcome.json.
//
// `go run . remedies -fixtures NAME,… [-out DIR]` does the same on
// committed bundles (testdata/bundles/NAME, read only) and writes the
// outcome to testdata/bundles/NAME/remedy-outcome.json (or under DIR).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RemedyOutcomes is one bundle's remedy-outcome.json.
type RemedyOutcomes struct {
	Bundle   string          `json:"bundle"`
	Family   string          `json:"family,omitempty"`
	Version  string          `json:"version"`
	Analyzer string          `json:"analyzer"` // the command the report came from
	Outcomes []RemedyOutcome `json:"outcomes"`
}

// RemedyOutcome is one remedy carried out on a copy of the bundle.
type RemedyOutcome struct {
	RemedyID string   `json:"remedy_id"`
	Findings []string `json:"findings"` // code and subject of each finding that prescribed it
	// Steps are the report's steps as carried out, in order: "save: …",
	// "action: …", each followed by what the generator did.
	Steps []string `json:"steps"`
	// Skipped says why the remedy was not carried out ("" when it was).
	Skipped string `json:"skipped,omitempty"`
	// MetaLeader and MetaSize: the meta group after the remedy.
	MetaLeader string `json:"meta_leader"`
	MetaSize   int    `json:"meta_size"`
	// Before are the streams of the bundle's captures (most messages over
	// the servers, the leader); After the same from the servers after the
	// remedy.
	Before map[string]StreamFig `json:"before"`
	After  map[string]StreamFig `json:"after"`
	// FoldersBefore/After: <acc>/<stream> folders of each started server's
	// store before its first start and after the last stop; Deleted those
	// gone.
	FoldersBefore map[string][]string `json:"folders_before"`
	FoldersAfter  map[string][]string `json:"folders_after"`
	Deleted       []string            `json:"deleted"`
	LeaderElected bool                `json:"leader_elected"`
	StreamsKept   bool                `json:"streams_kept"`
	MessagesKept  bool                `json:"messages_kept"`
	StreamLeaders bool                `json:"stream_leaders"`
	// ReplicasAfter: per stream, the messages each running server's
	// replica held after the remedy (/jsz of that server).
	ReplicasAfter map[string]map[string]uint64 `json:"replicas_after,omitempty"`
	// Variants: the ways of the remedy the run carried out, for a remedy
	// that has several (stream-quorum-peer-remove: "for a stream group, by
	// stream peer removal"); a run proves only these.
	Variants []string `json:"variants,omitempty"`
	// Verified: what the runner checked of the remedy's promise (its
	// verify step: a meta leader, the streams and their messages kept
	// and led, nothing deleted, the replicas current where the step says
	// so, what the executor checked), each held or not.
	Verified []VerifyCheck `json:"verified,omitempty"`
	// Proven: carried out and every check of Verified held.
	Proven bool     `json:"proven"`
	Why    []string `json:"why,omitempty"` // what kept it from proven, and what was seen beside
	Note   string   `json:"note,omitempty"`
	Log    []string `json:"log"`
	Error  string   `json:"error,omitempty"`
}

// VerifyCheck is one check of a remedy's promise.
type VerifyCheck struct {
	Check string `json:"check"`
	Held  bool   `json:"held"`
}

// promisesCurrent: the remedy's verify step says its replicas end current
// (caught up with the stream leader): the cluster must then settle, every
// replica equal (Cluster.WaitQuiet), and each server a finding names must
// hold its stream's messages. Matches the verify steps of
// stream-quorum-peer-remove ("every replica current"), replica-gap-start
// ("shows SERVER current"), jetstream-disabled ("catches each stream up"),
// store-block-resurrected ("agrees with the others") and
// meta-snapshot-move-aside ("reports its messages on every server").
var promisesCurrentRE = regexp.MustCompile(`\bcurrent\b|catch(es)? (it |each stream )?up|caught up|agrees with the others|messages on every server`)

func promisesCurrent(fs []reportFinding) bool {
	for _, f := range fs {
		for _, s := range f.Steps {
			if s.Kind == "verify" && promisesCurrentRE.MatchString(s.Text) {
				return true
			}
		}
	}
	return false
}

// StreamFig is one stream's figures.
type StreamFig struct {
	Msgs     uint64 `json:"messages"`
	Leader   string `json:"leader"`
	Replicas int    `json:"replicas"`
}

// reportFinding is what the runner reads of a report finding.
type reportFinding struct {
	Code     string `json:"code"`
	Server   string `json:"server"`
	Stream   string `json:"stream"`
	Account  string `json:"account"`
	Group    string `json:"group"`
	Peer     string `json:"peer"`
	RemedyID string `json:"remedy_id"`
	// Ranges: the sequences a store-corrupt finding names.
	Ranges []SeqRange `json:"ranges"`
	Steps  []struct {
		Kind        string   `json:"kind"`
		Text        string   `json:"text"`
		Commands    []string `json:"commands"`
		Destructive bool     `json:"destructive"`
	} `json:"remedy_steps"`
}

func (f reportFinding) subject() string {
	var parts []string
	for _, p := range []string{f.Server, f.Account, f.Stream, f.Group, f.Peer} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return f.Code + " " + strings.Join(parts, " ")
}

func (f reportFinding) destructive() bool {
	for _, s := range f.Steps {
		if s.Destructive {
			return true
		}
	}
	return false
}

// remedyExecutors carry out one catalogue entry on a copy; each starts from
// r prepared (stores copied, nothing started, the save step done).
var remedyExecutors = map[string]func(ctx context.Context, r *remedyRun, fs []reportFinding) error{
	"departed-server-remove":           execServerRemovals,
	"meta-quorum-temporary-servers":    execTemporaryServers,
	"meta-corrupt-id-remove":           execCorruptIDRemove,
	"meta-snapshot-move-aside":         execMetaSnapshotMoveAside,
	"peers-idx-healed-by-snapshot":     execStartAll,
	"store-index-db":                   execStartAll,
	"replica-gap-start":                execStartNamed,
	"stream-quorum-peer-remove":        execStreamPeerRemovals,
	"store-empty-folder":               execEmptyFolderRemove,
	"orphan-stream-copy-out":           execOrphanCopyOut,
	"meta-quorum-rescue":               execMetaRescue,
	"meta-quorum-same-names":           execSameNames,
	"stream-write-error":               execStreamWriteError,
	"divergence-choose-copy":           execDivergenceChooseCopy,
	"membership-replace-one-at-a-time": execMembershipReplace,
	"store-block-lost":                 execBlockLost,
	"store-block-resurrected":          execBlockResurrected,
}

// remedyScaleDown: stream-quorum-peer-remove is carried out its other way,
// the scale-down to R1 and back (-scale-down); remedyOnly: only this remedy
// id is carried out (-remedy).
var (
	remedyScaleDown bool
	remedyOnly      string
)

// remedyNotRun says why a destructive remedy has no executor.
var remedyNotRun = map[string]string{
	"jetstream-disabled": "needs the full volume: carried out by the diskfull scenario itself (want.json expect.remedy)",
}

// remedyFamilies are the families whose reports carry destructive remedies
// the runner can carry out.
var remedyFamilies = []string{"scaledown", "metasnap", "phantom", "emptyfolders", "orphan", "lostquorum", "streamfull", "membership"}

func runRemedies(ctx context.Context, out string, versions, fams, fixtures []string) error {
	jsf, err := buildAnalyzer(ctx)
	if err != nil {
		return err
	}
	defer os.Remove(jsf)
	var errs []error
	if len(fixtures) > 0 {
		for _, fx := range fixtures {
			dir := filepath.Join("..", "bundles", fx)
			if strings.Contains(fx, "/") {
				dir = fx // a bundle made by a family run (DIR/<bundle>)
			}
			dir, dest := fixtureOutcome(dir, fx)
			if out != "" {
				dest = filepath.Join(out, filepath.Base(fx), "remedy-outcome.json")
			}
			if err := remediesOn(ctx, jsf, dir, dest, "", ""); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", fx, err))
			}
			killAll()
		}
		return errors.Join(errs...)
	}
	if out == "" {
		return fmt.Errorf("remedies: -out DIR is required (or -fixtures)")
	}
	for _, fam := range fams {
		mk := families[fam]
		if mk == nil {
			errs = append(errs, fmt.Errorf("no family %q", fam))
			continue
		}
		for _, v := range versions {
			s := mk(v)
			scratch, err := os.MkdirTemp("", "jsf-gen-"+s.Name+"-")
			if err != nil {
				return err
			}
			timeout := s.Timeout
			if timeout == 0 {
				timeout = 10 * time.Minute
			}
			logf("=== remedies %s@%s: %s", fam, v, s.Name)
			err = withDeadline(ctx, timeout, func(ctx context.Context) error { return s.Run(ctx, &Env{Scratch: scratch, Out: out}) })
			killAll()
			os.RemoveAll(scratch)
			if err != nil {
				logf("--- FAIL %s: %v", s.Name, err)
				errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
				continue
			}
			dir := filepath.Join(out, s.Name)
			if err := withDeadline(ctx, 20*time.Minute, func(ctx context.Context) error {
				return remediesOn(ctx, jsf, dir, filepath.Join(dir, "remedy-outcome.json"), fam, v)
			}); err != nil {
				errs = append(errs, fmt.Errorf("%s remedies: %w", s.Name, err))
			}
			killAll()
		}
	}
	return errors.Join(errs...)
}

// buildAnalyzer builds ../../cmd/jsforensics into the cache.
func buildAnalyzer(ctx context.Context) (string, error) {
	bin := filepath.Join(cacheDir(), "bin", "jsforensics-"+strconv.Itoa(os.Getpid()))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/jsforensics")
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/jsforensics: %v\n%s", err, b)
	}
	return bin, nil
}

// remediesOn analyzes dir/bundle, carries out each destructive remedy the
// report holds, and writes the outcomes to dest.
func remediesOn(ctx context.Context, jsf, dir, dest, fam, version string) error {
	want, err := readWant(dir)
	if err != nil {
		return err
	}
	if version == "" {
		version = "v" + want.ServerVersion
	}
	bundle := filepath.Join(dir, "bundle")
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "jsf-gen-remedies-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if _, err := os.Stat(bundle); err != nil {
		// A zipped bundle (emptyfolders-*): unpacked into the scratch
		// folder, the zip left as it is.
		if bundle, err = unzipBundle(filepath.Join(dir, "bundle.zip"), filepath.Join(scratch, "bundle")); err != nil {
			return err
		}
	}
	repPath := filepath.Join(scratch, "report.json")
	cmd := exec.CommandContext(ctx, jsf, "analyze", bundle, "--format", "json", "-o", repPath)
	if b, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 2 {
			return fmt.Errorf("analyze: %v\n%s", err, b)
		}
	}
	var rep struct {
		Findings []reportFinding `json:"findings"`
	}
	rb, err := os.ReadFile(repPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(rb, &rep); err != nil {
		return err
	}
	res := RemedyOutcomes{Bundle: filepath.Base(dir), Family: fam, Version: version[1:],
		Analyzer: "jsforensics analyze " + filepath.Base(dir) + "/bundle --format json", Outcomes: []RemedyOutcome{}}
	byID := map[string][]reportFinding{}
	var ids []string
	for _, f := range rep.Findings {
		if f.RemedyID == "" || !f.destructive() {
			continue
		}
		if byID[f.RemedyID] == nil {
			ids = append(ids, f.RemedyID)
		}
		byID[f.RemedyID] = append(byID[f.RemedyID], f)
	}
	for _, id := range ids {
		if remedyOnly != "" && id != remedyOnly {
			continue
		}
		o := RemedyOutcome{RemedyID: id, Steps: []string{}, Log: []string{}, Deleted: []string{}}
		for _, f := range byID[id] {
			o.Findings = append(o.Findings, f.subject())
		}
		ex := remedyExecutors[id]
		if ex == nil && recordedOutcome(id, want.Expect, &o) {
			res.Outcomes = append(res.Outcomes, o)
			continue
		}
		if ex == nil {
			o.Skipped = "no executor in testdata/gen for this remedy"
			if why := remedyNotRun[id]; why != "" {
				o.Skipped = why
			}
			res.Outcomes = append(res.Outcomes, o)
			continue
		}
		logf("remedy %s on %s (%s)", id, res.Bundle, version)
		r, err := newRemedyRun(ctx, filepath.Join(scratch, id), bundle, version, want, &o)
		if err == nil {
			for _, oid := range ids {
				r.all = append(r.all, byID[oid]...)
			}
			r.jsf, r.bundle, r.findings, r.fs = jsf, bundle, rep.Findings, byID[id]
			r.save(byID[id])
			err = ex(ctx, r, byID[id])
			r.finish(ctx, err)
			for _, f := range r.cleanup {
				f()
			}
		} else {
			o.Error = err.Error()
		}
		killAll()
		logf("remedy %s on %s: proven %v %v %s", id, res.Bundle, o.Proven, o.Why, o.Error)
		res.Outcomes = append(res.Outcomes, o)
	}
	ob, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(dest, append(ob, '\n'), 0o644)
}

// remedyRun is one remedy on one copy.
type remedyRun struct {
	c       *Cluster
	want    Want
	live    []string // servers that answered the bundle's captures
	stopped []string // servers in the bundle that did not
	temps   []string // temporary servers prepared (empty stores)
	saved   string
	started map[string]bool
	out     *RemedyOutcome
	// all are the report's findings with a destructive remedy, for a
	// remedy whose step sends the reader to another one.
	all []reportFinding
	// jsf is the analyzer binary, bundle the bundle's folder (read only).
	jsf, bundle string
	// cleanup runs after finish (a tmpfs an executor mounted).
	cleanup []func()
	// findings: every finding of the report.
	findings []reportFinding
	// standalone: the bundle's servers run without a cluster (no meta group).
	standalone bool
	// checks: what an executor found the remedy did not do (keeps it from
	// proven); afterStop runs once the servers are stopped.
	checks    []string
	afterStop []func()
	// fs: the findings that prescribed the remedy (their verify steps say
	// what finish checks).
	fs []reportFinding
}

// newRemedyRun prepares every server of the bundle (and 3 temporary ones)
// on a copy of its store; nothing is started.
func newRemedyRun(ctx context.Context, dir, bundle, version string, want Want, o *RemedyOutcome) (*remedyRun, error) {
	r := &remedyRun{want: want, out: o, saved: filepath.Join(dir, "saved"), started: map[string]bool{}}
	stores := map[string]string{}
	cluster := ""
	for _, s := range want.Servers {
		r.live = append(r.live, s.Name)
		stores[s.Name] = filepath.Join(bundle, filepath.FromSlash(s.StoreDir))
		cluster = s.Cluster
	}
	for _, s := range want.Stopped {
		r.stopped = append(r.stopped, s.Name)
		stores[s.Name] = filepath.Join(bundle, filepath.FromSlash(s.StoreDir))
	}
	for _, s := range want.Standalone {
		r.live = append(r.live, s.Name)
		stores[s.Name] = filepath.Join(bundle, filepath.FromSlash(s.StoreDir))
		r.standalone = true
	}
	r.temps = []string{"tmp-0", "tmp-1", "tmp-2"}
	names := append(append(append([]string{}, r.live...), r.stopped...), r.temps...)
	c, err := NewCluster(ctx, dir, version, cluster, names)
	if err != nil {
		return nil, err
	}
	r.c = c
	for _, s := range want.Standalone {
		c.Server(s.Name).NoCluster, c.Server(s.Name).Routes = true, nil
	}
	sys := false
	for _, src := range stores {
		if _, err := os.Stat(filepath.Join(src, "SYS", "_js_")); err == nil {
			sys = true
		}
	}
	if sys {
		c.UseSysAndAppAccounts()
	} else {
		for _, s := range c.Servers {
			s.Extra = "authorization { users: [ {user: app, password: app} ] }\naccounts { $SYS { users: [ {user: sys, password: sys} ] } }\nno_auth_user: app"
		}
	}
	o.Before, o.FoldersBefore = map[string]StreamFig{}, map[string][]string{}
	for name, src := range stores {
		s := c.Server(name)
		if err := copyTree(src, s.JSRoot()); err != nil {
			return nil, err
		}
		if o.FoldersBefore[name], err = streamFolders(s.JSRoot()); err != nil {
			return nil, err
		}
	}
	for _, s := range append(append([]WantServer{}, want.Servers...), want.Standalone...) {
		for _, st := range s.Streams {
			k := st.Account + " > " + st.Name
			f := o.Before[k]
			if st.Messages >= f.Msgs {
				f.Msgs = st.Messages
			}
			if st.Leader != "" {
				f.Leader = st.Leader
			}
			f.Replicas = max(f.Replicas, st.Replicas)
			o.Before[k] = f
		}
	}
	return r, nil
}

// save carries out the save steps: every store copied out.
func (r *remedyRun) save(fs []reportFinding) {
	for _, s := range fs[0].Steps {
		if s.Kind == "save" {
			r.out.Steps = append(r.out.Steps, "save: "+s.Text)
		}
	}
	for _, name := range append(append([]string{}, r.live...), r.stopped...) {
		if err := copyTree(r.c.Server(name).JSRoot(), filepath.Join(r.saved, name)); err != nil {
			r.out.Error = err.Error()
		}
	}
	r.out.Steps = append(r.out.Steps, "done: every server's JetStream folder copied out (cp -a) before any action")
}

// action records a report action step and what was done for it.
func (r *remedyRun) action(text, done string) {
	r.out.Steps = append(r.out.Steps, "action: "+text, "done: "+done)
}

// start starts the named servers and waits up to 60 s for a meta leader.
func (r *remedyRun) start(ctx context.Context, names ...string) error {
	for _, n := range names {
		if err := r.c.Server(n).Start(ctx); err != nil {
			return err
		}
		r.started[n] = true
	}
	return waitAnyMetaLeader(ctx, r.c, 60*time.Second)
}

// finish waits for the cluster to settle, reads the outcome, stops the
// servers and compares the stores with the copy's start.
func (r *remedyRun) finish(ctx context.Context, err error) {
	o := r.out
	if err != nil {
		o.Error = err.Error()
	}
	o.After, o.FoldersAfter = map[string]StreamFig{}, map[string][]string{}
	current := promisesCurrent(r.fs)
	var checks []VerifyCheck
	check := func(what string, held bool) { checks = append(checks, VerifyCheck{Check: what, Held: held}) }
	if len(r.c.Running()) > 0 {
		if err == nil {
			qerr := r.c.WaitQuiet(ctx, 60*time.Second)
			if qerr != nil {
				o.Why = append(o.Why, "not quiet: "+qerr.Error())
			}
			if current {
				check("the cluster settled with every replica current (60 s)", qerr == nil)
			}
		}
		for _, s := range r.c.Running() {
			v := metaView(ctx, s)
			if v.RaftzLeaderID != "" && o.MetaLeader == "" {
				o.MetaLeader, o.MetaSize = v.JSZLeader, v.RaftzSize
			}
			var j jszInfo
			if s.GetJSON(ctx, jszCapturePath, &j) != nil {
				continue
			}
			for _, a := range j.Accounts {
				for _, st := range a.Streams {
					k := a.Name + " > " + st.Name
					if o.ReplicasAfter == nil {
						o.ReplicasAfter = map[string]map[string]uint64{}
					}
					if o.ReplicasAfter[k] == nil {
						o.ReplicasAfter[k] = map[string]uint64{}
					}
					o.ReplicasAfter[k][s.Name] = st.State.Msgs
					f := o.After[k]
					f.Msgs = max(f.Msgs, st.State.Msgs)
					if st.Cluster != nil && st.Cluster.Leader != "" {
						f.Leader = st.Cluster.Leader
					}
					if st.Config != nil {
						f.Replicas = max(f.Replicas, st.Config.Replicas)
					}
					o.After[k] = f
				}
			}
		}
		if serr := r.c.Stop(); serr != nil {
			o.Why = append(o.Why, "stop: "+serr.Error())
		}
	}
	for _, f := range r.afterStop {
		f()
	}
	o.Why = append(o.Why, r.checks...)
	var names []string
	for n := range r.started {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := r.c.Server(n)
		after, _ := streamFolders(s.JSRoot())
		o.FoldersAfter[n] = after
		have := map[string]bool{}
		for _, f := range after {
			have[f] = true
		}
		for _, f := range o.FoldersBefore[n] {
			if !have[f] {
				o.Deleted = append(o.Deleted, n+": "+f)
			}
		}
		var lines []string
		all, _ := logLinesSince(s.LogFile, 0, remedyLogRE)
		for _, l := range all {
			if !remedyLogNoise.MatchString(l) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 20 {
			lines = append(lines[:20], fmt.Sprintf("… %d more", len(lines)-20))
		}
		for _, l := range lines {
			o.Log = append(o.Log, n+": "+l)
		}
	}
	o.LeaderElected = o.MetaLeader != "" || r.standalone
	o.StreamsKept, o.MessagesKept, o.StreamLeaders = true, true, true
	var keys []string
	for k := range o.Before {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, a := o.Before[k], o.After[k]
		if _, ok := o.After[k]; !ok {
			o.StreamsKept = false
			o.Why = append(o.Why, k+" gone")
			continue
		}
		if a.Msgs < b.Msgs {
			o.MessagesKept = false
			o.Why = append(o.Why, fmt.Sprintf("%s: %d messages, %d before", k, a.Msgs, b.Msgs))
		}
		if a.Leader == "" && a.Replicas > 1 {
			o.StreamLeaders = false
			o.Why = append(o.Why, k+": no leader")
		}
	}
	if !o.LeaderElected {
		o.Why = append(o.Why, "no meta leader")
	}
	if len(o.Deleted) > 0 {
		o.Why = append(o.Why, "stream folders deleted: "+strings.Join(o.Deleted, ", "))
	}
	check("a meta leader", o.LeaderElected)
	check("every stream kept", o.StreamsKept)
	check("every stream's messages kept", o.MessagesKept)
	check("every replicated stream led", o.StreamLeaders)
	check("no stream folder deleted", len(o.Deleted) == 0)
	if current && err == nil {
		// Each server a finding names holds its stream's messages: the
		// replica it was started or rebuilt for caught up.
		for _, f := range r.fs {
			if f.Server == "" || f.Stream == "" {
				continue
			}
			acc := f.Account
			if acc == "" {
				acc = "$G"
			}
			k := acc + " > " + f.Stream
			have, top := o.ReplicasAfter[k][f.Server], o.After[k].Msgs
			held := top > 0 && have == top
			what := fmt.Sprintf("%s's replica of %s current: %d of %d messages", f.Server, k, have, top)
			check(what, held)
			if !held {
				o.Why = append(o.Why, what)
			}
		}
	}
	for _, c := range r.checks {
		check(c, false)
	}
	o.Verified = checks
	o.Proven = o.Error == "" && o.Skipped == "" && verifiedAll(checks)
}

// verifiedAll: there are checks and every one held.
func verifiedAll(cs []VerifyCheck) bool {
	for _, c := range cs {
		if !c.Held {
			return false
		}
	}
	return len(cs) > 0
}

var remedyLogRE = regexp.MustCompile(`\[(ERR|WRN)\]|(?i)orphan|removing stream|Catchup|Self is new|no space|disabled|peer-remove|Removed peer|Adding peer|JetStream cluster new metadata leader`)

var remedyLogNoise = regexp.MustCompile(`Error trying to connect to route|Router parser ERROR|Plaintext passwords|Using configuration|Store Directory|Error connecting to route`)

// requestRE is a command's `nats request 'SUBJECT' 'BODY'`.
var requestRE = regexp.MustCompile(`nats request '([^']+)' '([^']*)'`)

// request sends a command's request on nc and returns the answer verbatim.
func request(ctx context.Context, nc *nats.Conn, command string) (string, error) {
	m := requestRE.FindStringSubmatch(command)
	if m == nil {
		return "", fmt.Errorf("no request in %q", command)
	}
	var raw json.RawMessage
	if err := apiRequest(ctx, nc, m[1], json.RawMessage(m[2]), &raw); err != nil {
		return "", err
	}
	return string(raw), nil
}

// destructiveActions are the destructive action steps of f.
func destructiveActions(f reportFinding) []int {
	var out []int
	for i, s := range f.Steps {
		if s.Kind == "action" && s.Destructive {
			out = append(out, i)
		}
	}
	return out
}

// execServerRemovals: start the servers that answered the captures, then
// each server removal of the step, one at a time, waiting until the meta
// group is one smaller and led.
func execServerRemovals(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	if err := r.start(ctx, r.live...); err != nil {
		return err
	}
	r.out.Steps = append(r.out.Steps, "done: started "+strings.Join(r.live, ", ")+" (the servers that answered the captures) on the copy")
	return removeEach(ctx, r, fs[0], r.live[0])
}

// removeEach sends every command of f's destructive actions, one at a time,
// each once the meta group is one smaller and led.
func removeEach(ctx context.Context, r *remedyRun, f reportFinding, via string) error {
	nc, err := sysConn(r.c.Server(via))
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, i := range destructiveActions(f) {
		st := f.Steps[i]
		if len(st.Commands) == 0 {
			r.action(st.Text, "nothing to send (no command)")
			continue
		}
		var done []string
		for _, cmd := range st.Commands {
			size := metaView(ctx, r.c.Server(via)).RaftzSize
			answer, err := request(ctx, nc, cmd)
			if err != nil {
				return err
			}
			werr := waitFor(ctx, 30*time.Second, fmt.Sprintf("meta size %d", size-1), func() (bool, error) {
				v := metaView(ctx, r.c.Server(via))
				return v.RaftzSize == size-1 && v.RaftzLeaderID != "", nil
			})
			d := fmt.Sprintf("%s -> %s; meta %s", requestRE.FindString(cmd), answer, metaSize(ctx, r.c.Server(via)))
			if werr != nil {
				d += " (" + werr.Error() + ")"
			}
			done = append(done, d)
		}
		r.action(st.Text, strings.Join(done, "; "))
	}
	return nil
}

var temporaryRE = regexp.MustCompile(`Add (\d+) temporary`)

// execTemporaryServers: start the servers that answered the captures and
// the temporary servers the step asks for, remove each missing peer one at
// a time, then stop the temporary servers and remove them too.
func execTemporaryServers(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	f := fs[0]
	n := 0
	for _, s := range f.Steps {
		if m := temporaryRE.FindStringSubmatch(s.Text); m != nil {
			n, _ = strconv.Atoi(m[1])
			if n > len(r.temps) {
				return fmt.Errorf("%d temporary servers asked, %d prepared", n, len(r.temps))
			}
			// As the step says: the temporary servers started together
			// with the live ones, or added to the live servers once they
			// have run 30 s without a leader (the state the remedy is for).
			together := strings.Contains(s.Text, "together with the temporary")
			d := ""
			for _, name := range r.live {
				if err := r.c.Server(name).Start(ctx); err != nil {
					return err
				}
				r.started[name] = true
			}
			if !together {
				if waitAnyMetaLeader(ctx, r.c, 30*time.Second) == nil {
					return fmt.Errorf("a meta leader without temporary servers: %s", metaSize(ctx, r.c.Server(r.live[0])))
				}
				d = fmt.Sprintf("started %s: no meta leader in 30 s (%s); then ", strings.Join(r.live, ", "), metaSize(ctx, r.c.Server(r.live[0])))
			}
			for _, name := range r.temps[:n] {
				if err := r.c.Server(name).Start(ctx); err != nil {
					return err
				}
				r.started[name] = true
			}
			err := waitAnyMetaLeader(ctx, r.c, 120*time.Second)
			d += fmt.Sprintf("started %d temporary server(s) %s on empty stores; meta %s", n, strings.Join(r.temps[:n], ", "), metaSize(ctx, r.c.Server(r.live[0])))
			if together {
				d = fmt.Sprintf("started %s together with %d temporary server(s) %s on empty stores; meta %s", strings.Join(r.live, ", "), n, strings.Join(r.temps[:n], ", "), metaSize(ctx, r.c.Server(r.live[0])))
			}
			r.action(s.Text, d)
			if err != nil {
				return err
			}
			break
		}
	}
	nc, err := sysConn(r.c.Server(r.live[0]))
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, i := range destructiveActions(f) {
		st := f.Steps[i]
		var done []string
		if len(st.Commands) == 0 && strings.Contains(st.Text, "stop the temporary server") {
			for _, t := range r.temps[:n] {
				size := metaView(ctx, r.c.Server(r.live[0])).RaftzSize
				if err := r.c.Server(t).Stop(); err != nil {
					return err
				}
				answer, err := request(ctx, nc, fmt.Sprintf(`nats request '$JS.API.SERVER.REMOVE' '{"peer_id":%q}'`, nodeID(t)))
				if err != nil {
					return err
				}
				werr := waitFor(ctx, 30*time.Second, fmt.Sprintf("meta size %d", size-1), func() (bool, error) {
					v := metaView(ctx, r.c.Server(r.live[0]))
					return v.RaftzSize == size-1 && v.RaftzLeaderID != "", nil
				})
				d := fmt.Sprintf("stopped %s, removed %s -> %s; meta %s", t, nodeID(t), answer, metaSize(ctx, r.c.Server(r.live[0])))
				if werr != nil {
					d += " (" + werr.Error() + ")"
				}
				done = append(done, d)
			}
			r.action(st.Text, strings.Join(done, "; "))
			continue
		}
		for _, cmd := range st.Commands {
			size := metaView(ctx, r.c.Server(r.live[0])).RaftzSize
			answer, err := request(ctx, nc, cmd)
			if err != nil {
				return err
			}
			werr := waitFor(ctx, 30*time.Second, fmt.Sprintf("meta size %d", size-1), func() (bool, error) {
				v := metaView(ctx, r.c.Server(r.live[0]))
				return v.RaftzSize == size-1 && v.RaftzLeaderID != "", nil
			})
			d := fmt.Sprintf("%s -> %s; meta %s", requestRE.FindString(cmd), answer, metaSize(ctx, r.c.Server(r.live[0])))
			if werr != nil {
				d += " (" + werr.Error() + ")"
			}
			done = append(done, d)
		}
		r.action(st.Text, strings.Join(done, "; "))
	}
	return nil
}

// execMetaSnapshotMoveAside: on every server a finding names, move its
// meta snapshots and WAL out of the store, then start every server.
func execMetaSnapshotMoveAside(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	var moved []string
	for _, f := range fs {
		s := r.c.Server(f.Server)
		if s == nil {
			return fmt.Errorf("finding names server %q, not in the bundle", f.Server)
		}
		meta := metaDir(s.JSRoot())
		if _, err := os.Stat(meta); err != nil {
			meta = filepath.Join(s.JSRoot(), "SYS", "_js_", "_meta_")
		}
		for _, sub := range []string{"snapshots", "msgs"} {
			aside := filepath.Join(r.saved, "aside-"+s.Name)
			if err := os.MkdirAll(aside, 0o755); err != nil {
				return err
			}
			if err := os.Rename(filepath.Join(meta, sub), filepath.Join(aside, sub)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		moved = append(moved, s.Name)
	}
	acts := destructiveActions(fs[0])
	r.action(fs[0].Steps[acts[0]].Text, "moved _meta_/snapshots and _meta_/msgs out of the store of "+strings.Join(moved, ", "))
	// As the step says: the intact servers first, then one damaged server,
	// then each further one once an intact server is meta leader; or all
	// together.
	stagger := len(acts) > 1 && strings.Contains(fs[0].Steps[acts[1]].Text, "one damaged server, and each further")
	if !stagger {
		all := append(append([]string{}, r.live...), r.stopped...)
		err := r.start(ctx, all...)
		if len(acts) > 1 {
			r.action(fs[0].Steps[acts[1]].Text, fmt.Sprintf("started every server together: %s; meta leader %q", strings.Join(all, ", "), r.c.MetaLeader(ctx)))
		}
		if err != nil {
			return err
		}
		return pause(ctx, 40*time.Second)
	}
	var intact []string
	for _, n := range append(append([]string{}, r.live...), r.stopped...) {
		if !slices.Contains(moved, n) {
			intact = append(intact, n)
		}
	}
	var done []string
	for i, n := range append(append([]string{}, intact...), moved...) {
		if i > len(intact) {
			err := waitFor(ctx, 60*time.Second, "an intact meta leader", func() (bool, error) {
				return slices.Contains(intact, r.c.MetaLeader(ctx)), nil
			})
			done = append(done, fmt.Sprintf("meta leader %q", r.c.MetaLeader(ctx)))
			if err != nil {
				r.action(fs[0].Steps[acts[len(acts)-1]].Text, strings.Join(done, ", then "))
				return err
			}
		}
		if err := r.c.Server(n).Start(ctx); err != nil {
			return err
		}
		r.started[n] = true
		done = append(done, "started "+n)
	}
	err := waitAnyMetaLeader(ctx, r.c, 60*time.Second)
	done = append(done, fmt.Sprintf("meta leader %q", r.c.MetaLeader(ctx)))
	if len(acts) > 1 {
		r.action(fs[0].Steps[acts[1]].Text, strings.Join(done, ", then "))
	}
	if err != nil {
		return err
	}
	// Past the orphan check (30 s after meta recovery).
	return pause(ctx, 40*time.Second)
}

// execStartAll: the action is a start: start every server of the bundle.
func execStartAll(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	all := append(append([]string{}, r.live...), r.stopped...)
	err := r.start(ctx, all...)
	for _, i := range destructiveActions(fs[0]) {
		r.action(fs[0].Steps[i].Text, "started every server of the bundle on the copy: "+strings.Join(all, ", "))
	}
	if err != nil {
		return err
	}
	return pause(ctx, 40*time.Second)
}

// execStreamPeerRemovals: start the live servers, then each stream peer
// removal of the first destructive action of every finding naming a stream.
func execStreamPeerRemovals(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	if err := r.start(ctx, r.live...); err != nil {
		return err
	}
	s := r.c.Server(r.live[0])
	nc, err := nats.Connect(fmt.Sprintf("nats://app:app@127.0.0.1:%d", s.ClientPort), nats.Timeout(5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, f := range fs {
		acts := destructiveActions(f)
		if f.Stream == "" || len(acts) == 0 {
			r.out.Steps = append(r.out.Steps, "not carried out for "+f.subject()+": the finding names no stream (its commands name STREAM)")
			continue
		}
		st := f.Steps[acts[0]]
		group := "stream group"
		if strings.HasPrefix(f.Group, "C-") {
			group = "consumer group"
		}
		way := "by stream peer removal"
		if remedyScaleDown {
			way = "by scale-down"
		}
		if v := "for a " + group + ", " + way; !slices.Contains(r.out.Variants, v) {
			r.out.Variants = append(r.out.Variants, v)
		}
		if remedyScaleDown {
			if err := scaleDownAndBack(ctx, r, nc, f, acts); err != nil {
				return err
			}
			continue
		}
		var done []string
		for _, cmd := range st.Commands {
			answer, err := request(ctx, nc, cmd)
			if err != nil {
				return err
			}
			done = append(done, requestRE.FindString(cmd)+" -> "+answer)
			if err := pause(ctx, 5*time.Second); err != nil {
				return err
			}
		}
		r.action(st.Text, strings.Join(done, "; "))
	}
	return pause(ctx, 20*time.Second)
}

// scaleDownAndBack carries out the finding's other destructive action, the
// scale-down ("nats stream edit STREAM --replicas 1", then back to its
// replicas), through the JetStream API of the stream's account.
func scaleDownAndBack(ctx context.Context, r *remedyRun, nc *nats.Conn, f reportFinding, acts []int) error {
	var st *struct {
		Kind        string   `json:"kind"`
		Text        string   `json:"text"`
		Commands    []string `json:"commands"`
		Destructive bool     `json:"destructive"`
	}
	for _, i := range acts {
		for _, c := range f.Steps[i].Commands {
			if strings.Contains(c, "--replicas 1") {
				st = &f.Steps[i]
			}
		}
	}
	if st == nil {
		r.out.Steps = append(r.out.Steps, "not carried out for "+f.subject()+": no scale-down step")
		return nil
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	var done []string
	for _, c := range st.Commands {
		m := regexp.MustCompile(`--replicas (\d+)`).FindStringSubmatch(c)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		s, err := js.Stream(cctx, f.Stream)
		if err != nil {
			cancel()
			done = append(done, fmt.Sprintf("%s: stream info -> %v", c, err))
			break
		}
		cfg := s.CachedInfo().Config
		cfg.Replicas = n
		_, err = js.UpdateStream(cctx, cfg)
		cancel()
		answer := "ok"
		if err != nil {
			answer = err.Error()
		}
		done = append(done, c+" -> "+answer)
		if err != nil {
			break
		}
		if err := pause(ctx, 10*time.Second); err != nil {
			return err
		}
	}
	r.action(st.Text, strings.Join(done, "; "))
	return nil
}

// execEmptyFolderRemove: move each empty folder a finding names aside,
// then start every server.
func execEmptyFolderRemove(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	var moved []string
	for _, f := range fs {
		for _, st := range f.Steps {
			if st.Kind != "save" {
				continue
			}
			m := regexp.MustCompile(`cp -a (\S+) SAVE/`).FindStringSubmatch(st.Text)
			if m == nil {
				continue
			}
			rel := strings.Trim(m[1], "'")
			for _, name := range append(append([]string{}, r.live...), r.stopped...) {
				s := r.c.Server(name)
				for _, w := range append(append([]WantServer{}, r.want.Servers...), wantStoppedAsServers(r.want.Stopped)...) {
					if w.Name != name || !strings.HasPrefix(rel, w.StoreDir+"/") {
						continue
					}
					p := filepath.Join(s.JSRoot(), filepath.FromSlash(strings.TrimPrefix(rel, w.StoreDir+"/")))
					aside := filepath.Join(r.saved, "aside-"+name, strings.ReplaceAll(rel, "/", "_"))
					if err := os.MkdirAll(filepath.Dir(aside), 0o755); err != nil {
						return err
					}
					if err := os.Rename(p, aside); err == nil {
						moved = append(moved, rel)
						// The folder was meant to go: not a deletion.
						// streamFolders names <acc>/streams/<name> "<acc>/<name>".
						gone := filepath.Base(filepath.Dir(filepath.Dir(p))) + "/" + filepath.Base(p)
						var keep []string
						for _, fb := range r.out.FoldersBefore[name] {
							if fb != gone {
								keep = append(keep, fb)
							}
						}
						r.out.FoldersBefore[name] = keep
					}
				}
			}
		}
	}
	all := append(append([]string{}, r.live...), r.stopped...)
	for _, i := range destructiveActions(fs[0]) {
		r.action(fs[0].Steps[i].Text, "with the servers stopped, moved "+strings.Join(moved, ", ")+" out of the store; started every server")
	}
	if err := r.start(ctx, all...); err != nil {
		return err
	}
	return pause(ctx, 20*time.Second)
}

func wantStoppedAsServers(st []WantStopped) []WantServer {
	var out []WantServer
	for _, s := range st {
		out = append(out, WantServer{Name: s.Name, StoreDir: s.StoreDir})
	}
	return out
}

// execStartNamed: the action starts the server the finding names: start
// the servers that answered the captures and it.
func execStartNamed(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	names := append([]string{}, r.live...)
	for _, f := range fs {
		if f.Server != "" && !slices.Contains(names, f.Server) {
			names = append(names, f.Server)
		}
	}
	err := r.start(ctx, names...)
	for _, i := range destructiveActions(fs[0]) {
		r.action(fs[0].Steps[i].Text, "started "+strings.Join(names, ", ")+" on the copy")
	}
	if err != nil {
		return err
	}
	return pause(ctx, 30*time.Second)
}

// recordedOutcome fills o from what the scenario itself recorded when it
// carried the remedy out (want.json expect), for the remedies the runner
// has no executor for: the rename scenario's expect.remedies, the diskfull
// scenario's expect.recovery.
func recordedOutcome(id string, expect any, o *RemedyOutcome) bool {
	b, _ := json.Marshal(expect)
	var x struct {
		Remedies []struct {
			Name       string            `json:"name"`
			Steps      []string          `json:"steps"`
			Recovered  bool              `json:"recovered"`
			DataBack   bool              `json:"data_back"`
			MetaLeader string            `json:"meta_leader"`
			Size       int               `json:"cluster_size"`
			Streams    map[string]string `json:"streams"`
			Error      *string           `json:"error"`
		} `json:"remedies"`
		Recovery *struct {
			CaughtUp bool              `json:"caught_up"`
			Streams  map[string]string `json:"streams"`
			Leader   string            `json:"stream_leader"`
		} `json:"recovery"`
		MetaLeader string `json:"meta_leader"`
		// The domains-recreated scenario's runs (DomRemedy).
		Remedy       *DomRemedy `json:"remedy"`
		SourceRemedy *DomRemedy `json:"source_remedy"`
		Rerun        *struct {
			Version    string            `json:"version"`
			MetaLeader string            `json:"meta_leader"`
			Served     map[string]uint64 `json:"served"`
			Consumers  map[string]string `json:"consumers"`
			Intact     bool              `json:"intact"`
			Why        string            `json:"why"`
			Healthz    map[string]string `json:"healthz"`
		} `json:"rerun"`
	}
	if json.Unmarshal(b, &x) != nil {
		return false
	}
	domRun := map[string]*DomRemedy{"mirror-recreate": x.Remedy, "source-readd": x.SourceRemedy}[id]
	ways := map[string][]string{
		"rename-old-names-beside": {"old-names-beside"},
		"rename-beside-or-revert": {"revert-names", "old-names-beside"},
		"rename-revert":           {"revert-names"},
	}
	switch {
	case domRun != nil:
		for _, st := range domRun.Steps {
			o.Steps = append(o.Steps, "recorded by the domains-recreated scenario (want.json expect): "+st)
		}
		o.Note = domRun.Why
		if !domRun.Proven {
			o.Why = append(o.Why, domRun.Why)
		}
		o.Proven = domRun.Proven
		return true
	case id == "asset-offline-newer-release" && x.Rerun != nil:
		// The downgrade scenario started a copy of the bundle's stores on
		// the release that made them and read every message back.
		o.Steps = append(o.Steps, "recorded by the downgrade scenario (want.json expect.rerun): the servers stopped, a copy of every store started on nats-server "+x.Rerun.Version+", every sequence of every stream read with $JS.API.STREAM.MSG.GET, every consumer's info")
		for st, n := range x.Rerun.Served {
			o.Log = append(o.Log, fmt.Sprintf("%s: %d messages served", st, n))
		}
		for c, fig := range x.Rerun.Consumers {
			o.Log = append(o.Log, c+": "+fig)
		}
		for srv, h := range x.Rerun.Healthz {
			o.Log = append(o.Log, srv+" /healthz: "+h)
		}
		sort.Strings(o.Log)
		if x.Rerun.Why != "" {
			o.Why = append(o.Why, x.Rerun.Why)
		}
		o.MetaLeader = x.Rerun.MetaLeader
		o.LeaderElected, o.StreamsKept, o.MessagesKept, o.StreamLeaders = x.Rerun.MetaLeader != "", x.Rerun.Intact, x.Rerun.Intact, x.Rerun.Intact
	case id == "jetstream-disabled" && x.Recovery != nil:
		o.Steps = append(o.Steps, "recorded by the diskfull scenario (want.json expect.recovery): space freed, the full server restarted, caught up from the stream leader "+x.Recovery.Leader)
		for srv, fig := range x.Recovery.Streams {
			o.Log = append(o.Log, srv+": "+fig)
		}
		sort.Strings(o.Log)
		o.LeaderElected, o.StreamsKept, o.MessagesKept, o.StreamLeaders = true, x.Recovery.CaughtUp, x.Recovery.CaughtUp, x.Recovery.Leader != ""
		o.MetaLeader = x.MetaLeader
		// Its verify step: the server caught each stream up from its leader.
		o.Verified = []VerifyCheck{{Check: "the restarted server caught its streams up from the stream leader", Held: x.Recovery.CaughtUp},
			{Check: "a stream leader", Held: x.Recovery.Leader != ""}}
	case ways[id] != nil && len(x.Remedies) > 0:
		o.LeaderElected = true
		for _, w := range ways[id] {
			for _, rm := range x.Remedies {
				if rm.Name != w {
					continue
				}
				line := fmt.Sprintf("recorded by the rename scenario (want.json expect.remedies %s): meta leader %q, size %d, streams %v, data back %v", rm.Name, rm.MetaLeader, rm.Size, rm.Streams, rm.DataBack)
				if rm.Error != nil {
					line += ", " + *rm.Error
				}
				o.Steps = append(o.Steps, line)
				if rm.Recovered {
					o.MetaLeader, o.MetaSize = rm.MetaLeader, rm.Size
				} else {
					o.Why = append(o.Why, rm.Name+" did not recover the meta group")
				}
			}
		}
		o.LeaderElected = o.MetaLeader != ""
		// The rename emptied the streams before any remedy, and the verify
		// step says so ("streams come back empty, R3 ones without a
		// leader"): its promise is the meta group, led at its size. The
		// stream figures are what the scenario saw, not part of it.
		o.StreamsKept, o.MessagesKept, o.StreamLeaders = true, true, true
		for _, w := range ways[id] {
			for _, rm := range x.Remedies {
				if rm.Name != w {
					continue
				}
				if len(rm.Streams) == 0 {
					o.StreamsKept = false
				}
				for k, fig := range rm.Streams {
					if strings.Contains(fig, "msgs=0 ") || strings.HasPrefix(fig, "msgs=0") {
						o.MessagesKept = false
					}
					if strings.HasSuffix(fig, "leader=") && !strings.Contains(o.Note, k+" has no leader") {
						o.StreamLeaders = false
						o.Note += k + " has no leader; "
					}
				}
			}
		}
		o.Note += "the streams were emptied by the rename, before the remedy (data back: false)"
		o.Verified = []VerifyCheck{{Check: "the meta group led at its size", Held: o.LeaderElected}}
	default:
		return false
	}
	o.Proven = verifiedAll(o.Verified)
	return true
}

// execCorruptIDRemove: "with a meta leader present (see quorum-unreachable
// if there is none)": start the servers that answered the captures; with
// no meta leader in 30 s, start the temporary servers quorum-unreachable's
// remedy asks for; then each removal of the step, one at a time; then the
// temporary servers stopped and removed.
func execCorruptIDRemove(ctx context.Context, r *remedyRun, fs []reportFinding) error {
	for _, n := range r.live {
		if err := r.c.Server(n).Start(ctx); err != nil {
			return err
		}
		r.started[n] = true
	}
	var temps []string
	if waitAnyMetaLeader(ctx, r.c, 30*time.Second) != nil {
		together := false
		for _, f := range r.all {
			if f.RemedyID != "meta-quorum-temporary-servers" {
				continue
			}
			for _, s := range f.Steps {
				if m := temporaryRE.FindStringSubmatch(s.Text); m != nil {
					n, _ := strconv.Atoi(m[1])
					if n > len(r.temps) {
						return fmt.Errorf("%d temporary servers asked, %d prepared", n, len(r.temps))
					}
					temps = r.temps[:n]
					together = strings.Contains(s.Text, "together with the temporary")
				}
			}
			break
		}
		if together {
			// As quorum-unreachable's step says for this version: the live
			// servers stopped and started with the temporary ones.
			for _, n := range r.live {
				if err := r.c.Server(n).Stop(); err != nil {
					return err
				}
			}
			for _, n := range r.live {
				if err := r.c.Server(n).Start(ctx); err != nil {
					return err
				}
			}
			r.out.Steps = append(r.out.Steps, "done: stopped "+strings.Join(r.live, ", ")+" and started them again with the temporary servers, as quorum-unreachable's step says")
		}
		for _, t := range temps {
			if err := r.c.Server(t).Start(ctx); err != nil {
				return err
			}
			r.started[t] = true
		}
		err := waitAnyMetaLeader(ctx, r.c, 90*time.Second)
		r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: no meta leader in 30 s: started %s (quorum-unreachable's temporary servers) on empty stores; meta %s", strings.Join(temps, ", "), metaSize(ctx, r.c.Server(r.live[0]))))
		if err != nil {
			return err
		}
	} else {
		r.out.Steps = append(r.out.Steps, "done: started "+strings.Join(r.live, ", ")+"; meta "+metaSize(ctx, r.c.Server(r.live[0])))
	}
	// Each finding's step holds its own id's removal.
	merged := fs[0]
	merged.Steps = nil
	for _, f := range fs {
		for _, i := range destructiveActions(f) {
			merged.Steps = append(merged.Steps, f.Steps[i])
		}
	}
	if err := removeEach(ctx, r, merged, r.live[0]); err != nil {
		return err
	}
	nc, err := sysConn(r.c.Server(r.live[0]))
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, t := range temps {
		if err := r.c.Server(t).Stop(); err != nil {
			return err
		}
		answer, err := request(ctx, nc, fmt.Sprintf(`nats request '$JS.API.SERVER.REMOVE' '{"peer_id":%q}'`, nodeID(t)))
		if err != nil {
			return err
		}
		r.out.Steps = append(r.out.Steps, fmt.Sprintf("done: stopped the temporary %s and removed it -> %s", t, answer))
	}
	return waitAnyMetaLeader(ctx, r.c, 30*time.Second)
}
