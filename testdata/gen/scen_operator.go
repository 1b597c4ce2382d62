package main

// Operator mode (issue 30): a 3-server cluster whose accounts come from JWTs
// signed here with nats-io/jwt and nkeys (no nsc), resolved by a full
// (directory) resolver at the relative path "jwt" inside each server's
// folder. Two JetStream accounts with names (SHOP, BILLING) hold R3 and R1
// streams and consumers. One run writes three bundles:
//
//   - operator-<v>: the healthy cluster (a layout, not an incident);
//   - operator-unresolved-<v>: BILLING's JWT removed from every server's
//     resolver folder, all servers restarted; then the remedy (the JWT pushed
//     again with $SYS.REQ.CLAIMS.UPDATE, as `nsc push` does) carried out and
//     recorded in want.json expect.remedy;
//   - operator-expired-<v>: BILLING's JWT replaced by one that expires within
//     seconds, the expiry passed, all servers restarted; then a fresh JWT
//     pushed and recorded the same way.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

func operatorScenarios() []Scenario {
	var out []Scenario
	for _, v := range []string{"v2.12.15", "v2.15.3"} {
		out = append(out, operatorScenario(v))
	}
	return out
}

func operatorScenario(v string) Scenario {
	return Scenario{Name: "operator-" + v, Timeout: 14 * time.Minute,
		Doc: "operator mode (JWT accounts SHOP/BILLING, full resolver), " + v + ": healthy, one account's JWT removed, one expired (3 bundles)",
		Run: func(ctx context.Context, env *Env) error { return operatorRun(ctx, env, v) }}
}

// opAccount is one account of the operator: its keys, JWT and a user.
type opAccount struct {
	Name     string
	KP       nkeys.KeyPair
	Pub      string
	JWT      string
	UserJWT  string
	UserSeed []byte
}

type operatorKeys struct {
	Operator nkeys.KeyPair
	OpJWT    string
	Sys      *opAccount
	Shop     *opAccount
	Billing  *opAccount
}

func newOpAccount(op nkeys.KeyPair, name string, js bool, expires int64) (*opAccount, error) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		return nil, err
	}
	a := &opAccount{Name: name, KP: kp}
	if a.Pub, err = kp.PublicKey(); err != nil {
		return nil, err
	}
	if err := a.sign(op, js, expires); err != nil {
		return nil, err
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = strings.ToLower(name) + "-user"
	if a.UserJWT, err = uc.Encode(kp); err != nil {
		return nil, err
	}
	a.UserSeed, err = ukp.Seed()
	return a, err
}

// sign (re)issues the account's JWT: JetStream unlimited when js, and an
// expiry (unix seconds) when expires > 0.
func (a *opAccount) sign(op nkeys.KeyPair, js bool, expires int64) error {
	ac := jwt.NewAccountClaims(a.Pub)
	ac.Name = a.Name
	if js {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	}
	ac.Expires = expires
	var err error
	a.JWT, err = ac.Encode(op)
	return err
}

func newOperatorKeys() (*operatorKeys, error) {
	op, err := nkeys.CreateOperator()
	if err != nil {
		return nil, err
	}
	k := &operatorKeys{Operator: op}
	if k.Sys, err = newOpAccount(op, "SYS", false, 0); err != nil {
		return nil, err
	}
	if k.Shop, err = newOpAccount(op, "SHOP", true, 0); err != nil {
		return nil, err
	}
	if k.Billing, err = newOpAccount(op, "BILLING", true, 0); err != nil {
		return nil, err
	}
	opub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	oc.Name = "JSF"
	oc.SystemAccount = k.Sys.Pub
	if k.OpJWT, err = oc.Encode(op); err != nil {
		return nil, err
	}
	return k, nil
}

