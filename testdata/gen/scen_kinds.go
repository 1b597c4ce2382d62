package main

// Issue 18, newer record kinds: streams that use the features of 2.11 and
// later (per-message TTLs, subject delete markers, counters, atomic batches,
// message schedules), a mirror, a sourced stream and a KV bucket with
// per-key TTLs, on real servers. Each feature is asked for only where the
// version's server source has it (stream.go StreamConfig); a config the
// server still refuses is recorded in expect.refused, not an error. Short
// TTLs and the near schedule fire before the captures, long ones (1 h) are
// live at the capture and at the check on a restarted copy.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var kindsVersions = []string{"v2.11.17", "v2.12.15", "v2.14.10", "v2.15.3"}

func kindsScenarios() []Scenario {
	var out []Scenario
	for _, v := range kindsVersions {
		doc := "issue 18: 3 x " + v + ": per-message TTLs (expired and live), subject delete markers, counters, an atomic batch, schedules, a mirror, a sourced stream, a KV bucket with per-key TTLs"
		if versionLess(v, "v2.12.0") {
			doc = "issue 18: 3 x " + v + ": per-message TTLs (expired and live), subject delete markers, a mirror, a sourced stream, a KV bucket with per-key TTLs (no counters, batches or schedules before 2.12)"
		}
		out = append(out, Scenario{Name: "kinds-" + v,
			Doc:     doc,
			Timeout: 8 * time.Minute,
			Run:     func(ctx context.Context, env *Env) error { return kinds(ctx, env, v) }})
	}
	return out
}

// KindsExpect is want.json's expect for kinds-<version>.
type KindsExpect struct {
	Account string `json:"account"`
	// Streams: every stream asked for, with the features its config set.
	Streams map[string][]string `json:"streams"`
	// Refused: stream -> the server's answer to its create (not made).
	Refused map[string]string `json:"refused,omitempty"`
	// Publishes: every publish with headers, in order: stream, subject,
	// headers sent, the server's reply verbatim.
	Publishes []KindsPublish `json:"publishes"`
	// Stored: per stream, every message the stream leader served through
	// $JS.API.STREAM.MSG.GET from first to last sequence after the captures
	// (subject, headers and data as stored; deleted sequences are absent).
	Stored map[string][]KindsStored `json:"stored"`
	// Waited: seconds between the last short-TTL publish and the captures.
	Waited int `json:"waited_seconds"`
	// VerifiedOnCopy: the same version started on a copy of the stopped
	// stores served every stream's captured state (verifyOnCopy).
	VerifiedOnCopy bool `json:"verified_on_copy"`
}

type KindsPublish struct {
	Stream  string            `json:"stream"`
	Subject string            `json:"subject"`
	Headers map[string]string `json:"headers,omitempty"`
	Reply   string            `json:"reply"`
}

type KindsStored struct {
	Seq     uint64              `json:"seq"`
	Subject string              `json:"subject"`
	Headers map[string][]string `json:"headers,omitempty"`
	Data    string              `json:"data"`
}

