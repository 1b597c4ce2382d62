package main

// Issue 30, assets offline after a downgrade. Three servers on a newer
// release create streams with features an older release does not know
// (a counter stream, atomic batches, fast batches, a flow-control consumer:
// each stored with `_nats.req.level` in its metadata, jetstream_versioning.go
// setStaticStreamMetadata / setStaticConsumerMetadata) beside ordinary ones,
// stop gracefully, and the same stores are started on an older release.
// What the older servers log and answer is recorded (stream info, a publish,
// consumer info of a consumer on an offline stream, the list's offline map,
// /jsz and /healthz in the captures), they are stopped, and the bundle is
// the state the operator sends: the stores as the older release left them,
// the logs (the newer run, then the older one, in the same file, as a
// log_file keeps them) and the captures of the older run. Then a copy of
// the stores is started on the newer release again and every message of
// every stream is read back (expect.rerun): the data is intact.
//
// The consumer variant (`-consumer`): a consumer needing API level 4 (ack
// policy flow_control, 2.14) on an ordinary stream: 2.11.17 servers exit at
// start (their output, the panic, is recorded in expect.exited), 2.12.15
// servers stop applying the meta state.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// downgradePairs are the committed runs: newer release, older release, crash.
var downgradePairs = []struct {
	from, to string
	crash    bool
}{
	{"v2.14.10", "v2.11.17", false},
	{"v2.15.3", "v2.12.15", false},
	{"v2.14.10", "v2.12.15", true},
	{"v2.14.10", "v2.11.17", true},
}

func downgradeName(from, to string, crash bool) string {
	if crash {
		return "downgrade-consumer-" + from + "-to-" + to
	}
	return "downgrade-" + from + "-to-" + to
}

func downgradeScenarios() []Scenario {
	var out []Scenario
	for _, p := range downgradePairs {
		doc := fmt.Sprintf("issue 30: 3 x %s make streams with features %s does not know, stopped, started on %s (assets offline); expect = what the older servers logged and answered, and the newer release serving every message again", p.from, p.to, p.to)
		if p.crash {
			doc = fmt.Sprintf("issue 30: 3 x %s with a flow_control consumer (API level 4), started on %s: what the older servers do (exit, or a meta layer that stops applying); expect = their output and answers, and the newer release serving every message again", p.from, p.to)
		}
		out = append(out, Scenario{Name: downgradeName(p.from, p.to, p.crash), Doc: doc, Timeout: 9 * time.Minute,
			Run: func(ctx context.Context, env *Env) error { return downgrade(ctx, env, p.from, p.to, p.crash) }})
	}
	return out
}

// downgradeFamily parses `downgrade@<from>-to-<to>[-consumer]`.
func downgradeFamily(v string) Scenario {
	crash := strings.HasSuffix(v, "-consumer")
	from, to, _ := strings.Cut(strings.TrimSuffix(v, "-consumer"), "-to-")
	return Scenario{Name: downgradeName(from, to, crash), Timeout: 9 * time.Minute, Run: func(ctx context.Context, env *Env) error {
		if from == "" || to == "" {
			return fmt.Errorf("downgrade@%s: want downgrade@<newer>-to-<older>[-consumer]", v)
		}
		return downgrade(ctx, env, from, to, crash)
	}}
}

// DowngradeExpect is want.json's expect for downgrade-*.
type DowngradeExpect struct {
	From string `json:"from"` // the release that made the assets
	To   string `json:"to"`   // the release the stores were started on after
	// Consumer: the run of a consumer needing API level 4 (ack policy
	// flow_control); Crash: the older servers exited by themselves.
	Consumer bool `json:"consumer"`
	Crash    bool `json:"crash"`
	// MetaLeader is the meta leader the older servers agreed on ("" none
	// within a minute).
	MetaLeader string `json:"meta_leader"`
	// Streams as made on the newer release, with what the older one did.
	Streams []DowngradeStream `json:"streams"`
	// ListOffline is the older release's $JS.API.STREAM.LIST answer's
	// offline map (stream -> reason), as one server answered it.
	ListOffline map[string]string `json:"list_offline,omitempty"`
	// Healthz: each older server's /healthz body.
	Healthz map[string]string `json:"healthz,omitempty"`
	// LogLines: each server's log lines of the older run matching
	// downgradeLogPattern.
	LogLines map[string][]string `json:"log_lines"`
	// Exited: the older servers that exited by themselves, with the first
	// lines of their output (the panic; not in the bundle).
	Exited map[string][]string `json:"exited,omitempty"`
	// Rerun: the stores (a copy of the bundle's) started on the newer
	// release again.
	Rerun DowngradeRerun `json:"rerun"`

	captures map[string]*Capture // the older run's, until the bundle is written
}

