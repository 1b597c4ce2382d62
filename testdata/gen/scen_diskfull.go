package main

// Issue 18: a server whose store filesystem fills. Three servers; one's
// store_dir is on a small tmpfs. An R3 stream is published into until that
// server cannot write (ENOSPC) and disables JetStream; publishing goes on,
// so its copy falls behind while the other two carry on. Every server is
// captured right after the disable and again at the end; then all stop
// gracefully and the bundle is that state. Expect records what the real
// server logged and reported, and what a restart on a copy with free space
// did (what catches up, from where).

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func diskFullScenarios() []Scenario {
	var out []Scenario
	// On 2.15.3 the full server leads the meta group when it fills (it
	// hands leadership over as it disables JetStream); on 2.12.15 another
	// server leads it.
	for _, r := range []struct {
		v        string
		metaFull bool
	}{{"v2.11.17", false}, {"v2.12.15", false}, {"v2.15.3", true}} {
		out = append(out, Scenario{Name: "diskfull-" + r.v, Timeout: 8 * time.Minute,
			Doc: "issue 18: 3 x " + r.v + ", one store on a small tmpfs fills and disables JetStream; expect = what the server logged and reported, and a restart with space",
			Run: func(ctx context.Context, env *Env) error { return diskFull(ctx, env, r.v, r.metaFull) }})
	}
	return out
}

const (
	diskFullStream = "FILL"
	// diskFullSize is the tmpfs holding the full server's store_dir: small,
	// so the bundle stays small. The config's max_file_store (8GB) is far
	// above it, as on a server whose volume is smaller than its limit.
	diskFullSize = "256k"
	// diskFullMaxBytes bounds the stream (discard old), so the servers with
	// space keep a small store too.
	diskFullMaxBytes = 16 << 10
	diskFullMsgSize  = 64
	// diskFullAfter messages are published after the disable.
	diskFullAfter = 150
)

// diskFullLogPattern picks the lines about writes, space, resources and
// JetStream being shut down, and the catch-up at the restart.
var diskFullLogPattern = regexp.MustCompile(`(?i)space|write error|resource|DISABLED|JetStream Shutdown|Initiating JetStream|meta leader transfer|not enabled|catchup|catch up|index|rebuil|truncat|lost|reset|permission`)

// DiskFullExpect is want.json's expect for diskfull-*.
type DiskFullExpect struct {
	FullServer string `json:"full_server"`
	Tmpfs      string `json:"tmpfs"` // mount options of the full server's store volume
	// MaxFileStore is the configured max_file_store of every server.
	MaxFileStore string `json:"max_file_store"`
	Account      string `json:"account"`
	Stream       string `json:"stream"`
	StreamGroup  string `json:"stream_group"`
	StreamLeader string `json:"stream_leader"`
	MetaLeader   string `json:"meta_leader"`
	// PublishedBeforeDisable: acknowledged publishes until the full server's
	// /jsz first said disabled; PublishedAfter: acknowledged after it.
	PublishedBeforeDisable int `json:"published_before_disable"`
	PublishedAfter         int `json:"published_after"`
	// DisabledSeen is when the generator first saw /jsz disabled: true.
	DisabledSeen time.Time `json:"disabled_seen"`
	// LogLines: per server, every line matching LogPattern (the full
	// server's cause and shutdown; the others' should have none of those).
	LogPattern string              `json:"log_pattern"`
	LogLines   map[string][]string `json:"log_lines"`
	// During is every server's status right after the disable, Final at the
	// bundle's captures.
	During map[string]DiskFullStatus `json:"during"`
	Final  map[string]DiskFullStatus `json:"final"`
	// ZeroByteFiles: the full server's store files of 0 bytes after the
	// graceful stop (paths inside the JetStream root).
	ZeroByteFiles []string `json:"zero_byte_files"`
	StoreBytes    int64    `json:"store_bytes"` // the full store's size after the stop
	// Recovery: the three stores copied to disks with space and restarted.
	Recovery DiskFullRecovery `json:"recovery"`
	// Reload: the stores copied again, the full server's onto a tmpfs of the
	// same size, restarted; then that volume grown and the server's config
	// reloaded (SIGHUP), without a restart.
	Reload DiskFullReload `json:"reload"`
}

