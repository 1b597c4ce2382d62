package main

// Phase 1: three healthy 3-server bundles, one per version and layout.

import (
	"context"
	"strings"
	"time"
)

func init() {
	addScenario(Scenario{Name: "v2.10.22-per-server", Doc: "healthy 3-server v2.10.22 cluster c1 (nats-0..2), per-server directory layout",
		Run: func(ctx context.Context, env *Env) error {
			return healthy(ctx, env, "v2.10.22-per-server", "v2.10.22", "c1", []string{"nats-0", "nats-1", "nats-2"}, LayoutPerServer())
		}})
	addScenario(Scenario{Name: "v2.15.2-flat", Doc: "healthy 3-server v2.15.2 cluster east (n1..n3), flat layout",
		Run: func(ctx context.Context, env *Env) error {
			return healthy(ctx, env, "v2.15.2-flat", "v2.15.2", "east", []string{"n1", "n2", "n3"}, LayoutFlat())
		}})
	addScenario(Scenario{Name: "v2.12.1-archive", Doc: "healthy 3-server v2.12.1 cluster west (js-a..c), as bundle.zip and bundle.tar.gz",
		Run: func(ctx context.Context, env *Env) error {
			return healthy(ctx, env, "v2.12.1-archive", "v2.12.1", "west", []string{"js-a", "js-b", "js-c"},
				LayoutArchive("support-bundle-20261130", true, true))
		}})
}

// healthy starts a cluster, runs HealthyWorkload, waits until quiet,
// captures every server, stops all gracefully and writes the bundle.
func healthy(ctx context.Context, env *Env, name, version, cluster string, names []string, layout Layout) error {
	c, err := NewCluster(ctx, env.Scratch, version, cluster, names)
	if err != nil {
		return err
	}
	defer c.Kill()
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
	if err := c.Stop(); err != nil {
		return err
	}
	b := &Bundle{Name: name, Version: strings.TrimPrefix(version, "v"), Layout: layout, Servers: c.Servers, Captures: caps}
	return b.Write(env.Scratch, env.Out)
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
