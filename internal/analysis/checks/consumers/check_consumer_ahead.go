package consumers

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// A consumer delivers the stream's messages after its delivered sequence
// (consumer.go: o.sseq is delivered+1). When every copy of the stream lost
// its tail (a power loss with the default sync_interval) while the
// consumer's state kept what it had delivered and acknowledged, the
// stream's next messages take the lost sequences again and the consumer
// passes over them: nothing is delivered up to its old delivered sequence,
// no error, no log line on 2.12 and earlier. 2.14+ moves an R1 consumer
// back at its start (releases.ResetsAheadConsumer); a replicated one keeps
// its state on every release read.
//
// Severity: critical. The consumer's application silently never sees the
// messages published as those sequences, and nothing else in the report
// says so (healthz is ok on a standalone server, and on a stalled
// replicated stream the loss comes as soon as the stream takes writes
// again, by whatever brings it back); warning where the server's next
// start resets it (an R1 consumer on 2.14+ whose state is read from its
// store, not from a running server).

var CheckConsumerAhead = check.Check{
	Code:        string(report.CodeConsumerAhead),
	Severity:    report.Critical,
	Description: "a consumer's delivered or ack floor stream sequence is past its stream's last sequence on a server (after every copy of the stream lost its tail): the stream's next messages take those sequences again and the consumer passes over them; per server, from o.dat, the consumer group's snapshot, /jsz and the log, which sequences it skips, and whether the release moves it back at its start (2.14+: R1 consumers only)",
	Skip: func(p *check.Pass) string {
		for _, st := range p.Model.Streams {
			for _, c := range st.Copies {
				if len(c.Consumers) > 0 {
					return ""
				}
			}
			for _, d := range st.Captured {
				if len(d.Consumers) > 0 {
					return ""
				}
			}
		}
		return "no consumer state in the bundle: no consumer folder (o.dat) in a store and no /jsz with consumers"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		resets := resetLines(m)
		var out []report.Finding
		for _, st := range m.Streams {
			out = append(out, aheadOf(p, m, st, resets)...)
		}
		sort.SliceStable(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.Account+a.Stream != b.Account+b.Stream {
				return a.Account+a.Stream < b.Account+b.Stream
			}
			if a.Consumer != b.Consumer {
				return a.Consumer < b.Consumer
			}
			return a.Server < b.Server
		})
		return out
	},
}

// aheadState is one source's view of a consumer on one server: its
// delivered and ack floor against the stream's last sequence there.
type aheadState struct {
	source              string
	delivered, ackFloor uint64
	last                uint64
	lastFrom            string
}

func (s aheadState) ahead() bool { return s.delivered > s.last || s.ackFloor > s.last }

func (s aheadState) text() string {
	return fmt.Sprintf("%s: delivered stream sequence %d, ack floor %d; the stream's last sequence %d (%s)", s.source, s.delivered, s.ackFloor, s.last, s.lastFrom)
}

// resetKey names one consumer on one server.
type resetKey struct{ server, account, stream, consumer string }

// resetLines are the 2.14+ start lines moving a consumer back, by server
// and consumer, as timeline indexes.
func resetLines(m *model.Model) map[resetKey][]int {
	out := map[resetKey][]int{}
	for i, e := range m.Timeline {
		if e.Source != "log" || e.Kind != "consumer-ahead-reset" && e.Kind != "consumer-ack-ahead" {
			continue
		}
		c := consumerOf(e.Text)
		if c == "" {
			continue
		}
		k := resetKey{m.Name(e.Server), e.Account, e.Stream, c}
		out[k] = append(out[k], i)
	}
	return out
}

var consumerInLine = regexp.MustCompile(`JetStream consumer '[^']*? > [^']*? > ([^']*)' `)