// operatorConfig is the operator-mode part of every server's config.
func (k *operatorKeys) config() string {
	return fmt.Sprintf("operator: %q\nsystem_account: %s\nresolver: {\n  type: full\n  dir: \"jwt\"\n  allow_delete: true\n  interval: \"2m\"\n}\n",
		k.OpJWT, k.Sys.Pub)
}

func (a *opAccount) connect(ss ...*Server) (*nats.Conn, jetstream.JetStream, error) {
	var urls []string
	for _, s := range ss {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", s.ClientPort))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.Name("jsforensics-gen-"+strings.ToLower(a.Name)),
		nats.UserJWTAndSeed(a.UserJWT, string(a.UserSeed)), nats.Timeout(5*time.Second),
		nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// OperatorAccount is one account as want.json expect records it.
type OperatorAccount struct {
	Name      string   `json:"name"`   // the JWT's name claim
	PubKey    string   `json:"pubkey"` // how the servers name it
	JetStream bool     `json:"jetstream"`
	Streams   []string `json:"streams,omitempty"`
	Expires   int64    `json:"expires,omitempty"` // the JWT's exp of the bundle's state (unix s)
}

// OperatorExpect is want.json expect of the operator bundles.
type OperatorExpect struct {
	Mode          string              `json:"mode"`    // "operator"
	Variant       string              `json:"variant"` // healthy, unresolved, expired
	Operator      string              `json:"operator"`
	SystemAccount string              `json:"system_account"`
	Accounts      []OperatorAccount   `json:"accounts"`
	ResolverDirs  map[string]string   `json:"resolver_dirs"`        // server -> folder in the bundle
	ResolverFiles map[string][]string `json:"resolver_files"`       // server -> JWT files in the bundle
	Unresolved    string              `json:"unresolved,omitempty"` // the account (pubkey) the servers cannot load
	How           string              `json:"how,omitempty"`
	StreamsOnDisk map[string][]string `json:"streams_on_disk,omitempty"` // server -> "acc/stream" folders of the unresolved account
	StreamsInJSZ  map[string][]string `json:"streams_in_jsz"`            // server -> "acc/stream" its /jsz lists
	// Unserved: per server, the unresolved account's streams as that
	// server's /jsz listed them before (the healthy capture of the same
	// run): on disk and in the meta state, in no /jsz now.
	Unserved map[string][]WantStream    `json:"unserved,omitempty"`
	Healthz  map[string]json.RawMessage `json:"healthz"`
	LogLines map[string][]string        `json:"log_lines,omitempty"`
	Remedy   *OperatorRemedy            `json:"remedy,omitempty"`
	// Findings the analysis must raise, derived from what the servers said:
	// one account-unresolved per server whose /healthz could not look the
	// account up.
	Findings    []OperatorFinding            `json:"findings,omitempty"`
	IssuerFiles []string                     `json:"issuer_files,omitempty"`      // account JWTs as issued, outside the servers' folders
	Expired     map[string]map[string]string `json:"expired_jwt_files,omitempty"` // server -> file -> "present"/"removed" at the capture
}

// OperatorFinding is one finding want.json expects (bundles_test.go expectedFinding).
type OperatorFinding struct {
	Code    string `json:"code"`
	Server  string `json:"server"`
	Account string `json:"account"`
	Kind    string `json:"kind,omitempty"`
}

// healthzFindings are the account-unresolved findings the captured /healthz
// answers call for: a server that says it cannot look acc up.
func healthzFindings(caps map[string]*Capture) []OperatorFinding {
	var out []OperatorFinding
	for _, n := range sortedCaptureNames(caps) {
		var h struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(caps[n].Files["healthz"], &h) != nil {
			continue
		}
		const marker = `JetStream can not lookup account "`
		i := strings.Index(h.Error, marker)
		if i < 0 {
			continue
		}
		rest := h.Error[i+len(marker):]
		j := strings.IndexByte(rest, '"')
		if j <= 0 {
			continue
		}
		f := OperatorFinding{Code: "account-unresolved", Server: n, Account: rest[:j]}
		if strings.Contains(rest[j:], "account jwt not found") {
			f.Kind = "not-in-resolver"
		}
		out = append(out, f)
	}
	return out
}

func sortedCaptureNames(caps map[string]*Capture) []string {
	var out []string
	for n := range caps {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// OperatorRemedy is the account JWT restored on the running servers.
type OperatorRemedy struct {
	Action        string              `json:"action"`
	Request       string              `json:"request"`
	Answers       []string            `json:"answers"`
	StreamsBefore map[string][]string `json:"streams_before"`
	AfterPush     map[string][]string `json:"streams_after_push"`
	PushWait      string              `json:"push_wait"`
	Restarted     bool                `json:"restarted"`
	RestartOrder  []string            `json:"restart_order,omitempty"` // one server at a time
	AfterRestart  map[string][]string `json:"streams_after_restart,omitempty"`
	Messages      map[string]uint64   `json:"messages_after"`  // "acc/stream" -> messages (first server hosting it)
	MessagesWant  map[string]uint64   `json:"messages_before"` // the same in the healthy capture
	HealthzAfter  map[string]string   `json:"healthz_after"`
	JWTFilesAfter map[string][]string `json:"resolver_files_after"`
	Proven        bool                `json:"proven"`
	Why           string              `json:"why,omitempty"`
}

var operatorLogPattern = regexp.MustCompile(`(?i)lookup account|account expired|expired|validation|not found|JWT|resolver|claim`)

func operatorRun(ctx context.Context, env *Env, v string) error {
	k, err := newOperatorKeys()
	if err != nil {
		return err
	}
	names := []string{"op-0", "op-1", "op-2"}
	c, err := NewCluster(ctx, env.Scratch, v, "ops", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		s.WorkDir = s.Dir
		s.Extra = k.config()
		for _, a := range []*opAccount{k.Sys, k.Shop, k.Billing} {
			if err := writeFileAll(filepath.Join(s.Dir, "jwt", a.Pub+".jwt"), []byte(a.JWT)); err != nil {
				return err
			}
		}
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	streams, err := operatorWorkload(ctx, c, k)
	if err != nil {
		return err
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	accounts := func(billingExp int64) []OperatorAccount {
		return []OperatorAccount{
			{Name: "SYS", PubKey: k.Sys.Pub},
			{Name: "SHOP", PubKey: k.Shop.Pub, JetStream: true, Streams: streams[k.Shop.Pub]},
			{Name: "BILLING", PubKey: k.Billing.Pub, JetStream: true, Streams: streams[k.Billing.Pub], Expires: billingExp},
		}
	}
	opub, _ := k.Operator.PublicKey()
	base := func(variant string, caps map[string]*Capture, billingExp int64) *OperatorExpect {
		e := &OperatorExpect{Mode: "operator", Variant: variant, Operator: opub, SystemAccount: k.Sys.Pub,
			Accounts: accounts(billingExp), ResolverDirs: map[string]string{}, ResolverFiles: map[string][]string{},
			StreamsInJSZ: map[string][]string{}, Healthz: map[string]json.RawMessage{}}
		for _, s := range c.Servers {
			e.ResolverDirs[s.Name] = s.Name + "/jwt"
			e.StreamsInJSZ[s.Name] = jszStreams(caps[s.Name])
			e.Healthz[s.Name] = json.RawMessage(caps[s.Name].Files["healthz"])
		}
		return e
	}
	layout := LayoutPerServer()
	writeBundle := func(name, variant string, caps map[string]*Capture, e *OperatorExpect, more map[string][]byte) error {
		extra := map[string][]byte{}
		for p, b := range more {
			extra[p] = b
			e.IssuerFiles = append(e.IssuerFiles, p)
		}
		sort.Strings(e.IssuerFiles)
		for _, s := range c.Servers {
			files, err := filepath.Glob(filepath.Join(s.Dir, "jwt", "*"))
			if err != nil {
				return err
			}
			var rel []string
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				p := s.Name + "/jwt/" + filepath.Base(f)
				extra[p] = data
				rel = append(rel, p)
			}
			sort.Strings(rel)
			e.ResolverFiles[s.Name] = rel
		}
		b := &Bundle{Name: name, Version: strings.TrimPrefix(v, "v"), Layout: layout, Servers: c.Servers,
			Captures: caps, Extra: extra, Expect: e}
		return b.Write(env.Scratch, env.Out)
	}
	if err := writeBundle("operator-"+v, "healthy", caps, base("healthy", caps, 0), nil); err != nil {
		return err
	}

	// (b) BILLING's JWT removed from every resolver folder; restart.
	for _, s := range c.Servers {
		if err := os.Remove(filepath.Join(s.Dir, "jwt", k.Billing.Pub+".jwt")); err != nil {
			return err
		}
	}
	ucaps, err := operatorBrokenCapture(ctx, c, k)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	ue := base("unresolved", ucaps, 0)
	ue.Unresolved = k.Billing.Pub
	ue.Findings = healthzFindings(ucaps)
	if ue.Unserved, err = unservedStreams(c, caps, k.Billing.Pub); err != nil {
		return err
	}
	ue.How = "the account's JWT file removed from every server's resolver folder, then every server restarted"
	ue.StreamsOnDisk = accountFolders(c, k.Billing.Pub)
	ue.LogLines = operatorLogLines(c)
	uname := "operator-unresolved-" + v
	// The account JWTs as issued (what nsc keeps and an operator attaches to
	// a ticket), outside any server's folder: the removed account's name.
	issued := map[string][]byte{}
	for _, a := range []*opAccount{k.Shop, k.Billing} {
		issued["issued-jwts/"+a.Name+".jwt"] = []byte(a.JWT)
	}
	if err := writeBundle(uname, "unresolved", ucaps, ue, issued); err != nil {
		return err
	}
	rem, err := operatorRemedy(ctx, c, k, k.Billing.JWT, streams, messagesOf(caps))
	if err != nil {
		return err
	}
	ue.Remedy = rem
	if err := rewriteExpect(filepath.Join(env.Out, uname, "want.json"), ue); err != nil {
		return err
	}
	if err := writeOperatorOutcome(filepath.Join(env.Out, uname), uname, v, c, k.Billing.Pub, rem); err != nil {
		return err
	}

	// (c) BILLING's JWT replaced by one that expires in seconds.
	exp := time.Now().Add(12 * time.Second).Unix()
	if err := k.Billing.sign(k.Operator, true, exp); err != nil {
		return err
	}
	if err := pushClaims(ctx, c, k, k.Billing.JWT, nil); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, "BILLING JWT with exp on every server", func() (bool, error) {
		for _, s := range c.Servers {
			b, err := os.ReadFile(filepath.Join(s.Dir, "jwt", k.Billing.Pub+".jwt"))
			if err != nil || string(b) != k.Billing.JWT {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	for time.Now().Unix() <= exp+2 {
		time.Sleep(500 * time.Millisecond)
	}
	if err := c.Stop(); err != nil {
		return err
	}
	files := map[string]map[string]string{}
	for _, s := range c.Servers {
		files[s.Name] = map[string]string{}
		_, err := os.Stat(filepath.Join(s.Dir, "jwt", k.Billing.Pub+".jwt"))
		files[s.Name][k.Billing.Pub+".jwt"] = map[bool]string{true: "present", false: "removed"}[err == nil]
	}
	ecaps, err := operatorBrokenCapture(ctx, c, k)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	ee := base("expired", ecaps, exp)
	ee.Unresolved = k.Billing.Pub
	ee.Findings = healthzFindings(ecaps)
	if ee.Unserved, err = unservedStreams(c, caps, k.Billing.Pub); err != nil {
		return err
	}
	ee.How = fmt.Sprintf("the account's JWT re-issued with exp %d and pushed to the running servers, the expiry passed, every server restarted", exp)
	ee.StreamsOnDisk = accountFolders(c, k.Billing.Pub)
	ee.LogLines = operatorLogLines(c)
	for _, s := range c.Servers {
		_, err := os.Stat(filepath.Join(s.Dir, "jwt", k.Billing.Pub+".jwt"))
		files[s.Name][k.Billing.Pub+".jwt"] += map[bool]string{true: ", present after restart", false: ", removed after restart"}[err == nil]
	}
	ee.Expired = files
	ename := "operator-expired-" + v
	if err := writeBundle(ename, "expired", ecaps, ee, nil); err != nil {
		return err
	}
	if err := k.Billing.sign(k.Operator, true, 0); err != nil {
		return err
	}
	rem, err = operatorRemedy(ctx, c, k, k.Billing.JWT, streams, messagesOf(caps))
	if err != nil {
		return err
	}
	ee.Remedy = rem
	if err := rewriteExpect(filepath.Join(env.Out, ename, "want.json"), ee); err != nil {
		return err
	}
	return writeOperatorOutcome(filepath.Join(env.Out, ename), ename, v, c, k.Billing.Pub, rem)
}

// writeOperatorOutcome records the remedy run as the remedy runner's
// outcome file (DIR/remedy-outcome.json), which the catalogue's proven
// entries cite.
func writeOperatorOutcome(dir, bundle, v string, c *Cluster, acc string, r *OperatorRemedy) error {
	type outcome struct {
		RemedyID string          `json:"remedy_id"`
		Findings []string        `json:"findings"`
		Steps    []string        `json:"steps"`
		Proven   bool            `json:"proven"`
		Why      string          `json:"why,omitempty"`
		Run      *OperatorRemedy `json:"run"`
		// Verified: the remedy's verify step, checked (VerifyCheck).
		Verified []VerifyCheck `json:"verified"`
	}
	o := struct {
		Bundle   string    `json:"bundle"`
		Version  string    `json:"version"`
		Analyzer string    `json:"analyzer"`
		Outcomes []outcome `json:"outcomes"`
	}{Bundle: bundle, Version: strings.TrimPrefix(v, "v"),
		Analyzer: "carried out by the scenario itself (testdata/gen scen_operator.go), the account-unresolved findings of the bundle"}
	oc := outcome{RemedyID: "account-jwt-restore", Proven: r.Proven, Why: strings.TrimSpace(r.Why), Run: r}
	for _, s := range c.Servers {
		oc.Findings = append(oc.Findings, "account-unresolved "+s.Name+" "+acc)
	}
	oc.Steps = append(oc.Steps, "save: every server's store and resolver folder left as the bundle holds them (the run is on the scenario's servers after the bundle was written)",
		"action: "+r.Action+"; answers: "+fmt.Sprint(len(r.Answers)),
		fmt.Sprintf("waited %s: streams back after the push alone: %v", r.PushWait, !r.Restarted))
	if r.Restarted {
		oc.Steps = append(oc.Steps, "action: restarted one server at a time, each back with the meta leader before the next: "+strings.Join(r.RestartOrder, ", "))
	}
	oc.Steps = append(oc.Steps, fmt.Sprintf("verify: healthz %v; messages per stream %v (before %v)", r.HealthzAfter, r.Messages, r.MessagesWant))
	healthy := len(r.HealthzAfter) > 0
	for _, h := range r.HealthzAfter {
		healthy = healthy && h == "ok"
	}
	oc.Verified = []VerifyCheck{
		{Check: "/healthz of every server says ok", Held: healthy},
		{Check: "the account's streams are listed with the messages they held", Held: len(r.Messages) > 0 && maps.Equal(r.Messages, r.MessagesWant)},
	}
	o.Outcomes = []outcome{oc}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "remedy-outcome.json"), append(b, '\n'), 0o644)
}

// operatorWorkload creates the streams and consumers of SHOP and BILLING;
// it returns the streams per account public key.
func operatorWorkload(ctx context.Context, c *Cluster, k *operatorKeys) (map[string][]string, error) {
	type st struct {
		name, subj string
		replicas   int
		msgs       int
		cons       string
		fetch, ack int
	}
	plan := map[*opAccount][]st{
		k.Shop:    {{"ORDERS", "orders.>", 3, 20, "PROC", 6, 4}, {"CARTS", "carts.>", 1, 10, "CART_SYNC", 3, 3}},
		k.Billing: {{"INVOICES", "invoices.>", 3, 15, "PAY", 5, 2}, {"LEDGER", "ledger.>", 1, 12, "", 0, 0}},
	}
	out := map[string][]string{}
	for _, a := range []*opAccount{k.Shop, k.Billing} {
		nc, js, err := a.connect(c.Servers...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name, err)
		}
		for _, p := range plan[a] {
			cfg := jetstream.StreamConfig{Name: p.name, Subjects: []string{p.subj}, Replicas: p.replicas, Storage: jetstream.FileStorage}
			if err := retry(ctx, "create "+p.name, func(ctx context.Context) error { _, err := js.CreateStream(ctx, cfg); return err }); err != nil {
				nc.Close()
				return nil, err
			}
			out[a.Pub] = append(out[a.Pub], p.name)
			for i := 1; i <= p.msgs; i++ {
				subj := strings.TrimSuffix(p.subj, ">") + fmt.Sprintf("n%d", i%3)
				if _, err := publish(ctx, js, subj, payload(strings.ToLower(a.Name), i, 64), nil); err != nil {
					nc.Close()
					return nil, err
				}
			}
			if p.cons == "" {
				continue
			}
			var cons jetstream.Consumer
			if err := retry(ctx, "consumer "+p.cons, func(ctx context.Context) error {
				var err error
				cons, err = js.CreateOrUpdateConsumer(ctx, p.name, jetstream.ConsumerConfig{Durable: p.cons, AckPolicy: jetstream.AckExplicitPolicy,
					AckWait: time.Hour})
				return err
			}); err != nil {
				nc.Close()
				return nil, err
			}
			n := 0
			if err := retry(ctx, "fetch "+p.cons, func(ctx context.Context) error {
				batch, err := cons.Fetch(p.fetch-n, jetstream.FetchMaxWait(3*time.Second))
				if err != nil {
					return err
				}
				for m := range batch.Messages() {
					if n < p.ack {
						if err := m.DoubleAck(ctx); err != nil {
							return err
						}
					}
					n++
				}
				if n != p.fetch {
					return fmt.Errorf("%s > %s: fetched %d of %d (%v)", p.name, p.cons, n, p.fetch, batch.Error())
				}
				return nil
			}); err != nil {
				nc.Close()
				return nil, err
			}
		}
		nc.Close()
	}
	return out, nil
}

// operatorBrokenCapture starts every server on the changed resolver folders,
// waits for a meta leader and for every server's /healthz to have been
// answered after the meta leader is known (the account lookups happen as
// the meta layer applies its assignments), and captures.
func operatorBrokenCapture(ctx context.Context, c *Cluster, k *operatorKeys) (map[string]*Capture, error) {
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	// The lookups fail while the meta layer recovers; wait until every
	// server's /healthz has said the same thing 4 times, a second apart (each
	// unhealthy answer is a log line of the server's).
	prev, stable := "", 0
	for deadline := time.Now().Add(60 * time.Second); stable < 4; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("healthz did not settle in 60 s")
		}
		time.Sleep(time.Second)
		var parts []string
		for _, s := range c.Servers {
			b, err := s.Get(ctx, "/healthz")
			if err != nil {
				parts = append(parts, s.Name+"=?")
				continue
			}
			parts = append(parts, s.Name+"="+string(b))
		}
		if cur := strings.Join(parts, "|"); cur == prev {
			stable++
		} else {
			prev, stable = cur, 0
		}
	}
	caps, err := CaptureAll(ctx, c)
	if err != nil {
		return nil, err
	}
	return caps, nil
}

// jszStreams lists "acc/stream" of a capture's /jsz.
func jszStreams(cp *Capture) []string {
	var j jszInfo
	if cp == nil || json.Unmarshal(cp.Files["jsz"], &j) != nil {
		return nil
	}
	out := []string{}
	for _, a := range j.Accounts {
		for _, st := range a.Streams {
			out = append(out, a.Key()+"/"+st.Name)
		}
	}
	sort.Strings(out)
	return out
}

// accountFolders lists the stream folders of acc in every server's store.
func accountFolders(c *Cluster, acc string) map[string][]string {
	out := map[string][]string{}
	for _, s := range c.Servers {
		es, _ := os.ReadDir(filepath.Join(s.JSRoot(), acc, "streams"))
		out[s.Name] = []string{}
		for _, e := range es {
			out[s.Name] = append(out[s.Name], acc+"/"+e.Name())
		}
	}
	return out
}

// operatorLogLines keeps the log lines about accounts and JWTs (a message
// repeated, such as each failed health check, three times at most).
func operatorLogLines(c *Cluster) map[string][]string {
	out := map[string][]string{}
	for _, s := range c.Servers {
		b, _ := os.ReadFile(s.LogFile)
		seen := map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			if !operatorLogPattern.MatchString(l) || strings.Contains(l, "Trusted Operators") {
				continue
			}
			msg := l
			if i := strings.Index(l, "] ["); i >= 0 {
				msg = l[i:]
			}
			if seen[msg]++; seen[msg] > 3 {
				continue
			}
			out[s.Name] = append(out[s.Name], l)
		}
	}
	return out
}

// pushClaims publishes an account JWT on $SYS.REQ.CLAIMS.UPDATE as the
// system account's user (what `nsc push` does) and gathers the answers.
func pushClaims(ctx context.Context, c *Cluster, k *operatorKeys, accJWT string, answers *[]string) error {
	nc, _, err := k.Sys.connect(c.Running()...)
	if err != nil {
		return err
	}
	defer nc.Close()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	if err := nc.PublishRequest("$SYS.REQ.CLAIMS.UPDATE", inbox, []byte(accJWT)); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * time.Second)
	got := 0
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		got++
		if answers != nil {
			*answers = append(*answers, string(m.Data))
		}
	}
	if got == 0 {
		return fmt.Errorf("claims update: no answer")
	}
	return nil
}

