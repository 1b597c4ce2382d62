package main

// `replicas`: an R3 stream of several million messages on three real
// servers, written on demand (never committed), and a copy of it in which
// one replica holds other content under a valid checksum at one sequence.
// The benchmark of the replica comparison reads both.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minio/highwayhash"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const replicasStream = "REPL"

func runReplicas(ctx context.Context, out string, msgs int64, version string) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	healthy := filepath.Join(out, "healthy")
	if entries, _ := os.ReadDir(healthy); len(entries) > 0 {
		return fmt.Errorf("%s already holds a bundle; use an empty directory", healthy)
	}
	c, err := NewCluster(ctx, healthy, version, "repl", []string{"r1", "r2", "r3"})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.Kill()
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		return err
	}
	nc, _, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(8192))
	if err != nil {
		return err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: replicasStream, Subjects: []string{"repl.>"},
		Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		return err
	}
	subjects := []string{"repl.orders.eu", "repl.orders.us", "repl.events.click", "repl.events.view"}
	err = publishSeq(ctx, js, msgs, func(n int64) *nats.Msg {
		msg := &nats.Msg{Subject: subjects[n%int64(len(subjects))], Data: fmt.Appendf(nil, "message %012d of the replica benchmark, payload padded to a hundred bytes ........", n)}
		if n%10 == 0 {
			msg.Header = nats.Header{"X-Seq": []string{fmt.Sprint(n)}}
		}
		return msg
	})
	if err != nil {
		return err
	}
	nc.Close()
	if err := c.WaitQuiet(ctx, 10*time.Minute); err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	diverged := filepath.Join(out, "diverged")
	victim := c.Servers[1]
	seq, block, err := divergeCopy(healthy, diverged, victim.JSRoot(), msgs/2)
	if err != nil {
		return err
	}
	fmt.Printf("healthy: %s\ndiverged: %s\nstream: %s, %d messages on %s\ndiverging: seq %d on %s (%s), the other replicas agree\n",
		healthy, diverged, replicasStream, msgs, strings.Join([]string{"r1", "r2", "r3"}, ", "), seq, victim.Name, block)
	return nil
}

// divergeCopy makes dst a copy of src (hard links; the bundle is
// never written) in which the replica under jsRoot holds other content at
// the first message at or after near: its payload rewritten, same length,
// under a valid record checksum. It returns the sequence and block.
func divergeCopy(src, dst, jsRoot string, near int64) (uint64, string, error) {
	if err := linkTree(src, dst); err != nil {
		return 0, "", err
	}
	rel, err := filepath.Rel(src, jsRoot)
	if err != nil {
		return 0, "", err
	}
	msgs := filepath.Join(dst, rel, "$G", "streams", replicasStream, "msgs")
	ents, err := os.ReadDir(msgs)
	if err != nil {
		return 0, "", err
	}
	var blocks []int
	for _, e := range ents {
		if n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".blk")); err == nil && strings.HasSuffix(e.Name(), ".blk") {
			blocks = append(blocks, n)
		}
	}
	sort.Ints(blocks)
	for _, n := range blocks {
		p := filepath.Join(msgs, fmt.Sprintf("%d.blk", n))
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, "", err
		}
		seq, ok := rewriteRecord(b, uint64(near), fmt.Sprintf("%s-%d", replicasStream, n))
		if !ok {
			continue
		}
		// Replace the link with a file of its own, so src stays as it was.
		if err := os.Remove(p); err != nil {
			return 0, "", err
		}
		if err := os.WriteFile(p, b, 0o640); err != nil {
			return 0, "", err
		}
		return seq, p, nil
	}
	return 0, "", fmt.Errorf("no block of %s holds a message at or after %d", msgs, near)
}

// rewriteRecord changes the payload of the first message record at or
// after seq near, not the block's last record (index.db keeps the last
// record's checksum, which must stay as it is), in the plain block b
// (formats.md 2.1: rl u32, seq u64, ts i64, slen u16, subject, [hlen u32,
// headers], payload, checksum u64 = HighwayHash64 of seq..ts, subject,
// headers and payload, keyed by sha256("<stream>-<block>")).
func rewriteRecord(b []byte, near uint64, key string) (uint64, bool) {
	const hdr, sumLen, hbit, ebit, tbit = 22, 8, 1 << 31, 1 << 63, 1 << 62
	for off := 0; off+hdr <= len(b); {
		rawRL := binary.LittleEndian.Uint32(b[off:])
		rl := int(rawRL &^ hbit)
		if rl < hdr+sumLen || off+rl > len(b) {
			return 0, false
		}
		rawSeq := binary.LittleEndian.Uint64(b[off+4:])
		seq := rawSeq &^ (ebit | tbit)
		last := off+rl >= len(b)
		if rawSeq&(ebit|tbit) == 0 && seq >= near && !last {
			slen := int(binary.LittleEndian.Uint16(b[off+20:]))
			body := b[off+hdr : off+rl-sumLen]
			hashed := body[slen:]
			if rawRL&hbit != 0 {
				hashed = hashed[4:]
			}
			payload := hashed
			if rawRL&hbit != 0 {
				hlen := int(binary.LittleEndian.Uint32(body[slen:]))
				payload = hashed[hlen:]
			}
			for i := range payload {
				payload[i] = 'X'
			}
			k := sha256.Sum256([]byte(key))
			h, err := highwayhash.New64(k[:])
			if err != nil {
				return 0, false
			}
			h.Write(b[off+4 : off+20])
			h.Write(body[:slen])
			h.Write(hashed)
			binary.LittleEndian.PutUint64(b[off+rl-sumLen:], h.Sum64())
			return seq, true
		}
		off += rl
	}
	return 0, false
}

// linkTree copies the tree src to dst as hard links.
func linkTree(src, dst string) error { return mirrorTree(src, dst, os.Link) }

// publishSeq publishes msg(1) to msg(msgs) asynchronously, 4,000 at a
// time, and logs its pace.
func publishSeq(ctx context.Context, js jetstream.JetStream, msgs int64, msg func(n int64) *nats.Msg) error {
	start := time.Now()
	for n := int64(1); n <= msgs; {
		for i := 0; i < 4000 && n <= msgs; i, n = i+1, n+1 {
			if _, err := js.PublishMsgAsync(msg(n)); err != nil {
				return err
			}
		}
		if err := awaitPublished(ctx, js, 120*time.Second, n-1); err != nil {
			return err
		}
		if n%500000 < 4000 && n <= msgs {
			logf("published %d messages in %v", n-1, time.Since(start).Round(time.Second))
		}
	}
	logf("published %d messages in %v", msgs, time.Since(start).Round(time.Millisecond))
	return nil
}

// awaitPublished waits for every pending async publish to be acknowledged.
func awaitPublished(ctx context.Context, js jetstream.JetStream, timeout time.Duration, sent int64) error {
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("async publish stalled at %d messages", sent)
	case <-ctx.Done():
		return ctx.Err()
	}
}
