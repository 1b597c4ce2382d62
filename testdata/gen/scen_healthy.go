package main

// Phase 1: three healthy 3-server bundles, one per version and layout.

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func healthyScenarios() []Scenario {
	return []Scenario{
		{Name: "v2.10.22-per-server", Doc: "healthy 3-server v2.10.22 cluster c1 (nats-0..2), per-server directory layout",
			Run: func(ctx context.Context, env *Env) error {
				return healthy(ctx, env, "v2.10.22-per-server", "v2.10.22", "c1", []string{"nats-0", "nats-1", "nats-2"}, LayoutPerServer())
			}},
		{Name: "v2.15.2-flat", Doc: "healthy 3-server v2.15.2 cluster east (n1..n3), flat layout",
			Run: func(ctx context.Context, env *Env) error {
				return healthy(ctx, env, "v2.15.2-flat", "v2.15.2", "east", []string{"n1", "n2", "n3"}, LayoutFlat())
			}},
		{Name: "v2.12.1-archive", Doc: "healthy 3-server v2.12.1 cluster west (js-a..c), as bundle.zip and bundle.tar.gz",
			Run: func(ctx context.Context, env *Env) error {
				return healthy(ctx, env, "v2.12.1-archive", "v2.12.1", "west", []string{"js-a", "js-b", "js-c"},
					LayoutArchive("support-bundle-20261130", true, true))
			}},
	}
}

// healthy starts a cluster, runs HealthyWorkload, waits until quiet,
// captures every server, stops all gracefully and writes the bundle.
func healthy(ctx context.Context, env *Env, name, version, cluster string, names []string, layout Layout) error {
	c, err := NewCluster(ctx, env.Scratch, version, cluster, names)
	if err != nil {
		return err
	}
	defer c.Kill()
	caps, err := runHealthy(ctx, env, c)
	if err != nil {
		return err
	}
	b := &Bundle{Name: name, Version: strings.TrimPrefix(version, "v"), Layout: layout, Servers: c.Servers, Captures: caps}
	return b.Write(env.Scratch, env.Out)
}

// runHealthy starts c, runs HealthyWorkload, captures every server once the
// cluster is quiet, stops it gracefully and checks that a copy of the stores
// restarts into the captured state.
func runHealthy(ctx context.Context, env *Env, c *Cluster) (map[string]*Capture, error) {
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if err := HealthyWorkload(ctx, c); err != nil {
		return nil, err
	}
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := c.Stop(); err != nil {
		return nil, err
	}
	if err := verifyOnCopy(ctx, env, c, caps); err != nil {
		return nil, err
	}
	return caps, nil
}

// quietCapture waits for convergence, captures, and checks that the cluster
// is still converged with the same signature afterwards (nothing moved
// while capturing).
func quietCapture(ctx context.Context, cs ...*Cluster) (map[string]*Capture, error) {
	for _, c := range cs {
		if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
			return nil, err
		}
	}
	var before []string
	for _, c := range cs {
		sig, _ := c.convergence(ctx)
		before = append(before, sig)
	}
	caps, err := CaptureAll(ctx, cs...)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		if sig, ok := c.convergence(ctx); !ok || sig != before[i] {
			logf("cluster %s changed while capturing; capturing again", c.Name)
			return quietCapture(ctx, cs...)
		}
	}
	return caps, nil
}

// verifyOnCopy starts a copy of the stopped cluster's stores (same names,
// new ports, scratch dirs) and checks that every server reports exactly the
// stream and consumer state that was captured before the stop: proof that
// the captures describe what is on disk.
func verifyOnCopy(ctx context.Context, env *Env, c *Cluster, caps map[string]*Capture) error {
	return verifyStoresOnCopy(ctx, env, c, nil, caps)
}

// verifyStoresOnCopy is verifyOnCopy on other copies of the members'
// JetStream roots (roots: server name -> directory; nil = their own stores),
// e.g. copies taken while the servers were running.
func verifyStoresOnCopy(ctx context.Context, env *Env, c *Cluster, roots map[string]string, caps map[string]*Capture) error {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "verify"), c.Version, c.Name, names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		src := c.Servers[i]
		s.Debug, s.Extra, s.JetStreamExtra, s.User, s.Password = src.Debug, src.Extra, src.JetStreamExtra, src.User, src.Password
		root := src.JSRoot()
		if roots != nil {
			root = roots[src.Name]
		}
		if err := copyTree(root, s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	for _, s := range r.Servers {
		var was, now jszInfo
		if err := jsonUnmarshal(caps[s.Name].Files["jsz"], &was); err != nil {
			return err
		}
		if err := s.GetJSON(ctx, jszCapturePath, &now); err != nil {
			return err
		}
		if a, b := streamStates(was), streamStates(now); a != b {
			return fmt.Errorf("%s: state after restart differs from capture:\ncaptured: %s\nrestart:  %s", s.Name, a, b)
		}
	}
	logf("verified: restarted copy reports the captured stream and consumer state on every server")
	return r.Stop()
}

// streamStates renders the stream and consumer state of a /jsz answer in a
// comparable form (num_pending and leaders excluded: they are not stored).
func streamStates(j jszInfo) string {
	var parts []string
	for _, a := range j.Accounts {
		for _, st := range a.Streams {
			parts = append(parts, fmt.Sprintf("%s>%s msgs=%d bytes=%d first=%d last=%d deleted=%d", a.Name, st.Name,
				st.State.Msgs, st.State.Bytes, st.State.FirstSeq, st.State.LastSeq, st.State.NumDeleted))
			for _, cd := range st.Consumers {
				parts = append(parts, fmt.Sprintf("%s>%s>%s delivered=%d ackfloor=%d", a.Name, st.Name, cd.Name,
					cd.Delivered.Stream, cd.AckFloor.Stream))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
