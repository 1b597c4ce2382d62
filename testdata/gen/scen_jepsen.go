package main

// The client of acked-lost-jepsen-*: a Jepsen-style run against the LEDGER
// stream of ackLossRun, recorded as Jepsen records it (jepsen.history, one
// EDN map per operation; the nats workload of jepsen-io/nats publishes the
// value as the message payload). Five processes publish values "p-n"
// concurrently, each publish an :invoke followed by :ok (the PubAck came),
// :fail (the server refused it: a wrong Nats-Expected-Last-Sequence) or
// :info (no reply: outcome unknown); one process reads the whole stream with
// :fetch before the nemesis acts; the nemesis stops every server, loses
// their unsynced writes (the cut tail) and starts them again; while they are
// down publishes time out (:info). The history is written twice: as Jepsen
// writes it, and with the PubAck's sequence as :seq on each :ok publish.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	jepsenHistory    = "client/history.edn"     // as Jepsen writes it
	jepsenHistorySeq = "client/history-seq.edn" // with :seq on :ok publishes
	jepsenProcesses  = 5
)

// jepsenOp is one history entry.
type jepsenOp struct {
	index   int
	time    int64
	typ     string // ":invoke" ":ok" ":fail" ":info"
	process string // "3" or ":nemesis"
	f       string // ":publish" ":fetch" ":stop" …
	value   string // EDN text
	err     string // EDN text of :error, "" if none
	seq     uint64 // PubAck sequence of an :ok publish
}

// jepsenPub is what the client knows of one published value.
type jepsenPub struct {
	Value   string `json:"value"`
	Process int    `json:"process"`
	Type    string `json:"type"` // ok, fail, info
	Seq     uint64 `json:"seq,omitempty"`
}

// JepsenExpect is want.json's jepsen part: what the client saw, and which
// acknowledged values the restarted servers no longer hold (an :ok value
// whose PubAck sequence is beyond every server's last_seq after the
// restart, the stores' own figures).
type JepsenExpect struct {
	Histories []string `json:"histories"`
	Ok        int      `json:"ok"`
	Fail      []string `json:"fail"`
	// Info: publishes without a reply; InfoStored those among them that
	// the stream held when it was read back before the nemesis.
	Info       []string `json:"info"`
	InfoStored []string `json:"info_stored"`
	// Read: values the :fetch before the nemesis returned.
	Read int `json:"read"`
	// FetchAfter: the :type of the :fetch after the restart.
	FetchAfter string `json:"fetch_after"`
	// Lost: acknowledged values with their sequences, in sequence order.
	Lost     []jepsenPub `json:"lost"`
	Nemesis  []string    `json:"nemesis"`
	LastKept uint64      `json:"last_kept_seq"`
}

type jepsenRun struct {
	mu    sync.Mutex
	start time.Time
	ops   []jepsenOp
	pubs  []jepsenPub
	read  map[string]bool
	nc    *nats.Conn
	after string
}

// record appends op, stamping index and time.
func (j *jepsenRun) record(op jepsenOp) {
	j.mu.Lock()
	defer j.mu.Unlock()
	op.index = len(j.ops)
	op.time = time.Since(j.start).Nanoseconds()
	j.ops = append(j.ops, op)
}

func (j *jepsenRun) nemesis(typ, f, value string) {
	j.record(jepsenOp{typ: typ, process: ":nemesis", f: f, value: value})
}

func ednString(s string) string { return strconv.Quote(s) }

// workload creates the stream and runs the processes; the connection stays
// open for the publishes attempted while the servers are down (stopped).
func (j *jepsenRun) workload(ctx context.Context, c *Cluster, x *AckLossExpect) error {
	j.start = time.Now()
	nc, js, err := connect(c.Servers...)
	if err != nil {
		return err
	}
	j.nc = nc
	err = retry(ctx, "create "+ackLossStream, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: ackLossStream, Subjects: []string{"ledger.>"},
			Replicas: 3, Storage: jetstream.FileStorage})
		return err
	})
	if err != nil {
		return err
	}
	per := ackLossPublished / jepsenProcesses
	var wg sync.WaitGroup
	errs := make([]error, jepsenProcesses)
	for p := range jepsenProcesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= per && errs[p] == nil; n++ {
				errs[p] = j.publish(ctx, p, n, per)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// A read of the whole stream before the nemesis (Jepsen's :fetch).
	if err := j.fetchFrom(ctx, js, jepsenProcesses); err != nil {
		return err
	}
	var seqs []uint64
	for _, p := range j.pubs {
		x.Published++
		if p.Type == "ok" {
			x.Acked++
			seqs = append(seqs, p.Seq)
		}
	}
	sort.Slice(seqs, func(a, b int) bool { return seqs[a] < seqs[b] })
	if len(seqs) == 0 {
		return fmt.Errorf("no publish acknowledged")
	}
	x.AckedFirst, x.AckedLast = seqs[0], seqs[len(seqs)-1]
	return nil
}

