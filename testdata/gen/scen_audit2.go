package main

// A second `nats audit gather` archive with natscli's checks failing on
// purpose, for the checks audit-faults-* leaves passing: a server that
// requires no authentication (SERVER_007), and a meta group without a
// leader, so that every gathered server answers /healthz 503 (SERVER_001)
// and names no meta leader (META_002), and a stream holding more than a
// million subjects (JETSTREAM_002), and aud-0 on one core kept above 90 %
// busy while gathered (SERVER_003).

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// auditFaults2Versions are the archives `go run . audit-faults2-*` makes.
var auditFaults2Versions = []string{"v2.15.3"}

func auditFaults2Scenarios() []Scenario {
	var out []Scenario
	for _, v := range auditFaults2Versions {
		v := v
		out = append(out, Scenario{Name: "audit-faults2-" + v,
			Doc: "nats audit gather (natscli " + natscliVersion + ") zip of 3 x " + v + " (cluster audit) and 1 x " + v +
				" (cluster west, gateways, no client authentication), a stream of 1,000,001 subjects, aud-0 on one core flooded while gathered, aud-1 and aud-2 stopped, so the meta group of 4 has no leader and " +
				"the two servers left answer /healthz 503; natscli's `audit analyze --json` beside it, the same endpoints captured over HTTP in loose/",
			Timeout: 6 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return auditFaults2(ctx, env, v) }})
	}
	return out
}

// noAuthSysAndApp is sysAndAppAccounts without users: the server requires
// no authentication (clients land in the global account), and still
// answers the system account's requests over its gateway.
const noAuthSysAndApp = `accounts {
  SYS: {}
  APP: { jetstream: enabled }
}
system_account: SYS`

