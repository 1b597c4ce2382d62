package consumers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

// A consumer that delivers nothing while messages wait for it:
//
//   - at max_ack_pending: as many messages delivered and unacknowledged as
//     max_ack_pending allows, more waiting (num_pending > 0): the server
//     delivers nothing new until an ack comes or the ack wait of a pending
//     message ends (then it redelivers that one). A client that vanished
//     without acking, with a long ack_wait, leaves the consumer so for that
//     long. Read from the consumer leader's /jsz (num_ack_pending,
//     max_ack_pending, num_pending, num_waiting, delivered.last_active),
//     else from o.dat's pending map and meta.inf's max_ack_pending.
//   - counting as pending messages its stream deleted (nats-server #7984):
//     a message deleted while the consumer had no leader stayed in its
//     pending map (o.dat), taking a place of max_ack_pending for nothing;
//     2.12.1 kept them through a restart of the server and of the cluster
//     (consumerstuck-v2.12.1). Read from o.dat's pending sequences held
//     against the blocks of the same server's copy of the stream.

var CheckConsumerStuck = check.Check{
	Code:        string(report.CodeConsumerStuck),
	Severity:    report.Warning,
	Description: "a consumer that delivers nothing while messages wait: at max_ack_pending with messages pending (the leader's /jsz num_ack_pending, max_ack_pending, num_pending, last delivery; else o.dat and meta.inf), or counting as pending messages its stream deleted (o.dat's pending map against the blocks; nats-server #7984, per release); since when, for how long (ack_wait) and what frees it",
	Skip: func(p *check.Pass) string {
		for _, st := range p.Model.Streams {
			if len(st.ConsumerCaptures) > 0 {
				return ""
			}
			for _, c := range st.Copies {
				if len(c.ConsumerStates) > 0 {
					return ""
				}
			}
		}
		return "no consumer in the bundle's stores or /jsz captures"
	},
	Run: runConsumerStuck,
}

// stuckConsumer is what the bundle shows of one consumer.
type stuckConsumer struct {
	account, stream, name string
	leader                *model.ConsumerCapture // the leader's (else the only) /jsz answer
	atLimitCapture        bool
	atLimitDisk           []string // servers whose o.dat is at max_ack_pending with messages waiting
	gone                  []goneOn // per server: pending sequences its copy no longer holds
	maxAck                int
	ackWait               time.Duration
	evidence              []string
}

type goneOn struct {
	server string
	count  int
	seqs   []uint64
	file   string
	floor  uint64
}

func runConsumerStuck(p *check.Pass) []report.Finding {
	m := p.Model
	var out []report.Finding
	for _, st := range m.Streams {
		names := map[string]bool{}
		for _, cc := range st.ConsumerCaptures {
			names[cc.Name] = true
		}
		for _, c := range st.Copies {
			for _, cs := range c.ConsumerStates {
				names[cs.Name] = true
			}
		}
		var sorted []string
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			sc := judgeStuck(m, st, n)
			if sc == nil {
				continue
			}
			out = append(out, stuckFinding(m, sc))
		}
	}
	return out
}

func judgeStuck(m *model.Model, st *model.Stream, name string) *stuckConsumer {
	sc := &stuckConsumer{account: st.Account, stream: st.Name, name: name}
	// The consumer leader's /jsz answer: followers report num_pending 0.
	var any *model.ConsumerCapture
	for i := range st.ConsumerCaptures {
		cc := &st.ConsumerCaptures[i]
		if cc.Name != name {
			continue
		}
		if any == nil {
			any = cc
		}
		if cc.Leader == "" || cc.Leader == m.Name(cc.Server) {
			if sc.leader == nil || cc.Captured.After(sc.leader.Captured) {
				sc.leader = cc
			}
		}
	}
	if sc.leader == nil && any != nil && any.Leader == "" {
		sc.leader = any
	}
	if l := sc.leader; l != nil && l.HasConfig {
		sc.maxAck, sc.ackWait = l.MaxAckPending, l.AckWait
		if l.MaxAckPending > 0 && l.NumAckPending >= l.MaxAckPending && l.NumPending > 0 {
			sc.atLimitCapture = true
		}
	}
	for _, c := range st.Copies {
		for _, cs := range c.ConsumerStates {
			if cs.Name != name || !cs.State {
				continue
			}
			srv := m.Name(c.Server)
			if sc.maxAck == 0 {
				sc.maxAck, sc.ackWait = cs.MaxAckPending, cs.AckWait
			}
			// Messages waiting are known from the blocks only for a
			// consumer of the whole stream.
			if cs.MaxAckPending > 0 && cs.Pending >= cs.MaxAckPending && !cs.Filtered && c.LastSeq > cs.Delivered && c.Messages > 0 {
				sc.atLimitDisk = append(sc.atLimitDisk, srv)
				sc.evidence = append(sc.evidence, fmt.Sprintf("%s: o.dat (%s) holds %d pending acks, max_ack_pending %d (meta.inf), delivered up to stream sequence %d of %d", srv, cs.File, cs.Pending, cs.MaxAckPending, cs.Delivered, c.LastSeq))
			}
			if cs.PendingGoneCount > 0 {
				sc.gone = append(sc.gone, goneOn{server: srv, count: cs.PendingGoneCount, seqs: cs.PendingGone, file: cs.File, floor: cs.AckFloor})
			}
		}
	}
	if !sc.atLimitCapture && len(sc.atLimitDisk) == 0 && len(sc.gone) == 0 {
		return nil
	}
	return sc
}

