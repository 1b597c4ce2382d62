package raftlog

import (
	"cmp"
	"slices"
	"time"
)

// AssignedStream is a stream as a server's meta state assigns it.
type AssignedStream struct {
	Account   string             `json:"account"`
	Name      string             `json:"name"`
	Group     string             `json:"group"`
	Peers     []string           `json:"peers"`
	Replicas  int                `json:"replicas"`
	Created   time.Time          `json:"created"`
	Consumers []AssignedConsumer `json:"consumers"`
	Source    *StreamAssignment  `json:"-"` // the last assignment applied
}

// AssignedConsumer is a consumer as a server's meta state assigns it.
type AssignedConsumer struct {
	Name     string              `json:"name"`
	Group    string              `json:"group"`
	Peers    []string            `json:"peers"`
	Replicas int                 `json:"replicas"`
	Created  time.Time           `json:"created"`
	Source   *ConsumerAssignment `json:"-"` // the last assignment applied
	// Memory: the consumer's raft group keeps its state in memory (no
	// obs folder or group WAL on disk).
	Memory bool `json:"memory,omitempty"`
}

type streamKey struct{ account, name string }

type replayStream struct {
	sa        *StreamAssignment
	consumers map[string]*ConsumerAssignment
}

// Replay applies ordered meta ops to a meta snapshot's assignments and
// returns the final assignment set, sorted by account then name (consumers
// by name). It is a pure function of its inputs and follows what
// applyMetaEntries does with each op: assign and update stream (0, 11) set
// the stream's assignment and keep its consumers; remove stream (2) drops it
// with its consumers; assign consumer (1, 9) sets a consumer of an existing
// stream (ignored if the stream is not assigned); remove consumer (3) drops
// it. Other ops are ignored. Streams and consumers are identified by
// account and name. A meta EntrySnapshot found in the WAL replaces the
// state: call Replay again with that snapshot and the ops after it.
func Replay(snapshot []*StreamAssignment, ops []*Op) []AssignedStream {
	state := make(map[streamKey]*replayStream)
	for _, sa := range snapshot {
		if sa == nil {
			continue
		}
		rs := &replayStream{sa: sa, consumers: make(map[string]*ConsumerAssignment)}
		for _, ca := range sa.Consumers {
			if ca != nil {
				rs.consumers[ca.Name] = ca
			}
		}
		state[streamKey{sa.Account(), sa.Config.Name}] = rs
	}
	for _, op := range ops {
		if op == nil {
			continue
		}
		switch op.Code {
		case OpAssignStream, OpUpdateStream:
			if op.Stream == nil {
				continue
			}
			k := streamKey{op.Stream.Account(), op.Stream.Config.Name}
			if rs, ok := state[k]; ok {
				rs.sa = op.Stream
			} else {
				state[k] = &replayStream{sa: op.Stream, consumers: make(map[string]*ConsumerAssignment)}
			}
		case OpRemoveStream:
			if op.Stream != nil {
				delete(state, streamKey{op.Stream.Account(), op.Stream.Config.Name})
			}
		case OpAssignConsumer, OpAssignCompressedConsumer:
			if op.Consumer == nil {
				continue
			}
			if rs, ok := state[streamKey{op.Consumer.Account(), op.Consumer.Stream}]; ok {
				rs.consumers[op.Consumer.Name] = op.Consumer
			}
		case OpRemoveConsumer:
			if op.Consumer == nil {
				continue
			}
			if rs, ok := state[streamKey{op.Consumer.Account(), op.Consumer.Stream}]; ok {
				delete(rs.consumers, op.Consumer.Name)
			}
		}
	}
	out := make([]AssignedStream, 0, len(state))
	for k, rs := range state {
		as := AssignedStream{
			Account:   k.account,
			Name:      k.name,
			Replicas:  rs.sa.Config.Replicas,
			Created:   rs.sa.Created,
			Consumers: make([]AssignedConsumer, 0, len(rs.consumers)),
			Source:    rs.sa,
		}
		if g := rs.sa.Group; g != nil {
			as.Group, as.Peers = g.Name, slices.Clone(g.Peers)
		}
		for _, ca := range rs.consumers {
			ac := AssignedConsumer{Name: ca.Name, Replicas: ca.Config.Replicas, Created: ca.Created, Source: ca}
			if g := ca.Group; g != nil {
				ac.Group, ac.Peers = g.Name, slices.Clone(g.Peers)
				ac.Memory = g.Storage == "memory"
			}
			as.Consumers = append(as.Consumers, ac)
		}
		slices.SortFunc(as.Consumers, func(a, b AssignedConsumer) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, as)
	}
	slices.SortFunc(out, func(a, b AssignedStream) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Name, b.Name))
	})
	return out
}
