package load

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// nodePlaceholder prefixes the name of a server known only by its raft node
// id, until a source names it (placeholderNames).
const nodePlaceholder = "node-"

// captures takes every monitoring answer the bundle's sniff decoded (a
// capture file is read and decoded once, there), and those of the audit
// archives as read (audits).
func (l *loader) captures(audits []auditRead) {
	var all []capture.Capture
	// A `nats audit gather` archive: assembled by its manifest from the
	// answers its entries decoded to; its files are not read again.
	var auditDirs []string
	for _, a := range audits {
		for _, p := range a.audit.Problems {
			l.note("audit archive: %v", p)
		}
		all = append(all, a.audit.Captures()...)
		l.m.Gathers = append(l.m.Gathers, gatherOf(a))
		if a.dir == "." {
			auditDirs = append(auditDirs, "") // the bundle is its capture/ folder
		} else {
			auditDirs = append(auditDirs, a.dir+"/")
		}
	}
	type pending struct {
		bc bundle.Capture
		c  capture.Capture
	}
	var unnamed []pending
	for _, bc := range l.b.Captures {
		if bc.Kind == bundle.KindAuditManifest || underAny(bc.Path, auditDirs) {
			continue
		}
		if bc.DecodeErr != nil {
			l.note("capture %s: %v", bc.Path, bc.DecodeErr)
		}
		for _, c := range bc.Decoded {
			if c.Server.Name == "" {
				unnamed = append(unnamed, pending{bc, c})
			} else {
				all = append(all, c)
			}
		}
	}
	// Named answers first, so that a bare /raftz can then be named by its
	// node id among the servers they named.
	// Server ids (the N… NKeys) of named answers name the unnamed ones of
	// the same process (a bare /jsz carries its server_id).
	l.serverIDs = map[string]string{}
	for _, c := range all {
		if c.Server.ID != "" {
			l.serverIDs[c.Server.ID] = c.Server.Name
		}
	}
	nAudit := 0
	for _, a := range audits {
		nAudit += len(a.audit.Captures())
	}
	for _, c := range all {
		l.capture(c)
	}
	loose := all[nAudit:]
	for _, p := range unnamed {
		p.c.Server.Name = l.captureName(p.bc, p.c)
		l.capture(p.c)
		loose = append(loose, p.c)
	}
	// Without a gather archive, natscli's checks may judge the loose
	// captures of the same endpoints (Options.LooseAudit).
	if l.looseAudit && len(audits) == 0 && len(loose) > 0 {
		l.m.Gathers = append(l.m.Gathers, looseGather(loose))
	}
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// sniffedIn gives the answers the sniff of b decoded from an audit
// archive's entry, where they are what the archive's reader would decode
// (the kind its manifest tags it with did not matter, or was the sniff's
// hint).
func SniffedIn(b *bundle.Bundle) capture.Decoded {
	return func(file, kind string) ([]capture.Capture, error, bool) {
		i := sort.Search(len(b.Captures), func(i int) bool { return b.Captures[i].Path >= file })
		if i == len(b.Captures) || b.Captures[i].Path != file {
			// An entry the sniff took for no capture, decoded as its tag says.
			e, ok := b.AuditEntries[file]
			return e.Decoded, e.DecodeErr, ok && e.Kind == kind
		}
		bc := b.Captures[i]
		if !bc.AnyHint && bc.Hint != kind {
			return nil, nil, false
		}
		return bc.Decoded, bc.DecodeErr, true
	}
}

// captureName names the server of an answer that does not name it: by its
// raft node id among known servers, else by a path candidate whose peer id
// is that node id, else, for an answer that carries no node id (a bare
// /healthz), by the server whose folder holds the file (folderServer).
func (l *loader) captureName(bc bundle.Capture, c capture.Capture) string {
	if n, ok := l.serverIDs[c.Server.ID]; ok && c.Server.ID != "" {
		return n
	}
	node := c.Server.Node
	if node != "" {
		if s := l.m.ServerByID(node); s != nil {
			return s.Name
		}
		if n, ok := l.nodeNames()[node]; ok {
			return n
		}
	}
	for _, cand := range bc.NameCandidates {
		if l.m.Server(cand) != nil {
			return cand
		}
	}
	if node == "" {
		// An answer with a node id no server has is another server's;
		// only one that says nothing of itself goes by its folder.
		return l.folderServer(bc.Path)
	}
	return ""
}

// folderServer is the server whose folder holds the file at p: going up
// from p's folder (never to the bundle root), the first folder that holds
// a store or a log of a known server decides, when they are all one
// server's (store-3/{data/jetstream, nats.log, monitoring/healthz.json},
// whatever the folder is called); "" when that folder is shared by two
// servers or no folder holds any.
func (l *loader) folderServer(p string) string {
	owners := l.folderOwners()
	for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		switch len(owners[d]) {
		case 0:
			continue
		case 1:
			for n := range owners[d] {
				return n
			}
		}
		return ""
	}
	return ""
}

