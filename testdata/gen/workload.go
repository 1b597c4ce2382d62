package main

// The standard healthy workload, through the nats.go JetStream API.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// connect opens a client connection to the given servers (any of them).
func connect(ss ...*Server) (*nats.Conn, jetstream.JetStream, error) {
	var urls []string
	for _, s := range ss {
		urls = append(urls, s.ClientURL())
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.Name("jsforensics-gen"), nats.Timeout(5*time.Second),
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

// retry runs f until it succeeds or 30 s pass (stream leaders may move).
func retry(ctx context.Context, what string, f func(context.Context) error) error {
	var last error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = f(cctx)
		cancel()
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s: %w", what, last)
}

// payload returns n bytes of compressible text tagged with i.
func payload(tag string, i, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "%s #%06d level=info component=worker msg=\"processed batch\" ok=true; ", tag, i)
	}
	return b.Bytes()[:n]
}

// publish publishes one message (headers optional) and returns its sequence.
func publish(ctx context.Context, js jetstream.JetStream, subj string, data []byte, hdr nats.Header) (uint64, error) {
	var seq uint64
	err := retry(ctx, "publish "+subj, func(ctx context.Context) error {
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: data, Header: hdr})
		if err != nil {
			return err
		}
		seq = ack.Sequence
		return nil
	})
	return seq, err
}

// HealthyWorkload is what every healthy bundle holds:
//
//   - ORDERS  R3 file stream (orders.>): plain and header messages, one 10 KB
//     message, deletes of seq 2 and 5, a secure erase of seq 3, a purge of
//     subject orders.cancelled; durable R3 pull consumer PROC (5 fetched, 3 acked)
//     and durable R1 consumer SHIP (filter orders.paid, 2 fetched, 2 acked).
//   - EVENTS  R1 file stream (events.>): 40 messages, some with headers, delete of
//     seq 3; durable AUDIT (10 fetched, 6 acked).
//   - LOGS    R1 file stream, compression s2, max_bytes 120000 (block size 32000):
//     700 x 400 B so several sealed (S2) blocks roll and old ones are dropped.
//   - TMP     R1 file stream: 20 messages, purged entirely, then 5 more.
//   - KV bucket "cfg" (R3): puts, updates, one delete, one purge of a key.
func HealthyWorkload(ctx context.Context, c *Cluster) error {
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()

	create := func(cfg jetstream.StreamConfig) (jetstream.Stream, error) {
		var st jetstream.Stream
		err := retry(ctx, "create stream "+cfg.Name, func(ctx context.Context) error {
			var err error
			st, err = js.CreateOrUpdateStream(ctx, cfg)
			return err
		})
		return st, err
	}
	orders, err := create(jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	events, err := create(jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}, Replicas: 1, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	if _, err := create(jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.>"}, Replicas: 1, Storage: jetstream.FileStorage,
		Compression: jetstream.S2Compression, MaxBytes: 120000}); err != nil {
		return err
	}
	tmp, err := create(jetstream.StreamConfig{Name: "TMP", Subjects: []string{"tmp.>"}, Replicas: 1, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}

	// ORDERS.
	subjects := []string{"orders.new", "orders.paid", "orders.cancelled", "orders.shipped"}
	for i := 1; i <= 60; i++ {
		var hdr nats.Header
		if i%3 == 0 {
			hdr = nats.Header{}
			hdr.Set("Nats-Msg-Id", fmt.Sprintf("order-%d", i))
			hdr.Set("X-Trace", fmt.Sprintf("trace-%04d", i*7))
		}
		data := []byte(fmt.Sprintf(`{"order":%d,"amount":%d.%02d}`, i, i*13, i%100))
		if i == 30 {
			data = payload("big-order", i, 10*1024)
		}
		if _, err := publish(ctx, js, subjects[i%len(subjects)], data, hdr); err != nil {
			return err
		}
	}
	for _, seq := range []uint64{2, 5} {
		if err := retry(ctx, "delete", func(ctx context.Context) error { return orders.DeleteMsg(ctx, seq) }); err != nil {
			return err
		}
	}
	if err := retry(ctx, "secure delete", func(ctx context.Context) error { return orders.SecureDeleteMsg(ctx, 3) }); err != nil {
		return err
	}
	if err := retry(ctx, "purge subject", func(ctx context.Context) error {
		return orders.Purge(ctx, jetstream.WithPurgeSubject("orders.cancelled"))
	}); err != nil {
		return err
	}

	// EVENTS.
	for i := 1; i <= 40; i++ {
		var hdr nats.Header
		if i%4 == 0 {
			hdr = nats.Header{"X-Source": []string{"sensor-" + fmt.Sprint(i%5)}}
		}
		if _, err := publish(ctx, js, fmt.Sprintf("events.sensor.%d", i%5), []byte(fmt.Sprintf("reading %d = %d", i, i*i)), hdr); err != nil {
			return err
		}
	}
	if err := retry(ctx, "delete", func(ctx context.Context) error { return events.DeleteMsg(ctx, 3) }); err != nil {
		return err
	}

	// LOGS: S2 with small blocks; async publish for speed, acks awaited.
	for i := 1; i <= 700; i++ {
		if _, err := js.PublishAsync([]string{"logs.app", "logs.db", "logs.web"}[i%3], payload("log", i, 400)); err != nil {
			return err
		}
		if i%100 == 0 {
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(30 * time.Second):
				return fmt.Errorf("LOGS async publish did not complete")
			}
		}
	}

	// TMP: publish, purge all, publish more.
	for i := 1; i <= 20; i++ {
		if _, err := publish(ctx, js, "tmp.x", []byte(fmt.Sprintf("tmp %d", i)), nil); err != nil {
			return err
		}
	}
	if err := retry(ctx, "purge", func(ctx context.Context) error { return tmp.Purge(ctx) }); err != nil {
		return err
	}
	for i := 21; i <= 25; i++ {
		if _, err := publish(ctx, js, "tmp.y", []byte(fmt.Sprintf("tmp %d", i)), nil); err != nil {
			return err
		}
	}

	// KV.
	var kv jetstream.KeyValue
	if err := retry(ctx, "create kv", func(ctx context.Context) error {
		var err error
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg", Replicas: 3, History: 3, Storage: jetstream.FileStorage})
		return err
	}); err != nil {
		return err
	}
	for i := 1; i <= 12; i++ {
		k := fmt.Sprintf("svc.%d.limit", i%6)
		if err := retry(ctx, "kv put", func(ctx context.Context) error {
			_, err := kv.Put(ctx, k, []byte(fmt.Sprint(i*100)))
			return err
		}); err != nil {
			return err
		}
	}
	if err := retry(ctx, "kv delete", func(ctx context.Context) error { return kv.Delete(ctx, "svc.1.limit") }); err != nil {
		return err
	}
	if err := retry(ctx, "kv purge", func(ctx context.Context) error { return kv.Purge(ctx, "svc.2.limit") }); err != nil {
		return err
	}

	// Consumers.
	if err := consume(ctx, orders, jetstream.ConsumerConfig{Durable: "PROC", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 3}, 5, 3); err != nil {
		return err
	}
	if err := consume(ctx, orders, jetstream.ConsumerConfig{Durable: "SHIP", AckPolicy: jetstream.AckExplicitPolicy, Replicas: 1,
		FilterSubject: "orders.paid"}, 2, 2); err != nil {
		return err
	}
	return consume(ctx, events, jetstream.ConsumerConfig{Durable: "AUDIT", AckPolicy: jetstream.AckExplicitPolicy}, 10, 6)
}

