package main

// A `nats audit gather` archive of a cluster in operator mode (accounts
// from JWTs, a memory resolver): account APP's JWT limits it to 2 client
// connections, and 2 are open, so natscli's ACCOUNTS_001 warns.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

func auditAccountScenarios() []Scenario {
	return []Scenario{
		{Name: "audit-accounts-v2.15.3",
			Doc: "nats audit gather (natscli " + natscliVersion + ") zip of 3 x v2.15.3 in operator mode (memory resolver), account APP's JWT " +
				"allowing 2 client connections with 2 open; natscli's `audit analyze --json` beside it",
			Timeout: 5 * time.Minute,
			Run:     auditAccounts},
	}
}

// operatorSetup is an operator, its system account SYS and account APP
// (APP limited to appConns client connections), with a user of each.
type operatorSetup struct {
	config       string // server config lines
	appJWT       string
	appSeed      []byte
	sysCredsFile string
}

func newOperatorSetup(dir string, appConns int64) (*operatorSetup, error) {
	okp, err := nkeys.CreateOperator()
	if err != nil {
		return nil, err
	}
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "OP"
	account := func(name string, limits func(*jwt.AccountClaims)) (nkeys.KeyPair, string, string, error) {
		akp, err := nkeys.CreateAccount()
		if err != nil {
			return nil, "", "", err
		}
		apub, _ := akp.PublicKey()
		ac := jwt.NewAccountClaims(apub)
		ac.Name = name
		if limits != nil {
			limits(ac)
		}
		ajwt, err := ac.Encode(okp)
		return akp, apub, ajwt, err
	}
	user := func(akp nkeys.KeyPair, name string) (string, []byte, error) {
		ukp, err := nkeys.CreateUser()
		if err != nil {
			return "", nil, err
		}
		upub, _ := ukp.PublicKey()
		uc := jwt.NewUserClaims(upub)
		uc.Name = name
		ujwt, err := uc.Encode(akp)
		if err != nil {
			return "", nil, err
		}
		seed, err := ukp.Seed()
		return ujwt, seed, err
	}
	syskp, syspub, sysjwt, err := account("SYS", nil)
	if err != nil {
		return nil, err
	}
	oc.SystemAccount = syspub
	ojwt, err := oc.Encode(okp)
	if err != nil {
		return nil, err
	}
	appkp, apppub, appjwt, err := account("APP", func(ac *jwt.AccountClaims) {
		ac.Limits.Conn = appConns
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	})
	if err != nil {
		return nil, err
	}
	sysUJWT, sysSeed, err := user(syskp, "sys")
	if err != nil {
		return nil, err
	}
	appUJWT, appSeed, err := user(appkp, "app")
	if err != nil {
		return nil, err
	}
	creds, err := jwt.FormatUserConfig(sysUJWT, sysSeed)
	if err != nil {
		return nil, err
	}
	credsFile := filepath.Join(dir, "sys.creds")
	if err := os.WriteFile(credsFile, creds, 0o600); err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf("operator: %q\nsystem_account: %q\nresolver: MEMORY\nresolver_preload: {\n  %s: %q\n  %s: %q\n}\n",
		ojwt, syspub, syspub, sysjwt, apppub, appjwt)
	return &operatorSetup{config: cfg, appJWT: appUJWT, appSeed: appSeed, sysCredsFile: credsFile}, nil
}

func auditAccounts(ctx context.Context, env *Env) error {
	const name = "audit-accounts-v2.15.3"
	cli, err := natsCLI(ctx)
	if err != nil {
		return err
	}
	op, err := newOperatorSetup(env.Scratch, 2)
	if err != nil {
		return err
	}
	c, err := NewCluster(ctx, env.Scratch, "v2.15.3", "audit", []string{"aud-0", "aud-1", "aud-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		s.Extra = op.config
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	// Two client connections of APP on aud-1: its JWT allows 2.
	for i := 0; i < 2; i++ {
		nc, err := nats.Connect(c.Servers[1].ClientURL(), nats.UserJWTAndSeed(op.appJWT, string(op.appSeed)), nats.Name(fmt.Sprintf("app-%d", i)))
		if err != nil {
			return err
		}
		defer nc.Close()
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	out := filepath.Join(env.Scratch, "audit.zip")
	args := []string{"audit", "gather", "--output", out, "--no-progress", "--no-server-profiles"}
	if err := runNatsCLIURL(ctx, cli, env.Scratch, fmt.Sprintf("nats://127.0.0.1:%d", c.Servers[0].ClientPort), append([]string{"--creds", op.sysCredsFile}, args...)...); err != nil {
		return err
	}
	zipb, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	analysis, err := natsCLIOutput(ctx, cli, env.Scratch, "audit", "analyze", "--json", "--max-examples=0", out)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	x := AuditExpect{Natscli: natscliVersion, Command: append([]string{"nats", "--server", "nats://127.0.0.1:<port>", "--creds", "sys.creds"}, args...),
		SystemAccount: "SYS", Account: "APP"}
	x.Command[len(x.Command)-len(args)+3] = "bundle.zip"
	b := &Bundle{Name: name, Version: "2.15.3", Layout: Layout{Kind: "audit-gather"}, Servers: c.Servers,
		Captures: caps, Prebuilt: zipb, PrebuiltName: "bundle.zip", Expect: x}
	if err := b.Write(env.Scratch, env.Out); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(env.Out, name, "natscli-analyze.json"), analysis, 0o644)
}
