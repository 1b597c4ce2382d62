package meta

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
)

var CheckOrphanRisk = check.Check{
	Code:        string(report.CodeOrphanRisk),
	Severity:    report.Critical,
	Description: "a stream or consumer is stored on a server whose own meta state does not place it there",
	Settings:    []check.Setting{check.MaxExamples},
	Skip: func(p *check.Pass) string {
		for _, st := range p.Model.Streams {
			if len(st.Copies) > 0 {
				return ""
			}
		}
		return "no stream copy is stored in the bundle"
	},
	Requires: []facts.Fact{facts.FactSplitWinner},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		noMeta := map[string]bool{}
		for _, st := range m.Streams {
			for _, c := range st.Copies {
				if c.NoMeta {
					continue // never loaded, so never deleted (store-corrupt says why)
				}
				srv := m.ServerOf(c.Server)
				meta, why, skip := (*model.MetaState)(nil), "", "its store holds no readable meta state, so what its meta recovery keeps cannot be told"
				if srv != nil {
					meta, why, skip = recoveredMeta(p, srv)
				}
				if meta == nil {
					if name := m.Name(c.Server); !noMeta[name] {
						noMeta[name] = true
						p.Skipf("%s: %s", name, skip)
					}
					continue
				}
				out = append(out, orphanFindings(m, srv, meta, st, c, why)...)
			}
		}
		// Where two meta lineages meet, the higher term's state replaces the
		// other on every server: judge each copy against the winner too.
		if win := p.Facts.SplitWinner(); win != nil {
			for _, st := range m.Streams {
				for _, c := range st.Copies {
					srv := m.ServerOf(c.Server)
					if c.NoMeta || srv == nil || srv.Meta == win.Meta || model.MetaDomain(m, srv) != model.MetaDomain(m, win) {
						continue // a meta state replaces others only in its own domain
					}
					out = append(out, orphanFindings(m, srv, win.Meta, st, c, fmt.Sprintf("meta-split: the meta state of %s (higher term) replaces this server's", win.Name))...)
				}
			}
		}
		out = dedupeFindings(out)
		// Thousands of streams no meta state knows (a store restored
		// beside a fresh cluster) are one finding per server and cause.
		return check.Collapse(len(out), func(i int) (string, string) {
			return out[i].Server + "\x00" + string(out[i].Severity), orphanCause(out[i])
		}, func(i int) report.Finding { return out[i] }, int(p.Setting(check.MaxExamples.Key)))
	},
}

// orphanFindings judges one stored copy against one meta state.
func orphanFindings(m *model.Model, srv *model.Server, meta *model.MetaState, st *model.Stream, c *model.StreamCopy, why string) []report.Finding {
	key := model.AssetKey{Account: st.Account, Stream: st.Name}
	a := meta.Streams[key]
	base := report.Finding{
		Server: srv.Name, Account: st.Account, Stream: st.Name, File: c.Path,
		Messages: report.Ptr(c.Messages), Bytes: report.Ptr(c.Bytes),
	}
	var ev []string
	if why != "" {
		ev = append(ev, why)
	}
	replicas := max(c.Replicas, st.Replicas)
	lossNote := ""
	if replicas <= 1 {
		lossNote = " It is R1: no other server holds a copy, so what is deleted is lost for good."
	} else if holders := otherHolders(m, st, srv); len(holders) > 0 {
		lossNote = fmt.Sprintf(" Other copies are on %s.", strings.Join(holders, ", "))
	}
	switch {
	case a == nil:
		f := base
		f.Message = fmt.Sprintf("%s stores stream %s > %s (%d messages, %d bytes) but its meta state (%s) holds no assignment for it: the server deletes it as an orphan 30 s after meta recovery (\"Detected orphaned stream\").%s",
			srv.Name, st.Account, st.Name, c.Messages, c.Bytes, meta.Source, lossNote)
		f.Evidence = append(ev, fmt.Sprintf("meta state of %s assigns %d streams, none named %s in account %s", srv.Name, len(meta.Streams), st.Name, st.Account))
		f.Next = []report.ServerNext{{Server: srv.Name, Does: report.NextDeletesStream, Account: st.Account, Stream: st.Name, Release: srv.Version}}
		orphanRemedy(srv, st, c).Apply(&f)
		return []report.Finding{f}
	case srv.PeerID != "" && len(a.Peers) > 0 && !slices.Contains(a.Peers, srv.PeerID):
		f := base
		f.Message = fmt.Sprintf("%s stores stream %s > %s (%d messages, %d bytes) but its meta state places the stream on other peers (%s): the server removes its copy during meta recovery (\"JetStream removing stream\", a debug line only).%s",
			srv.Name, st.Account, st.Name, c.Messages, c.Bytes, strings.Join(model.NamesFor(m, a.Peers), ", "), lossNote)
		f.Evidence = append(ev, fmt.Sprintf("assignment group %s peers %s; this server is %s", a.Group, strings.Join(a.Peers, " "), srv.PeerID))
		f.Next = []report.ServerNext{{Server: srv.Name, Does: report.NextDeletesStream, Account: st.Account, Stream: st.Name, Release: srv.Version}}
		orphanRemedy(srv, st, c).Apply(&f)
		return []report.Finding{f}
	}
	// The stream is assigned here: judge its consumers.
	var out []report.Finding
	for _, con := range c.Consumers {
		if _, ok := a.Consumers[con.Name]; ok {
			continue
		}
		f := report.Finding{Server: srv.Name, Account: st.Account, Stream: st.Name, Consumer: con.Name, File: c.Path + "/obs/" + con.Name,
			Message:  fmt.Sprintf("%s stores consumer %s > %s > %s but its meta state has no assignment for it: it is deleted as an orphan after meta recovery", srv.Name, st.Account, st.Name, con.Name),
			Evidence: append(ev, fmt.Sprintf("stream %s is assigned with %d consumers, not %s", st.Name, len(a.Consumers), con.Name)),
		}
		remedy.Prescribe(remedy.OrphanConsumerRecreate, remedy.Args{"ackfloor": fmt.Sprint(con.AckFloorStream), "consumer": con.Name}).Apply(&f)
		out = append(out, f)
	}
	return out
}