// folderOwners indexes, by folder, the known servers whose store is that
// folder or under it, or whose log is under it; made again only when the
// captures have named more servers since, so that each bare capture costs
// a walk up its own path, not one over every server and log.
func (l *loader) folderOwners() map[string]map[string]bool {
	if l.owners != nil && l.ownersOf == len(l.m.Servers) {
		return l.owners
	}
	by := map[string]map[string]bool{}
	add := func(d, name string) {
		for ; d != "." && d != "/" && d != ""; d = path.Dir(d) {
			if by[d] == nil {
				by[d] = map[string]bool{}
			}
			by[d][name] = true
		}
	}
	for _, s := range l.m.Servers {
		if s.StoreDir != "" && s.StoreDir != "." {
			add(s.StoreDir, s.Name)
		}
	}
	for _, lg := range l.b.Logs {
		// A log whose server is not known yet says nothing of the folder.
		if n, _ := l.logServerName(lg); n != "" && l.m.Server(n) != nil {
			add(path.Dir(lg.Path), n)
		}
	}
	l.owners, l.ownersOf = by, len(l.m.Servers)
	return by
}

// nodeNames maps raft node ids to the server names they belong to, from
// every source of the bundle: a log banner's "Node:" line beside its
// "Server name:", and every name any file suggests (banners, pods, paths,
// captures) whose hash is the id. A path piece counts only through its
// hash, so a folder called "a" names nothing. Built once, on first use.
func (l *loader) nodeNames() map[string]string {
	if l.nodeNameIndex != nil {
		return l.nodeNameIndex
	}
	idx := map[string]string{}
	add := func(name string) {
		if name == "" {
			return
		}
		if id := model.PeerID(name); idx[id] == "" {
			idx[id] = name
		}
	}
	for _, lg := range l.b.Logs {
		// The banner's own pairing wins: it is what the server said of itself.
		if lg.Node != "" && lg.Name != "" && model.PeerID(lg.Name) == lg.Node {
			idx[lg.Node] = lg.Name
		}
	}
	for _, lg := range l.b.Logs {
		add(lg.Name)
		add(lg.Pod)
		for _, c := range lg.NameCandidates {
			add(c)
		}
	}
	for _, bc := range l.b.Captures {
		for _, c := range bc.NameCandidates {
			add(c)
		}
	}
	for _, st := range l.b.Stores {
		for _, c := range st.NameCandidates {
			add(c)
		}
	}
	for _, s := range l.m.Servers {
		if s.NameSource != "unknown" {
			add(s.Name)
		}
	}
	l.nodeNameIndex = idx
	return idx
}