func auditFaults2(ctx context.Context, env *Env, version string) error {
	name := "audit-faults2-" + version
	cli, err := natsCLI(ctx)
	if err != nil {
		return err
	}
	c, err := NewCluster(ctx, env.Scratch, version, "audit", []string{"aud-0", "aud-1", "aud-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	w, err := NewCluster(ctx, env.Scratch, version, "west", []string{"west-0"})
	if err != nil {
		return err
	}
	defer w.Kill()
	c.UseSysAndAppAccounts()
	ws := w.Servers[0]
	ws.Extra = noAuthSysAndApp
	ws.Routes = []string{fmt.Sprintf("nats-route://127.0.0.1:%d", ws.ClusterPort)}
	ws.GatewayName = "west"
	ws.Gateways = []Gateway{{Name: "audit", URLs: []string{c.Servers[0].GatewayURL()}}}
	for _, s := range c.Servers {
		s.GatewayName = "audit"
		s.Gateways = []Gateway{{Name: "west", URLs: []string{ws.GatewayURL()}}}
	}
	c.Servers[0].Extra += "\nserver_tags: [\"card\"]\n"
	// aud-0 runs on one core (its /varz cores: 1), so that a flood of
	// publishes into its stream BURN takes it above natscli's 90 %
	// (SERVER_003).
	a0 := c.Servers[0]
	pinned := filepath.Join(env.Scratch, "nats-server-core0")
	if err := os.WriteFile(pinned, []byte(fmt.Sprintf("#!/bin/sh\nexec taskset -c 0 %q \"$@\"\n", a0.Bin)), 0o755); err != nil {
		return err
	}
	a0.Bin = pinned
	if err := w.StartAll(ctx); err != nil {
		return err
	}
	if err := c.StartAll(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return err
	}
	// The meta group holds west-0 too: 4 peers.
	if err := waitFor(ctx, 60*time.Second, "meta group of 4 with a leader", func() (bool, error) {
		var j jszInfo
		if err := c.Servers[0].GetJSON(ctx, "/jsz", &j); err != nil || j.Meta == nil {
			return false, nil
		}
		return j.Meta.Leader != "" && j.Meta.Size == 4, nil
	}); err != nil {
		return err
	}
	{
		nc, js, err := connect(c.Servers...)
		if err != nil {
			return err
		}
		_, err = createFilled(ctx, js, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"ORDERS.>"}, Replicas: 3}, 10, 64)
		if err == nil {
			err = highCardinality(ctx, nc, js)
		}
		if err == nil {
			_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "BURN", Subjects: []string{"BURN.>"}, Replicas: 1,
				Placement: &jetstream.Placement{Tags: []string{"card"}}})
		}
		if err == nil {
			m := nats.NewMsg("BURN.x")
			m.Header.Set("Nats-Msg-Id", "burn")
			m.Data = make([]byte, 512)
			_, err = js.PublishMsg(ctx, m)
		}
		nc.Close()
		if err != nil {
			return err
		}
	}
	// Two of the four meta peers stopped: no quorum, no meta leader.
	for _, s := range c.Servers[1:] {
		if err := s.Stop(); err != nil {
			return err
		}
	}
	left := []*Server{c.Servers[0], ws}
	if err := waitFor(ctx, 90*time.Second, "no meta or stream leader and /healthz 503 on aud-0 and west-0", func() (bool, error) {
		for _, s := range left {
			var j jszInfo
			if err := s.GetJSON(ctx, "/jsz", &j); err != nil || j.Meta == nil || j.Meta.Leader != "" {
				return false, nil
			}
			var h struct {
				Status string `json:"status"`
			}
			if err := s.GetJSON(ctx, "/healthz", &h); err != nil || h.Status == "ok" {
				return false, nil
			}
		}
		// ORDERS's leader on aud-0 has stepped down too.
		rz, err := c.Servers[0].raftz(ctx, "APP")
		if err != nil {
			return false, nil
		}
		for _, gs := range rz {
			for _, g := range gs {
				if g.Leader != "" || g.State == "LEADER" {
					return false, nil
				}
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	running := &Cluster{Name: c.Name, Version: c.Version, Servers: c.Running()}
	caps, err := CaptureAll(ctx, running, w)
	if err != nil {
		return err
	}
	stopFlood, err := flood(ctx, a0)
	if err != nil {
		return err
	}
	defer stopFlood()
	out := filepath.Join(env.Scratch, "audit.zip")
	args := []string{"audit", "gather", "--output", out, "--no-progress", "--no-server-profiles"}
	var zipb, analysis []byte
	loose := map[string][]byte{}
	// aud-0's CPU moves around natscli's 90 %: gather again (5 times at
	// most) until the archive's /varz and the loose one are both above.
	for attempt := 1; ; attempt++ {
		if err := runNatsCLI(ctx, cli, env.Scratch, c.Servers[0], args...); err != nil {
			return err
		}
		if zipb, err = os.ReadFile(out); err != nil {
			return err
		}
		if len(zipb) > 2<<20 {
			return fmt.Errorf("gather archive of %d bytes, more than 2 MiB", len(zipb))
		}
		for _, s := range left {
			for file, path := range map[string]string{"varz.json": "/varz", "jsz.json": jszCapturePath, "healthz.json": "/healthz",
				"gatewayz.json": "/gatewayz", "leafz.json": "/leafz", "accountz-APP.json": "/accountz?acc=APP"} {
				b, err := s.Get(ctx, path)
				if err != nil {
					return fmt.Errorf("%s %s: %v", s.Name, path, err)
				}
				loose["loose/"+s.Name+"/"+file] = b
			}
		}
		inZip, err := zipEntry(zipb, "capture/clusters/audit/aud-0/variables/0001.json")
		if err != nil {
			return err
		}
		zc, lc := cpuShare(inZip, true), cpuShare(loose["loose/aud-0/varz.json"], false)
		logf("gather %d: aud-0 cpu %.0f %% per core in the archive, %.0f %% loose", attempt, zc, lc)
		if zc > 90 && lc > 90 {
			break
		}
		if attempt == 5 {
			return fmt.Errorf("aud-0 not above 90 %% CPU in 5 gathers")
		}
	}
	if analysis, err = natsCLIOutput(ctx, cli, env.Scratch, "audit", "analyze", "--json", "--max-examples=0", out); err != nil {
		return err
	}
	stopFlood()
	if err := c.Stop(); err != nil {
		return err
	}
	if err := w.Stop(); err != nil {
		return err
	}
	x := AuditExpect{Natscli: natscliVersion, Command: append([]string{"nats", "--server", "nats://sys:***@127.0.0.1:<port>"}, args...),
		SystemAccount: "SYS", Account: "APP"}
	x.Command[len(x.Command)-len(args)+3] = "bundle.zip"
	b := &Bundle{Name: name, Version: strings.TrimPrefix(version, "v"), Layout: Layout{Kind: "audit-gather"}, Servers: left,
		Captures: caps, Prebuilt: zipb, PrebuiltName: "bundle.zip", Expect: x}
	if err := b.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(env.Out, name, "natscli-analyze.json"), analysis, 0o644); err != nil {
		return err
	}
	for p, data := range loose {
		if err := writeFileAll(filepath.Join(env.Out, name, filepath.FromSlash(p)), data); err != nil {
			return err
		}
	}
	return nil
}

// cardinalitySubjects is natscli's JETSTREAM_002 threshold: a stream
// holding more unique subjects than this is flagged.
const cardinalitySubjects = 1_000_000

// highCardinality makes the R1 file stream CARD on aud-0 (tag card) hold
// more than cardinalitySubjects subjects, one empty message each, published
// without acknowledgement and topped up until the stream holds them
// (JETSTREAM_002).
func highCardinality(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) error {
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CARD", Subjects: []string{"CARD.>"}, Replicas: 1,
		Placement: &jetstream.Placement{Tags: []string{"card"}}})
	if err != nil {
		return err
	}
	next := 0
	deadline := time.Now().Add(4 * time.Minute)
	for {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.State.NumSubjects > cardinalitySubjects {
			logf("CARD holds %d subjects", info.State.NumSubjects)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CARD holds %d subjects after 4 minutes", info.State.NumSubjects)
		}
		missing := cardinalitySubjects + 1 - int(info.State.NumSubjects)
		if next > 0 && missing > 0 {
			// Let the stream take in what was sent before sending more.
			time.Sleep(time.Second)
			if again, err := st.Info(ctx); err == nil && again.State.NumSubjects != info.State.NumSubjects {
				continue
			}
		}
		for i := 0; i < missing; i++ {
			if err := nc.Publish(fmt.Sprintf("CARD.%d", next), nil); err != nil {
				return err
			}
			next++
			if next%20000 == 0 {
				if err := nc.Flush(); err != nil {
					return err
				}
			}
		}
		if err := nc.Flush(); err != nil {
			return err
		}
	}
}

