package main

// A fresh 2.10 cluster whose meta leader never adds one of its servers to
// the meta group: seen on v2.10.27 (metasnap, 3 servers: 4 of 17 starts),
// the leader's /jsz says cluster_size 2 and lists one replica while the
// third server follows it. selectPeerGroup (jetstream_cluster.go) places a
// stream only on cc.meta.Peers(), so an R3 create is refused "no suitable
// peers for placement" with no reason flag for as long as that lasts (30 s
// of retries and more). Restarting the server the leader lacks makes the
// leader track it (raft.go trackPeer, ProposeAddPeer): cluster_size 3.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ensureMetaPeers makes sure the meta leader of a v2.10 cluster lists every
// running server in its meta group: it waits up to 15 s, then restarts the
// running servers the leader lacks and waits again (3 times at most). On
// other versions it does nothing.
func ensureMetaPeers(ctx context.Context, c *Cluster) error {
	if !strings.HasPrefix(c.Version, "v2.10.") {
		return nil
	}
	for attempt := 1; ; attempt++ {
		var missing []*Server
		err := waitFor(ctx, 15*time.Second, c.Name+" meta leader knows every server", func() (bool, error) {
			missing = metaPeersMissing(ctx, c)
			return missing != nil && len(missing) == 0, nil
		})
		if err == nil {
			return nil
		}
		if len(missing) == 0 || attempt > 3 {
			return err
		}
		var names []string
		for _, s := range missing {
			names = append(names, s.Name)
		}
		logf("%s: the meta leader (%s) lacks %v in its meta group: restarting them (%d of 3)", c.Name, c.MetaLeader(ctx), names, attempt)
		for _, s := range missing {
			if err := s.Stop(); err != nil {
				return err
			}
			if err := s.Start(ctx); err != nil {
				return err
			}
		}
		if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
			return fmt.Errorf("after restarting %v: %w", names, err)
		}
	}
}

// metaPeersMissing returns the running servers the meta leader's /jsz does
// not list (itself or among its replicas); nil when no leader answers.
func metaPeersMissing(ctx context.Context, c *Cluster) []*Server {
	leader := c.Server(c.MetaLeader(ctx))
	if leader == nil || !leader.Running() {
		return nil
	}
	var j jszInfo
	if err := leader.GetJSON(ctx, "/jsz", &j); err != nil || j.Meta == nil || j.Meta.Leader != leader.Name {
		return nil
	}
	known := []string{leader.Name}
	for _, r := range j.Meta.Replicas {
		known = append(known, r.Name)
	}
	missing := []*Server{}
	for _, s := range c.Running() {
		if !slices.Contains(known, s.Name) {
			missing = append(missing, s)
		}
	}
	return missing
}
