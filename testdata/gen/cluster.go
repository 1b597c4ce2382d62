package main

// Helpers to install, configure, start, stop and kill real nats-server
// processes. Every server binds 127.0.0.1 only, on ports picked at run time.
// Every process is started with Pdeathsig=SIGKILL and registered in a global
// registry so a failed or interrupted generator run never leaves servers
// behind (see killAll in main.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cacheDir is where nats-server binaries (and natscli) are installed.
func cacheDir() string {
	if d := os.Getenv("JSF_GEN_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "jsforensics-gen")
	}
	return filepath.Join(home, ".cache", "jsforensics-gen")
}

// serverBinary returns the path of nats-server <version> (e.g. "v2.15.2"),
// installing it with `go install` into <cache>/bin/<version> if missing.
func serverBinary(ctx context.Context, version string) (string, error) {
	return goInstall(ctx, version, "github.com/nats-io/nats-server/v2@"+version, "nats-server")
}

func goInstall(ctx context.Context, subdir, pkg, exe string) (string, error) {
	dir := filepath.Join(cacheDir(), "bin", subdir)
	bin := filepath.Join(dir, exe)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	logf("installing %s into %s", pkg, dir)
	cmd := exec.CommandContext(ctx, "go", "install", pkg)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Dir = os.TempDir() // outside any module
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// freePort asks the kernel for an unused TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Gateway is one remote gateway entry of a server's config.
type Gateway struct {
	Name string
	URLs []string
}

// Server is one nats-server process and its config. Fields may be changed
// between Stop and Start (config is rewritten at every Start).
type Server struct {
	Name    string
	Cluster string
	Version string
	Bin     string
	Dir     string // private scratch dir of this server
	// StoreDir is the configured store_dir; the JetStream root is StoreDir/jetstream.
	StoreDir string
	LogFile  string
	ConfFile string

	ClientPort, ClusterPort, HTTPPort, GatewayPort int

	Debug bool
	Trace bool
	// NoCluster omits the cluster block (standalone server).
	NoCluster bool
	// StartTimeout bounds Start's wait for /varz (default 30 s).
	StartTimeout time.Duration
	// Routes are the route URLs of this server (default: every other member of its cluster).
	Routes []string
	// GatewayName enables a gateway block when non-empty.
	GatewayName string
	Gateways    []Gateway
	// GatewayExtra is appended inside the gateway block (e.g. "reject_unknown_cluster: true").
	GatewayExtra string
	// Extra is appended verbatim to the config (accounts, limits, ...).
	Extra string
	// JetStreamExtra is appended inside the jetstream block (e.g. "key: ..., cipher: chacha").
	JetStreamExtra string
	// User/Password used by the generator's own client connections (empty: none).
	User, Password string
	// WorkDir is the process's working directory (relative paths of the
	// config, e.g. a resolver's dir, are read from it); empty: the generator's.
	WorkDir string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Cluster is a set of servers of one version.
type Cluster struct {
	Name    string
	Version string
	Servers []*Server
}

// NewCluster prepares (does not start) len(names) servers of the given
// version under root/<name>, with free ports and full-mesh routes.
func NewCluster(ctx context.Context, root, version, clusterName string, names []string) (*Cluster, error) {
	bin, err := serverBinary(ctx, version)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: clusterName, Version: version}
	for _, n := range names {
		s := &Server{Name: n, Cluster: clusterName, Version: version, Bin: bin, Dir: filepath.Join(root, n)}
		s.StoreDir = filepath.Join(s.Dir, "store")
		s.LogFile = filepath.Join(s.Dir, n+".log")
		s.ConfFile = filepath.Join(s.Dir, n+".conf")
		for _, p := range []*int{&s.ClientPort, &s.ClusterPort, &s.HTTPPort, &s.GatewayPort} {
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	for _, s := range c.Servers {
		for _, o := range c.Servers {
			if o != s {
				s.Routes = append(s.Routes, fmt.Sprintf("nats-route://127.0.0.1:%d", o.ClusterPort))
			}
		}
	}
	return c, nil
}

// Server returns the member named name (nil if none).
func (c *Cluster) Server(name string) *Server {
	for _, s := range c.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// JSRoot is the JetStream store root of the server.
func (s *Server) JSRoot() string { return filepath.Join(s.StoreDir, "jetstream") }

// ClientURL is the client URL (with credentials if set).
func (s *Server) ClientURL() string {
	if s.User != "" {
		return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", s.User, s.Password, s.ClientPort)
	}
	return fmt.Sprintf("nats://127.0.0.1:%d", s.ClientPort)
}

// GatewayURL is this server's gateway URL.
func (s *Server) GatewayURL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.GatewayPort) }

func (s *Server) config() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server_name: %q\n", s.Name)
	fmt.Fprintf(&b, "host: 127.0.0.1\nport: %d\nhttp: \"127.0.0.1:%d\"\n", s.ClientPort, s.HTTPPort)
	fmt.Fprintf(&b, "log_file: %q\nlogtime: true\n", s.LogFile)
	if s.Debug {
		b.WriteString("debug: true\n")
	}
	if s.Trace {
		b.WriteString("trace: true\n")
	}
	fmt.Fprintf(&b, "jetstream {\n  store_dir: %q\n  max_memory_store: 256MB\n  max_file_store: 8GB\n", s.StoreDir)
	if s.JetStreamExtra != "" {
		b.WriteString("  " + s.JetStreamExtra + "\n")
	}
	b.WriteString("}\n")
	if !s.NoCluster {
		fmt.Fprintf(&b, "cluster {\n  name: %q\n  listen: \"127.0.0.1:%d\"\n  routes: [\n", s.Cluster, s.ClusterPort)
		for _, r := range s.Routes {
			fmt.Fprintf(&b, "    %q\n", r)
		}
		b.WriteString("  ]\n}\n")
	}
	if s.GatewayName != "" {
		fmt.Fprintf(&b, "gateway {\n  name: %q\n  listen: \"127.0.0.1:%d\"\n", s.GatewayName, s.GatewayPort)
		if s.GatewayExtra != "" {
			b.WriteString("  " + s.GatewayExtra + "\n")
		}
		b.WriteString("  gateways: [\n")
		for _, g := range s.Gateways {
			fmt.Fprintf(&b, "    {name: %q, urls: [", g.Name)
			for i, u := range g.URLs {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", u)
			}
			b.WriteString("]}\n")
		}
		b.WriteString("  ]\n}\n")
	}
	if s.Extra != "" {
		b.WriteString(s.Extra)
		b.WriteString("\n")
	}
	return b.String()
}

// WriteConfig writes the config file (called by Start; also usable before SIGHUP).
func (s *Server) WriteConfig() error {
	return os.WriteFile(s.ConfFile, []byte(s.config()), 0o644)
}

// Start writes the config and starts the process, then waits until the
// monitoring port answers /varz.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s: already running", s.Name)
	}
	if err := s.WriteConfig(); err != nil {
		s.mu.Unlock()
		return err
	}
	out, err := os.OpenFile(filepath.Join(s.Dir, "stdout-stderr.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	cmd := exec.Command(s.Bin, "-c", s.ConfFile)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = s.WorkDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		s.mu.Unlock()
		return err
	}
	s.cmd, s.done, s.err = cmd, make(chan struct{}), nil
	register(s)
	done := s.done
	go func() {
		err := cmd.Wait()
		out.Close()
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(done)
	}()
	s.mu.Unlock()
	logf("started %s (%s) pid %d client %d http %d", s.Name, s.Version, cmd.Process.Pid, s.ClientPort, s.HTTPPort)
	timeout := s.StartTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	return waitFor(ctx, timeout, s.Name+" /varz", func() (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("%s exited during start: %v (see %s)", s.Name, s.err, s.LogFile)
		default:
		}
		_, err := s.Get(ctx, "/varz")
		return err == nil, nil
	})
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// signal sends sig and, if wait>0, waits that long for the exit.
func (s *Server) signal(sig syscall.Signal, wait time.Duration) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(sig)
	if wait <= 0 {
		return nil
	}
	select {
	case <-done:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-done
		s.clear()
		return fmt.Errorf("%s did not exit %v after %v; killed", s.Name, sig, wait)
	}
	s.clear()
	return nil
}

