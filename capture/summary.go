package capture

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteSummary prints captures as deterministic text, one block per capture:
// the figures the analysis uses, in a form meant for `dump` commands and
// golden tests. Maps are printed in key order.
func WriteSummary(w io.Writer, caps []Capture) error {
	p := &printer{w: w}
	for i := range caps {
		p.capture(&caps[i])
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (p *printer) capture(c *Capture) {
	s := c.Server
	p.f("%s:%d @%d %s server=%s id=%s cluster=%s version=%s time=%s node=%s",
		c.File, c.Line, c.Offset, c.Kind, orDash(s.Name), orDash(s.ID), orDash(s.Cluster), orDash(s.Version), ts(s.Time), orDash(s.Node))
	if c.Error != nil {
		p.f("  error: code=%d err_code=%d %s", c.Error.Code, c.Error.ErrCode, c.Error.Description)
	}
	if c.Problem != nil {
		p.f("  problem: %v", c.Problem)
	}
	switch {
	case c.Jsz != nil:
		p.jsz(c.Jsz)
	case c.Raftz != nil:
		p.raftz(*c.Raftz)
	case c.Healthz != nil:
		h := c.Healthz
		p.f("  status=%s code=%d error=%q", h.Status, h.StatusCode, h.Error)
		for _, e := range h.Errors {
			p.f("  - %s account=%s stream=%s consumer=%s: %s", e.Type, e.Account, e.Stream, e.Consumer, e.Error)
		}
	case c.Varz != nil:
		v := c.Varz
		p.f("  varz name=%s id=%s version=%s cluster=%s urls=%s gateway=%s start=%s now=%s",
			v.ServerName, v.ServerID, v.Version, orDash(v.Cluster.Name), strings.Join(v.Cluster.URLs, ","), orDash(v.Gateway.Name), ts(v.Start), ts(v.Now))
		if v.JetStream.Config != nil {
			p.f("  jetstream store_dir=%s domain=%s", v.JetStream.Config.StoreDir, orDash(v.JetStream.Config.Domain))
		}
	case c.Gatewayz != nil:
		g := c.Gatewayz
		for _, name := range sortedKeys(g.Outbound) {
			p.f("  outbound %s configured=%v", name, g.Outbound[name].IsConfigured)
		}
		for _, name := range sortedKeys(g.Inbound) {
			for _, in := range g.Inbound[name] {
				p.f("  inbound %s configured=%v", name, in.IsConfigured)
			}
		}
	case c.Leafz != nil:
		p.f("  leafnodes=%d", c.Leafz.NumLeafs)
		for _, l := range c.Leafz.Leafs {
			p.f("  leaf name=%q account=%s spoke=%v", l.Name, l.Account, l.IsSpoke)
		}
	case c.Account != nil:
		a := c.Account
		p.f("  account %s clients=%d leafnodes=%d subscriptions=%d", a.AccountName, a.ClientCnt, a.LeafCnt, a.SubCnt)
		if a.Claim != nil {
			l := a.Claim.Nats.Limits
			p.f("  jwt limits conn=%d leaf=%d subs=%d", l.Conn, l.LeafNodeConn, l.Subs)
		}
	}
	if m, ok := c.Meta(); ok {
		p.meta(m)
	}
}

func (p *printer) jsz(j *Jsz) {
	p.f("  jsz server_id=%s now=%s store_dir=%s domain=%s streams=%d consumers=%d messages=%d bytes=%d storage=%d api=%d/%d",
		j.ServerID, ts(j.Now), j.Config.StoreDir, orDash(j.Config.Domain), j.Streams, j.Consumers, j.Messages, j.Bytes, j.Storage, j.API.Errors, j.API.Total)
	for _, a := range j.AccountDetails {
		p.f("  account %s (%s)", a.Name, a.ID)
		for _, s := range a.Streams {
			rep := 0
			if s.Config != nil {
				rep = s.Config.Replicas
			}
			cl, leader, peers := "-", "-", []string{}
			if s.Cluster != nil {
				cl, leader = orDash(s.Cluster.RaftGroup), orDash(s.Cluster.Leader)
				for _, r := range s.Cluster.Replicas {
					peers = append(peers, r.Name)
				}
			}
			st := s.State
			p.f("    stream %s group=%s raft=%s R%d leader=%s replicas=%s msgs=%d bytes=%d first=%d last=%d deleted=%d consumers=%d",
				s.Name, orDash(s.RaftGroup), cl, rep, leader, strings.Join(peers, ","), st.Messages, st.Bytes, st.FirstSeq, st.LastSeq, st.NumDeleted, st.ConsumerCount)
			groups := map[string]string{}
			for _, g := range s.ConsumerRaftGroups {
				groups[g.Name] = g.RaftGroup
			}
			for _, c := range s.Consumers {
				p.f("      consumer %s group=%s delivered=%d/%d ack_floor=%d/%d pending=%d ack_pending=%d redelivered=%d",
					c.Name, orDash(groups[c.Name]), c.Delivered.Consumer, c.Delivered.Stream, c.AckFloor.Consumer, c.AckFloor.Stream,
					c.NumPending, c.NumAckPending, c.NumRedelivered)
			}
		}
	}
}

func (p *printer) raftz(r Raftz) {
	for _, a := range r.Accounts() {
		for _, n := range r.Groups(a) {
			g := r[a][n]
			p.f("  group %s/%s id=%s state=%s size=%d quorum=%d term=%d voted_for=%s leader=%s ever_had_leader=%t committed=%d applied=%d pterm=%d pindex=%d wal=%d msgs %d..%d",
				a, n, g.ID, g.State, g.Size, g.QuorumNeeded, g.Term, orDash(g.VotedFor), orDash(g.Leader), g.EverHadLeader,
				g.Committed, g.Applied, g.PTerm, g.PIndex, g.WAL.Messages, g.WAL.FirstSeq, g.WAL.LastSeq)
			ids := make([]string, 0, len(g.Peers))
			for id := range g.Peers {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				pe := g.Peers[id]
				seen := "-"
				if d, ok := pe.LastSeenDuration(); ok {
					seen = d.String()
				}
				p.f("    peer %q name=%s known=%t last_seen=%s last_replicated_index=%d", id, orDash(pe.Name), pe.Known, seen, pe.LastReplicatedIndex)
			}
		}
	}
}

func (p *printer) meta(m MetaView) {
	q := fmt.Sprint(m.Quorum)
	if !m.QuorumFromServer {
		q += "(computed)"
	}
	p.f("  meta source=%s self=%s size=%d quorum=%s term=%d has_leader=%t leader=%s leader_name=%s",
		m.Source, orDash(m.Self), m.ClusterSize, q, m.Term, m.HasLeader, orDash(m.Leader), orDash(m.LeaderName))
	ids := make([]string, 0, len(m.Peers))
	for _, pe := range m.Peers {
		flag := ""
		if pe.Self {
			flag += " self"
		}
		if pe.Leader {
			flag += " leader"
		}
		ids = append(ids, fmt.Sprintf("%q%s", pe.ID, flag))
	}
	p.f("  meta peers (%d): %s", len(m.Peers), strings.Join(ids, ", "))
}

// sortedKeys are the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