// operatorRemedy restores the account's JWT on the running servers: the
// JWT pushed with $SYS.REQ.CLAIMS.UPDATE; then up to 30 s for the
// account's streams to be listed again by the servers hosting them; if they
// are not, every server is restarted and checked again.
func operatorRemedy(ctx context.Context, c *Cluster, k *operatorKeys, accJWT string, streams map[string][]string, msgs map[string]uint64) (*OperatorRemedy, error) {
	r := &OperatorRemedy{Action: "push the account's JWT to the running servers (nsc push / nats server request with $SYS.REQ.CLAIMS.UPDATE)",
		Request: "$SYS.REQ.CLAIMS.UPDATE <account JWT>", HealthzAfter: map[string]string{}, Messages: map[string]uint64{},
		JWTFilesAfter: map[string][]string{}, MessagesWant: msgs}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	time.Sleep(5 * time.Second)
	r.StreamsBefore = liveStreams(ctx, c)
	if err := pushClaims(ctx, c, k, accJWT, &r.Answers); err != nil {
		return nil, err
	}
	want := 0
	for _, ss := range streams {
		want += len(ss)
	}
	start := time.Now()
	back := func() bool {
		seen := map[string]bool{}
		for _, ss := range liveStreams(ctx, c) {
			for _, s := range ss {
				seen[s] = true
			}
		}
		return len(seen) == want
	}
	_ = waitFor(ctx, 30*time.Second, "streams back after push", func() (bool, error) { return back(), nil })
	r.PushWait = time.Since(start).Round(time.Second).String()
	r.AfterPush = liveStreams(ctx, c)
	if !back() {
		// One server at a time, each back with the meta leader before the next.
		r.Restarted = true
		for _, s := range c.Servers {
			if err := s.Stop(); err != nil {
				return nil, err
			}
			if err := s.Start(ctx); err != nil {
				return nil, err
			}
			if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
				return nil, err
			}
			r.RestartOrder = append(r.RestartOrder, s.Name)
		}
		_ = waitFor(ctx, 60*time.Second, "streams back after restart", func() (bool, error) { return back(), nil })
		r.AfterRestart = liveStreams(ctx, c)
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		r.Why = err.Error()
	}
	for _, s := range c.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err == nil {
			for _, a := range j.Accounts {
				for _, st := range a.Streams {
					if _, ok := r.Messages[a.Key()+"/"+st.Name]; !ok {
						r.Messages[a.Key()+"/"+st.Name] = st.State.Msgs
					}
				}
			}
		}
		var h struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		_ = s.GetJSON(ctx, "/healthz", &h)
		r.HealthzAfter[s.Name] = strings.TrimSpace(h.Status + " " + h.Error)
		files, _ := filepath.Glob(filepath.Join(s.Dir, "jwt", "*.jwt"))
		for _, f := range files {
			r.JWTFilesAfter[s.Name] = append(r.JWTFilesAfter[s.Name], filepath.Base(f))
		}
	}
	r.Proven = back() && r.Why == ""
	for k, n := range msgs {
		if r.Messages[k] != n {
			r.Proven = false
			r.Why += fmt.Sprintf(" %s: %d messages, %d before", k, r.Messages[k], n)
		}
	}
	for _, h := range r.HealthzAfter {
		if h != "ok" {
			r.Proven = false
			r.Why += " healthz " + h
		}
	}
	logf("remedy: restarted=%v proven=%v %s", r.Restarted, r.Proven, r.Why)
	return r, nil
}

