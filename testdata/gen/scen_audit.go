package main

// Phase 2e: a `nats audit gather` archive (natscli v0.5.0) of a running
// 3-server v2.15.2 cluster with a system account user.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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

// auditFaults is one gather archive made with natscli's checks failing on
// purpose: the release of the cluster audit (aud-0..2, accounts SYS and
// APP) and of the one-server cluster west it has a gateway to, and which
// faults to make besides those every such archive has.
type auditFaults struct {
	Version, West string
	// StopOne stops aud-2 before the gather: its meta peer is offline.
	StopOne bool
	// Monitor gives a stream io.nats.monitor.* metadata it fails.
	Monitor bool
	// PlainLeaf names the leafnode without whitespace: v2.10 refuses a
	// leafnode whose name (its cluster name when it has no cluster) holds
	// any ("cluster name cannot contain spaces or new lines").
	PlainLeaf bool
}

// auditFaultVersions are the archives `go run . audit-faults-*` makes.
var auditFaultVersions = []auditFaults{
	{Version: "v2.15.3", West: "v2.15.3", Monitor: true},
	{Version: "v2.14.10", West: "v2.14.10", Monitor: true},
	{Version: "v2.12.15", West: "v2.11.17"},
	{Version: "v2.11.17", West: "v2.11.17", StopOne: true},
	{Version: "v2.10.27", West: "v2.10.27", PlainLeaf: true},
}

func auditFaultScenarios() []Scenario {
	var out []Scenario
	for _, f := range auditFaultVersions {
		f := f
		out = append(out, Scenario{Name: "audit-faults-" + f.Version,
			Doc: "nats audit gather (natscli " + natscliVersion + ") zip of 3 x " + f.Version + " (cluster audit) and 1 x " + f.West +
				" (cluster west, gateway named only by aud-0), a leafnode named with a tab, a TLS leafnode listener certificate expiring in 5 days, " +
				"a slow consumer, JetStream storage above 90 % of max_file_store, a stream at 95 % of max_msgs, one server holding a 64 MiB memory stream; " +
				"natscli's `audit analyze --json` beside it, and the same endpoints captured over HTTP in loose/",
			Timeout: 6 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return f.run(ctx, env) }})
	}
	return out
}