// DiskFullReload is what a start without space, then a grown volume and a
// config reload (or a start, when the first start exited), did.
type DiskFullReload struct {
	// Exited: the start on the still-full volume ended the process
	// (ExitLine is its last log line). DisabledAgain: it ran, then disabled
	// JetStream again (its /jsz), there or after Tries.
	Exited        bool     `json:"exited"`
	ExitLine      string   `json:"exit_line,omitempty"`
	DisabledAgain bool     `json:"disabled_again"`
	StartLines    []string `json:"start_lines"` // its lines of that start matching LogPattern
	// Tries: then the volume grown a little at a time and the server
	// started, until it runs: what each size did.
	Tries   []string `json:"tries"`
	GrownTo string   `json:"grown_to"` // the tmpfs size after the last remount
	// Then: "reload" (SIGHUP to the running server) or "start".
	Then string `json:"then"`
	// Reenabled: afterwards its /jsz said JetStream runs; CaughtUp: every
	// copy equal; Took from the SIGHUP or start until quiet.
	Reenabled  bool              `json:"reenabled"`
	CaughtUp   bool              `json:"caught_up"`
	Took       time.Duration     `json:"took_ns"`
	Streams    map[string]string `json:"streams"`
	AfterLines []string          `json:"after_lines"` // its lines after the SIGHUP or start matching LogPattern, "Reloaded" or a restore
	Health     string            `json:"health"`      // its /healthz at the end
}

// DiskFullStatus is what one server's /jsz, /healthz and /varz said.
type DiskFullStatus struct {
	JszDisabled     bool   `json:"jsz_disabled"`
	HealthzStatus   string `json:"healthz_status"`
	HealthzCode     int    `json:"healthz_status_code"`
	HealthzError    string `json:"healthz_error"`
	JszMaxStorage   int64  `json:"jsz_max_storage"`
	JszStorage      uint64 `json:"jsz_storage"`
	JszReserved     uint64 `json:"jsz_reserved_storage"`
	VarzHasJS       bool   `json:"varz_has_jetstream_config"`
	VarzMaxStorage  int64  `json:"varz_max_storage"`
	VarzStorage     uint64 `json:"varz_storage"`
	RaftzAnswered   bool   `json:"raftz_answered"`
	RaftzError      string `json:"raftz_error,omitempty"`
	StreamState     string `json:"stream_state"` // "" when /jsz lists no stream
	StreamLeaderSay string `json:"stream_leader"`
}

// DiskFullRecovery is what the restart on copies with free space did.
type DiskFullRecovery struct {
	// CaughtUp: every server reports the same stream state as the leader.
	CaughtUp bool              `json:"caught_up"`
	Took     time.Duration     `json:"took_ns"` // from the start until quiet
	Streams  map[string]string `json:"streams"`
	Health   map[string]string `json:"health"`
	Leader   string            `json:"stream_leader"`
	// LogLines: the full server's lines of the restart matching LogPattern.
	LogLines []string `json:"log_lines"`
	// StreamLines: its lines of the restart naming the stream, but for the
	// debug lines "Apply stream entries … skipping message with sequence N",
	// one per WAL entry the store already held: counted in SkippedApply.
	StreamLines  []string `json:"stream_lines"`
	SkippedApply int      `json:"skipped_apply"`
}

type diskFullVarz struct {
	JetStream struct {
		Config *struct {
			MaxStorage int64 `json:"max_storage"`
		} `json:"config"`
		Stats *struct {
			Storage uint64 `json:"storage"`
		} `json:"stats"`
	} `json:"jetstream"`
}

type diskFullJsz struct {
	Disabled bool `json:"disabled"`
	Config   struct {
		MaxStorage int64 `json:"max_storage"`
	} `json:"config"`
	Storage         uint64 `json:"storage"`
	ReservedStorage uint64 `json:"reserved_storage"`
}