// consumerOf is the consumer a "JetStream consumer '<a> > <s> > <c>' …"
// line names.
func consumerOf(text string) string {
	if m := consumerInLine.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// streamHolds is the highest last sequence any copy of st holds (blocks,
// or a current index.db remembering more): what a replica catches up to.
func streamHolds(m *model.Model, st *model.Stream) (uint64, string) {
	var best uint64
	from := ""
	for _, c := range st.Copies {
		l, f := copyLast(m, c)
		if l > best || from == "" {
			best, from = l, f
		}
		// What its raft WAL holds past the group's snapshot: applied at
		// its next start (2.10.27 restored the lost tail so).
		for _, r := range st.WALPending[c.Server] {
			if r.Last > best {
				best, from = r.Last, "the raft WAL of "+m.Name(c.Server)+" past the group's snapshot"
			}
		}
	}
	return best, from
}

// copyLast is the last sequence a stream copy holds: its blocks', or its
// index.db's when that remembers more and the server keeps it.
func copyLast(m *model.Model, c *model.StreamCopy) (uint64, string) {
	// A stale index.db's last sequence is kept by the releases that keep
	// it (releases.KeepsPriorLastSeqOf: 2.11.4+, 2.12+ for R1 streams).
	keeps, _ := releases.KeepsPriorLastSeqOf(model.ServerVersion(m, c.Server), max(c.Replicas, 1))
	if c.Index != nil && (!c.Index.Stale || keeps) && c.Index.LastSeq > c.LastSeq {
		return c.Index.LastSeq, "its index.db " + c.Index.File
	}
	return c.LastSeq, "the message blocks of " + c.Path
}

// consumerReplicas is a consumer's replica count as the bundle tells it:
// its group's size, the meta assignment's peers, 1 on a standalone server;
// 0 when unknown.
func consumerReplicas(m *model.Model, st *model.Stream, consumer string, standalone bool) int {
	for _, g := range m.Groups {
		if g.Kind == natsfmt.GroupConsumer && g.Account == st.Account && g.Asset == st.Name+" > "+consumer {
			for _, v := range g.Views {
				if v.ClusterSize > 0 {
					return v.ClusterSize
				}
			}
		}
	}
	for _, s := range m.Servers {
		if s.Meta == nil {
			continue
		}
		if a := s.Meta.Streams[model.AssetKey{Account: st.Account, Stream: st.Name}]; a != nil {
			if peers, ok := a.Consumers[consumer]; ok && len(peers) > 0 {
				return len(peers)
			}
		}
	}
	if standalone {
		return 1
	}
	return 0
}

// consumerSnapshots are the consumer groups' newest snapshots by server
// and consumer name, for st.
func consumerSnapshots(m *model.Model, st *model.Stream) map[string]map[string]*model.RaftRecord {
	groups := map[string]string{} // group name -> consumer
	for _, g := range m.Groups {
		if g.Kind == natsfmt.GroupConsumer && g.Account == st.Account && strings.HasPrefix(g.Asset, st.Name+" > ") {
			groups[g.Name] = strings.TrimPrefix(g.Asset, st.Name+" > ")
		}
	}
	out := map[string]map[string]*model.RaftRecord{}
	for _, r := range m.RaftRecords {
		c, ok := groups[r.Group]
		if !ok || r.Snapshot == nil || r.Snapshot.Consumer == nil {
			continue
		}
		n := m.Name(r.Server)
		if out[n] == nil {
			out[n] = map[string]*model.RaftRecord{}
		}
		out[n][c] = r
	}
	return out
}

func aheadOf(p *check.Pass, m *model.Model, st *model.Stream, resets map[resetKey][]int) []report.Finding {
	holds, holdsFrom := streamHolds(m, st)
	type key struct{ server, consumer string }
	states := map[key][]aheadState{}
	standalone := map[string]bool{}
	var order []key
	add := func(k key, s aheadState) {
		if _, ok := states[k]; !ok {
			order = append(order, k)
		}
		states[k] = append(states[k], s)
	}
	// The stores: o.dat against what this copy and the others hold.
	copyOf := map[string]*model.StreamCopy{}
	for _, c := range st.Copies {
		n := m.Name(c.Server)
		copyOf[n] = c
		standalone[n] = !c.Clustered
		last, from := copyLast(m, c)
		if holds > last {
			// Another copy holds more: a catch-up brings this one there.
			last, from = holds, holdsFrom
		}
		for _, oc := range c.Consumers {
			add(key{n, oc.Name}, aheadState{source: "o.dat of " + c.Path + "/obs/" + oc.Name, delivered: oc.DeliveredStream,
				ackFloor: oc.AckFloorStream, last: last, lastFrom: from})
		}
	}
	// The consumer groups' snapshots, against the same.
	for n, byC := range consumerSnapshots(m, st) {
		c := copyOf[n]
		if c == nil {
			continue
		}
		last, from := copyLast(m, c)
		if holds > last {
			last, from = holds, holdsFrom
		}
		for cn, r := range byC {
			add(key{n, cn}, aheadState{source: "the consumer group's snapshot " + r.Snapshot.File, delivered: r.Snapshot.Consumer.DeliveredStream,
				ackFloor: r.Snapshot.Consumer.AckFloorStream, last: last, lastFrom: from})
		}
	}
	// /jsz: the consumer and the stream as the same answer gives them.
	for _, d := range st.Captured {
		n := m.Name(d.Server)
		for _, dc := range d.Consumers {
			add(key{n, dc.Name}, aheadState{source: d.Source + " " + d.Path, delivered: dc.DeliveredStream, ackFloor: dc.AckFloorStream,
				last: d.LastSeq, lastFrom: "the same answer"})
		}
	}
	var out []report.Finding
	reported := map[key]bool{}
	for _, k := range order {
		ss := states[k]
		var shows []aheadState
		for _, s := range ss {
			if s.ahead() {
				shows = append(shows, s)
			}
		}
		if len(shows) == 0 {
			continue
		}
		reported[k] = true
		out = append(out, aheadFinding(m, st, k.server, k.consumer, ss, shows, standalone[k.server], resets[resetKey{k.server, st.Account, st.Name, k.consumer}]))
	}
	// The consumers a 2.14+ start moved back (its log line) and that no
	// state shows ahead any more: info, what the line says.
	for rk, lines := range resets {
		if rk.account != st.Account || rk.stream != st.Name || reported[key{rk.server, rk.consumer}] {
			continue
		}
		for _, i := range lines {
			if m.Timeline[i].Kind == "consumer-ahead-reset" {
				out = append(out, resetFinding(m, st, rk.server, rk.consumer, i))
				break
			}
		}
	}
	return out
}

var resetFigures = regexp.MustCompile(`delivered sequence (\d+) past last stream sequence of (\d+)`)

// resetFinding is an info finding for a consumer a 2.14+ start moved back
// to its stream's last sequence: the stream had lost its tail.
func resetFinding(m *model.Model, st *model.Stream, server, consumer string, i int) report.Finding {
	e := m.Timeline[i]
	t := e.Time.UTC()
	f := report.Finding{Severity: report.Info, Kind: "reset", Server: server, Servers: []string{server}, Account: st.Account, Stream: st.Name,
		Consumer: consumer, Since: &t, TimelineRefs: []int{i}}
	f.Evidence = []string{fmt.Sprintf("%s line %d (%s): %s", e.File, e.Line, t.Format(time.RFC3339Nano), e.Text)}
	f.Message = fmt.Sprintf("consumer %s > %s > %s on %s was past its stream's last sequence when the server started at %s, and the server moved it back to it", st.Account, st.Name, consumer, server, t.Format(time.RFC3339))
	if g := resetFigures.FindStringSubmatch(e.Text); g != nil {
		d, _ := strconv.ParseUint(g[1], 10, 64)
		l, _ := strconv.ParseUint(g[2], 10, 64)
		if d > l {
			f.Seq = d
			f.Ranges = []report.Range{{First: l + 1, Last: d}}
			f.Message = fmt.Sprintf("consumer %s > %s > %s on %s had delivered up to stream sequence %d when the server started at %s, past the stream's last sequence %d: the server moved it back to %d, so it delivers the stream's next messages; what it had delivered as %s is gone from the stream (lost with its tail)",
				st.Account, st.Name, consumer, server, d, t.Format(time.RFC3339), l, l, seqText(l+1, d))
		}
	}
	return f
}

func aheadFinding(m *model.Model, st *model.Stream, server, consumer string, all, shows []aheadState, standalone bool, lines []int) report.Finding {
	f := report.Finding{Server: server, Servers: []string{server}, Account: st.Account, Stream: st.Name, Consumer: consumer, Kind: "skips"}
	var top, last uint64
	last = ^uint64(0)
	for _, s := range shows {
		top = max(top, s.delivered, s.ackFloor)
		last = min(last, s.last)
	}
	f.Seq = top
	f.Ranges = []report.Range{{First: last + 1, Last: top}}
	for _, s := range all {
		f.Evidence = append(f.Evidence, s.text())
	}
	for _, i := range lines {
		e := m.Timeline[i]
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s line %d (%s): %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), e.Text))
		f.TimelineRefs = append(f.TimelineRefs, i)
	}
	version := ""
	if s := m.Server(server); s != nil {
		version = s.Version
	}
	replicas := consumerReplicas(m, st, consumer, standalone)
	skipped := seqText(last+1, top)
	f.Message = fmt.Sprintf("consumer %s > %s > %s on %s has delivered up to stream sequence %d, past the stream's last sequence %d there: the stream's next messages take %s again and this consumer passes over them (delivers nothing up to %d, no error)",
		st.Account, st.Name, consumer, server, top, last, skipped, top)
	f.Severity = report.Critical
	resets, known := releases.ResetsAheadConsumer(version, replicas)
	release := "nats-server " + strings.TrimPrefix(version, "v")
	switch {
	case version == "":
		f.Evidence = append(f.Evidence, "the server's release is not in the bundle: whether its start moves the consumer back cannot be told (2.14+ does for R1 consumers, no release read does for replicated ones)")
	case !known:
		f.Evidence = append(f.Evidence, release+": whether its start moves the consumer back was not read in its source (2.14.10 and 2.15.2 do for R1 consumers, 2.10.27 to 2.12.15 never)")
	case resets && onlyStores(shows):
		f.Severity, f.Kind = report.Warning, "reset-at-start"
		f.Message = fmt.Sprintf("consumer %s > %s > %s on %s records delivered up to stream sequence %d, past the stream's last sequence %d there; %s moves an R1 consumer back to the stream's last sequence at its next start (logging \"delivered sequence %d past last stream sequence of %d\"), until then it would pass over %s",
			st.Account, st.Name, consumer, server, top, last, release, top, last, skipped)
	case resets:
		f.Evidence = append(f.Evidence, release+" moves an R1 consumer back at its start only: this one is ahead in a running server's answer")
	case replicas > 1:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s keeps a replicated consumer's state at its start (no release read moves an R%d consumer back): it stays ahead until it is reset or added again", release, replicas))
	default:
		f.Evidence = append(f.Evidence, release+" keeps the consumer's state at its start (only 2.14+ moves an R1 consumer back): it stays ahead until it is reset or added again")
	}
	remedy.Prescribe(remedy.ConsumerAheadRecreate, remedy.Args{"server": server, "account": st.Account, "stream": st.Name, "consumer": consumer,
		"next": strconv.FormatUint(last+1, 10), "atstart": f.Kind == "reset-at-start", "replicated": st.Replicas > 1}).Apply(&f)
	return f
}

// onlyStores says whether every view showing the consumer ahead is read
// from a store (a state a start reads), none from a running server.
func onlyStores(shows []aheadState) bool {
	for _, s := range shows {
		if !strings.HasPrefix(s.source, "o.dat") && !strings.HasPrefix(s.source, "the consumer group's snapshot") {
			return false
		}
	}
	return true
}

func seqText(first, last uint64) string {
	if first == last {
		return fmt.Sprintf("sequence %d", first)
	}
	return fmt.Sprintf("sequences %d-%d", first, last)
}
