package main

// Phase 2b: shared/incidents/000 recreated. Five v2.10.22 servers; after a
// graceful stop, every server's _meta_/peers.idx gets five extra peer ids,
// each a single-bit flip of a real server's id (the exact ids of the
// incident), and cluster size 10. On restart no meta leader can be elected.

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func phantomScenarios() []Scenario {
	return []Scenario{
		{Name: "v2.10.22-incident-phantom-peers",
			Doc: "incident 000: 5 x v2.10.22, five bit-flipped phantom peers written into every _meta_/peers.idx, size 10, no leader",
			Run: phantomPeers},
		{Name: "v2.12.4-incident-phantom-peers",
			Doc: "the same edit on 5 x v2.12.4 (the last 2.12 that starts a raft group from peers.idx): size 10, no leader",
			Run: func(ctx context.Context, env *Env) error { return phantomPeersOn(ctx, env, "v2.12.4") }},
		{Name: "v2.15.3-incident-phantom-peers",
			Doc: "the same edit on 5 x v2.15.3, which starts from the meta snapshot's peer state: size 5, a leader; bundle = the edited stores",
			Run: func(ctx context.Context, env *Env) error { return phantomPeersOn(ctx, env, "v2.15.3") }},
	}
}

// bitFlip names one phantom: byte Index of Server's node id with Bit flipped.
type bitFlip struct {
	Server string
	Index  int
	Bit    uint
}

// The five phantoms of incident 000 ("kCGheKT, cnr4t3eg, cnrtu3eg, yrzKKR@u, yrzKKRBt).
var incident000Flips = []bitFlip{
	{"nats-3", 0, 6}, // bkCGheKT -> "kCGheKT
	{"nats-2", 3, 6}, // cnrtt3eg -> cnr4t3eg
	{"nats-2", 4, 0}, // cnrtt3eg -> cnrtu3eg
	{"nats-1", 6, 1}, // yrzKKRBu -> yrzKKR@u
	{"nats-1", 7, 0}, // yrzKKRBu -> yrzKKRBt
}

// PhantomPeer is one injected peer id.
type PhantomPeer struct {
	Peer         string `json:"peer"`
	OriginPeer   string `json:"origin_peer"`
	OriginServer string `json:"origin_server"`
	Bits         int    `json:"bits"`
	Byte         int    `json:"byte"`
	Bit          uint   `json:"bit"`
}

// PhantomExpect is want.json's expect for the phantom-peers bundle.
type PhantomExpect struct {
	PhantomPeers []PhantomPeer `json:"phantom_peers"`
	// From every server's /raftz?group=_meta_ (all agreed, else the run fails).
	MetaClusterSize int    `json:"meta_cluster_size"`
	Quorum          int    `json:"quorum"`
	Leader          string `json:"leader"`
	// How long every server was polled without any of them reporting a leader.
	NoLeaderForSeconds int `json:"no_leader_for_seconds"`
	// peers.idx before and after the edit, per server (hex), for the decoder tests.
	PeersIdxBefore map[string]string `json:"peers_idx_before"`
	PeersIdxAfter  map[string]string `json:"peers_idx_after"`
	// Peers each server's /raftz _meta_ listed (incl. self) after the restart.
	RaftzPeers map[string][]string `json:"raftz_peers"`
	// Streams each server hosted before the edit (from /jsz), to show nothing is lost on disk.
	StreamsBefore map[string][]string `json:"streams_before"`
	// StoresBeforeRestart: the bundle's stores are the edited ones as
	// copied before the restart, not what the restarted servers left
	// (every version but v2.10.22, the incident's).
	StoresBeforeRestart bool `json:"stores_before_restart,omitempty"`
}

func phantomPeers(ctx context.Context, env *Env) error { return phantomPeersOn(ctx, env, "v2.10.22") }