// capture folds one decoded answer into the model.
func (l *loader) capture(c capture.Capture) {
	name := c.Server.Name
	source := "capture"
	if name == "" {
		if c.Server.Node == "" {
			l.note("capture %s line %d: %s answer names no server; not attributed", c.File, c.Line, c.Kind)
			return
		}
		name = nodePlaceholder + c.Server.Node
		source = "unknown"
		if l.m.Server(name) == nil { // said once per id, however many answers carry it
			l.note("capture %s line %d: server with raft node id %s not named by any source; called %s here", c.File, c.Line, c.Server.Node, name)
		}
	}
	srv := l.addServer(name, source)
	srv.Sources[c.Kind] = true
	srv.Alive = true
	if c.Server.Cluster != "" && srv.Cluster == "" {
		srv.Cluster = c.Server.Cluster
	}
	if c.Server.Version != "" && srv.Version == "" {
		srv.Version = c.Server.Version
	}
	at := c.Server.Time
	switch c.Kind {
	case "jsz":
		l.captureJsz(srv, c, at)
	case "raftz":
		l.captureRaftz(srv, c, at)
	case "healthz":
		h := c.Healthz
		if h.JetStreamNotEnabled() {
			js := jetStreamOf(srv)
			js.Off = append(js.Off, model.JetStreamAnswer{Time: at, Text: "/healthz " + h.Status + ": " + healthzText(h), File: c.File, Line: c.Line})
		}
		kind := string(natsfmt.EventHealthcheckOK)
		text := "healthz: " + h.Status
		if h.Status != "ok" {
			kind = string(natsfmt.EventHealthcheckFailed)
			text += ": " + h.Error
			for _, e := range h.Errors {
				text += "; " + e.Error
			}
		}
		l.m.Healthz = append(l.m.Healthz, model.HealthzAnswer{Server: srv.ID, Time: at, Status: h.Status, Text: text, File: c.File})
		ti := l.event(at, srv.Name, "healthz", kind, "", text, c.File, c.Line)
		if strings.Contains(text, "meta leader") {
			l.m.MetaLeaderStates = append(l.m.MetaLeaderStates, model.MetaLeaderState{Time: at, Server: srv.ID, Source: "healthz", Timeline: ti})
		}
	case "varz":
		v := c.Varz
		if v.Cluster.Name != "" && srv.Cluster == "" {
			srv.Cluster = v.Cluster.Name
		}
		l.event(at, srv.Name, "varz", "server-info", "", fmt.Sprintf("varz: %s version %s cluster %s, started %s", v.ServerName, v.Version, v.Cluster.Name, v.Start.UTC().Format(time.RFC3339)), c.File, c.Line)
		if v.JetStream.Meta != nil {
			l.metaCluster(srv, v.JetStream.Meta, at, "varz", c)
		}
		l.syncFrom(srv, v.JetStream.Config, "/varz jetstream config in "+c.File)
		if cfg := v.JetStream.Config; cfg != nil {
			if !strings.HasPrefix(srv.DomainFrom, "/jsz") {
				srv.Domain, srv.DomainFrom = cfg.Domain, "/varz jetstream config.domain in "+c.File
			}
			js := jetStreamOf(srv)
			if cfg.MaxStorage > 0 {
				js.MaxStorage, js.MaxStorageSource = cfg.MaxStorage, "/varz jetstream config in "+c.File
			}
			if cfg.StoreDir != "" {
				js.StoreDir = cfg.StoreDir
			}
		}
		if st := v.JetStream.Stats; st != nil && (st.Storage > 0 || st.ReservedStorage > 0) {
			js := jetStreamOf(srv)
			if js.StorageSource == "" {
				js.Storage, js.Reserved, js.StorageSource = st.Storage, st.ReservedStorage, "/varz jetstream stats in "+c.File
			}
		}
	}
}

// jetStreamOf is srv's JetStream status record, made on first use.
func jetStreamOf(srv *model.Server) *model.JetStreamStatus {
	if srv.JetStream == nil {
		srv.JetStream = &model.JetStreamStatus{}
	}
	return srv.JetStream
}

// healthzText is the error text of a /healthz answer: its error, or its
// errors joined.
func healthzText(h *capture.Healthz) string {
	if h.Error != "" {
		return h.Error
	}
	var parts []string
	for _, e := range h.Errors {
		parts = append(parts, e.Error)
	}
	return strings.Join(parts, "; ")
}

