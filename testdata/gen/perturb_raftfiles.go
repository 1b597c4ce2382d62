package main

// The raft-file classes of `go run . perturb` (issue 21: "peers.idx/tav.idx/
// commit.idx rewritten by the server at a later term"): the state a copy of
// a running server leaves, where a group folder's small files were copied
// at another moment than its WAL and snapshots.
//
// Per version, the three servers of the cluster base are started again on a
// copy of their stores (every group elects anew, so every term rises), the
// ORDERS stream and PROC consumer leaders are asked to step down (their
// terms rise again), five more messages are published, and once quiet they
// are stopped: that is the later state, written by the same servers.
//
//   - raftfiles-later: the base bundle (stores and logs) with one server's
//     tav.idx, commit.idx and peers.idx of one group (all three, or one of
//     them) taken from the later state;
//   - raftfiles-earlier: the later bundle with those files taken from the
//     base (stale ones).
//
// The oracle is the three servers restarted together on a copy: whether
// the group elects a leader every server names, at which term, whether
// ORDERS is served in full, and what the damaged server logs about the
// group (warnings, errors, truncations). Agrees when, where the servers ran
// it as if nothing were wrong, the report gives no warning or critical
// finding its undamaged bundle does not give; and where the server
// complained or the group did not work, a warning or critical finding names
// the group or one of its files.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

var raftFileClasses = []string{"raftfiles-later", "raftfiles-earlier"}

// raftFileNames are the small files a group folder's copy can take from
// another moment.
var raftFileNames = []string{"tav.idx", "commit.idx", "peers.idx"}

// RaftFilesTruth is what the restarted cluster did (raftfiles-*).
type RaftFilesTruth struct {
	Group   string   `json:"group"`
	Files   []string `json:"files"` // the files taken from the other moment
	Variant string   `json:"variant"`
	// TermIn/TermOut: the tav.idx term in the bundle's group folder before
	// and after the swap.
	TermIn  uint64 `json:"term_in"`
	TermOut uint64 `json:"term_out"`
	// Views: per server, the group in /raftz after the restart.
	Views map[string]raftzGroup `json:"views"`
	// Works: one leader every server names, ORDERS served in full; Late:
	// only after the quiet wait (up to 90 s more).
	Works    bool        `json:"works"`
	Late     bool        `json:"late,omitempty"`
	Orders   ServedState `json:"orders"`
	NotQuiet string      `json:"not_quiet,omitempty"`
	// Complaints: the damaged server's warnings and errors about the group
	// or its files at the restart.
	Complaints []string `json:"complaints,omitempty"`
	// First: the first restart, where it did not work and the figures
	// above are the second's.
	First *RaftFilesTruth `json:"first,omitempty"`
}

