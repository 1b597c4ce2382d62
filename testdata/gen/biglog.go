package main

// `biglog`: a long server log written on demand (never committed), for the
// log benchmarks of the main module. A real 3-server cluster runs with
// churn (streams created, messages published and consumed, the meta leader
// SIGKILLed and restarted, a clean restart); the log of one server is then
// repeated, every repetition's timestamps moved on past the previous one's
// last line, until the file reaches the asked size. Every line is a line a
// real nats-server wrote; only the repetition and the times are ours.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// runBigLog runs the churn once and writes out/<server>.log of at least
// size bytes.
func runBigLog(ctx context.Context, out string, size int64, version string, rounds int, debug bool) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "jsf-gen-biglog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	names := []string{"churn-0", "churn-1", "churn-2"}
	c, err := NewCluster(ctx, scratch, version, "churn", names)
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		s.Debug = debug
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if err := churn(ctx, c, rounds); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	src := c.Server(names[0]).LogFile
	dst := filepath.Join(out, names[0]+".log")
	n, reps, err := repeatLog(src, dst, size)
	if err != nil {
		return err
	}
	logf("biglog: %s: %d bytes, %d repetitions of the real log of %s", dst, n, reps, names[0])
	return nil
}

// churn is the workload whose log gets repeated: per round, publishes and
// consumes on three R3 streams, SIGKILLs the meta leader, publishes while
// it is down, restarts it; every other round a clean stop and start of a
// follower.
func churn(ctx context.Context, c *Cluster, rounds int) error {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	streams := []string{"ORDERS", "EVENTS", "AUDIT"}
	var handles []jetstream.Stream
	for _, name := range streams {
		var st jetstream.Stream
		if err := retry(ctx, "create "+name, func(ctx context.Context) error {
			st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Replicas: 3})
			return err
		}); err != nil {
			return err
		}
		handles = append(handles, st)
	}
	seq := 0
	publishAll := func(n int) error {
		for range n {
			seq++
			for _, name := range streams {
				if err := retry(ctx, "publish", func(ctx context.Context) error {
					_, err := publish(ctx, js, strings.ToLower(name)+".new", payload(name, seq, 64), nil)
					return err
				}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for r := range rounds {
		if err := publishAll(50); err != nil {
			return err
		}
		if err := consume(ctx, handles[r%len(handles)], jetstream.ConsumerConfig{Durable: fmt.Sprintf("C%d", r), AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 20, 15); err != nil {
			return err
		}
		if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
			return err
		}
		victim := c.Server(c.MetaLeader(ctx))
		if victim == nil {
			return fmt.Errorf("round %d: no meta leader", r)
		}
		logf("biglog round %d: SIGKILL meta leader %s", r, victim.Name)
		if err := victim.Kill(); err != nil {
			return err
		}
		if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
			return err
		}
		if err := publishAll(20); err != nil {
			return err
		}
		if err := victim.Start(ctx); err != nil {
			return err
		}
		if r%2 == 1 {
			for _, s := range c.Running() {
				if s != victim {
					logf("biglog round %d: clean restart of %s", r, s.Name)
					if err := s.Stop(); err != nil {
						return err
					}
					if err := s.Start(ctx); err != nil {
						return err
					}
					break
				}
			}
		}
		if err := c.WaitQuiet(ctx, 60*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// repeatLog writes src to dst again and again until dst holds at least size
// bytes, moving each repetition's times on by the span of the log plus one
// second, so the result reads as one long run.
func repeatLog(src, dst string, size int64) (int64, int, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return 0, 0, err
	}
	lines := splitLines(data)
	var first, last time.Time
	for _, l := range lines {
		if t, ok := logLineTime(l); ok {
			if first.IsZero() {
				first = t
			}
			last = t
		}
	}
	if first.IsZero() {
		return 0, 0, fmt.Errorf("%s: no timed line", src)
	}
	step := last.Sub(first) + time.Second
	f, err := os.Create(dst)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	reps := 0
	for ; n < size; reps++ {
		shift := time.Duration(reps) * step
		for _, l := range lines {
			if t, ok := logLineTime(l); ok && reps > 0 {
				i := strings.Index(l, "] ") + 2
				l = l[:i] + t.Add(shift).Format("2006/01/02 15:04:05.000000") + l[i+26:]
			}
			k, _ := w.WriteString(l)
			_ = w.WriteByte('\n')
			n += int64(k) + 1
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, 0, err
	}
	return n, reps, f.Close()
}
