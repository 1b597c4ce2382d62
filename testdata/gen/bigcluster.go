package main

// `cluster`: a big healthy cluster bundle written on demand (never
// committed): three real servers holding thousands of streams, KV buckets
// and consumers and one R3 stream of millions of messages. Then the
// servers' own time to come up on a copy of that state (every server
// answering /healthz?js-enabled-only=true, then plain /healthz), to set
// beside analyze of the bundle.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BigCluster sizes a `cluster` run.
type BigCluster struct {
	Streams, Buckets, Consumers int
	// Replicas of the streams and KV buckets (their consumers take the
	// stream's): 3 makes the bundle issue 20 measured (59,319 files); at
	// 1 each asset lives on one server only (about 10,400 files).
	Replicas int
	Msgs     int64 // messages in the R3 stream R3BIG
}

const bigClusterStream = "R3BIG"

func runBigCluster(ctx context.Context, out, version string, size BigCluster) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	bundle := filepath.Join(out, "bundle")
	if entries, _ := os.ReadDir(bundle); len(entries) > 0 {
		return fmt.Errorf("%s already holds a bundle; use an empty directory", bundle)
	}
	c, err := NewCluster(ctx, bundle, version, "big", []string{"b1", "b2", "b3"})
	if err != nil {
		return err
	}
	for _, s := range c.Servers {
		s.StartTimeout = 5 * time.Minute
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.Kill()
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	start := time.Now()
	// Assets are made by a few workers at once: one at a time, a meta
	// proposal and a new raft group each, takes too long on a small machine.
	if err := parallel(ctx, size.Streams, func(i int) error {
		name := fmt.Sprintf("S%05d", i)
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"s." + name + ".>"}, Storage: jetstream.FileStorage, Replicas: size.Replicas})
		if err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
		for k := range 5 {
			if _, err := js.Publish(ctx, fmt.Sprintf("s.%s.%d", name, k), fmt.Appendf(nil, "message %d of %s", k, name)); err != nil {
				return fmt.Errorf("stream %s: %w", name, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	logf("%d streams in %v", size.Streams, time.Since(start).Round(time.Second))
	if err := parallel(ctx, size.Buckets, func(i int) error {
		name := fmt.Sprintf("kv%04d", i)
		kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 3, Replicas: size.Replicas})
		if err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
		for k := range 4 {
			if _, err := kv.Put(ctx, fmt.Sprintf("key%d", k%3), fmt.Appendf(nil, "value %d", k)); err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	logf("%d KV buckets in %v", size.Buckets, time.Since(start).Round(time.Second))
	if err := parallel(ctx, size.Consumers, func(i int) error {
		stream := fmt.Sprintf("S%05d", i%max(size.Streams, 1))
		_, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: fmt.Sprintf("C%05d", i), AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			return fmt.Errorf("consumer %d on %s: %w", i, stream, err)
		}
		return nil
	}); err != nil {
		return err
	}
	logf("%d consumers in %v", size.Consumers, time.Since(start).Round(time.Second))
	if err := publishBig(ctx, nc, size.Msgs); err != nil {
		return err
	}
	nc.Close()
	if err := c.WaitQuiet(ctx, 20*time.Minute); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	disk, err := dirSize(bundle)
	if err != nil {
		return err
	}
	files, folders, err := treeCount(bundle)
	if err != nil {
		return err
	}
	fmt.Printf("bundle: %s (%d bytes, %d files, %d folders)\nservers: b1 b2 b3 (%s)\nstreams: %d (R%d) + %s (R3, %d messages), KV buckets: %d (R%d), consumers: %d\n",
		bundle, disk, files, folders, version, size.Streams, size.Replicas, bigClusterStream, size.Msgs, size.Buckets, size.Replicas, size.Consumers)
	return recoverCluster(ctx, out, c)
}

// parallel runs f(0..n-1) on a few workers and returns the first error.
func parallel(ctx context.Context, n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// publishBig writes msgs messages to the R3 stream R3BIG (not BIG, the
// stream of `big`, whose store pads the >8 GiB archive: a bundle holding
// both would have two unrelated streams of one name).
func publishBig(ctx context.Context, nc *nats.Conn, msgs int64) error {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(8192))
	if err != nil {
		return err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: bigClusterStream, Subjects: []string{"r3big.>"},
		Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	subjects := []string{"r3big.orders.eu", "r3big.orders.us", "r3big.events.click", "r3big.events.view"}
	err = publishSeq(ctx, js, msgs, func(n int64) *nats.Msg {
		return &nats.Msg{Subject: subjects[n%int64(len(subjects))], Data: fmt.Appendf(nil, "message %012d of the big cluster, payload padded to a hundred bytes ..........", n)}
	})
	if err != nil {
		return err
	}
	return nil
}

// recoverCluster starts the three servers on a copy of the bundle's
// stores (a start rewrites index.db and more, and the bundle must stay as
// the servers left it) and times how long until every server answers
// /healthz?js-enabled-only=true, and then plain /healthz (every stream and
// consumer current).
func recoverCluster(ctx context.Context, out string, orig *Cluster) error {
	scratch := filepath.Join(out, "recover")
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	var names []string
	for _, s := range orig.Servers {
		names = append(names, s.Name)
	}
	c, err := NewCluster(ctx, scratch, orig.Version, orig.Name, names)
	if err != nil {
		return err
	}
	for i, s := range c.Servers {
		if err := copyTree(orig.Servers[i].StoreDir, s.StoreDir); err != nil {
			return err
		}
		s.StartTimeout = 10 * time.Minute
	}
	// The copy was just written, so its pages are warm, as the bundle's
	// are for an analyze run right after it.
	start := time.Now()
	defer c.Kill()
	if err := c.StartAll(ctx); err != nil {
		return err
	}
	for _, q := range []string{"/healthz?js-enabled-only=true", "/healthz"} {
		err := waitFor(ctx, 20*time.Minute, "every server "+q, func() (bool, error) {
			for _, s := range c.Servers {
				if !answers(ctx, s, q) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		up := time.Since(start).Round(time.Millisecond)
		var ut, st float64
		for _, s := range c.Servers {
			u, y, _ := procTimes(s)
			ut, st = ut+u, st+y
		}
		fmt.Printf("servers_up %s: %v (the three servers' user %.2fs sys %.2fs cpu %.2fs)\n", q, up, ut, st, ut+st)
	}
	return c.Stop()
}

// runClusterStart times the servers' start (recoverCluster) on a copy of
// the stores of a bundle `cluster` wrote, again: to set beside an analyze
// of it in the same minutes. The bundle is only read.
func runClusterStart(ctx context.Context, out, version string) error {
	bundle := filepath.Join(out, "bundle")
	orig := &Cluster{Name: "big", Version: version}
	for _, n := range []string{"b1", "b2", "b3"} {
		store := filepath.Join(bundle, n, "store")
		if _, err := os.Stat(filepath.Join(store, "jetstream")); err != nil {
			return fmt.Errorf("%s is not a bundle `cluster` wrote: %w", bundle, err)
		}
		orig.Servers = append(orig.Servers, &Server{Name: n, StoreDir: store})
	}
	return recoverCluster(ctx, out, orig)
}

// answers says whether s answers q with 200.
func answers(ctx context.Context, s *Server, q string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", s.HTTPPort, q), nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// treeCount counts the regular files and the folders under dir (dir
// itself not counted).
func treeCount(dir string) (files, folders int, err error) {
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == dir:
		case d.IsDir():
			folders++
		case d.Type().IsRegular():
			files++
		}
		return nil
	})
	return files, folders, err
}
