package main

// perturbed-tombstones-<version> (issue 31, salvage that follows the
// cluster's truth): an R3 stream SHOP > LEDGER whose last messages were
// deleted through the API (their tombstones end the only block), all three
// servers stopped, and on a copy ONE replica's last block cut inside those
// tombstones: its index.db, the other two replicas and the stream group's
// raft state still record the deletes. The three servers started on a
// further copy of that are the oracle: per sequence, what a get from the
// stream returns (subject and data), and each replica's /jsz state.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	tombAccount = "SHOP"
	tombStream  = "LEDGER"
	tombMsgs    = 300
)

// tombDeletes are the sequences deleted through the API, in this order:
// the torn replica's cut keeps the tombstones of the first half.
var tombDeletes = []uint64{17, 42, 99, 150, 201, 250, 288, 299}

// shopAccounts: a system account SYS and the account SHOP with JetStream.
const shopAccounts = `accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  SHOP: { jetstream: enabled, users: [ {user: shop, password: shop} ] }
}
system_account: SYS`

// TombOracle is oracle.json of perturbed-tombstones-<v>.
type TombOracle struct {
	Oracle
	Account string `json:"account"`
	Stream  string `json:"stream"`
	// Deleted: the sequences deleted through the API before the stop.
	Deleted []uint64 `json:"deleted"`
	// Torn: the server whose last block was cut.
	Torn string `json:"torn"`
	// Leader: the stream leader of the restarted cluster when Msgs was read.
	Leader string `json:"leader"`
	// Msgs: per sequence 1..last, what a get from the restarted cluster's
	// stream returned (sequences it answered "not found" for are absent).
	Msgs []TombMsg `json:"msgs"`
	// TornLed: the sequences the stream served once the torn replica was
	// made its leader (a stepdown with it preferred; from 2.11), and why
	// not when it could not be.
	TornLed    []SeqRange `json:"torn_led,omitempty"`
	TornLedErr string     `json:"torn_led_error,omitempty"`
	// Direct: per server, the sequences 1..last a direct get
	// ($JS.API.DIRECT.GET, allow_direct) returned a message for, asked by
	// a client connected to that server only (a replica answers direct gets
	// of its own clients first); DirectErr why not.
	Direct    map[string][]SeqRange `json:"direct"`
	DirectErr map[string]string     `json:"direct_error,omitempty"`
}

// TombMsg is one message a get returned.
type TombMsg struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Data    string `json:"data"`
}

func tombScenario(v string) Scenario {
	return Scenario{Name: "perturbed-tombstones-" + v, Doc: "R3 stream SHOP > LEDGER, messages deleted through the API, one replica's last block cut inside those tombstones, cluster restarted on a copy (testdata/perturbed)", Timeout: 6 * time.Minute,
		Run: func(ctx context.Context, env *Env) error { return perturbTombstones(ctx, env, v) }}
}

func shopCluster(ctx context.Context, dir, v string, names []string) (*Cluster, error) {
	c, err := NewCluster(ctx, dir, v, "shop", names)
	if err != nil {
		return nil, err
	}
	for _, s := range c.Servers {
		s.Extra = shopAccounts
		s.User, s.Password = "shop", "shop"
	}
	return c, nil
}