// laterState writes the later state of base b: stores and logs of the
// same servers restarted, stepped down and written to once more.
func laterState(ctx context.Context, dir, v string, b *clusterBase, bin string) error {
	r, err := NewCluster(ctx, filepath.Join(dir, "write"), v, "pert", clusterNames)
	if err != nil {
		return err
	}
	defer r.Kill()
	for _, s := range r.Servers {
		if err := copyTree(filepath.Join(b.bundle, "store-"+s.Name), s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	nc, js, err := connectWait(ctx, r.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	for _, subj := range []string{"$JS.API.STREAM.LEADER.STEPDOWN.ORDERS", "$JS.API.CONSUMER.LEADER.STEPDOWN.ORDERS.PROC"} {
		if err := retry(ctx, subj, func(ctx context.Context) error {
			m, err := nc.RequestWithContext(ctx, subj, nil)
			if err != nil {
				return err
			}
			if strings.Contains(string(m.Data), `"error"`) {
				return fmt.Errorf("%s", m.Data)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
			return err
		}
	}
	for i := 0; i < 5; i++ {
		if _, err := publish(ctx, js, "orders.later", payload("later", i, 60), nats.Header{}); err != nil {
			return err
		}
	}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	st, _, err := stateOf(ctx, r.Servers[0], "ORDERS")
	if err != nil {
		return err
	}
	if st.Served, err = served(ctx, js, "ORDERS", st.LastSeq); err != nil {
		return err
	}
	b.laterOrders = st
	nc.Close()
	if err := r.Stop(); err != nil {
		return err
	}
	b.later = filepath.Join(dir, "bundle")
	for _, s := range r.Servers {
		if err := copyTree(s.JSRoot(), filepath.Join(b.later, "store-"+s.Name)); err != nil {
			return err
		}
		if err := copyFile(s.LogFile, filepath.Join(b.later, s.Name+".log")); err != nil {
			return err
		}
	}
	if b.laterPlain, err = analyze(ctx, bin, b.later); err != nil {
		return err
	}
	// The base as the raft-file draws hand it over: stores and logs.
	b.stores = filepath.Join(dir, "base-stores")
	if err := copyTree(b.bundle, b.stores); err != nil {
		return err
	}
	if err := dropCaptures(b.stores); err != nil {
		return err
	}
	if b.storesPlain, err = analyze(ctx, bin, b.stores); err != nil {
		return err
	}
	logf("perturb %s: later state written (ORDERS %s), reports: base stores exit %d, later exit %d", v, rangesKey(st.Served), b.storesPlain.RC, b.laterPlain.RC)
	return nil
}

func dropCaptures(bundle string) error {
	for _, n := range clusterNames {
		ms, _ := filepath.Glob(filepath.Join(bundle, n+"-*.json"))
		for _, m := range ms {
			if err := os.Remove(m); err != nil {
				return err
			}
		}
	}
	return nil
}

var complaintRE = regexp.MustCompile(`\[(WRN|ERR|FTL)\]`)

// raftFilesDraw swaps one group's small files of one server between the
// base and the later state, restarts the three on a copy and compares.
func raftFilesDraw(ctx context.Context, dir, v string, base *clusterBase, c *PerturbCase, rng *rand.Rand, bin string) (*PerturbCase, error) {
	bundle := filepath.Join(dir, "bundle")
	from, into, plain, want := base.later, base.stores, base.storesPlain, base.orders
	if c.Damage.Class == "raftfiles-earlier" {
		from, into, plain, want = base.stores, base.later, base.laterPlain, base.laterOrders
	}
	// perturbClusterDraw copied the base bundle there: this class hands
	// over stores and logs of one moment only.
	if err := os.RemoveAll(bundle); err != nil {
		return nil, err
	}
	if err := copyTree(into, bundle); err != nil {
		return nil, err
	}
	srv := clusterNames[rng.Intn(len(clusterNames))]
	gdirs, _ := filepath.Glob(filepath.Join(bundle, "store-"+srv, "$SYS", "_js_", "*", "tav.idx"))
	sort.Strings(gdirs)
	if len(gdirs) == 0 {
		return nil, fmt.Errorf("no raft group on %s", srv)
	}
	g := filepath.Base(filepath.Dir(gdirs[rng.Intn(len(gdirs))]))
	rel := filepath.Join("store-"+srv, "$SYS", "_js_", g)
	var avail []string
	for _, f := range raftFileNames {
		_, e1 := os.Stat(filepath.Join(from, rel, f))
		_, e2 := os.Stat(filepath.Join(bundle, rel, f))
		if e1 == nil && e2 == nil {
			avail = append(avail, f)
		}
	}
	t := &RaftFilesTruth{Group: g}
	files := avail
	if k := rng.Intn(len(avail) + 1); k < len(avail) {
		files = avail[k : k+1]
		t.Variant = avail[k]
	} else {
		t.Variant = "all"
	}
	t.Files = files
	if tv, err := readTav(filepath.Join(bundle, rel, "tav.idx")); err == nil {
		t.TermIn = tv.Term
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(from, rel, f), filepath.Join(bundle, rel, f)); err != nil {
			return nil, err
		}
	}
	if tv, err := readTav(filepath.Join(bundle, rel, "tav.idx")); err == nil {
		t.TermOut = tv.Term
	}
	c.Damage = Damage{Server: srv, Class: c.Damage.Class, File: filepath.ToSlash(filepath.Join(rel, files[0]))}
	if len(files) > 1 {
		c.Damage.File = filepath.ToSlash(rel) + "/{" + strings.Join(files, ",") + "}"
	}
	c.Before = want

	// One restart on a copy; a group that does not work after it is
	// restarted once more on a fresh copy (seen: 2.10.27 leaving a stream
	// group leaderless 150 s, all three CANDIDATE, and 2.12.15 one server
	// never listing the group in /raftz, where the same state started by
	// hand elected in seconds): what the server rejects fails both.
	restart := func(sub string) error {
		r, err := NewCluster(ctx, filepath.Join(dir, sub), v, "pert", clusterNames)
		if err != nil {
			return err
		}
		defer r.Kill()
		for _, s := range r.Servers {
			if err := copyTree(filepath.Join(bundle, "store-"+s.Name), s.JSRoot()); err != nil {
				return err
			}
		}
		if err := r.StartAll(ctx); err != nil {
			return err
		}
		if err := waitAnyMetaLeader(ctx, r, 60*time.Second); err != nil {
			t.NotQuiet = err.Error()
		} else if err := r.WaitQuiet(ctx, 60*time.Second); err != nil {
			t.NotQuiet = err.Error()
		}
		look := func() {
			t.Views = map[string]raftzGroup{}
			leaders := map[string]bool{}
			for _, s := range r.Servers {
				var gv raftzGroup
				for _, acc := range []string{"", "$G"} {
					rz, err := s.raftz(ctx, acc)
					if err != nil {
						continue
					}
					for _, gs := range rz {
						if x, ok := gs[g]; ok {
							gv = x
						}
					}
				}
				t.Views[s.Name] = gv
				leaders[gv.Leader] = true
			}
			t.Works = len(leaders) == 1 && !leaders[""]
			if nc, js, err := connectWait(ctx, r.Servers...); err == nil {
				t.Orders, _, _ = stateOf(ctx, r.Servers[0], "ORDERS")
				if t.Orders.Served, err = served(ctx, js, "ORDERS", want.LastSeq); err != nil {
					t.Orders.ServedErr = err.Error()
				}
				nc.Close()
			} else {
				t.Orders = ServedState{ServedErr: err.Error()}
			}
			t.Works = t.Works && rangesKey(t.Orders.Served) == rangesKey(want.Served)
		}
		look()
		// On a loaded machine an election can take longer than the quiet
		// wait: a group that works within 90 s more ran with the files.
		for deadline := time.Now().Add(90 * time.Second); !t.Works && time.Now().Before(deadline) && ctx.Err() == nil; {
			time.Sleep(5 * time.Second)
			look()
			t.Late = t.Works
		}
		// What it logged while running (read before the stop: a shutdown's
		// own warnings, such as a snapshot not installed as the store closes,
		// say nothing of the files).
		if lb, err := os.ReadFile(r.Server(srv).LogFile); err == nil {
			for _, l := range strings.Split(string(lb), "\n") {
				if complaintRE.MatchString(l) && (strings.Contains(l, g) || strings.Contains(l, "tav") || strings.Contains(l, "ommit") || strings.Contains(l, "peer state") || strings.Contains(l, "WAL")) {
					t.Complaints = append(t.Complaints, l)
				}
			}
		}
		if err := r.Stop(); err != nil {
			return err
		}
		return nil
	}
	if err := restart("restart"); err != nil {
		return nil, err
	}
	if !t.Works {
		first := *t
		first.First = nil
		os.RemoveAll(filepath.Join(dir, "restart"))
		t.Complaints, t.Late, t.NotQuiet = nil, false, ""
		if err := restart("restart2"); err != nil {
			return nil, err
		}
		t.First = &first
		t.Complaints = append(first.Complaints, t.Complaints...)
	}
	c.RaftFiles = t
	c.After = t.Orders
	if t.Late || !t.Works || len(t.Complaints) > 0 || t.First != nil {
		first := ""
		if t.First != nil {
			first = fmt.Sprintf("; the first restart did not work: views %v, ORDERS %s %s", t.First.Views, rangesKey(t.First.Orders.Served), t.First.Orders.ServedErr)
		}
		logf("%s %s %s: works %v (late %v), complaints %q, views %v%s", v, c.Damage.Class, c.Damage.File, t.Works, t.Late, t.Complaints, t.Views, first)
	}

	got, err := analyze(ctx, bin, bundle)
	if err != nil {
		return nil, err
	}
	c.Findings = got.Findings
	var why []string
	plainKeys := findingKeys(plain, true)
	if t.Works && len(t.Complaints) == 0 {
		for _, f := range got.Findings {
			if f.Severity != "info" && !plainKeys[f.key()] {
				why = append(why, fmt.Sprintf("the restarted servers ran %s with one leader and no complaint, yet %s %s %s: %s", g, f.Severity, f.Code, f.Server, f.Message))
			}
		}
	} else {
		named := false
		for _, f := range got.Findings {
			named = named || f.Severity != "info" && (f.Group == g || strings.Contains(f.File, "/"+g+"/"))
		}
		if !named {
			why = append(why, fmt.Sprintf("%s (works after the restart: %v, ORDERS served %s, complaints %q): no warning or critical finding names it", g, t.Works, rangesKey(t.Orders.Served), t.Complaints))
		}
	}
	sort.Strings(why)
	c.Agree, c.Why = len(why) == 0, strings.Join(why, "; ")
	return c, nil
}