// publish is process p's n-th publish: an ordinary request, except one
// value per run refused by the server (a wrong expected last sequence:
// :fail) and one sent without waiting for its reply (:info; the server
// stores it).
func (j *jepsenRun) publish(ctx context.Context, p, n, per int) error {
	v := fmt.Sprintf("%d-%d", p, n)
	m := nats.NewMsg(fmt.Sprintf("ledger.p%d", p))
	m.Data = []byte(v)
	j.record(jepsenOp{typ: ":invoke", process: strconv.Itoa(p), f: ":publish", value: ednString(v)})
	pub := jepsenPub{Value: v, Process: p}
	switch {
	case p == 0 && n == per/3:
		m.Header.Set("Nats-Expected-Last-Sequence", "1")
	case p == 1 && n == per/2:
		// Sent with a reply subject nobody listens on: no answer comes.
		m.Reply = nats.NewInbox()
		if err := j.nc.PublishMsg(m); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
		pub.Type = "info"
		j.record(jepsenOp{typ: ":info", process: strconv.Itoa(p), f: ":publish", value: ednString(v), err: ":timeout"})
		j.addPub(pub)
		return nil
	}
	var reply *nats.Msg
	err := retry(ctx, "publish "+v, func(ctx context.Context) error {
		var err error
		reply, err = j.nc.RequestMsgWithContext(ctx, m)
		return err
	})
	if err != nil {
		return err
	}
	var ack struct {
		Seq   uint64 `json:"seq"`
		Error *struct {
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return fmt.Errorf("reply %q to %s: %v", reply.Data, v, err)
	}
	switch {
	case ack.Error != nil:
		pub.Type = "fail"
		j.record(jepsenOp{typ: ":fail", process: strconv.Itoa(p), f: ":publish", value: ednString(v),
			err: fmt.Sprintf("[:api-error %d %s]", ack.Error.ErrCode, ednString(ack.Error.Description))})
	case ack.Seq > 0:
		pub.Type, pub.Seq = "ok", ack.Seq
		j.record(jepsenOp{typ: ":ok", process: strconv.Itoa(p), f: ":publish", value: ednString(v), seq: ack.Seq})
	default:
		return fmt.Errorf("reply %q to %s: neither an ack nor an error", reply.Data, v)
	}
	j.addPub(pub)
	return nil
}

func (j *jepsenRun) addPub(p jepsenPub) {
	j.mu.Lock()
	j.pubs = append(j.pubs, p)
	j.mu.Unlock()
}

// fetchFrom reads every message of the stream with an ordered consumer.
func (j *jepsenRun) fetchFrom(ctx context.Context, js jetstream.JetStream, process int) error {
	j.record(jepsenOp{typ: ":invoke", process: strconv.Itoa(process), f: ":fetch", value: "nil"})
	var vals []string
	err := retry(ctx, "fetch", func(ctx context.Context) error {
		vals = nil
		cons, err := js.OrderedConsumer(ctx, ackLossStream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return err
		}
		info, err := cons.Info(ctx)
		if err != nil {
			return err
		}
		left := info.NumPending
		for left > 0 {
			batch, err := cons.Fetch(int(min(left, 100)), jetstream.FetchMaxWait(2*time.Second))
			if err != nil {
				return err
			}
			got := 0
			for m := range batch.Messages() {
				vals = append(vals, string(m.Data()))
				got++
			}
			if err := batch.Error(); err != nil {
				return err
			}
			if got == 0 {
				return fmt.Errorf("fetch: no message with %d pending", left)
			}
			left -= uint64(got)
		}
		// An ordered consumer is an ephemeral memory consumer: /jsz lists
		// it while the store holds no folder of it. Deleted, so the
		// captures and the stores agree.
		if ci := cons.CachedInfo(); ci != nil {
			if err := js.DeleteConsumer(ctx, ackLossStream, ci.Name); err != nil {
				return fmt.Errorf("delete the fetch's consumer: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		j.record(jepsenOp{typ: ":fail", process: strconv.Itoa(process), f: ":fetch", value: "nil", err: ednString(err.Error())})
		j.after = "fail"
		return err
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ednString(v))
	}
	b.WriteByte(']')
	j.record(jepsenOp{typ: ":ok", process: strconv.Itoa(process), f: ":fetch", value: b.String()})
	if j.read == nil {
		j.read = map[string]bool{}
		for _, v := range vals {
			j.read[v] = true
		}
	}
	j.after = "ok"
	return nil
}

// stopped completes the nemesis's :stop and publishes while every server
// is down: the connection is reconnecting, each request times out (:info,
// never stored: the connection is closed before any server comes back).
func (j *jepsenRun) stopped(ctx context.Context, names []string) {
	j.nemesis(":info", ":stop", nemesisMap(names, ":stopped"))
	for i := range 3 {
		p := i + 2
		v := fmt.Sprintf("%d-down", p)
		m := nats.NewMsg(fmt.Sprintf("ledger.p%d", p))
		m.Data = []byte(v)
		j.record(jepsenOp{typ: ":invoke", process: strconv.Itoa(p), f: ":publish", value: ednString(v)})
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := j.nc.RequestMsgWithContext(cctx, m)
		cancel()
		typ := ":info"
		if err == nil {
			typ = ":ok" // cannot happen: no server runs
		}
		j.record(jepsenOp{typ: typ, process: strconv.Itoa(p), f: ":publish", value: ednString(v), err: ":timeout"})
		j.addPub(jepsenPub{Value: v, Process: p, Type: typ[1:]})
	}
	j.nc.Close()
}

func (j *jepsenRun) cut(names []string) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ednString(n))
	}
	b.WriteByte(']')
	j.nemesis(":info", ":lose-unfsynced-writes", b.String())
	j.nemesis(":info", ":lose-unfsynced-writes", b.String())
}

func nemesisMap(names []string, what string) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", ednString(n), what)
	}
	b.WriteByte('}')
	return b.String()
}