func perturbTombstones(ctx context.Context, env *Env, v string) error {
	name := "perturbed-tombstones-" + v
	names := []string{"t1", "t2", "t3"}
	c, err := shopCluster(ctx, filepath.Join(env.Scratch, "write"), v, names)
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := c.WaitMetaLeader(ctx, 30*time.Second); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	var st jetstream.Stream
	err = retry(ctx, "create "+tombStream, func(ctx context.Context) error {
		var err error
		st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: tombStream, Subjects: []string{"ledger.>"}, Replicas: 3, Storage: jetstream.FileStorage, AllowDirect: true})
		return err
	})
	if err != nil {
		nc.Close()
		return err
	}
	for i := 1; i <= tombMsgs; i++ {
		data := []byte(fmt.Sprintf(`{"entry":%d,"amount":%d}`, i, i*37%1000))
		if _, err := publish(ctx, js, fmt.Sprintf("ledger.acct%d", i%7), data, nil); err != nil {
			nc.Close()
			return err
		}
	}
	for _, seq := range tombDeletes {
		if err := retry(ctx, "delete", func(ctx context.Context) error { return st.DeleteMsg(ctx, seq) }); err != nil {
			nc.Close()
			return err
		}
	}
	if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
		nc.Close()
		return err
	}
	o := &TombOracle{Oracle: Oracle{Name: name, Version: v, Mode: "cluster", Log: map[string][]string{}},
		Account: tombAccount, Stream: tombStream, Deleted: tombDeletes}
	for i, s := range c.Servers {
		before, ok, err := stateOf(ctx, s, tombStream)
		if err != nil || !ok {
			nc.Close()
			return fmt.Errorf("before: %s: %v", s.Name, err)
		}
		if i == 0 {
			if before.Served, err = served(ctx, js, tombStream, before.LastSeq); err != nil {
				nc.Close()
				return err
			}
		}
		o.Streams = append(o.Streams, OracleStream{Server: s.Name, Account: tombAccount, Stream: tombStream, Before: before})
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}

	roots, logs := map[string]string{}, map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(env.Scratch, "damaged", s.Name)
		logs[s.Name] = s.LogFile
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}
	// The torn replica: not the last stream leader, so that the restarted
	// cluster is not led by it by default.
	o.Torn = names[len(names)-1]
	d, err := cutInTombstones(roots[o.Torn], tombAccount, tombStream)
	if err != nil {
		return err
	}
	d.Server, d.File = o.Torn, "store-"+o.Torn+"/"+d.File
	o.Damage = append(o.Damage, d)

	r, err := shopCluster(ctx, filepath.Join(env.Scratch, "restart"), v, names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for _, s := range r.Servers {
		if err := copyTree(roots[s.Name], s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := waitAnyMetaLeader(ctx, r, 30*time.Second); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 60*time.Second); err != nil {
		logf("%s: restarted cluster not quiet (%v); recording what it serves now", name, err)
		o.NotQuiet = err.Error()
	}
	nc, js, err = connectWait(ctx, r.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	for i, s := range r.Servers {
		after, ok, err := stateOf(ctx, s, tombStream)
		if err != nil || !ok {
			after.ServedErr = fmt.Sprintf("no /jsz state of %s (%v)", tombStream, err)
		}
		o.Streams[i].After = after
	}
	last := o.Streams[0].Before.LastSeq
	if o.Leader, o.Msgs, err = tombServed(ctx, js, last); err != nil {
		return err
	}
	o.Streams[0].After.Served = msgRanges(o.Msgs)
	o.Direct, o.DirectErr = map[string][]SeqRange{}, map[string]string{}
	for _, s := range r.Servers {
		got, err := directGets(s, last)
		o.Direct[s.Name] = got
		if err != nil {
			o.DirectErr[s.Name] = err.Error()
		}
	}
	o.TornLed, o.TornLedErr = servedLedBy(ctx, nc, js, r, o.Torn, last)
	nc.Close()
	if err := r.Stop(); err != nil {
		return err
	}
	for _, s := range r.Servers {
		o.Log[s.Name] = newLogLines(s.LogFile, 0)
	}
	logf("%s: deleted %v; torn %s (%d tombstones kept, %d cut); served %d of 1..%d, leader %s; torn-led %v %s",
		name, o.Deleted, o.Torn, d.TombstonesKept, d.TombstonesCut, len(o.Msgs), last, o.Leader, o.TornLed, o.TornLedErr)
	return writePerturbedAny(env, name, o, roots, logs)
}

// cutInTombstones cuts the stream's last block at the start of its middle
// tombstone: the first half of the tombstones is kept.
func cutInTombstones(root, account, stream string) (Damage, error) {
	msgs := filepath.Join(root, account, "streams", stream, "msgs")
	p, err := lastBlock(msgs)
	if err != nil {
		return Damage{}, err
	}
	recs, size, err := blockRecords(p)
	if err != nil {
		return Damage{}, err
	}
	var tombs []blockRecord
	for _, r := range recs {
		if r.tombstone {
			tombs = append(tombs, r)
		}
	}
	if len(tombs) < 2 {
		return Damage{}, fmt.Errorf("%s: %d tombstones, want a run of them at the end", p, len(tombs))
	}
	d, err := cutBlock(p, recs, size, tombs[len(tombs)/2].off, "cut-in-tombstones")
	rel, _ := filepath.Rel(root, p)
	d.Stream, d.File = stream, filepath.ToSlash(rel)
	return d, err
}

// tombServed asks the stream for every sequence 1..last and returns its
// leader and the messages it returned.
func tombServed(ctx context.Context, js jetstream.JetStream, last uint64) (string, []TombMsg, error) {
	var st jetstream.Stream
	err := retry(ctx, "stream "+tombStream, func(ctx context.Context) error {
		var err error
		st, err = js.Stream(ctx, tombStream)
		return err
	})
	if err != nil {
		return "", nil, err
	}
	leader := ""
	if ci := st.CachedInfo(); ci != nil && ci.Cluster != nil {
		leader = ci.Cluster.Leader
	}
	var out []TombMsg
	for seq := uint64(1); seq <= last; seq++ {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		m, err := st.GetMsg(cctx, seq)
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return leader, out, fmt.Errorf("get %s seq %d: %w", tombStream, seq, err)
		}
		out = append(out, TombMsg{Seq: seq, Subject: m.Subject, Data: string(m.Data)})
	}
	return leader, out, nil
}

func msgRanges(msgs []TombMsg) []SeqRange {
	var out []SeqRange
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Last+1 == m.Seq {
			out[n-1].Last = m.Seq
		} else {
			out = append(out, SeqRange{First: m.Seq, Last: m.Seq})
		}
	}
	return out
}