// DowngradeStream is one stream of the run.
type DowngradeStream struct {
	Account  string   `json:"account"`
	Name     string   `json:"name"`
	Replicas int      `json:"replicas"`
	Features []string `json:"features,omitempty"` // config fields set on it beyond the ordinary
	// ReqLevel is `_nats.req.level` in the config the newer release
	// answered (empty: none).
	ReqLevel  string                       `json:"req_level"`
	Messages  uint64                       `json:"messages"` // on the newer release, before the stop
	LastSeq   uint64                       `json:"last_seq"`
	Consumers map[string]DowngradeConsumer `json:"consumers,omitempty"`
	// Offline: the older release answered stream info with an error.
	Offline bool `json:"offline"`
	// Info is the older release's answer to $JS.API.STREAM.INFO (error
	// object only when offline; the state's messages otherwise).
	InfoError *apiErr `json:"info_error,omitempty"`
	// InfoSays: the client error when no server answered stream info.
	InfoSays    string `json:"info_says,omitempty"`
	InfoMsgs    uint64 `json:"info_messages"`
	PublishSays string `json:"publish_says"` // the older release's answer to a publish (or the client error)
	// PublishAcked: the older release stored that publish (the rerun
	// then serves one message more).
	PublishAcked bool `json:"publish_acked"`
}

// DowngradeConsumer is one consumer of a stream.
type DowngradeConsumer struct {
	Features  []string `json:"features,omitempty"`
	ReqLevel  string   `json:"req_level"`
	Delivered uint64   `json:"delivered_stream"`
	AckFloor  uint64   `json:"ack_floor_stream"`
	// OldInfo: the older release's consumer info: its error or its
	// delivered / ack floor stream sequences.
	OldInfoError     *apiErr `json:"old_info_error,omitempty"`
	OldInfoDelivered uint64  `json:"old_info_delivered_stream"`
	OldInfoAckFloor  uint64  `json:"old_info_ack_floor_stream"`
}

// DowngradeRerun is what the newer release served from the stores again.
type DowngradeRerun struct {
	Version    string `json:"version"`
	MetaLeader string `json:"meta_leader"`
	// Served: stream -> messages read back (every sequence from first to
	// last, by $JS.API.STREAM.MSG.GET); Intact: every stream served as many
	// messages as it held before the downgrade, and every consumer kept
	// its delivered and ack floor.
	Served    map[string]uint64   `json:"served"`
	Consumers map[string]string   `json:"consumers"` // stream/consumer -> "delivered=N ackfloor=M"
	Intact    bool                `json:"intact"`
	Why       string              `json:"why,omitempty"`
	Healthz   map[string]string   `json:"healthz"`
	LogLines  map[string][]string `json:"log_lines"`
}

type apiErr struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

var downgradeLogPattern = regexp.MustCompile(`Detected unsupported|Stopping unsupported|is offline|panic:|fatal error|API Level:|  Version:  |Starting nats-server`)

// dgStream is a stream the newer release makes.
type dgStream struct {
	name     string
	replicas int
	extra    map[string]any // config fields beyond name/subjects/replicas/storage
	consumer map[string]any // a durable consumer's config ("" none)
	publish  func(nc *nats.Conn, subj string, i int) (*nats.Msg, error)
	msgs     int
}