// consume creates a durable pull consumer, fetches n messages and
// double-acks the first acks of them.
func consume(ctx context.Context, st jetstream.Stream, cfg jetstream.ConsumerConfig, n, acks int) error {
	var cons jetstream.Consumer
	if err := retry(ctx, "create consumer "+cfg.Durable, func(ctx context.Context) error {
		var err error
		cons, err = st.CreateOrUpdateConsumer(ctx, cfg)
		return err
	}); err != nil {
		return err
	}
	got, empty := 0, 0
	for got < n {
		batch, err := cons.Fetch(n-got, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			// A new replicated consumer may have no leader yet ("no responders").
			if empty++; empty >= 10 {
				return fmt.Errorf("fetch %s: %w", cfg.Durable, err)
			}
			time.Sleep(500 * time.Millisecond)
			continue
		}
		before := got
		for m := range batch.Messages() {
			got++
			if got <= acks {
				if err := m.DoubleAck(ctx); err != nil {
					return fmt.Errorf("ack %s: %w", cfg.Durable, err)
				}
			}
		}
		if got == before {
			// Right after a restart, or before a new consumer has a leader,
			// a fetch can come back empty or fail; give it a few tries.
			if empty++; empty >= 10 {
				return fmt.Errorf("fetch %s: no messages after %d of %d (last error: %v)", cfg.Durable, got, n, batch.Error())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

// createFilled creates (or updates) a stream and publishes msgs messages of
// size bytes to it, on four subjects <name>.m.0..3.
func createFilled(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, msgs, size int) (jetstream.Stream, error) {
	var st jetstream.Stream
	if err := retry(ctx, "create "+cfg.Name, func(ctx context.Context) error {
		var err error
		st, err = js.CreateOrUpdateStream(ctx, cfg)
		return err
	}); err != nil {
		return nil, err
	}
	for i := 0; i < msgs; i++ {
		if _, err := publish(ctx, js, fmt.Sprintf("%s.m.%d", cfg.Name, i%4), payload(cfg.Name, i, size), nil); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