func stuckFinding(m *model.Model, sc *stuckConsumer) report.Finding {
	what := fmt.Sprintf("%s > %s > %s", sc.account, sc.stream, sc.name)
	f := report.Finding{Account: sc.account, Stream: sc.stream, Consumer: sc.name, Kind: "max-ack-pending"}
	if l := sc.leader; l != nil {
		f.Server = m.Name(l.Server)
		if l.LastDelivered != nil {
			t := l.LastDelivered.UTC()
			f.Since = &t
		}
		line := fmt.Sprintf("%s /jsz (%s): num_ack_pending %d, max_ack_pending %d, num_pending %d, num_waiting %d", f.Server, l.File, l.NumAckPending, l.MaxAckPending, l.NumPending, l.NumWaiting)
		if l.Leader != "" {
			line += ", leader " + l.Leader
		}
		if l.AckWait > 0 {
			line += ", ack_wait " + l.AckWait.String()
		}
		if l.LastDelivered != nil {
			line += ", delivered.last_active " + l.LastDelivered.UTC().Format(time.RFC3339)
			if !l.Captured.IsZero() && l.Captured.After(*l.LastDelivered) {
				line += fmt.Sprintf(" (%s before the capture; a restart of the leader sets it too)", l.Captured.Sub(*l.LastDelivered).Round(time.Second))
			}
		}
		if l.Push {
			line += fmt.Sprintf(", push, push_bound %v", l.PushBound)
		}
		f.Evidence = append(f.Evidence, line)
	}
	f.Evidence = append(f.Evidence, sc.evidence...)
	var gone int
	for _, g := range sc.gone {
		gone = max(gone, g.count)
		f.Servers = appendUnique(f.Servers, g.server)
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: o.dat (%s) holds as pending %d message(s) its copy of the stream no longer has (deleted): stream sequence(s) %s", g.server, g.file, g.count, seqList(g.seqs, g.count)))
	}
	for _, s := range sc.atLimitDisk {
		f.Servers = appendUnique(f.Servers, s)
	}
	if f.Server != "" {
		f.Servers = appendUnique(f.Servers, f.Server)
	}
	sort.Strings(f.Servers)
	wait := "its ack wait"
	if sc.ackWait > 0 {
		wait = "its ack wait (" + sc.ackWait.String() + ")"
	}
	atLimit := sc.atLimitCapture || len(sc.atLimitDisk) > 0
	switch {
	case len(sc.gone) > 0:
		f.Kind = "pending-deleted"
		f.Message = fmt.Sprintf("consumer %s counts as pending %d message(s) its stream deleted (nats-server #7984): each takes a place of max_ack_pending (%d) for nothing", what, gone, sc.maxAck)
		if atLimit || (sc.maxAck > 0 && gone >= sc.maxAck) {
			f.Message += "; it is at max_ack_pending and delivers nothing"
		}
		f.Message += "; " + deletedPendingNote(releases.MinVersion(m))
	default:
		pending := ""
		if l := sc.leader; l != nil && sc.atLimitCapture {
			pending = fmt.Sprintf(" with %d message(s) waiting", l.NumPending)
		}
		f.Message = fmt.Sprintf("consumer %s is at max_ack_pending (%d)%s: the server delivers nothing new until an ack comes or %s ends for a pending message; a client that took them and vanished leaves it so", what, sc.maxAck, pending, wait)
	}
	remedy.Prescribe(remedy.ConsumerStuckAcks, remedy.Args{"account": sc.account, "stream": sc.stream, "consumer": sc.name,
		"deleted": len(sc.gone) > 0}).Apply(&f)
	return f
}

// deletedPendingNote says per release whether the server goes on counting
// them (releases.KeepsDeletedPending).
func deletedPendingNote(v string) string {
	yes, known := releases.KeepsDeletedPending(v)
	switch {
	case !known:
		return "what " + orUnknown(v) + " does with them was not run (2.12.1, 2.12.15 and 2.15.3 kept them through restarts)"
	case yes:
		return v + " keeps them: on 2.12.1, 2.12.15 and 2.15.3 they stayed pending through a restart of the server and of the cluster, the fix of nats-server #7984 notwithstanding, until their ack wait ends"
	}
	return v + " drops them when the consumer comes to them"
}

func seqList(seqs []uint64, count int) string {
	var parts []string
	for _, s := range seqs {
		parts = append(parts, fmt.Sprint(s))
	}
	out := strings.Join(parts, ", ")
	if count > len(seqs) {
		out += fmt.Sprintf(" and %d more", count-len(seqs))
	}
	return out
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