func (l *loader) captureJsz(srv *model.Server, c capture.Capture, at time.Time) {
	j := c.Jsz
	js := jetStreamOf(srv)
	if j.Disabled {
		// Nothing else in it: no config, no streams (monitor.go Jsz).
		js.Off = append(js.Off, model.JetStreamAnswer{Time: at, Text: "/jsz disabled: true", File: c.File, Line: c.Line})
		return
	}
	js.On = append(js.On, model.JetStreamAnswer{Time: at, Text: "/jsz", File: c.File, Line: c.Line})
	if j.Config.MaxStorage > 0 {
		js.MaxStorage, js.MaxStorageSource = j.Config.MaxStorage, "/jsz config in "+c.File
	}
	if j.Config.StoreDir != "" {
		js.StoreDir = j.Config.StoreDir
	}
	js.Storage, js.Reserved, js.StorageSource = j.Storage, j.ReservedStorage, "/jsz in "+c.File
	l.syncFrom(srv, &j.Config, "/jsz config in "+c.File)
	srv.Domain, srv.DomainFrom = j.Config.Domain, "/jsz config.domain in "+c.File
	if j.Meta != nil {
		l.metaCluster(srv, j.Meta, at, "jsz", c)
	}
	for _, acc := range j.AccountDetails {
		// In operator mode id is the account's public key, as the stores,
		// raft groups and logs name it, and name the JWT's name claim.
		key := acc.Name
		if acc.ID != "" {
			key = acc.ID
			l.accountName(acc.ID, acc.Name, "/jsz in "+c.File)
		}
		for _, sd := range acc.Streams {
			st := l.streamEntry(key, sd.Name)
			if sd.Config != nil && st.Replicas == 0 {
				st.Replicas = sd.Config.Replicas
			}
			if sd.RaftGroup != "" && st.Group == "" {
				st.Group = sd.RaftGroup
			}
			od := model.OnDisk{Server: srv.ID, FirstSeq: sd.State.FirstSeq, LastSeq: sd.State.LastSeq, Messages: sd.State.Messages,
				Bytes: sd.State.Bytes, Deleted: uint64(max(sd.State.NumDeleted, 0)), Path: c.File, Source: "jsz"}
			for _, ci := range sd.Consumers {
				od.Consumers = append(od.Consumers, report.Consumer{Name: ci.Name, AckFloorStream: ci.AckFloor.Stream, DeliveredStream: ci.Delivered.Stream, Pending: ci.NumAckPending, Redelivered: ci.NumRedelivered})
				st.ConsumerCaptures = append(st.ConsumerCaptures, consumerCapture(srv.ID, ci, at, c.File))
			}
			st.Captured = append(st.Captured, od)
			if !sd.Created.IsZero() {
				st.Created = append(st.Created, model.CreatedAt{Server: srv.ID, Time: sd.Created, From: "/jsz " + c.File})
			}
			l.captureLinks(st, srv, sd, c.File)
			if sd.Cluster != nil {
				if sd.Cluster.RaftGroup != "" && st.Group == "" {
					st.Group = sd.Cluster.RaftGroup
				}
				// A server's /jsz lists the streams it hosts; the leader and
				// replicas it names are the rest of the group. A meta state
				// read from a store later replaces this.
				st.AssignedTo = model.AppendUnique(st.AssignedTo, srv.ID)
				if sd.Cluster.Leader != "" {
					st.AssignedTo = model.AppendUnique(st.AssignedTo, l.m.IDOf(sd.Cluster.Leader))
				}
				for _, r := range sd.Cluster.Replicas {
					if r.Name != "" {
						st.AssignedTo = model.AppendUnique(st.AssignedTo, l.m.IDOf(r.Name))
					}
				}
				for _, r := range sd.Cluster.Replicas {
					if r.Name != "" && r.Peer != "" {
						l.m.IDs[r.Peer] = r.Name
					}
				}
			}
			if st.Group != "" {
				if g := l.findGroup(st.Group); g != nil && g.Asset == "" {
					g.Account, g.Asset = key, sd.Name
				}
			}
			for _, cg := range sd.ConsumerRaftGroups {
				if g := l.findGroup(cg.RaftGroup); g != nil && g.Asset == "" {
					g.Account, g.Asset = key, sd.Name+" > "+cg.Name
				}
			}
		}
	}
}