// phantomPeersOn is phantomPeers on nats-server version (a family, see main.go).
func phantomPeersOn(ctx context.Context, env *Env, version string) error {
	names := []string{"nats-0", "nats-1", "nats-2", "nats-3", "nats-4"}
	c, err := NewCluster(ctx, env.Scratch, version, "nats", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("APP%d", i)
		if err := retry(ctx, "create "+name, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{fmt.Sprintf("app%d.>", i)}, Replicas: 1})
			return err
		}); err != nil {
			return err
		}
		for k := 0; k < 10+5*i; k++ {
			if _, err := publish(ctx, js, fmt.Sprintf("app%d.evt.%d", i, k%3), payload(name, k, 60+k), nil); err != nil {
				return err
			}
		}
	}
	var kv jetstream.KeyValue
	if err := retry(ctx, "create kv", func(ctx context.Context) error {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "settings", Replicas: 3})
		return err
	}); err != nil {
		return err
	}
	for k := 0; k < 10; k++ {
		if _, err := kv.Put(ctx, fmt.Sprintf("key%d", k%4), []byte(fmt.Sprint(k))); err != nil {
			return err
		}
	}
	nc.Close()
	if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	x := PhantomExpect{PeersIdxBefore: map[string]string{}, PeersIdxAfter: map[string]string{},
		RaftzPeers: map[string][]string{}, StreamsBefore: map[string][]string{}}
	for _, s := range c.Servers {
		var j jszInfo
		if err := s.GetJSON(ctx, jszCapturePath, &j); err != nil {
			return err
		}
		x.StreamsBefore[s.Name] = []string{}
		for _, a := range j.Accounts {
			for _, sd := range a.Streams {
				x.StreamsBefore[s.Name] = append(x.StreamsBefore[s.Name], a.Name+" > "+sd.Name)
			}
		}
		sort.Strings(x.StreamsBefore[s.Name])
	}
	if err := c.Stop(); err != nil {
		return err
	}

	var phantom []string
	for _, f := range incident000Flips {
		orig := nodeID(f.Server)
		b := []byte(orig)
		b[f.Index] ^= 1 << f.Bit
		p := PhantomPeer{Peer: string(b), OriginPeer: orig, OriginServer: f.Server, Byte: f.Index, Bit: f.Bit}
		for i := range b {
			p.Bits += bits.OnesCount8(b[i] ^ orig[i])
		}
		x.PhantomPeers = append(x.PhantomPeers, p)
		phantom = append(phantom, p.Peer)
	}
	for _, s := range c.Servers {
		p := filepath.Join(s.JSRoot(), "$SYS", "_js_", "_meta_", "peers.idx")
		before, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		after, err := addPeers(before, phantom, 10)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := os.WriteFile(p, after, 0o640); err != nil {
			return err
		}
		x.PeersIdxBefore[s.Name] = fmt.Sprintf("%x", before)
		x.PeersIdxAfter[s.Name] = fmt.Sprintf("%x", after)
	}

	// The incident bundle is the stores as the edit left them: a start
	// may rewrite peers.idx (2.12.5+ and 2.14+ start from the snapshot's
	// peer state), so they are copied before it.
	roots := map[string]string{}
	for _, s := range c.Servers {
		roots[s.Name] = filepath.Join(env.Scratch, "edited", s.Name)
		if err := copyTree(s.JSRoot(), roots[s.Name]); err != nil {
			return err
		}
	}

	// Restart all; do not wait for a leader (on v2.10.22, the incident's
	// version, there must be none; other versions are recorded as they go).
	incident := version == "v2.10.22"
	for _, s := range c.Servers {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	start := time.Now()
	for time.Since(start) < 32*time.Second && x.Leader == "" {
		sizes, leaders := map[int]bool{}, map[string]bool{}
		for _, s := range c.Servers {
			var rz raftzStatus
			if err := s.GetJSON(ctx, "/raftz?group=_meta_", &rz); err != nil {
				return err
			}
			g, ok := rz["$SYS"]["_meta_"]
			if !ok {
				return fmt.Errorf("%s: no _meta_ in /raftz", s.Name)
			}
			if incident && (g.Leader != "" || g.State == "LEADER") {
				return fmt.Errorf("%s: _meta_ has leader %q (state %s) after %v: phantom peers did not block the election",
					s.Name, g.Leader, g.State, time.Since(start))
			}
			if incident && (g.Size != 10 || g.QuorumNeeded != 6) {
				return fmt.Errorf("%s: _meta_ size %d quorum %d, want 10/6", s.Name, g.Size, g.QuorumNeeded)
			}
			x.MetaClusterSize, x.Quorum = g.Size, g.QuorumNeeded
			sizes[g.Size] = true
			leaders[g.Leader] = true
			peers := []string{g.ID}
			for id := range g.Peers {
				peers = append(peers, id)
			}
			sort.Strings(peers)
			x.RaftzPeers[s.Name] = peers
		}
		// Settled: every server the same size and the same leader.
		if len(sizes) == 1 && len(leaders) == 1 && !leaders[""] {
			for l := range leaders {
				x.Leader = l
			}
			break
		}
		time.Sleep(time.Second)
	}
	if x.Leader == "" {
		x.NoLeaderForSeconds = int(time.Since(start).Seconds())
		logf("no meta leader for %ds; size %d quorum %d", x.NoLeaderForSeconds, x.MetaClusterSize, x.Quorum)
	} else {
		if err := c.WaitQuiet(ctx, 90*time.Second); err != nil {
			return err
		}
		logf("meta leader %s after %v; size %d quorum %d", x.Leader, time.Since(start).Round(time.Second), x.MetaClusterSize, x.Quorum)
	}
	caps, err := CaptureAll(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		b, err := s.Get(ctx, "/raftz?group=_meta_")
		if err != nil {
			return err
		}
		caps[s.Name].Files["raftz-group-_meta_"] = b
	}
	if err := c.Stop(); err != nil {
		return err
	}
	b := &Bundle{Name: version + "-incident-phantom-peers", Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers,
		Captures: caps, Expect: x}
	if !incident {
		b.StoreRoots, x.StoresBeforeRestart = roots, true
		b.Expect = x
	}
	return b.Write(env.Scratch, env.Out)
}

// addPeers re-encodes a peers.idx (formats.md 5.2: LE u32 cluster size,
// LE u32 count, count x 8-byte ids, optional LE u16 domainExt) with extra
// ids appended and the given cluster size.
func addPeers(in []byte, extra []string, size uint32) ([]byte, error) {
	if len(in) < 8 {
		return nil, fmt.Errorf("peers.idx too short (%d bytes)", len(in))
	}
	n := binary.LittleEndian.Uint32(in[4:8])
	if uint64(len(in)) < 8+8*uint64(n) {
		return nil, fmt.Errorf("peers.idx holds %d bytes, too few for %d peers", len(in), n)
	}
	ids := in[8 : 8+8*n]
	trailer := in[8+8*n:]
	out := binary.LittleEndian.AppendUint32(nil, size)
	out = binary.LittleEndian.AppendUint32(out, n+uint32(len(extra)))
	out = append(out, ids...)
	for _, e := range extra {
		if len(e) != 8 {
			return nil, fmt.Errorf("peer id %q is not 8 bytes", e)
		}
		out = append(out, e...)
	}
	return append(out, trailer...), nil
}