// flood publishes one message again and again into stream BURN on server
// s from six connections
// until the returned stop is called, once s's /varz shows more than 95 %
// of its cores busy (or 30 s have passed: the archive then shows what it
// shows).
func flood(ctx context.Context, s *Server) (stop func(), err error) {
	done := make(chan struct{})
	var conns []*nats.Conn
	for i := 0; i < 6; i++ {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			close(done)
			for _, c := range conns {
				c.Close()
			}
			return nil, err
		}
		conns = append(conns, nc)
		go func() {
			// One message id: BURN stores the first and drops every other
			// as a duplicate, so its state holds still while s works.
			m := nats.NewMsg("BURN.x")
			m.Header.Set("Nats-Msg-Id", "burn")
			m.Data = make([]byte, 512)
			for {
				select {
				case <-done:
					return
				default:
				}
				for j := 0; j < 1000; j++ {
					_ = nc.PublishMsg(m)
				}
			}
		}()
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		close(done)
		for _, c := range conns {
			c.Close()
		}
	}
	_ = waitFor(ctx, 30*time.Second, s.Name+" above 95 % CPU", func() (bool, error) {
		var v struct {
			CPU   float64 `json:"cpu"`
			Cores int     `json:"cores"`
		}
		if err := s.GetJSON(ctx, "/varz", &v); err != nil || v.Cores == 0 {
			return false, nil
		}
		logf("%s: cpu %.1f %% of %d cores", s.Name, v.CPU, v.Cores)
		return v.CPU/float64(v.Cores) > 95, nil
	})
	return stop, nil
}

// zipEntry returns the file name of the zip archive b.
func zipEntry(b []byte, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	f, err := zr.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// cpuShare is /varz's cpu per core (enveloped: the system API's
// {"server":…,"data":…}).
func cpuShare(b []byte, enveloped bool) float64 {
	var v struct {
		CPU   float64 `json:"cpu"`
		Cores int     `json:"cores"`
	}
	if enveloped {
		var e struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(b, &e) != nil {
			return 0
		}
		b = e.Data
	}
	if json.Unmarshal(b, &v) != nil || v.Cores == 0 {
		return 0
	}
	return v.CPU / float64(v.Cores)
}