func (s *Server) clear() {
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
	unregister(s)
}

// Stop sends SIGTERM and waits (up to 60 s) for a clean exit.
func (s *Server) Stop() error {
	err := s.signal(syscall.SIGTERM, 60*time.Second)
	if err == nil {
		logf("stopped %s", s.Name)
	}
	return err
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() error {
	err := s.signal(syscall.SIGKILL, 10*time.Second)
	logf("killed %s", s.Name)
	return err
}

// Reload rewrites the config and sends SIGHUP.
func (s *Server) Reload() error {
	if err := s.WriteConfig(); err != nil {
		return err
	}
	return s.signal(syscall.SIGHUP, 0)
}

// Get fetches a monitoring endpoint (path includes the query).
func (s *Server) Get(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://127.0.0.1:%d%s", s.HTTPPort, path), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	// /healthz answers 503 with a JSON body when unhealthy: keep it.
	if resp.StatusCode != 200 && !(resp.StatusCode == 503 && strings.HasPrefix(path, "/healthz")) {
		return b, fmt.Errorf("%s %s: HTTP %d: %s", s.Name, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// GetJSON fetches and decodes a monitoring endpoint.
func (s *Server) GetJSON(ctx context.Context, path string, v any) error {
	b, err := s.Get(ctx, path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Start starts every server (concurrently, so routes form) and waits until a
// meta leader is known to all of them and every peer is current.
func (c *Cluster) Start(ctx context.Context) error {
	if err := c.StartAll(ctx); err != nil {
		return err
	}
	return c.WaitMetaLeader(ctx, 60*time.Second)
}

// StartAll starts every server concurrently and waits for each to answer
// /varz, not for a meta leader.
func (c *Cluster) StartAll(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.Servers))
	for i, s := range c.Servers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Start(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Stop stops every running server at once (SIGTERM to all, then wait),
// so no member sees its peers go one by one and re-elects in between.
func (c *Cluster) Stop() error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.Servers))
	for i, s := range c.Servers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Stop() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Kill kills every running server.
func (c *Cluster) Kill() {
	for _, s := range c.Servers {
		if s.Running() {
			_ = s.Kill()
		}
	}
}

// Running returns the running members.
func (c *Cluster) Running() []*Server {
	var out []*Server
	for _, s := range c.Servers {
		if s.Running() {
			out = append(out, s)
		}
	}
	return out
}

// MetaLeader returns the meta leader's server name as seen by the first
// running member that knows it ("" if none).
func (c *Cluster) MetaLeader(ctx context.Context) string {
	for _, s := range c.Running() {
		var j jszInfo
		if s.GetJSON(ctx, "/jsz", &j) == nil && j.Meta != nil && j.Meta.Leader != "" {
			return j.Meta.Leader
		}
	}
	return ""
}

// WaitMetaLeader waits until every running member reports the same meta
// leader and that leader sees every replica as current.
func (c *Cluster) WaitMetaLeader(ctx context.Context, timeout time.Duration) error {
	return waitFor(ctx, timeout, c.Name+" meta leader", func() (bool, error) {
		leader := ""
		for _, s := range c.Running() {
			var j jszInfo
			if err := s.GetJSON(ctx, "/jsz", &j); err != nil || j.Meta == nil || j.Meta.Leader == "" {
				return false, nil
			}
			if leader == "" {
				leader = j.Meta.Leader
			} else if leader != j.Meta.Leader {
				return false, nil
			}
			if j.Meta.Leader == s.Name {
				for _, r := range j.Meta.Replicas {
					if !r.Current || r.Offline {
						return false, nil
					}
				}
			}
		}
		return leader != "", nil
	})
}

// WaitQuiet waits until the cluster is converged: for every stream and
// consumer, all servers hosting it report identical state, and every raft
// group on every server has applied everything it committed and agrees with
// its peers on the commit index. It requires two identical polls in a row.
func (c *Cluster) WaitQuiet(ctx context.Context, timeout time.Duration) error {
	prev, why := "", ""
	err := waitFor(ctx, timeout, c.Name+" quiet", func() (bool, error) {
		sig, ok := c.convergence(ctx)
		if !ok {
			prev, why = "", sig
			return false, nil
		}
		if sig == prev {
			return true, nil
		}
		prev = sig
		return false, nil
	})
	if err != nil && why != "" {
		err = fmt.Errorf("%w (last: %s)", err, why)
	}
	return err
}

func (c *Cluster) convergence(ctx context.Context) (string, bool) {
	type key struct{ acc, stream, cons string }
	seen := map[key]string{}
	commits := map[string]uint64{}
	var sigParts []string
	for _, s := range c.Running() {
		var j jszInfo
		if err := s.GetJSON(ctx, "/jsz?accounts=1&streams=1&consumers=1&config=1&raft=1", &j); err != nil {
			return err.Error(), false
		}
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				v := fmt.Sprintf("%d/%d/%d/%d/%d", st.State.Msgs, st.State.Bytes, st.State.FirstSeq, st.State.LastSeq, st.State.NumDeleted)
				k := key{a.Key(), st.Name, ""}
				if old, ok := seen[k]; ok && old != v {
					return fmt.Sprintf("%s: stream %v %s vs %s", s.Name, k, v, old), false
				}
				seen[k] = v
				for _, cd := range st.Consumers {
					// num_pending is only computed by the consumer leader
					// (followers report 0), so it is not compared.
					v := fmt.Sprintf("%d/%d/%d", cd.Delivered.Stream, cd.AckFloor.Stream, cd.NumAckPending)
					k := key{a.Key(), st.Name, cd.Name}
					if old, ok := seen[k]; ok && old != v {
						return fmt.Sprintf("%s: consumer %v %s vs %s", s.Name, k, v, old), false
					}
					seen[k] = v
				}
			}
		}
		for _, acc := range raftzAccounts(j) {
			rz, err := s.raftz(ctx, acc)
			if err != nil {
				return err.Error(), false
			}
			for _, groups := range rz {
				for g, rg := range groups {
					if rg.Applied < rg.Committed || rg.Leader == "" || rg.CatchingUp {
						return fmt.Sprintf("%s: group %s applied %d committed %d leader %q catchup %v", s.Name, g, rg.Applied, rg.Committed, rg.Leader, rg.CatchingUp), false
					}
					if old, ok := commits[g]; ok && old != rg.Committed {
						return fmt.Sprintf("%s: group %s committed %d vs %d", s.Name, g, rg.Committed, old), false
					}
					commits[g] = rg.Committed
				}
			}
		}
	}
	for k, v := range seen {
		sigParts = append(sigParts, fmt.Sprintf("%v=%s", k, v))
	}
	for g, v := range commits {
		sigParts = append(sigParts, fmt.Sprintf("%s=%d", g, v))
	}
	sort.Strings(sigParts)
	return strings.Join(sigParts, ";"), true
}

// raftzAccounts lists the accounts whose raft groups /raftz must be asked
// for: "" (the system account, the default) plus every account with streams
// (v2.15.2 keys stream/consumer groups by the asset account).
func raftzAccounts(j jszInfo) []string {
	accs := []string{""}
	for _, a := range j.Accounts {
		if len(a.Streams) > 0 && a.Key() != j.sysAccount() {
			accs = append(accs, a.Key())
		}
	}
	return accs
}

// raftz returns /raftz for acc ("" = default); 404 (no groups) gives nil.
func (s *Server) raftz(ctx context.Context, acc string) (raftzStatus, error) {
	path := "/raftz"
	if acc != "" {
		path += "?acc=" + urlEscape(acc)
	}
	b, err := s.Get(ctx, path)
	if err != nil {
		if strings.Contains(err.Error(), "HTTP 404") {
			return nil, nil
		}
		return nil, err
	}
	var rz raftzStatus
	if err := json.Unmarshal(b, &rz); err != nil {
		return nil, err
	}
	return rz, nil
}

// waitFor polls cond every 250 ms until it returns true, an error, or timeout.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timeout after %v waiting for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// --- process registry (so every exit path kills what was started) ---

var (
	regMu sync.Mutex
	reg   = map[*Server]bool{}
)

func register(s *Server)   { regMu.Lock(); reg[s] = true; regMu.Unlock() }
func unregister(s *Server) { regMu.Lock(); delete(reg, s); regMu.Unlock() }

// killAll SIGKILLs every server still registered (used on failure/interrupt).
func killAll() {
	regMu.Lock()
	var ss []*Server
	for s := range reg {
		ss = append(ss, s)
	}
	regMu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		cmd := s.cmd
		s.mu.Unlock()
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		unregister(s)
	}
}

// sysAndAppAccounts configures a system account SYS (user sys/sys, for
// natscli's server requests and peer-removes) and an account APP with
// JetStream (user app/app) that the workloads use.
const sysAndAppAccounts = `accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  APP: { jetstream: enabled, users: [ {user: app, password: app} ] }
}
system_account: SYS`

// UseSysAndAppAccounts gives every server of c the SYS and APP accounts and
// makes the generator's clients connect as app.
func (c *Cluster) UseSysAndAppAccounts() {
	for _, s := range c.Servers {
		s.Extra = sysAndAppAccounts
		s.User, s.Password = "app", "app"
	}
}