func otherHolders(m *model.Model, st *model.Stream, except *model.Server) []string {
	var out []string
	for _, c := range st.Copies {
		if !m.Same(c.Server, except.Ref()) && c.Messages > 0 {
			out = append(out, m.Name(c.Server))
		}
	}
	return out
}

func orphanRemedy(srv *model.Server, st *model.Stream, c *model.StreamCopy) remedy.Prescription {
	// The extract offered says how many messages the copy holds, and is
	// offered only when it holds some (issue 31).
	return remedy.Prescribe(remedy.OrphanStreamCopyOut, remedy.Args{"server": srv.Name, "path": c.Path, "stream": st.Name, "account": st.Account,
		"held": c.Messages > 0, "msgs": fmt.Sprint(c.Messages)})
}

func dedupeFindings(in []report.Finding) []report.Finding {
	seen := map[string]bool{}
	var out []report.Finding
	for _, f := range in {
		k := f.Server + "\x00" + f.Account + "\x00" + f.Stream + "\x00" + f.Consumer
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}

// orphanCause is what orphan-risk findings share when they are one fault
// repeated: streams or consumers the meta state does not hold, or places
// elsewhere, judged by the same meta state.
func orphanCause(f report.Finding) string {
	what := "streams"
	if f.Consumer != "" {
		what = "consumers"
	}
	why := "not in its meta state"
	if strings.Contains(f.Message, "places the stream on other peers") {
		why = "placed on other peers by its meta state"
	}
	if len(f.Evidence) > 0 && strings.HasPrefix(f.Evidence[0], "meta-split") {
		why += " (" + f.Evidence[0] + ")"
	}
	return what + " " + why
}

// recoveredMeta is the meta state srv holds once its meta layer recovers,
// against which its stored streams are judged: its own, or, where its meta
// snapshot is corrupt, what its version really recovers. why says how it
// was chosen; skip, when meta is nil, why it cannot be judged.
func recoveredMeta(p *check.Pass, srv *model.Server) (meta *model.MetaState, why, skip string) {
	switch {
	case srv.Meta == nil:
		return nil, "", "its store holds no readable meta state, so what its meta recovery keeps cannot be told"
	case !srv.Meta.SnapshotCorrupt:
		return srv.Meta, "", ""
	}
	// docs/verification.md versions table, row metasnap (refusesCorruptMetaSnapshot).
	switch refuses, known := releases.RefusesCorruptMetaSnapshot(srv.Version); {
	case refuses:
		return nil, "", fmt.Sprintf("its meta snapshot is corrupt and %s does not start JetStream on it, so no orphan cleanup runs (see store-corrupt)", srv.Version)
	case !known && srv.Version != "":
		return nil, "", fmt.Sprintf("its meta snapshot is corrupt and whether %s drops it (2.12 and older) or refuses to start JetStream on it (2.14+) cannot be told, so what its meta recovery keeps cannot be told", srv.Version)
	}
	old := "nats-server 2.12 and older"
	if srv.Version == "" {
		old = "if it runs 2.12 or older (its version is not in the bundle), nats-server"
	}
	if srv.Meta.AfterSnapshot > 0 {
		return srv.Meta, fmt.Sprintf("its meta snapshot is corrupt: %s drops it and recovers only what its meta WAL holds after it (%d entr%s), and counts itself current; the deletion comes at the one orphan check, 30 s after meta recovery, and only if a meta leader is known by then (checkForOrphans: \"skipping check for orphans, no meta-leader\" otherwise, never run again until a restart) and, on 2.11.17, not in every run even then (2026-12-02, the same damaged state restarted: deleted in some runs, no meta leader at the check in others, the check run and nothing deleted in others), so the deletion is a risk of the next start, not a certainty", old, srv.Meta.AfterSnapshot, map[bool]string{true: "y", false: "ies"}[srv.Meta.AfterSnapshot == 1]), ""
	}
	leader := p.Facts.HighestMetaTermIn(p.Model, model.MetaDomain(p.Model, srv))
	if leader == nil {
		return nil, "", "its meta snapshot is corrupt, its meta WAL holds nothing after it, and no server holds a readable meta snapshot: what the meta leader will install cannot be told"
	}
	return leader.Meta, fmt.Sprintf("its meta snapshot is corrupt and its meta WAL holds nothing after it: %s drops the snapshot and the meta leader installs its own (judged against the meta state of %s)", old, leader.Name), ""
}