// fetch completes the :start and reads the stream from the restarted
// servers, if they serve it.
func (j *jepsenRun) fetch(ctx context.Context, r *Cluster) {
	j.nemesis(":info", ":start", nemesisMap(names(r), ":started"))
	nc, js, err := connect(r.Servers...)
	if err != nil {
		j.record(jepsenOp{typ: ":invoke", process: strconv.Itoa(jepsenProcesses), f: ":fetch", value: "nil"})
		j.record(jepsenOp{typ: ":fail", process: strconv.Itoa(jepsenProcesses), f: ":fetch", value: "nil", err: ednString(err.Error())})
		j.after = "fail"
		return
	}
	defer nc.Close()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_ = j.fetchFrom(cctx, js, jepsenProcesses)
}

func names(c *Cluster) []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, s.Name)
	}
	return out
}

// histories renders the two EDN files.
func (j *jepsenRun) histories() map[string][]byte {
	var plain, withSeq bytes.Buffer
	for _, op := range j.ops {
		line := fmt.Sprintf("{:index %d, :time %d, :type %s, :process %s, :f %s, :value %s", op.index, op.time, op.typ, op.process, op.f, op.value)
		if op.err != "" {
			line += ", :error " + op.err
		}
		plain.WriteString(line + "}\n")
		if op.seq > 0 {
			line += fmt.Sprintf(", :seq %d", op.seq)
		}
		withSeq.WriteString(line + "}\n")
	}
	return map[string][]byte{jepsenHistory: plain.Bytes(), jepsenHistorySeq: withSeq.Bytes()}
}

// expect derives want.json's jepsen part; lastKept is the highest last_seq
// a restarted server reported.
func (j *jepsenRun) expect(lastKept uint64) (*JepsenExpect, error) {
	je := &JepsenExpect{Histories: []string{jepsenHistory, jepsenHistorySeq}, Read: len(j.read), FetchAfter: j.after, LastKept: lastKept}
	for _, p := range j.pubs {
		switch p.Type {
		case "ok":
			je.Ok++
			if p.Seq > lastKept {
				je.Lost = append(je.Lost, p)
			}
		case "fail":
			je.Fail = append(je.Fail, p.Value)
		case "info":
			je.Info = append(je.Info, p.Value)
			if j.read[p.Value] {
				je.InfoStored = append(je.InfoStored, p.Value)
			}
		}
	}
	sort.Slice(je.Lost, func(a, b int) bool { return je.Lost[a].Seq < je.Lost[b].Seq })
	for _, op := range j.ops {
		if op.process == ":nemesis" {
			je.Nemesis = append(je.Nemesis, fmt.Sprintf("%d %s %s", op.index, op.f, op.value))
		}
	}
	if len(je.Lost) == 0 {
		return nil, fmt.Errorf("no acknowledged value lost (last kept %d)", lastKept)
	}
	if len(je.Fail) == 0 || len(je.InfoStored) == 0 {
		return nil, fmt.Errorf("the run lacks a :fail (%v) or a stored :info (%v)", je.Fail, je.InfoStored)
	}
	return je, nil
}