// servedLedBy makes server name the stream leader (stepdown with it
// preferred, tried a few times) and reads what the stream serves then.
func servedLedBy(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, r *Cluster, name string, last uint64) ([]SeqRange, string) {
	for try := 0; try < 6; try++ {
		leader, _, err := tombServed(ctx, js, 0)
		if err != nil {
			return nil, err.Error()
		}
		if leader == name {
			_, msgs, err := tombServed(ctx, js, last)
			if err != nil {
				return nil, err.Error()
			}
			return msgRanges(msgs), ""
		}
		body := fmt.Sprintf(`{"placement":{"preferred":%q}}`, name)
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+tombStream, []byte(body), 5*time.Second); err != nil {
			return nil, "stepdown: " + err.Error()
		}
		_ = waitFor(ctx, 20*time.Second, "stream leader", func() (bool, error) {
			l, _, err := tombServed(ctx, js, 0)
			return err == nil && l != "" && l != leader, nil
		})
	}
	return nil, fmt.Sprintf("%s did not become the stream leader in 6 stepdowns", name)
}

// directGets asks, over a connection to server s only, a direct get of
// every sequence 1..last and returns those it returned a message for.
func directGets(s *Server, last uint64) ([]SeqRange, error) {
	nc, err := nats.Connect(s.ClientURL(), nats.Name("jsforensics-gen-direct"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	var out []SeqRange
	for seq := uint64(1); seq <= last; seq++ {
		m, err := nc.Request("$JS.API.DIRECT.GET."+tombStream, []byte(fmt.Sprintf(`{"seq":%d}`, seq)), 3*time.Second)
		if err != nil {
			return out, fmt.Errorf("direct get %d: %w", seq, err)
		}
		if m.Header.Get("Status") != "" {
			continue // 404 Message Not Found (or another status: no message)
		}
		if n := len(out); n > 0 && out[n-1].Last+1 == seq {
			out[n-1].Last = seq
		} else {
			out = append(out, SeqRange{First: seq, Last: seq})
		}
	}
	return out, nil
}
