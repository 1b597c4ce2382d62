package main

// `big`: a large single-server store written on demand (never committed).
// `recover`: the real server's own full-recovery time on a copy of such a
// store whose msgs/index.db files were removed.

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// newSingle prepares a standalone JetStream server (no cluster block)
// whose store_dir is storeDir and whose log/config live in dir.
func newSingle(ctx context.Context, dir, storeDir, version, name string) (*Server, error) {
	c, err := NewCluster(ctx, dir, version, "", []string{name})
	if err != nil {
		return nil, err
	}
	s := c.Servers[0]
	s.NoCluster = true
	s.StoreDir = storeDir
	return s, nil
}

func runBig(ctx context.Context, out string, size int64, version string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "jetstream")); len(entries) > 0 {
		return fmt.Errorf("%s/jetstream already holds a store; use an empty directory", out)
	}
	s, err := newSingle(ctx, out, out, version, "big-0")
	if err != nil {
		return err
	}
	s.Dir = out
	s.LogFile = filepath.Join(out, "big-0.log")
	s.ConfFile = filepath.Join(out, "big-0.conf")
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer func() {
		if s.Running() {
			_ = s.Kill()
		}
	}()
	nc, _, err := connect(s)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return err
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big.>"}, Replicas: 1, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	start := time.Now()
	subjects := []string{"big.orders.eu", "big.orders.us", "big.events.click", "big.events.view", "big.logs"}
	data := make([]byte, 1000)
	var n int64
	for {
		for i := 0; i < 2000; i++ {
			n++
			for k := range data {
				data[k] = byte('a' + (int(n)+k*7)%26)
			}
			msg := &nats.Msg{Subject: subjects[n%int64(len(subjects))], Data: append([]byte(nil), data...)}
			if n%10 == 0 {
				msg.Header = nats.Header{"X-Seq": []string{fmt.Sprint(n)}, "X-Origin": []string{"big-gen"}}
			}
			if _, err := js.PublishMsgAsync(msg); err != nil {
				return err
			}
		}
		if err := awaitPublished(ctx, js, 60*time.Second, n); err != nil {
			return err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if int64(info.State.Bytes) >= size {
			logf("published %d messages, %d bytes in %v", info.State.Msgs, info.State.Bytes, time.Since(start).Round(time.Millisecond))
			break
		}
	}
	nc.Close()
	if err := s.Stop(); err != nil {
		return err
	}
	disk, err := dirSize(s.JSRoot())
	if err != nil {
		return err
	}
	fmt.Printf("store: %s\nstore_bytes_on_disk: %d\nmessages_published: %d\nserver_log: %s\n", s.JSRoot(), disk, n, s.LogFile)
	fmt.Printf("next: go run . recover -dir %s -version %s\n", out, version)
	return nil
}

var restoredRE = regexp.MustCompile(`Restored ([0-9,]+) messages for stream '([^']*)' in (\S+)`)

func runRecover(ctx context.Context, dir, version string, keepIndex bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	root := filepath.Join(dir, "jetstream")
	if _, err := os.Stat(root); err != nil {
		return fmt.Errorf("%s is not a store written by `big` (no jetstream/): %w", dir, err)
	}
	scratch, err := os.MkdirTemp("", "jsf-gen-recover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	copyStart := time.Now()
	if err := copyTree(root, filepath.Join(scratch, "store", "jetstream")); err != nil {
		return err
	}
	logf("copied store in %v", time.Since(copyStart).Round(time.Millisecond))
	removed := 0
	err = filepath.WalkDir(filepath.Join(scratch, "store", "jetstream"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Only stream stores (<acc>/streams/<name>/msgs/index.db); raft WALs keep theirs.
		if !keepIndex && d.Name() == "index.db" && filepath.Base(filepath.Dir(p)) == "msgs" &&
			filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))) == "streams" {
			removed++
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	logf("removed %d msgs/index.db file(s)", removed)
	s, err := newSingle(ctx, scratch, filepath.Join(scratch, "store"), version, "big-0")
	if err != nil {
		return err
	}
	s.StartTimeout = 10 * time.Minute
	start := time.Now()
	if err := s.Start(ctx); err != nil {
		return err
	}
	ready := time.Since(start)
	defer func() { _ = s.Stop() }()
	var lines []string
	err = waitFor(ctx, 10*time.Minute, "Restored line", func() (bool, error) {
		f, err := os.Open(s.LogFile)
		if err != nil {
			return false, nil
		}
		defer f.Close()
		lines = lines[:0]
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if restoredRE.MatchString(sc.Text()) {
				lines = append(lines, sc.Text())
			}
		}
		return len(lines) > 0, nil
	})
	if err != nil {
		return err
	}
	cpu := procCPU(s)
	var v varzInfo
	if err := s.GetJSON(ctx, "/varz", &v); err != nil {
		return err
	}
	if cpu != "" {
		// user and system time of the server process once the Restored line
		// is out: its start and the recovery (the ratio's other side when
		// the machine is shared).
		fmt.Printf("server_cpu_to_restored: %s\n", cpu)
	}
	for _, l := range lines {
		m := restoredRE.FindStringSubmatch(l)
		fmt.Printf("line: %s\nstream: %s messages: %s recovery_time: %s\n", strings.TrimSpace(l), m[2], m[1], m[3])
	}
	fmt.Printf("index_db_removed: %d\nstart_to_monitoring_ready: %v\nserver_rss_bytes: %d (varz mem)\n", removed, ready.Round(time.Millisecond), v.Mem)
	return nil
}

// procCPU is the user and system time of s's process from /proc (Linux),
// "" elsewhere.
func procCPU(s *Server) string {
	ut, st, ok := procTimes(s)
	if !ok {
		return ""
	}
	return fmt.Sprintf("user %.2fs sys %.2fs cpu %.2fs", ut, st, ut+st)
}

// procTimes is the user and system seconds of s's process so far.
func procTimes(s *Server) (user, sys float64, ok bool) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0, 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return 0, 0, false
	}
	// Fields after the command name in parentheses: state is field 3,
	// utime 14 and stime 15, in clock ticks (100 a second on Linux).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, false
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return ut / 100, st / 100, true
}