// metaCluster takes a /jsz meta_cluster (or /varz jetstream.meta).
func (l *loader) metaCluster(srv *model.Server, mc *capture.MetaCluster, at time.Time, source string, c capture.Capture) {
	mv := capture.MetaFromCluster(mc, srv.Name)
	for _, p := range mv.Peers {
		if p.Name != "" && p.ID != "" {
			l.m.IDs[p.ID] = p.Name
			if !p.Offline {
				if s := l.m.Server(p.Name); s != nil {
					s.Alive = true
				}
			}
		}
	}
	leader := ""
	if mv.HasLeader {
		leader = mv.LeaderName
		if leader == "" {
			leader = mv.Leader
		}
	}
	kind, text := string(natsfmt.EventMetaLeader), fmt.Sprintf("%s: meta leader %s, cluster_size %d", source, leader, mv.ClusterSize)
	if !mv.HasLeader {
		kind, text = string(natsfmt.EventNoMetaLeader), fmt.Sprintf("%s: no meta leader (peer %s), cluster_size %d", source, natsfmt.NoLeaderPeer, mv.ClusterSize)
	}
	ti := l.event(at, srv.Name, source, kind, natsfmt.MetaGroup, text, c.File, c.Line)
	l.m.MetaLeaderStates = append(l.m.MetaLeaderStates, model.MetaLeaderState{Time: at, Server: srv.ID, Leader: leader, Source: source, Timeline: ti})
	if mv.ClusterSize > 0 {
		v := model.View{GroupView: model.GroupView{Server: srv.ID, ClusterSize: mv.ClusterSize, Quorum: natsfmt.Quorum(mv.ClusterSize), Leader: leader, Source: source}, LeaderKnown: true}
		if mv.Quorum > 0 {
			v.Quorum = mv.Quorum
		}
		if !at.IsZero() {
			v.Time = &at
		}
		// No peer list: a follower's /jsz names only the leader, and a
		// leaderless one names nobody, so only the size and leader count.
		l.group(natsfmt.MetaGroup).Views = append(l.group(natsfmt.MetaGroup).Views, v)
	}
}

func (l *loader) captureRaftz(srv *model.Server, c capture.Capture, at time.Time) {
	rz := *c.Raftz
	for _, acc := range rz.Accounts() {
		for _, gname := range rz.Groups(acc) {
			rg := rz[acc][gname]
			if rg.ID != "" && srv.PeerID != "" && rg.ID != srv.PeerID && srv.NameSource != "unknown" {
				l.note("capture %s: raftz answer of %s is from node %s, but %s hashes to %s", c.File, srv.Name, rg.ID, srv.Name, srv.PeerID)
			}
			l.keepRaftzFigure(srv, c.File, gname, rg)
			g := l.group(gname)
			if g.Kind != natsfmt.GroupMeta && g.Account == "" && acc != "$SYS" {
				g.Account = acc
			}
			v := model.View{GroupView: model.GroupView{Server: srv.ID, ClusterSize: rg.Size, Quorum: rg.QuorumNeeded, Term: rg.Term,
				VotedFor: rg.VotedFor, Applied: rg.Applied, Commit: rg.Committed, Leader: rg.Leader, Source: "raftz"}, LeaderKnown: true}
			if v.Quorum == 0 && v.ClusterSize > 0 {
				v.Quorum = natsfmt.Quorum(v.ClusterSize)
			}
			peers := []string{}
			if rg.ID != "" {
				peers = append(peers, rg.ID)
			}
			for _, id := range model.SortedKeys(rg.Peers) {
				p := rg.Peers[id]
				peers = append(peers, id)
				if p.Name != "" {
					l.m.IDs[id] = p.Name
				}
				if d, ok := p.LastSeenDuration(); ok && d < model.RecentlySeen {
					v.Alive = append(v.Alive, id)
					if p.Name != "" {
						s := l.addServer(p.Name, "capture")
						s.Alive = true
					}
				}
			}
			sort.Strings(peers)
			v.Peers = peers
			if !at.IsZero() {
				t := at
				v.Time = &t
			}
			g.Views = append(g.Views, v)
			if g.Kind == natsfmt.GroupMeta {
				leader := ""
				if rg.Leader != "" {
					leader = rg.Leader
					if n, ok := l.m.IDs[rg.Leader]; ok {
						leader = n
					}
				}
				kind, text := string(natsfmt.EventMetaLeader), fmt.Sprintf("raftz: _meta_ %s, leader %s, size %d, quorum %d, term %d", rg.State, leader, rg.Size, v.Quorum, rg.Term)
				if leader == "" {
					kind = string(natsfmt.EventNoMetaLeader)
					text = fmt.Sprintf("raftz: _meta_ %s without leader (ever_had_leader %v), size %d, quorum %d, term %d", rg.State, rg.EverHadLeader, rg.Size, v.Quorum, rg.Term)
				}
				ti := l.event(at, srv.Name, "raftz", kind, natsfmt.MetaGroup, text, c.File, c.Line)
				l.m.MetaLeaderStates = append(l.m.MetaLeaderStates, model.MetaLeaderState{Time: at, Server: srv.ID, Leader: leader, Source: "raftz", Timeline: ti})
			}
		}
	}
}

