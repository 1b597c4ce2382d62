package main

// A second `nats audit gather` archive with natscli's checks failing on
// purpose, for the checks audit-faults-* leaves passing: a server that
// requires no authentication (SERVER_007), and a meta group without a
// leader, so that every gathered server answers /healthz 503 (SERVER_001)
// and names no meta leader (META_002), and a stream holding more than a
// million subjects (JETSTREAM_002).

import (
	"context"
	"fmt"
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
				" (cluster west, gateways, no client authentication), a stream of 1,000,001 subjects, then aud-1 and aud-2 stopped, so the meta group of 4 has no leader and " +
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
	if err := waitFor(ctx, 90*time.Second, "no meta leader and /healthz 503 on aud-0 and west-0", func() (bool, error) {
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
		return true, nil
	}); err != nil {
		return err
	}
	running := &Cluster{Name: c.Name, Version: c.Version, Servers: c.Running()}
	caps, err := CaptureAll(ctx, running, w)
	if err != nil {
		return err
	}
	out := filepath.Join(env.Scratch, "audit.zip")
	args := []string{"audit", "gather", "--output", out, "--no-progress", "--no-server-profiles"}
	if err := runNatsCLI(ctx, cli, env.Scratch, c.Servers[0], args...); err != nil {
		return err
	}
	zipb, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if len(zipb) > 2<<20 {
		return fmt.Errorf("gather archive of %d bytes, more than 2 MiB", len(zipb))
	}
	analysis, err := natsCLIOutput(ctx, cli, env.Scratch, "audit", "analyze", "--json", "--max-examples=0", out)
	if err != nil {
		return err
	}
	loose := map[string][]byte{}
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