// liveStreams is every running server's "acc/stream" list from /jsz.
func liveStreams(ctx context.Context, c *Cluster) map[string][]string {
	out := map[string][]string{}
	for _, s := range c.Running() {
		b, err := s.Get(ctx, jszCapturePath)
		if err != nil {
			continue
		}
		out[s.Name] = jszStreams(&Capture{Files: map[string][]byte{"jsz": b}})
	}
	return out
}

// rewriteExpect replaces want.json's expect (after a run that followed the bundle).
func rewriteExpect(path string, e any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	eb, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var w Want
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	w.Expect = json.RawMessage(eb)
	out, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// messagesOf is "acc/stream" -> messages of the captures (first server hosting it).
func messagesOf(caps map[string]*Capture) map[string]uint64 {
	out := map[string]uint64{}
	for _, cp := range caps {
		var j jszInfo
		if json.Unmarshal(cp.Files["jsz"], &j) != nil {
			continue
		}
		for _, a := range j.Accounts {
			for _, st := range a.Streams {
				out[a.Key()+"/"+st.Name] = st.State.Msgs
			}
		}
	}
	return out
}

// unservedStreams is, per server, acc's streams as the server's healthy
// capture listed them.
func unservedStreams(c *Cluster, healthy map[string]*Capture, acc string) (map[string][]WantStream, error) {
	out := map[string][]WantStream{}
	for _, s := range c.Servers {
		ws, err := wantServer(s, healthy[s.Name])
		if err != nil {
			return nil, err
		}
		for _, st := range ws.Streams {
			if st.Account == acc {
				out[s.Name] = append(out[s.Name], st)
			}
		}
	}
	return out, nil
}