// event appends a timeline event and returns its provisional index (events
// are sorted later; finish remaps the indexes).
func (l *loader) event(t time.Time, server, source, kind, group, text, file string, line int) int {
	if t.IsZero() {
		return -1
	}
	l.m.Timeline = append(l.m.Timeline, model.TimelineEvent{Time: t, Server: l.m.IDOf(server), Source: source, Kind: kind, Group: group, Text: text, File: file, Line: line})
	return len(l.m.Timeline) - 1
}

// captureLinks takes a /jsz stream's mirror and sources, as configured and
// as the server runs them.
func (l *loader) captureLinks(st *model.Stream, srv *model.Server, sd capture.StreamDetail, file string) {
	api := func(e *capture.ExternalStream) string {
		if e == nil {
			return ""
		}
		return e.APIPrefix
	}
	if cfg := sd.Config; cfg != nil {
		if m := cfg.Mirror; m != nil && m.Name != "" {
			st.Link("mirror", m.Name, api(m.External), "/jsz "+file)
		}
		for _, s := range cfg.Sources {
			if s.Name != "" {
				st.Link("source", s.Name, api(s.External), "/jsz "+file)
			}
		}
	}
	state := func(kind string, si capture.StreamSourceInfo) {
		if si.Name == "" {
			return
		}
		ls := model.LinkState{Server: srv.ID, Lag: si.Lag, Seq: si.Seq, Active: si.Active, File: file}
		if si.Error != nil {
			ls.Error = fmt.Sprintf("%s (%d)", si.Error.Description, si.Error.ErrCode)
		}
		lk := st.Link(kind, si.Name, api(si.External), "/jsz "+file)
		lk.States = append(lk.States, ls)
	}
	if sd.Mirror != nil {
		state("mirror", *sd.Mirror)
	}
	for _, si := range sd.Sources {
		state("source", si)
	}
}

// consumerCapture is what consumer-stuck reads of one /jsz consumer_detail.
func consumerCapture(srv model.ServerID, ci capture.ConsumerInfo, at time.Time, file string) model.ConsumerCapture {
	cc := model.ConsumerCapture{Server: srv, Name: ci.Name, Captured: at, File: file,
		NumAckPending: ci.NumAckPending, NumPending: ci.NumPending, NumWaiting: ci.NumWaiting, PushBound: ci.PushBound,
		Delivered: ci.Delivered.Stream, AckFloor: ci.AckFloor.Stream, LastDelivered: ci.Delivered.Last, LastAck: ci.AckFloor.Last}
	if ci.Cluster != nil {
		cc.Leader = ci.Cluster.Leader
	}
	if cfg := ci.Config; cfg != nil {
		cc.HasConfig = true
		cc.MaxAckPending, cc.AckWait = cfg.MaxAckPending, cfg.AckWait
		cc.Filtered = cfg.FilterSubject != "" || len(cfg.FilterSubjects) > 0
		cc.Push = cfg.DeliverSubject != ""
	}
	return cc
}