func plainPublish(nc *nats.Conn, subj string, i int) (*nats.Msg, error) {
	return nc.Request(subj, []byte(fmt.Sprintf("message %d", i)), 5*time.Second)
}

func counterPublish(nc *nats.Conn, subj string, i int) (*nats.Msg, error) {
	m := nats.NewMsg(subj)
	m.Header.Set("Nats-Incr", fmt.Sprintf("+%d", i+1))
	return nc.RequestMsg(m, 5*time.Second)
}

// atomicPublish sends one batch of three messages per call (commit on the third).
func atomicPublish(nc *nats.Conn, subj string, i int) (*nats.Msg, error) {
	id := fmt.Sprintf("batch-%d", i)
	for j := 1; ; j++ {
		m := nats.NewMsg(subj)
		m.Data = []byte(fmt.Sprintf("batch %d item %d", i, j))
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", fmt.Sprint(j))
		if j == 3 {
			m.Header.Set("Nats-Batch-Commit", "1")
			return nc.RequestMsg(m, 5*time.Second)
		}
		if err := nc.PublishMsg(m); err != nil {
			return nil, err
		}
	}
}

func downgradeStreams(from, to string, crash bool) []dgStream {
	pull := func(name string) map[string]any {
		return map[string]any{"durable_name": name, "ack_policy": "explicit", "ack_wait": int64(time.Hour)}
	}
	orders := dgStream{name: "ORDERS", replicas: 3, consumer: pull("PROC"), publish: plainPublish, msgs: 20}
	if crash {
		return []dgStream{orders, {name: "FLOW", replicas: 3, publish: plainPublish, msgs: 8,
			consumer: map[string]any{"durable_name": "FC", "deliver_subject": "fc.deliver", "ack_policy": "flow_control",
				"flow_control": true, "idle_heartbeat": int64(time.Second)}}}
	}
	ttl := dgStream{name: "TTL", replicas: 3, extra: map[string]any{"allow_msg_ttl": true}, publish: plainPublish, msgs: 5}
	counter := dgStream{name: "COUNTER", replicas: 3, extra: map[string]any{"allow_msg_counter": true, "allow_direct": true},
		consumer: pull("READ"), publish: counterPublish, msgs: 6}
	switch {
	case strings.HasPrefix(to, "v2.11."):
		atomic := dgStream{name: "ATOMIC", replicas: 1, extra: map[string]any{"allow_atomic": true}, publish: atomicPublish, msgs: 2}
		return []dgStream{orders, ttl, counter, atomic}
	default:
		fast := dgStream{name: "FAST", replicas: 3, extra: map[string]any{"allow_batched": true}, consumer: pull("READ"), publish: plainPublish, msgs: 7}
		return []dgStream{orders, counter, fast}
	}
}

func jsRequest(nc *nats.Conn, subj string, req any, resp any) error {
	var data []byte
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return err
		}
	}
	m, err := nc.Request(subj, data, 5*time.Second)
	if err != nil {
		return err
	}
	return json.Unmarshal(m.Data, resp)
}

type dgStreamInfo struct {
	Error  *apiErr `json:"error"`
	Config struct {
		Metadata map[string]string `json:"metadata"`
	} `json:"config"`
	State struct {
		Msgs     uint64 `json:"messages"`
		FirstSeq uint64 `json:"first_seq"`
		LastSeq  uint64 `json:"last_seq"`
	} `json:"state"`
	Cluster *struct {
		Leader string `json:"leader"`
	} `json:"cluster"`
}

type dgConsumerInfo struct {
	Error  *apiErr `json:"error"`
	Config struct {
		Metadata map[string]string `json:"metadata"`
	} `json:"config"`
	Delivered struct {
		Stream uint64 `json:"stream_seq"`
	} `json:"delivered"`
	AckFloor struct {
		Stream uint64 `json:"stream_seq"`
	} `json:"ack_floor"`
}

