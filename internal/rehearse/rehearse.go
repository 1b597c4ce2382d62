package rehearse

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// Options say what to run and how long.
type Options struct {
	// ServerBin is the nats-server binary to start.
	ServerBin string
	// Watch is how long the servers run after the last one started
	// (default 45 s: past the orphan check, 30 s after meta recovery).
	Watch time.Duration
	// TempDir is where the scratch folder goes (default os.TempDir()).
	TempDir string
	// Keep leaves the scratch folder (stores, configs, logs) in place.
	Keep bool
	// Key is the JetStream key of stores encrypted at rest.
	Key string
	// Limits bound the reading of the bundle, as for analyze.
	Limits bundle.Limits
	// Progress, when set, hears what the rehearsal is doing.
	Progress func(msg string)
	// Grace is how long a server gets to stop on SIGTERM (default 20 s).
	Grace time.Duration
}

func (o *Options) say(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// DefaultWatch is past the orphan check, which runs 30 s after the meta
// group recovers (nats-server jetstream_cluster.go, checkForOrphans).
const DefaultWatch = 45 * time.Second

// Run rehearses the bundle at path: it analyzes it, copies the stores into
// a sandbox, starts every server there, watches them, stops them and says
// what they did beside what the analysis said they would do. Every server
// it started is stopped before it returns, also when ctx is cancelled.
func Run(ctx context.Context, path string, o Options) (*report.Rehearsal, error) {
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	if o.Grace <= 0 {
		o.Grace = 20 * time.Second
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	version, err := serverVersion(ctx, o.ServerBin)
	if err != nil {
		return nil, err
	}
	b, err := bundle.Open(path, o.Limits)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var keys []string
	if o.Key != "" {
		keys = []string{o.Key}
	}
	o.say("reading the bundle")
	m := analysis.LoadWith(b, analysis.Options{Keys: keys})
	rep := analysis.Build(m, analysis.Checks, nil)
	members, err := plan(b, m)
	if err != nil {
		return nil, err
	}
	need, err := storeBytes(b, members)
	if err != nil {
		return nil, err
	}
	if err := checkSpace(o.TempDir, need); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(o.TempDir, "jsforensics-rehearse-")
	if err != nil {
		return nil, err
	}
	sb := &sandbox{Dir: dir, Members: members}
	out := &report.Rehearsal{Schema: report.RehearsalSchema, Bundle: path, ServerBinary: o.ServerBin, ServerVersion: version,
		Watch: o.Watch.String(), Sandbox: report.RehearsalSandbox{Dir: dir, Kept: o.Keep}}
	defer func() {
		if !o.Keep {
			_ = removeAll(dir)
		}
	}()
	if err := sb.layOut(b); err != nil {
		return nil, err
	}
	o.say("copying %s of store into %s", human(need), dir)
	confs := map[*member]string{}
	for _, mb := range members {
		store := filepath.Join(mb.Dir, "store")
		if err := sb.copyTree(ctx, b, mb.StoreRoot, filepath.Join(store, "jetstream")); err != nil {
			return nil, fmt.Errorf("copying the store of %s: %w", mb.Name, err)
		}
		for src, dst := range mb.Files {
			p := inBundle(b, confDirOf(mb), src)
			if err := sb.copyTree(ctx, b, p, dst); err != nil {
				return nil, fmt.Errorf("copying %s for %s: %w", p, mb.Name, err)
			}
		}
		key := ""
		if o.Key != "" {
			// Given to the server only where it opens the store: a key on
			// a plain store makes the server encrypt the copy on start,
			// which production does not.
			if mb.Cipher = cipherOf(b, mb.StoreRoot, o.Key); mb.Cipher != "" {
				key = o.Key
			} else {
				mb.leave("jetstream.key", "the key given opens no key file of this store (not encrypted, or another key): not given to the server")
			}
		}
		text := mb.config(store, filepath.Join(mb.Dir, "server.log"), key)
		if err := checkLoopback(mb.Name, text); err != nil {
			return nil, err
		}
		conf := filepath.Join(mb.Dir, "server.conf")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		confs[mb] = conf
		for _, l := range mb.Left {
			out.Sandbox.Left = append(out.Sandbox.Left, report.RehearsalLeft{Server: mb.Name, Setting: l.setting, Why: l.why})
		}
	}
	out.Sandbox.Copied, out.Sandbox.Cloned = sb.Copied, sb.Cloned
	out.BundleVersions, out.VersionNote = versions(m, version)
	before := map[*member]map[string]bool{}
	for _, mb := range members {
		before[mb] = folders(filepath.Join(mb.Dir, "store", "jetstream"))
	}

	procs := make([]*process, 0, len(members))
	stopAll := func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() { defer wg.Done(); p.stop(o.Grace) }()
		}
		wg.Wait()
	}
	defer stopAll() // every server started is stopped, whatever happens
	for _, mb := range members {
		p, err := start(o.ServerBin, mb, confs[mb])
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	leader, since, err := watch(ctx, procs, o)
	if err != nil {
		return nil, err
	}
	o.say("reading what each server serves")
	for _, p := range procs {
		out.Streams = append(out.Streams, served(ctx, p)...)
	}
	stopAll()
	for _, p := range procs {
		lines, fatal := p.lines(200)
		s := report.RehearsalServer{Name: p.mb.Name, Version: p.version, Lines: lines}
		if s.Version == "" {
			s.Version = version
		}
		s.Started = p.up && p.stillUpAtEnd
		if fatal != "" {
			s.Fatal = &fatal
		} else if !p.stillUpAtEnd {
			why := "exited before the end of the watch"
			if p.exitErr != nil {
				why += ": " + p.exitErr.Error()
			}
			s.Fatal = &why
		}
		out.Servers = append(out.Servers, s)
		after := folders(filepath.Join(p.mb.Dir, "store", "jetstream"))
		for _, f := range sortedKeys(before[p.mb]) {
			if after[f] {
				continue
			}
			parts := strings.SplitN(f, "/", 3)
			d := report.RehearsalDeleted{Server: p.mb.Name, Account: parts[0], Stream: parts[1]}
			if len(parts) == 3 {
				if !after[parts[0]+"/"+parts[1]] {
					continue // removed with its stream
				}
				d.Consumer = parts[2]
			}
			out.Deleted = append(out.Deleted, d)
		}
	}
	observed := false
	for _, s := range out.Servers {
		observed = observed || s.Started || s.Fatal != nil && (strings.Contains(*s.Fatal, "[FTL]") || strings.HasPrefix(*s.Fatal, "panic:")) || len(s.Lines) > 0
	}
	if !observed {
		return nil, fmt.Errorf("no server of the sandbox answered its monitoring port or logged a line: nothing could be observed (run with --keep and read the servers' stdout-stderr.txt in the sandbox)")
	}
	if leader != "" {
		out.MetaLeader = &leader
	}
	for i := range out.Streams {
		out.Streams[i].AccountName = accountName(m, out.Streams[i].Account)
	}
	for i := range out.Deleted {
		out.Deleted[i].AccountName = accountName(m, out.Deleted[i].Account)
	}
	out.Statements = statements(rep, out, time.Since(since), !since.IsZero())
	return out, nil
}

func confDirOf(mb *member) string {
	if mb.Conf == nil {
		return "."
	}
	return filepath.ToSlash(filepath.Dir(mb.Conf.Path))
}

// watch runs the servers for o.Watch, polling each every 2 s; it returns
// the meta leader the running servers agree on at the end, and since when
// a meta leader has been seen (zero when never).
func watch(ctx context.Context, procs []*process, o Options) (string, time.Time, error) {
	deadline := time.Now().Add(o.Watch)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	leader := ""
	var since time.Time
	for {
		leaders := map[string]int{}
		up := 0
		for _, p := range procs {
			if l := p.poll(ctx); l != "" {
				leaders[l]++
			}
			if p.running() && p.up {
				up++
			}
		}
		leader = ""
		for l, n := range leaders {
			if n*2 > up || len(leaders) == 1 {
				leader = l
			}
		}
		if leader != "" && since.IsZero() {
			since = time.Now()
		}
		left := time.Until(deadline).Round(time.Second)
		shown := leader
		if shown == "" {
			shown = "none"
		}
		o.say("%d of %d servers up, meta leader %s, %s left", up, len(procs), shown, left)
		if left <= 0 {
			for _, p := range procs {
				p.stillUpAtEnd = p.running()
			}
			return leader, since, nil
		}
		select {
		case <-ctx.Done():
			return "", since, fmt.Errorf("rehearsal stopped: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// served lists the streams a server serves, with their state.
func served(ctx context.Context, p *process) []report.RehearsalStream {
	if !p.running() {
		return nil
	}
	var j jsz
	if err := p.get(ctx, "/jsz?accounts=true&streams=true", &j); err != nil {
		return nil
	}
	var out []report.RehearsalStream
	for _, a := range j.Accounts {
		acc := a.Name
		if acc == "" {
			acc = a.ID
		}
		for _, s := range a.Streams {
			rs := report.RehearsalStream{Server: p.mb.Name, Account: acc, Name: s.Name, Messages: s.State.Msgs, FirstSeq: s.State.FirstSeq, LastSeq: s.State.LastSeq}
			rs.Leader = s.Cluster != nil && s.Cluster.Leader == p.mb.Name
			out = append(out, rs)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// versions lists the bundle's releases and says what running another
// changes.
func versions(m *model.Model, running string) ([]string, string) {
	seen := map[string]bool{}
	var vs []string
	for _, s := range m.Servers {
		if s.Version != "" && !seen[s.Version] {
			seen[s.Version] = true
			vs = append(vs, s.Version)
		}
	}
	sort.Strings(vs)
	if len(vs) == 0 {
		return vs, "the bundle does not show which release its servers ran: what the rehearsal shows is what " + running + " does"
	}
	for _, v := range vs {
		if releaseLine(v) != releaseLine(running) {
			return vs, fmt.Sprintf("the bundle's servers ran %s and this rehearsal runs %s: what a server does on start differs by release line (a corrupt meta snapshot is dropped by 2.12 and older and refused by 2.14+; orphan cleanup, peer re-adds and catch-up differ too), so the report's statements for %s may not apply", strings.Join(vs, ", "), running, strings.Join(vs, ", "))
		}
	}
	return vs, ""
}

// accountName is the JWT name of an account of operator mode, "" when the
// bundle does not give one.
func accountName(m *model.Model, acc string) string {
	if a := m.Accounts[acc]; a != nil {
		return a.Name
	}
	return ""
}
