package main

// Phase 2e: a `nats audit gather` archive (natscli v0.5.0) of a running
// 3-server v2.15.2 cluster with a system account user.

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

const natscliVersion = "v0.5.0"

func auditScenarios() []Scenario {
	return []Scenario{
		{Name: "audit-gather-v2.15.2",
			Doc: "nats audit gather (natscli " + natscliVersion + ") zip of a healthy 3 x v2.15.2 cluster with accounts APP and SYS",
			Run: auditGather},
	}
}

// natsCLI returns the natscli binary, installing it into <cache>/bin/natscli-<version>.
func natsCLI(ctx context.Context) (string, error) {
	return goInstall(ctx, "natscli-"+natscliVersion, "github.com/nats-io/natscli/nats@"+natscliVersion, "nats")
}

// AuditExpect is want.json's expect for the audit-gather bundle.
type AuditExpect struct {
	Natscli       string   `json:"natscli"`
	Command       []string `json:"command"` // argv without credentials
	SystemAccount string   `json:"system_account"`
	Account       string   `json:"account"`
}

func auditGather(ctx context.Context, env *Env) error {
	cli, err := natsCLI(ctx)
	if err != nil {
		return err
	}
	c, err := NewCluster(ctx, env.Scratch, "v2.15.2", "audit", []string{"aud-0", "aud-1", "aud-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	c.UseSysAndAppAccounts()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := HealthyWorkload(ctx, c); err != nil {
		return err
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	before, _ := c.convergence(ctx)
	out := filepath.Join(env.Scratch, "audit.zip")
	args := []string{"audit", "gather", "--output", out, "--no-progress", "--no-server-profiles"}
	gctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(gctx, cli, append([]string{"--server", fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", c.Servers[0].ClientPort)}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+env.Scratch) // no user natscli context
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nats audit gather: %v\n%s", err, outb)
	}
	logf("nats audit gather: %d bytes of output", len(outb))
	if after, ok := c.convergence(ctx); !ok || after != before {
		return fmt.Errorf("cluster state changed during audit gather")
	}
	zipb, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	x := AuditExpect{Natscli: natscliVersion, Command: append([]string{"nats", "--server", "nats://sys:***@127.0.0.1:<port>"}, args...),
		SystemAccount: "SYS", Account: "APP"}
	x.Command[len(x.Command)-len(args)+3] = "bundle.zip" // the --output value
	// Where the gather archive holds what the generator captured itself.
	zr, err := zip.NewReader(bytes.NewReader(zipb), int64(len(zipb)))
	if err != nil {
		return err
	}
	inZip := map[string]bool{}
	for _, f := range zr.File {
		inZip[f.Name] = true
	}
	paths := map[string]map[string]string{}
	for _, s := range c.Servers {
		paths[s.Name] = map[string]string{}
		for name, p := range map[string]string{
			"varz":            "capture/clusters/audit/" + s.Name + "/variables/0001.json",
			"jsz":             "capture/clusters/audit/" + s.Name + "/jetstream_info/0001.json",
			"healthz":         "capture/clusters/audit/" + s.Name + "/health/0001.json",
			"raftz":           "capture/accounts/SYS/servers/audit__" + s.Name + "/account_raftz/0001.json",
			"raftz-acc-APP":   "capture/accounts/APP/servers/audit__" + s.Name + "/account_raftz/0001.json",
			"account-jsz-APP": "capture/accounts/APP/servers/audit__" + s.Name + "/account_jetstream_info/0001.json",
		} {
			if inZip[p] {
				paths[s.Name][name] = p
			}
		}
		if len(paths[s.Name]) == 0 {
			return fmt.Errorf("audit archive has no per-server files for %s", s.Name)
		}
	}
	b := &Bundle{Name: "audit-gather-v2.15.2", PrebuiltCaptures: paths, Version: "2.15.2", Layout: Layout{Kind: "audit-gather"}, Servers: c.Servers,
		Captures: caps, Prebuilt: zipb, PrebuiltName: "bundle.zip", Expect: x}
	return b.Write(env.Scratch, env.Out)
}