// dgWaitLeader waits until the info request names a leader.
func dgWaitLeader(ctx context.Context, nc *nats.Conn, subj string) error {
	return waitFor(ctx, 20*time.Second, subj+" leader", func() (bool, error) {
		var r struct {
			Cluster *struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
		}
		return jsRequest(nc, subj, nil, &r) == nil && r.Cluster != nil && r.Cluster.Leader != "", nil
	})
}

func dgInfo(ctx context.Context, nc *nats.Conn, name string) (dgStreamInfo, error) {
	var si dgStreamInfo
	err := retry(ctx, "info "+name, func(context.Context) error {
		si = dgStreamInfo{}
		if err := jsRequest(nc, "$JS.API.STREAM.INFO."+name, nil, &si); err != nil {
			return err
		}
		if si.Error != nil && si.Error.ErrCode != 10194 && si.Error.ErrCode != 10118 {
			return fmt.Errorf("%d %s", si.Error.ErrCode, si.Error.Description)
		}
		return nil
	})
	return si, err
}

func downgrade(ctx context.Context, env *Env, from, to string, crash bool) error {
	name := downgradeName(from, to, crash)
	c, err := NewCluster(ctx, env.Scratch, from, "dg", []string{"dg-0", "dg-1", "dg-2"})
	if err != nil {
		return err
	}
	defer c.Kill()
	oldBin, err := serverBinary(ctx, to)
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	nc, _, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	x := DowngradeExpect{From: from[1:], To: to[1:], Consumer: crash, LogLines: map[string][]string{}}
	plan := downgradeStreams(from, to, crash)
	for _, p := range plan {
		cfg := map[string]any{"name": p.name, "subjects": []string{strings.ToLower(p.name) + ".>"}, "num_replicas": p.replicas, "storage": "file"}
		var feats []string
		for k, v := range p.extra {
			cfg[k] = v
			feats = append(feats, k)
		}
		sort.Strings(feats)
		if err := retry(ctx, "create "+p.name, func(context.Context) error {
			var r dgStreamInfo
			if err := jsRequest(nc, "$JS.API.STREAM.CREATE."+p.name, cfg, &r); err != nil {
				return err
			}
			if r.Error != nil && r.Error.ErrCode != 10058 { // 10058: already in use (an earlier try did it)
				return fmt.Errorf("%d %s", r.Error.ErrCode, r.Error.Description)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := dgWaitLeader(ctx, nc, "$JS.API.STREAM.INFO."+p.name); err != nil {
			return err
		}
		for i := 0; i < p.msgs; i++ {
			subj := fmt.Sprintf("%s.%c", strings.ToLower(p.name), 'a'+i%3)
			r, err := p.publish(nc, subj, i)
			if err != nil {
				return fmt.Errorf("publish %s #%d: %w", p.name, i, err)
			}
			var a struct {
				Seq   uint64  `json:"seq"`
				Error *apiErr `json:"error"`
			}
			if err := json.Unmarshal(r.Data, &a); err != nil || a.Error != nil || a.Seq == 0 {
				return fmt.Errorf("publish %s #%d: %s", p.name, i, r.Data)
			}
		}
		ds := DowngradeStream{Account: "$G", Name: p.name, Replicas: p.replicas, Features: feats, Consumers: map[string]DowngradeConsumer{}}
		if p.consumer != nil {
			cn := p.consumer["durable_name"].(string)
			var cfeats []string
			if ap := p.consumer["ack_policy"]; ap != "explicit" {
				cfeats = append(cfeats, fmt.Sprintf("ack_policy %v", ap))
			}
			if err := retry(ctx, "consumer "+cn, func(context.Context) error {
				var r dgConsumerInfo
				if err := jsRequest(nc, "$JS.API.CONSUMER.CREATE."+p.name+"."+cn, map[string]any{"stream_name": p.name, "config": p.consumer}, &r); err != nil {
					return err
				}
				if r.Error != nil {
					return fmt.Errorf("%d %s", r.Error.ErrCode, r.Error.Description)
				}
				return nil
			}); err != nil {
				return err
			}
			if err := dgWaitLeader(ctx, nc, "$JS.API.CONSUMER.INFO."+p.name+"."+cn); err != nil {
				return err
			}
			if p.consumer["ack_policy"] == "explicit" {
				// Two fetched, one acked: a delivered and ack floor the
				// rerun must find again.
				var got []*nats.Msg
				inbox := nats.NewInbox()
				sub, err := nc.SubscribeSync(inbox)
				if err != nil {
					return err
				}
				if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+p.name+"."+cn, inbox, []byte(`{"batch":2,"expires":2000000000}`)); err != nil {
					return err
				}
				for len(got) < 2 {
					m, err := sub.NextMsg(3 * time.Second)
					if err != nil {
						return fmt.Errorf("fetch %s/%s: %w", p.name, cn, err)
					}
					if len(m.Data) == 0 && m.Header.Get("Status") != "" {
						continue
					}
					got = append(got, m)
				}
				sub.Unsubscribe()
				if _, err := nc.Request(got[0].Reply, []byte("+ACK"), 5*time.Second); err != nil {
					return fmt.Errorf("ack %s/%s: %w", p.name, cn, err)
				}
			}
			ds.Consumers[cn] = DowngradeConsumer{Features: cfeats}
		}
		x.Streams = append(x.Streams, ds)
	}
	if _, err := quietCapture(ctx, c); err != nil {
		return err
	}
	for i := range x.Streams {
		ds := &x.Streams[i]
		si, err := dgInfo(ctx, nc, ds.Name)
		if err != nil {
			return err
		}
		ds.ReqLevel, ds.Messages, ds.LastSeq = si.Config.Metadata["_nats.req.level"], si.State.Msgs, si.State.LastSeq
		for cn, dc := range ds.Consumers {
			var ci dgConsumerInfo
			if err := jsRequest(nc, "$JS.API.CONSUMER.INFO."+ds.Name+"."+cn, nil, &ci); err != nil {
				return err
			}
			dc.ReqLevel, dc.Delivered, dc.AckFloor = ci.Config.Metadata["_nats.req.level"], ci.Delivered.Stream, ci.AckFloor.Stream
			ds.Consumers[cn] = dc
		}
		logf("%s: %s on %s: %d messages, req.level %q, consumers %v", name, ds.Name, from, ds.Messages, ds.ReqLevel, ds.Consumers)
	}
	nc.Close()
	if err := c.Stop(); err != nil {
		return err
	}
	logOffset := map[string]int64{}
	for _, s := range c.Servers {
		st, err := os.Stat(s.LogFile)
		if err != nil {
			return err
		}
		logOffset[s.Name] = st.Size()
		s.Bin, s.Version = oldBin, to
		// The older run's output (a panic goes there, not to the log file).
		os.Remove(filepath.Join(s.Dir, "stdout-stderr.txt"))
	}
	c.Version = to

	// The older release on the same stores.
	startErr := c.StartAll(ctx)
	if crash {
		downgradeExits(ctx, c, &x, startErr)
	} else if startErr != nil {
		return startErr
	}
	if !x.Crash {
		if err := downgradeOldRun(ctx, c, &x); err != nil {
			return err
		}
	}
	if err := c.Stop(); err != nil {
		return err
	}
	for _, s := range c.Servers {
		if x.LogLines[s.Name], err = linesMatching(s.LogFile, logOffset[s.Name], downgradeLogPattern); err != nil {
			return err
		}
	}
	if err := downgradeRerun(ctx, env, c, from, &x); err != nil {
		return err
	}
	b := &Bundle{Name: name, Version: x.To, Layout: LayoutPerServer(), Expect: x}
	if x.Crash {
		// Their output (the panic) is in expect.exited only: with a
		// log_file the server's own lines are not in it, and a file of a
		// panic alone is no log the analyzer reads.
		b.Stopped = c.Servers
	} else {
		b.Servers, b.Captures = c.Servers, x.captures
	}
	return b.Write(env.Scratch, env.Out)
}

// downgradeExits waits (30 s) for older servers to exit and records their output.
func downgradeExits(ctx context.Context, c *Cluster, x *DowngradeExpect, startErr error) {
	if startErr != nil {
		logf("older servers' start: %v", startErr)
	}
	x.Exited = map[string][]string{}
	_ = waitFor(ctx, 30*time.Second, "older servers exit", func() (bool, error) { return len(c.Running()) == 0, nil })
	for _, s := range c.Servers {
		if s.Running() {
			continue
		}
		out, _ := os.ReadFile(filepath.Join(s.Dir, "stdout-stderr.txt"))
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 12 {
			lines = lines[:12]
		}
		x.Exited[s.Name] = lines
	}
	x.Crash = len(x.Exited) > 0
	logf("older servers exited: %v", x.Exited)
	if x.Crash {
		c.Kill() // what is left of the older cluster: the bundle is its state at the crash
	}
}

func downgradeOldRun(ctx context.Context, c *Cluster, x *DowngradeExpect) error {
	if err := c.WaitMetaLeader(ctx, 60*time.Second); err != nil {
		logf("older cluster: %v", err)
	}
	x.MetaLeader = c.MetaLeader(ctx)
	nc, _, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	// Give the stream and consumer groups that do start their leaders.
	time.Sleep(5 * time.Second)
	for i := range x.Streams {
		ds := &x.Streams[i]
		var si dgStreamInfo
		var last error
		_ = waitFor(ctx, 20*time.Second, ds.Name+" info on "+x.To, func() (bool, error) {
			si = dgStreamInfo{}
			if last = jsRequest(nc, "$JS.API.STREAM.INFO."+ds.Name, nil, &si); last != nil {
				return false, nil
			}
			return si.Error != nil || (si.Cluster != nil && si.Cluster.Leader != ""), nil
		})
		ds.InfoError, ds.InfoMsgs = si.Error, si.State.Msgs
		if last != nil {
			ds.InfoSays = "client: " + last.Error()
		}
		ds.Offline = si.Error != nil
		r, err := nc.Request(strings.ToLower(ds.Name)+".a", []byte("after the downgrade"), 3*time.Second)
		switch {
		case err != nil:
			ds.PublishSays = "client: " + err.Error()
		default:
			ds.PublishSays = string(r.Data)
			var a struct {
				Seq   uint64  `json:"seq"`
				Error *apiErr `json:"error"`
			}
			ds.PublishAcked = json.Unmarshal(r.Data, &a) == nil && a.Error == nil && a.Seq > 0
		}
		for cn, dc := range ds.Consumers {
			var ci dgConsumerInfo
			if err := jsRequest(nc, "$JS.API.CONSUMER.INFO."+ds.Name+"."+cn, nil, &ci); err != nil {
				dc.OldInfoError = &apiErr{Description: "client: " + err.Error()}
			} else {
				dc.OldInfoError, dc.OldInfoDelivered, dc.OldInfoAckFloor = ci.Error, ci.Delivered.Stream, ci.AckFloor.Stream
			}
			ds.Consumers[cn] = dc
		}
		logf("%s on %s: info error %v, %d messages; publish: %s; consumers %v", ds.Name, x.To, ds.InfoError, ds.InfoMsgs, ds.PublishSays, ds.Consumers)
	}
	var list struct {
		Offline map[string]string `json:"offline"`
	}
	if err := jsRequest(nc, "$JS.API.STREAM.LIST", map[string]any{"offset": 0}, &list); err == nil {
		x.ListOffline = list.Offline
	}
	// The capture: a quiet cluster if it gets there, else what it answers.
	var caps map[string]*Capture
	if x.MetaLeader != "" {
		caps, err = quietCapture(ctx, c)
	} else {
		err = fmt.Errorf("no meta leader")
	}
	if err != nil {
		logf("older cluster not quiet (%v); capturing as it is", err)
		if caps, err = CaptureAll(ctx, c); err != nil {
			return err
		}
	}
	x.captures = caps
	x.Healthz = map[string]string{}
	for _, s := range c.Servers {
		x.Healthz[s.Name] = httpBody(s, "/healthz")
	}
	return nil
}

// downgradeRerun starts a copy of the stores on the newer release and reads
// every message back.
func downgradeRerun(ctx context.Context, env *Env, c *Cluster, from string, x *DowngradeExpect) error {
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	r, err := NewCluster(ctx, filepath.Join(env.Scratch, "rerun"), from, c.Name, names)
	if err != nil {
		return err
	}
	defer r.Kill()
	for i, s := range r.Servers {
		if err := copyTree(c.Servers[i].JSRoot(), s.JSRoot()); err != nil {
			return err
		}
	}
	if err := r.Start(ctx); err != nil {
		return err
	}
	if err := r.WaitQuiet(ctx, 90*time.Second); err != nil {
		return err
	}
	nc, _, err := connect(r.Servers...)
	if err != nil {
		return err
	}
	defer nc.Close()
	rr := DowngradeRerun{Version: from[1:], Served: map[string]uint64{}, Consumers: map[string]string{}, Healthz: map[string]string{}, LogLines: map[string][]string{}, Intact: true}
	var why []string
	for _, ds := range x.Streams {
		si, err := dgInfo(ctx, nc, ds.Name)
		if err != nil {
			return err
		}
		if si.Error != nil {
			why = append(why, fmt.Sprintf("%s: %s", ds.Name, si.Error.Description))
			rr.Intact = false
			continue
		}
		var n uint64
		for seq := si.State.FirstSeq; seq > 0 && seq <= si.State.LastSeq; seq++ {
			var g struct {
				Error   *apiErr `json:"error"`
				Message *struct {
					Seq uint64 `json:"seq"`
				} `json:"message"`
			}
			if err := jsRequest(nc, "$JS.API.STREAM.MSG.GET."+ds.Name, map[string]any{"seq": seq}, &g); err == nil && g.Error == nil && g.Message != nil && g.Message.Seq == seq {
				n++
			}
		}
		rr.Served[ds.Name] = n
		want := ds.Messages
		if ds.PublishAcked {
			want++
		}
		if n != want {
			rr.Intact = false
			why = append(why, fmt.Sprintf("%s: %d of %d messages served", ds.Name, n, want))
		}
		for cn, dc := range ds.Consumers {
			var ci dgConsumerInfo
			if err := jsRequest(nc, "$JS.API.CONSUMER.INFO."+ds.Name+"."+cn, nil, &ci); err != nil || ci.Error != nil {
				rr.Intact = false
				why = append(why, fmt.Sprintf("%s/%s: info %v %v", ds.Name, cn, err, ci.Error))
				continue
			}
			rr.Consumers[ds.Name+"/"+cn] = fmt.Sprintf("delivered=%d ackfloor=%d", ci.Delivered.Stream, ci.AckFloor.Stream)
			if ci.Delivered.Stream != dc.Delivered || ci.AckFloor.Stream != dc.AckFloor {
				rr.Intact = false
				why = append(why, fmt.Sprintf("%s/%s: delivered %d ackfloor %d, was %d %d", ds.Name, cn, ci.Delivered.Stream, ci.AckFloor.Stream, dc.Delivered, dc.AckFloor))
			}
		}
	}
	for _, s := range r.Servers {
		rr.Healthz[s.Name] = httpBody(s, "/healthz")
	}
	rr.MetaLeader = r.MetaLeader(ctx)
	if rr.MetaLeader == "" {
		rr.Intact = false
		why = append(why, "no meta leader")
	}
	nc.Close()
	if err := r.Stop(); err != nil {
		return err
	}
	for _, s := range r.Servers {
		if rr.LogLines[s.Name], err = linesMatching(s.LogFile, 0, downgradeLogPattern); err != nil {
			return err
		}
	}
	rr.Why = strings.Join(why, "; ")
	x.Rerun = rr
	logf("rerun on %s: served %v consumers %v intact %v %s", from, rr.Served, rr.Consumers, rr.Intact, rr.Why)
	return nil
}
