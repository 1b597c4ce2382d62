package main

// Issue 18, the second disk-full mode: one stream's store fills while the
// server's other state fits. An R1 stream's msgs directory is a small tmpfs
// (mounted on every server before the stream is made, so wherever it is
// placed), the meta group and the rest of the store are on the disk. On
// 2.15.3 an R1 stream's write goes stream.go processJetStreamMsg ->
// setWriteErrLocked (no handleOutOfSpace: only the replicated apply path and
// raft's own writes call it), so JetStream stays enabled and the stream stops
// taking writes. Committed on 2.15.3; `streamfull@<version>` on others.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const streamFullName = "FULL1"

func streamFullScenarios() []Scenario {
	return []Scenario{{Name: "streamfull-v2.15.3",
		Doc:     "issue 18: 3 x v2.15.3, an R1 stream whose msgs directory is a 256k tmpfs fills: the stream stops taking writes, JetStream stays enabled; expect = what the servers logged and answered",
		Timeout: 6 * time.Minute,
		Run:     func(ctx context.Context, env *Env) error { return streamFull(ctx, env, "v2.15.3") }}}
}

// StreamFullExpect is want.json's expect for streamfull-<version>.
type StreamFullExpect struct {
	Account    string `json:"account"`
	Stream     string `json:"stream"`
	FullServer string `json:"full_server"` // the server holding the R1 stream
	Tmpfs      string `json:"tmpfs"`       // mount options of its msgs directory
	Acked      uint64 `json:"acked"`       // publishes acknowledged before the first failure
	// FirstFailure: the reply (or client error) to the first publish that
	// was not acknowledged, verbatim.
	FirstFailure string `json:"first_failure"`
	// Healthz, JSZDisabled: each server's /healthz body and /jsz disabled
	// at the capture.
	Healthz     map[string]string `json:"healthz"`
	JSZDisabled map[string]bool   `json:"jsz_disabled"`
	// LogLines: each server's log lines matching diskFullLogPattern.
	LogLines map[string][]string `json:"log_lines"`
}

func streamFull(ctx context.Context, env *Env, version string) error {
	name := "streamfull-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "streamfull", []string{"sf-0", "sf-1", "sf-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	const size = "256k"
	msgsDir := func(s *Server) string { return filepath.Join(s.JSRoot(), "$G", "streams", streamFullName, "msgs") }
	mounted := map[string]bool{}
	for _, s := range c.Servers {
		dir := msgsDir(s)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		if err := mountTmpfs(dir, size); err != nil {
			return err
		}
		mounted[s.Name] = true
		defer func() {
			if mounted[s.Name] {
				unmount(dir)
			}
		}()
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	x := StreamFullExpect{Account: "$G", Stream: streamFullName, Tmpfs: "size=" + size, Healthz: map[string]string{}, JSZDisabled: map[string]bool{}, LogLines: map[string][]string{}}
	if err := retry(ctx, "create "+streamFullName, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: streamFullName, Subjects: []string{"full.>"}, Replicas: 1, Storage: jetstream.FileStorage})
		return err
	}); err != nil {
		return err
	}
	if err := waitAssetLeader(ctx, js, streamFullName, ""); err != nil {
		return err
	}
	// The servers that did not get the stream: their mount and the empty
	// directories made for it go (nothing of theirs was ever in them).
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	st, err := js.Stream(cctx, streamFullName)
	cancel()
	if err != nil {
		return err
	}
	x.FullServer = st.CachedInfo().Cluster.Leader
	for _, s := range c.Servers {
		if s.Name == x.FullServer {
			continue
		}
		unmount(msgsDir(s))
		mounted[s.Name] = false
		if err := os.Remove(msgsDir(s)); err != nil {
			return err
		}
		if err := os.Remove(filepath.Dir(msgsDir(s))); err != nil {
			return err
		}
	}
	data := []byte(strings.Repeat("x", 4000))
	for i := 0; i < 1000 && x.FirstFailure == ""; i++ {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		r, err := nc.RequestMsgWithContext(rctx, &nats.Msg{Subject: "full.a", Data: data})
		cancel()
		var a struct {
			Seq   uint64 `json:"seq"`
			Error any    `json:"error"`
		}
		switch {
		case err != nil:
			x.FirstFailure = "client: " + err.Error()
		case json.Unmarshal(r.Data, &a) != nil || a.Error != nil || a.Seq == 0:
			x.FirstFailure = string(r.Data)
		default:
			x.Acked = a.Seq
		}
	}
	if x.FirstFailure == "" {
		return fmt.Errorf("%s: 1000 publishes of 4000 bytes all acknowledged on a %s tmpfs", name, size)
	}
	// Another publish after the failure: whether the stream still refuses.
	if _, err := nc.Request("full.a", data, 3*time.Second); err == nil {
		logf("%s: a publish after the failure was answered", name)
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		x.Healthz[s.Name] = httpBody(s, "/healthz")
		var jsz struct {
			Disabled bool `json:"disabled"`
		}
		json.Unmarshal([]byte(httpBody(s, "/jsz")), &jsz)
		x.JSZDisabled[s.Name] = jsz.Disabled
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		if x.LogLines[s.Name], err = linesMatching(s.LogFile, 0, diskFullLogPattern); err != nil {
			return err
		}
	}
	logf("%s: %s on %s: %d acked, then %s; healthz %v", name, streamFullName, x.FullServer, x.Acked, x.FirstFailure, x.Healthz)
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// httpBody is a server's monitoring answer at path, or the error.
func httpBody(s *Server, path string) string {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.HTTPPort, path))
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}