// selfSignedCert writes a certificate for 127.0.0.1 valid until notAfter
// and its key under dir, and returns their paths.
func selfSignedCert(dir string, notAfter time.Time) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "leaf-cert.pem"), filepath.Join(dir, "leaf-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// leafName is the leafnode's server name: a tab in it (nats-server refuses
// only spaces).
const leafName = "leaf\tone"

func (f auditFaults) run(ctx context.Context, env *Env) error {
	name := "audit-faults-" + f.Version
	cli, err := natsCLI(ctx)
	if err != nil {
		return err
	}
	c, err := NewCluster(ctx, env.Scratch, f.Version, "audit", []string{"aud-0", "aud-1", "aud-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	w, err := NewCluster(ctx, env.Scratch, f.West, "west", []string{"west-0"})
	if err != nil {
		return err
	}
	defer w.Kill()
	lc, err := NewCluster(ctx, env.Scratch, f.Version, "leaf", []string{"leaf-0"})
	if err != nil {
		return err
	}
	defer lc.Kill()
	c.UseSysAndAppAccounts()
	w.UseSysAndAppAccounts()
	leafPort, err := freePort()
	if err != nil {
		return err
	}
	certFile, keyFile, err := selfSignedCert(env.Scratch, time.Now().Add(5*24*time.Hour))
	if err != nil {
		return err
	}
	for i, s := range c.Servers {
		s.GatewayName = "audit"
		// Only aud-0 names west; aud-1 and aud-2 learn it from their peers.
		if i == 0 {
			s.Gateways = []Gateway{{Name: "west", URLs: []string{w.Servers[0].GatewayURL()}}}
		}
		// Slow consumers show fast; JetStream's store is small.
		s.Extra += "\nmax_pending: 1048576\nwrite_deadline: \"500ms\"\n"
		s.JetStreamExtra = "max_file_store: 4MB"
		if i == 0 {
			s.Extra += fmt.Sprintf("leafnodes {\n  listen: \"127.0.0.1:%d\"\n  tls { cert_file: %q, key_file: %q }\n}\n", leafPort, certFile, keyFile)
		}
		if i == 2 {
			s.Extra += "server_tags: [\"mem\"]\n"
		}
	}
	ws := w.Servers[0]
	// A clustered JetStream needs a route: west-0's is to itself.
	ws.Routes = []string{fmt.Sprintf("nats-route://127.0.0.1:%d", ws.ClusterPort)}
	ws.GatewayName = "west"
	ws.Gateways = []Gateway{{Name: "audit", URLs: []string{c.Servers[0].GatewayURL()}}}
	ls := lc.Servers[0]
	ls.Name = leafName
	if f.PlainLeaf {
		ls.Name = "leaf-one"
	}
	ls.NoCluster = true
	ls.JetStreamExtra = "domain: leaf"
	ls.Extra = fmt.Sprintf("leafnodes {\n  remotes: [ { url: \"tls://app:app@127.0.0.1:%d\", tls: { ca_file: %q } } ]\n}\n", leafPort, certFile)
	if err := w.StartAll(ctx); err != nil {
		return err
	}
	if err := c.StartAll(ctx); err != nil {
		return err
	}
	if err := lc.StartAll(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return err
	}
	if err := f.workload(ctx, c); err != nil {
		return err
	}
	// The leafnode is connected to aud-0.
	if err := waitFor(ctx, 30*time.Second, "leafnode connected", func() (bool, error) {
		var lz struct {
			Leafs []struct {
				Name string `json:"name"`
			} `json:"leafs"`
		}
		if err := c.Servers[0].GetJSON(ctx, "/leafz", &lz); err != nil {
			return false, err
		}
		return len(lz.Leafs) == 1 && lz.Leafs[0].Name == ls.Name, nil
	}); err != nil {
		return err
	}
	if f.StopOne {
		if err := c.Servers[2].Stop(); err != nil {
			return err
		}
		// A meta leader that sees aud-2 offline.
		if err := waitFor(ctx, 60*time.Second, "meta leader seeing aud-2 offline", func() (bool, error) {
			for _, s := range c.Servers[:2] {
				var j jszInfo
				if err := s.GetJSON(ctx, "/jsz", &j); err != nil || j.Meta == nil || j.Meta.Leader != s.Name {
					continue
				}
				for _, r := range j.Meta.Replicas {
					if r.Name == "aud-2" && r.Offline {
						return true, nil
					}
				}
			}
			return false, nil
		}); err != nil {
			return err
		}
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
	// The same endpoints over HTTP, right after the gather.
	loose := map[string][]byte{}
	for _, s := range append(running.Servers, ws) {
		for file, path := range map[string]string{"varz.json": "/varz", "jsz.json": jszCapturePath, "healthz.json": "/healthz",
			"gatewayz.json": "/gatewayz", "leafz.json": "/leafz", "accountz-APP.json": "/accountz?acc=APP"} {
			b, err := s.Get(ctx, path)
			if err != nil {
				return fmt.Errorf("%s %s: %v", s.Name, path, err)
			}
			loose["loose/"+s.Name+"/"+file] = b
		}
	}
	if err := lc.Stop(); err != nil {
		return err
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
	b := &Bundle{Name: name, Version: strings.TrimPrefix(f.Version, "v"), Layout: Layout{Kind: "audit-gather"}, Servers: append(running.Servers, ws),
		Captures: caps, Prebuilt: zipb, PrebuiltName: "bundle.zip", Expect: x}
	if f.West != f.Version {
		b.Version += "," + strings.TrimPrefix(f.West, "v")
	}
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

// workload makes the faults the archive shows in the APP account.
func (f auditFaults) workload(ctx context.Context, c *Cluster) error {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	// JETSTREAM_003: 95 of max_msgs 100.
	if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "LIMITS", Subjects: []string{"LIMITS.>"}, Replicas: 3, MaxMsgs: 100}, 95, 64); err != nil {
		return err
	}
	// SERVER_005: above 90 % of each server's 4 MB max_file_store.
	if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "BULK", Subjects: []string{"BULK.>"}, Replicas: 3}, 30, 128<<10); err != nil {
		return err
	}
	// CLUSTER_001: aud-2 alone holds a 64 MiB memory stream.
	if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "MEM", Subjects: []string{"MEM.>"}, Replicas: 1, Storage: jetstream.MemoryStorage,
		Placement: &jetstream.Placement{Tags: []string{"mem"}}}, 64, 1<<20); err != nil {
		return err
	}
	if f.Monitor {
		// JETSTREAM_004: fewer messages than io.nats.monitor.msgs-warn.
		if _, err := createFilled(ctx, js, jetstream.StreamConfig{Name: "MONITORED", Subjects: []string{"MONITORED.>"}, Replicas: 3,
			Metadata: map[string]string{"io.nats.monitor.enabled": "true", "io.nats.monitor.msgs-warn": "100", "io.nats.monitor.peer-expect": "3"}}, 10, 64); err != nil {
			return err
		}
	}
	// SERVER_004: a client on aud-1 that never reads what it subscribed to.
	raw, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", c.Servers[1].ClientPort))
	if err != nil {
		return err
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("CONNECT {\"user\":\"app\",\"pass\":\"app\",\"verbose\":false,\"pedantic\":false}\r\nSUB slow 1\r\nPING\r\n")); err != nil {
		return err
	}
	pub, _, err := connect(c.Servers[1])
	if err != nil {
		return err
	}
	defer pub.Close()
	chunk := make([]byte, 32<<10)
	return waitFor(ctx, 30*time.Second, "slow consumer on aud-1", func() (bool, error) {
		for i := 0; i < 64; i++ {
			if err := pub.Publish("slow", chunk); err != nil {
				return false, err
			}
		}
		if err := pub.Flush(); err != nil {
			return false, err
		}
		var v struct {
			Slow int `json:"slow_consumers"`
		}
		if err := c.Servers[1].GetJSON(ctx, "/varz", &v); err != nil {
			return false, err
		}
		return v.Slow > 0, nil
	})
}

// runNatsCLI runs natscli against server s as the system user, with no
// user context (HOME is dir).
func runNatsCLI(ctx context.Context, cli, dir string, s *Server, args ...string) error {
	return runNatsCLIURL(ctx, cli, dir, fmt.Sprintf("nats://sys:sys@127.0.0.1:%d", s.ClientPort), args...)
}

// runNatsCLIURL runs natscli against the server at url.
func runNatsCLIURL(ctx context.Context, cli, dir, url string, args ...string) error {
	gctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(gctx, cli, append([]string{"--server", url}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nats %s: %v\n%s", strings.Join(args, " "), err, outb)
	}
	return nil
}

// natsCLIOutput runs natscli offline and returns its standard output.
func natsCLIOutput(ctx context.Context, cli, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// analyze exits non-zero when a check fails; its answer is still whole.
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || !json.Valid(out)) {
		return nil, fmt.Errorf("nats %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