func kinds(ctx context.Context, env *Env, version string) error {
	name := "kinds-" + version
	c, err := NewCluster(ctx, env.Scratch, version, "kinds", []string{"kd-0", "kd-1", "kd-2"})
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
	defer nc.Close()
	x := KindsExpect{Account: "$G", Streams: map[string][]string{}, Refused: map[string]string{}, Stored: map[string][]KindsStored{}}

	// create makes a stream; a refusal by the server is a row, not a failure.
	create := func(cfg jetstream.StreamConfig, features ...string) bool {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		x.Streams[cfg.Name] = features
		if _, err := js.CreateStream(cctx, cfg); err != nil {
			x.Refused[cfg.Name] = err.Error()
			logf("%s: %s refused: %v", name, cfg.Name, err)
			return false
		}
		if err := waitAssetLeader(ctx, js, cfg.Name, ""); err != nil {
			x.Refused[cfg.Name] = err.Error()
			return false
		}
		return true
	}
	// pub sends one message as a request and keeps the reply verbatim.
	pub := func(stream, subj, data string, hdr map[string]string) (string, error) {
		m := &nats.Msg{Subject: subj, Data: []byte(data), Header: nats.Header{}}
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := nc.RequestMsgWithContext(rctx, m)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", stream, subj, err)
		}
		if len(hdr) > 0 {
			x.Publishes = append(x.Publishes, KindsPublish{Stream: stream, Subject: subj, Headers: hdr, Reply: string(resp.Data)})
		}
		return string(resp.Data), nil
	}
	pubOK := func(stream, subj, data string, hdr map[string]string) error {
		r, err := pub(stream, subj, data, hdr)
		if err != nil {
			return err
		}
		var a struct {
			Seq   uint64 `json:"seq"`
			Error any    `json:"error"`
		}
		if err := json.Unmarshal([]byte(r), &a); err != nil || a.Error != nil || a.Seq == 0 {
			return fmt.Errorf("%s %s: reply %q", stream, subj, r)
		}
		return nil
	}
	file := jetstream.FileStorage
	// Counters, atomic batches and schedules came with 2.12 (2.11.17's
	// stream.go StreamConfig has none of them, and its json decode drops the
	// fields: the stream would be made plain). TTLs and markers are 2.11.
	has212 := !versionLess(version, "v2.12.0")

	if create(jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}, Replicas: 3, Storage: file}) {
		for i := 0; i < 8; i++ {
			if err := pubOK("PLAIN", fmt.Sprintf("plain.%c", 'a'+i%2), fmt.Sprintf("plain %d", i), nil); err != nil {
				return err
			}
		}
	}
	if create(jetstream.StreamConfig{Name: "TTL", Subjects: []string{"ttl.>"}, Replicas: 3, Storage: file, AllowMsgTTL: true}, "allow_msg_ttl") {
		for i, ttl := range []string{"2s", "1h", "2s", "1h", "never", "", "3s", "3600"} {
			h := map[string]string{}
			if ttl != "" {
				h["Nats-TTL"] = ttl
			}
			if err := pubOK("TTL", fmt.Sprintf("ttl.%d", i), "ttl "+ttl, h); err != nil {
				return err
			}
		}
	}
	// Subject delete markers: max_msgs_per_subject 1 keeps the short message
	// TTLs (stream.go: with markers a TTL is raised to the marker TTL unless
	// MaxMsgsPer is 1), so markers of 1 h are placed before the captures.
	if create(jetstream.StreamConfig{Name: "MARKERS", Subjects: []string{"mark.>"}, Replicas: 3, Storage: file, AllowMsgTTL: true,
		SubjectDeleteMarkerTTL: time.Hour, MaxMsgsPerSubject: 1, AllowRollup: true}, "allow_msg_ttl", "subject_delete_marker_ttl", "max_msgs_per_subject 1") {
		for i, ttl := range []string{"2s", "2s", "1h", ""} {
			h := map[string]string{}
			if ttl != "" {
				h["Nats-TTL"] = ttl
			}
			if err := pubOK("MARKERS", fmt.Sprintf("mark.%c", 'a'+i), "mark "+ttl, h); err != nil {
				return err
			}
		}
	}
	if has212 && create(jetstream.StreamConfig{Name: "COUNTER", Subjects: []string{"count.>"}, Replicas: 3, Storage: file, AllowMsgCounter: true}, "allow_msg_counter") {
		for _, p := range []struct{ subj, incr string }{{"count.a", "1"}, {"count.a", "+5"}, {"count.a", "-2"}, {"count.b", "10"}, {"count.b", "0"}} {
			if err := pubOK("COUNTER", p.subj, "", map[string]string{"Nats-Incr": p.incr}); err != nil {
				return err
			}
		}
	}
	if has212 && create(jetstream.StreamConfig{Name: "ATOMIC", Subjects: []string{"batch.>"}, Replicas: 3, Storage: file, AllowAtomicPublish: true}, "allow_atomic") {
		if err := pubOK("ATOMIC", "batch.before", "before", nil); err != nil {
			return err
		}
		id := "kinds-batch-1"
		subjects := []string{"batch.order", "batch.payment", "batch.shipment"}
		for i, subj := range subjects {
			h := map[string]string{"Nats-Batch-Id": id, "Nats-Batch-Sequence": fmt.Sprint(i + 1)}
			if i == len(subjects)-1 {
				h["Nats-Batch-Commit"] = "1"
				if err := pubOK("ATOMIC", subj, fmt.Sprintf("part %d", i+1), h); err != nil {
					return err
				}
				continue
			}
			if r, err := pub("ATOMIC", subj, fmt.Sprintf("part %d", i+1), h); err != nil || r != "" {
				return fmt.Errorf("atomic batch message %d: reply %q, %v", i+1, r, err)
			}
		}
	}
	if has212 && create(jetstream.StreamConfig{Name: "SCHED", Subjects: []string{"sched.>"}, Replicas: 3, Storage: file, AllowMsgSchedules: true, AllowMsgTTL: true},
		"allow_msg_schedules", "allow_msg_ttl") {
		soon := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
		later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		for _, p := range []struct{ subj, at, target string }{{"sched.soon", soon, "sched.out.soon"}, {"sched.later", later, "sched.out.later"}} {
			if err := pubOK("SCHED", p.subj, "scheduled "+p.subj, map[string]string{"Nats-Schedule": "@at " + p.at, "Nats-Schedule-Target": p.target}); err != nil {
				return err
			}
		}
	}
	if create(jetstream.StreamConfig{Name: "MIRROR", Replicas: 1, Storage: file, Mirror: &jetstream.StreamSource{Name: "PLAIN"}}, "mirror PLAIN") {
		if err := waitStreamMsgs(ctx, js, "MIRROR", 8); err != nil {
			return err
		}
	}
	sources := []*jetstream.StreamSource{{Name: "PLAIN", FilterSubject: "plain.a"}}
	sourcedDoc, sourcedN := "sources PLAIN (plain.a)", uint64(4)
	if has212 {
		sources = append(sources, &jetstream.StreamSource{Name: "ATOMIC"})
		sourcedDoc, sourcedN = sourcedDoc+", ATOMIC", sourcedN+4
	}
	if create(jetstream.StreamConfig{Name: "SOURCED", Replicas: 1, Storage: file, Sources: sources}, sourcedDoc) {
		if err := waitStreamMsgs(ctx, js, "SOURCED", sourcedN); err != nil {
			return err
		}
	}
	x.Streams["KV_kvttl"] = []string{"kv bucket kvttl", "limit_marker_ttl 1h", "per-key ttl"}
	kctx, kcancel := context.WithTimeout(ctx, 10*time.Second)
	kv, err := js.CreateKeyValue(kctx, jetstream.KeyValueConfig{Bucket: "kvttl", Replicas: 3, Storage: file, LimitMarkerTTL: time.Hour})
	kcancel()
	if err != nil {
		x.Refused["KV_kvttl"] = err.Error()
	} else {
		if err := waitAssetLeader(ctx, js, "KV_kvttl", ""); err != nil {
			return err
		}
		ops := []struct {
			what string
			f    func(context.Context) error
		}{
			{"put k.plain", func(c context.Context) error { _, err := kv.Put(c, "k.plain", []byte("v1")); return err }},
			{"create k.short ttl 2s", func(c context.Context) error {
				_, err := kv.Create(c, "k.short", []byte("short"), jetstream.KeyTTL(2*time.Second))
				return err
			}},
			{"create k.long ttl 1h", func(c context.Context) error {
				_, err := kv.Create(c, "k.long", []byte("long"), jetstream.KeyTTL(time.Hour))
				return err
			}},
			{"put k.purged", func(c context.Context) error { _, err := kv.Put(c, "k.purged", []byte("gone")); return err }},
			{"purge k.purged ttl 1h", func(c context.Context) error { return kv.Purge(c, "k.purged", jetstream.PurgeTTL(time.Hour)) }},
		}
		for _, op := range ops {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := op.f(cctx)
			cancel()
			if err != nil {
				return fmt.Errorf("kv %s: %w", op.what, err)
			}
			x.Publishes = append(x.Publishes, KindsPublish{Stream: "KV_kvttl", Subject: op.what, Reply: "ok"})
		}
	}
	// Past the short TTLs (2-3 s), the near schedule (3 s) and the markers
	// they leave.
	const wait = 10 * time.Second
	if err := pause(ctx, wait); err != nil {
		return err
	}
	x.Waited = int(wait / time.Second)
	caps, err := quietCapture(ctx, c)
	if err != nil {
		return err
	}
	for st := range x.Streams {
		if _, refused := x.Refused[st]; refused {
			continue
		}
		if x.Stored[st], err = storedMsgs(ctx, js, st); err != nil {
			return err
		}
	}
	if after, ok := c.convergence(ctx); !ok {
		return fmt.Errorf("cluster moved after the captures: %s", after)
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	if err := verifyOnCopy(ctx, env, c, caps); err != nil {
		return err
	}
	x.VerifiedOnCopy = true
	var refused []string
	for s := range x.Refused {
		refused = append(refused, s)
	}
	sort.Strings(refused)
	logf("%s: streams %d, refused %v", name, len(x.Streams), refused)
	b := &Bundle{Name: name, Version: version[1:], Layout: LayoutPerServer(), Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// waitStreamMsgs waits until a stream holds n messages (a mirror or sourced
// stream catching up). It goes by the server's own state, not a fixed time:
// a source consumer the server failed to set up is retried after a backoff
// (stream.go calculateRetryBackoff: 5 s x 2 x fails, at most retryMaximum),
// so it waits while the server reports no source error, up to 3 minutes, and
// says what the stream info last said if it gives up.
func waitStreamMsgs(ctx context.Context, js jetstream.JetStream, stream string, n uint64) error {
	var last string
	start := time.Now()
	err := waitFor(ctx, 3*time.Minute, fmt.Sprintf("%s holding %d messages", stream, n), func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := js.Stream(cctx, stream)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		info := st.CachedInfo()
		srcs := info.Sources
		if info.Mirror != nil {
			srcs = append(srcs, info.Mirror)
		}
		last = fmt.Sprintf("msgs %d", info.State.Msgs)
		for _, s := range srcs {
			last += fmt.Sprintf("; %s lag %d active %v", s.Name, s.Lag, s.Active)
			if s.Error != nil {
				last += fmt.Sprintf(" error %v", s.Error)
			}
		}
		return info.State.Msgs >= n, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	logf("%s: %s held %d messages after %v (%s)", "kinds", stream, n, time.Since(start).Round(100*time.Millisecond), last)
	return nil
}

// storedMsgs reads every message a stream holds, first to last sequence.
func storedMsgs(ctx context.Context, js jetstream.JetStream, stream string) ([]KindsStored, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := js.Stream(cctx, stream)
	if err != nil {
		return nil, err
	}
	state := st.CachedInfo().State
	out := []KindsStored{}
	for seq := state.FirstSeq; seq <= state.LastSeq && state.Msgs > 0; seq++ {
		m, err := st.GetMsg(cctx, seq)
		if err != nil {
			continue // deleted or expired
		}
		s := KindsStored{Seq: m.Sequence, Subject: m.Subject, Data: string(m.Data)}
		// A direct get (KV buckets allow it) answers with the message's
		// coordinates as headers; they are not stored.
		for _, h := range []string{"Nats-Stream", "Nats-Sequence", "Nats-Subject", "Nats-Time-Stamp"} {
			if st.CachedInfo().Config.AllowDirect {
				m.Header.Del(h)
			}
		}
		if len(m.Header) > 0 {
			s.Headers = map[string][]string(m.Header)
		}
		out = append(out, s)
	}
	return out, nil
}