type diskFullHealthz struct {
	Status     string `json:"status"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
}

func mountTmpfs(dir, size string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mount tmpfs on %s: %v: %s", dir, err, out)
	}
	return nil
}

func unmount(dir string) {
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		logf("umount %s: %v: %s", dir, err, out)
	}
}

// captureAny is captureServer for a server whose JetStream may be off: its
// /raftz then answers 404 (no raft nodes), which is kept out of the bundle.
func captureAny(ctx context.Context, s *Server) (*Capture, error) {
	if c, err := captureServer(ctx, s); err == nil {
		return c, nil
	}
	c := &Capture{Server: s.Name, Files: map[string][]byte{}}
	for _, e := range []struct{ name, path string }{{"varz", "/varz"}, {"jsz", jszCapturePath}, {"healthz", "/healthz"}} {
		b, err := s.Get(ctx, e.path)
		if err != nil {
			return nil, err
		}
		c.Files[e.name] = b
	}
	return c, nil
}

func diskFullStatus(ctx context.Context, s *Server, c *Capture) (DiskFullStatus, error) {
	var st DiskFullStatus
	var j diskFullJsz
	var h diskFullHealthz
	var v diskFullVarz
	if err := jsonUnmarshal(c.Files["jsz"], &j); err != nil {
		return st, err
	}
	if err := jsonUnmarshal(c.Files["healthz"], &h); err != nil {
		return st, err
	}
	if err := jsonUnmarshal(c.Files["varz"], &v); err != nil {
		return st, err
	}
	st.JszDisabled, st.JszMaxStorage, st.JszStorage, st.JszReserved = j.Disabled, j.Config.MaxStorage, j.Storage, j.ReservedStorage
	st.HealthzStatus, st.HealthzCode, st.HealthzError = h.Status, h.StatusCode, h.Error
	if v.JetStream.Config != nil {
		st.VarzHasJS, st.VarzMaxStorage = true, v.JetStream.Config.MaxStorage
	}
	if v.JetStream.Stats != nil {
		st.VarzStorage = v.JetStream.Stats.Storage
	}
	if _, ok := c.Files["raftz"]; ok {
		st.RaftzAnswered = true
	} else if _, err := s.Get(ctx, "/raftz"); err != nil {
		st.RaftzError = err.Error()
	}
	var full jszInfo
	if err := jsonUnmarshal(c.Files["jsz"], &full); err != nil {
		return st, err
	}
	if sd, ok := findStream(full, diskFullStream); ok {
		st.StreamState = fmt.Sprintf("msgs=%d bytes=%d first=%d last=%d", sd.State.Msgs, sd.State.Bytes, sd.State.FirstSeq, sd.State.LastSeq)
		if sd.Cluster != nil {
			st.StreamLeaderSay = sd.Cluster.Leader
		}
	}
	return st, nil
}

// diskFull runs the scenario on version; metaFull: the full server leads
// the meta group when it fills (else another server does).
func diskFull(ctx context.Context, env *Env, version string, metaFull bool) error {
	names := []string{"df-0", "df-1", "df-2"}
	c, err := NewCluster(ctx, env.Scratch, version, "diskfull", names)
	if err != nil {
		return err
	}
	full := c.Servers[2]
	// The store volume: a tmpfs holding only the store.
	vol := filepath.Join(full.Dir, "vol")
	if err := mountTmpfs(vol, diskFullSize); err != nil {
		return err
	}
	defer unmount(vol)
	defer c.Kill()
	full.StoreDir = filepath.Join(vol, "store")
	c.UseSysAndAppAccounts()
	x := DiskFullExpect{FullServer: full.Name, Tmpfs: "size=" + diskFullSize, MaxFileStore: "8GB", Account: "APP", Stream: diskFullStream,
		LogPattern: diskFullLogPattern.String(), LogLines: map[string][]string{}, During: map[string]DiskFullStatus{}, Final: map[string]DiskFullStatus{}}
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers[0], c.Servers[1])
	if err != nil {
		return err
	}
	defer nc.Close()
	err = retry(ctx, "create "+diskFullStream, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: diskFullStream, Subjects: []string{"fill.>"}, Replicas: 3,
			Storage: jetstream.FileStorage, MaxBytes: diskFullMaxBytes, Discard: jetstream.DiscardOld})
		return err
	})
	if err != nil {
		return err
	}
	// The full server is a follower: its writes fail, the leader's do not.
	leader := func() string {
		var si struct {
			Cluster struct {
				Leader    string `json:"leader"`
				RaftGroup string `json:"raft_group"`
			} `json:"cluster"`
		}
		if apiRequest(ctx, nc, "$JS.API.STREAM.INFO."+diskFullStream, nil, &si) != nil {
			return ""
		}
		x.StreamGroup = si.Cluster.RaftGroup
		return si.Cluster.Leader
	}
	err = waitFor(ctx, 30*time.Second, diskFullStream+" led by a server with space", func() (bool, error) {
		switch l := leader(); l {
		case "":
			return false, nil
		case full.Name:
			var sd json.RawMessage
			_ = apiRequest(ctx, nc, "$JS.API.STREAM.LEADER.STEPDOWN."+diskFullStream, json.RawMessage(`{"placement":{"preferred":"df-0"}}`), &sd)
			time.Sleep(2 * time.Second)
			return false, nil
		default:
			x.StreamLeader = l
			return true, nil
		}
	})
	if err != nil {
		return err
	}
	want := func(l string) bool { return l != "" && (l == full.Name) == metaFull }
	err = waitFor(ctx, 30*time.Second, "meta leader placed", func() (bool, error) {
		if l := c.MetaLeader(ctx); want(l) {
			x.MetaLeader = l
			return true, nil
		}
		preferred := full.Name
		if !metaFull {
			preferred = c.Servers[0].Name
		}
		sc, err := sysConn(c.Servers[0])
		if err != nil {
			return false, err
		}
		defer sc.Close()
		var sd json.RawMessage
		_ = apiRequest(ctx, sc, "$JS.API.META.LEADER.STEPDOWN", json.RawMessage(`{"placement":{"preferred":"`+preferred+`"}}`), &sd)
		time.Sleep(2 * time.Second)
		return false, nil
	})
	if err != nil {
		return err
	}
	logf("%s: stream leader %s, meta leader %s, full server %s", version, x.StreamLeader, x.MetaLeader, full.Name)

	disabled := func() bool {
		var j diskFullJsz
		return full.GetJSON(ctx, "/jsz", &j) == nil && j.Disabled
	}
	n := 0
	pub := func() error {
		n++
		_, err := publish(ctx, js, fmt.Sprintf("fill.%d", n%8), payload("fill", n, diskFullMsgSize), nil)
		return err
	}
	for !disabled() {
		for range 25 {
			if err := pub(); err != nil {
				return err
			}
		}
		if n > 40000 {
			return fmt.Errorf("%s still enabled after %d messages", full.Name, n)
		}
	}
	x.DisabledSeen = time.Now().UTC()
	x.PublishedBeforeDisable = n
	logf("%s: %s disabled after %d messages", version, full.Name, n)
	for _, s := range c.Servers {
		cp, err := captureAny(ctx, s)
		if err != nil {
			return fmt.Errorf("capture %s during: %w", s.Name, err)
		}
		if x.During[s.Name], err = diskFullStatus(ctx, s, cp); err != nil {
			return err
		}
	}
	for range diskFullAfter {
		if err := pub(); err != nil {
			return err
		}
	}
	x.PublishedAfter = n - x.PublishedBeforeDisable
	live := &Cluster{Name: c.Name, Version: c.Version, Servers: c.Servers[:2]}
	if err := live.WaitQuiet(ctx, 60*time.Second); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	caps := map[string]*Capture{}
	for _, s := range c.Servers {
		if caps[s.Name], err = captureAny(ctx, s); err != nil {
			return fmt.Errorf("capture %s: %w", s.Name, err)
		}
		if x.Final[s.Name], err = diskFullStatus(ctx, s, caps[s.Name]); err != nil {
			return err
		}
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		lines, err := linesMatching(s.LogFile, 0, diskFullLogPattern)
		if err != nil {
			return err
		}
		x.LogLines[s.Name] = lines
	}
	err = filepath.WalkDir(full.JSRoot(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		x.StoreBytes += fi.Size()
		if fi.Size() == 0 {
			rel, _ := filepath.Rel(full.JSRoot(), p)
			x.ZeroByteFiles = append(x.ZeroByteFiles, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(x.ZeroByteFiles)
	if err := diskFullRecover(ctx, env, c, &x); err != nil {
		return err
	}
	if err := diskFullReload(ctx, env, c, &x); err != nil {
		return err
	}
	logf("%s: zero-byte files %v; recovery caught up %v in %v", version, x.ZeroByteFiles, x.Recovery.CaughtUp, x.Recovery.Took)
	b := &Bundle{Name: "diskfull-" + version, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// diskFullRecover starts the three stores, copied to disks with space (the
// full server's logs appended to a copy of its log), and records what the
// full server logs and whether its copy catches up.
func diskFullRecover(ctx context.Context, env *Env, c *Cluster, x *DiskFullExpect) error {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "recover"), c.Version, c.Name, names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		src := c.Servers[i]
		s.Extra, s.User, s.Password = src.Extra, src.User, src.Password
		if err := copyTree(src.JSRoot(), s.JSRoot()); err != nil {
			return err
		}
		if err := copyFile(c.Servers[i].LogFile, s.LogFile); err != nil {
			return err
		}
	}
	full := r.Server(x.FullServer)
	full.Debug = true // the catch-up is logged at debug level
	fi, err := os.Stat(full.LogFile)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := r.Start(ctx); err != nil {
		return err
	}
	x.Recovery = DiskFullRecovery{Streams: map[string]string{}, Health: map[string]string{}}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	x.Recovery.Took = time.Since(start).Round(time.Millisecond)
	states := map[string]bool{}
	for _, s := range r.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			return err
		}
		if sd, ok := findStream(j, diskFullStream); ok {
			st := fmt.Sprintf("msgs=%d bytes=%d first=%d last=%d", sd.State.Msgs, sd.State.Bytes, sd.State.FirstSeq, sd.State.LastSeq)
			x.Recovery.Streams[s.Name] = st
			states[st] = true
			if sd.Cluster != nil && sd.Cluster.Leader != "" {
				x.Recovery.Leader = sd.Cluster.Leader
			}
		}
		var h diskFullHealthz
		b, err := s.Get(ctx, "/healthz")
		if err != nil {
			return err
		}
		if err := jsonUnmarshal(b, &h); err != nil {
			return err
		}
		x.Recovery.Health[s.Name] = strings.TrimSpace(h.Status + " " + h.Error)
	}
	x.Recovery.CaughtUp = len(states) == 1 && len(x.Recovery.Streams) == len(r.Servers)
	if err := r.Stop(); err != nil {
		return err
	}
	if x.Recovery.LogLines, err = linesMatching(full.LogFile, fi.Size(), diskFullLogPattern); err != nil {
		return err
	}
	lines, err := linesMatching(full.LogFile, fi.Size(), regexp.MustCompile(regexp.QuoteMeta(diskFullStream)))
	for _, l := range lines {
		if strings.Contains(l, "skipping message with sequence") {
			x.Recovery.SkippedApply++
			continue
		}
		x.Recovery.StreamLines = append(x.Recovery.StreamLines, l)
	}
	return err
}

// linesMatching returns the lines of file from byte offset on that match re.
func linesMatching(file string, offset int64, re *regexp.Regexp) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	out := []string{}
	for _, l := range strings.Split(string(b[offset:]), "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// diskFullGrown is the full server's volume size after the remount;
// diskFullMargins the sizes tried before it, a little above diskFullSize.
const diskFullGrown = "4m"

var diskFullMargins = []string{"264k", "272k", "288k", "320k"}

// diskFullReload restarts copies of the stores with the full server's on a
// tmpfs as small as before (so still full), records whether it disables
// JetStream again, then grows that tmpfs (mount -o remount, as a volume
// resize) and reloads the server's config (SIGHUP: reload.go restarts a
// JetStream that is configured but off) and records what follows.
func diskFullReload(ctx context.Context, env *Env, c *Cluster, x *DiskFullExpect) error {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "reload"), c.Version, c.Name, names)
	if err != nil {
		return err
	}
	full := r.Server(x.FullServer)
	vol := filepath.Join(full.Dir, "vol")
	if err := mountTmpfs(vol, diskFullSize); err != nil {
		return err
	}
	defer unmount(vol)
	defer r.Kill()
	full.StoreDir = filepath.Join(vol, "store")
	for i, s := range r.Servers {
		src := c.Servers[i]
		s.Extra, s.User, s.Password = src.Extra, src.User, src.Password
		if err := copyTree(src.JSRoot(), s.JSRoot()); err != nil {
			return err
		}
	}
	x.Reload = DiskFullReload{Streams: map[string]string{}}
	others := &Cluster{Name: r.Name, Version: r.Version, Servers: r.Servers[:2]}
	if err := others.StartAll(ctx); err != nil {
		return err
	}
	if err := full.Start(ctx); err != nil {
		if full.Running() {
			return err
		}
		x.Reload.Exited = true
	}
	off := func() bool {
		var j diskFullJsz
		return full.GetJSON(ctx, "/jsz", &j) == nil && j.Disabled
	}
	if !x.Reload.Exited {
		_ = waitFor(ctx, 30*time.Second, full.Name+" disabled again", func() (bool, error) { return off() || !full.Running(), nil })
		x.Reload.DisabledAgain = off()
		x.Reload.Exited = !full.Running()
	}
	var err2 error
	if x.Reload.StartLines, err2 = linesMatching(full.LogFile, 0, diskFullLogPattern); err2 != nil {
		return err2
	}
	if x.Reload.Exited {
		all, err := linesMatching(full.LogFile, 0, regexp.MustCompile(`.`))
		if err != nil {
			return err
		}
		if len(all) > 0 {
			x.Reload.ExitLine = all[len(all)-1]
		}
		full.clear()
	}
	if _, err := os.Stat(full.LogFile); err != nil {
		return err
	}
	remount := func(size string) error {
		if out, err := exec.Command("mount", "-o", "remount,size="+size, vol).CombinedOutput(); err != nil {
			return fmt.Errorf("remount %s: %v: %s", vol, err, out)
		}
		return nil
	}
	// A little more room, in steps, until it starts: with too little for
	// its catch-up it runs with JetStream off again, the state a reload is
	// for.
	running := !x.Reload.Exited
	for _, size := range diskFullMargins {
		if running {
			break
		}
		if err := remount(size); err != nil {
			return err
		}
		if err := full.Start(ctx); err != nil {
			if full.Running() {
				return err
			}
			full.clear()
			all, _ := linesMatching(full.LogFile, 0, regexp.MustCompile(`.`))
			x.Reload.Tries = append(x.Reload.Tries, size+": exited: "+all[len(all)-1])
			continue
		}
		running = true
		_ = waitFor(ctx, 20*time.Second, full.Name+" disabled again", func() (bool, error) { return off() || !full.Running(), nil })
		switch {
		case !full.Running():
			full.clear()
			running = false
			x.Reload.Tries = append(x.Reload.Tries, size+": started, then exited")
		case off():
			x.Reload.DisabledAgain = true
			x.Reload.Tries = append(x.Reload.Tries, size+": started, JetStream disabled again")
		default:
			// Room to start and catch up: publish until it fills again.
			nc, js, err := connect(r.Servers[0], r.Servers[1])
			if err != nil {
				return err
			}
			n := 0
			for !off() && n < 40000 {
				n++
				if _, err := publish(ctx, js, fmt.Sprintf("fill.%d", n%8), payload("more", n, diskFullMsgSize), nil); err != nil {
					nc.Close()
					return err
				}
			}
			nc.Close()
			x.Reload.DisabledAgain = off()
			x.Reload.Tries = append(x.Reload.Tries, fmt.Sprintf("%s: started and caught up; JetStream disabled again %v after %d more messages", size, x.Reload.DisabledAgain, n))
		}
	}
	fi, err := os.Stat(full.LogFile)
	if err != nil {
		return err
	}
	if err := remount(diskFullGrown); err != nil {
		return err
	}
	x.Reload.GrownTo = diskFullGrown
	reloaded := time.Now()
	if !running {
		x.Reload.Then = "start"
		if err := full.Start(ctx); err != nil {
			return err
		}
	} else if x.Reload.DisabledAgain {
		x.Reload.Then = "reload"
		if err := full.Reload(); err != nil {
			return err
		}
	} else {
		x.Reload.Then = "nothing (it ran)"
	}
	err = waitFor(ctx, 60*time.Second, full.Name+" JetStream back", func() (bool, error) {
		var j diskFullJsz
		return full.GetJSON(ctx, "/jsz", &j) == nil && !j.Disabled, nil
	})
	x.Reload.Reenabled = err == nil
	if x.Reload.Reenabled {
		if err := r.WaitQuiet(ctx, 90*time.Second); err == nil {
			x.Reload.Took = time.Since(reloaded).Round(time.Millisecond)
			states := map[string]bool{}
			for _, s := range r.Servers {
				var j jszInfo
				if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
					return err
				}
				if sd, ok := findStream(j, diskFullStream); ok {
					st := fmt.Sprintf("msgs=%d bytes=%d first=%d last=%d", sd.State.Msgs, sd.State.Bytes, sd.State.FirstSeq, sd.State.LastSeq)
					x.Reload.Streams[s.Name] = st
					states[st] = true
				}
			}
			x.Reload.CaughtUp = len(states) == 1 && len(x.Reload.Streams) == len(r.Servers)
		}
	}
	if b, err := full.Get(ctx, "/healthz"); err == nil {
		var h diskFullHealthz
		if jsonUnmarshal(b, &h) == nil {
			x.Reload.Health = strings.TrimSpace(h.Status + " " + h.Error)
		}
	}
	if err := r.Stop(); err != nil {
		return err
	}
	x.Reload.AfterLines, err = linesMatching(full.LogFile, fi.Size(), regexp.MustCompile(diskFullLogPattern.String()+`|Reloaded|reload|Starting JetStream|Restored`))
	logf("no space at start: %s; tries %v; disabled again %v; then %s on %s: re-enabled %v, caught up %v in %v", x.Reload.ExitLine, x.Reload.Tries,
		x.Reload.DisabledAgain, x.Reload.Then, diskFullGrown, x.Reload.Reenabled, x.Reload.CaughtUp, x.Reload.Took)
	return err
}
