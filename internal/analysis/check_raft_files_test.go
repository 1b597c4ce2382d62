package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
)

// raftRecordModel is three servers with stores (n1 on 2.15.2, n2 on
// 2.11.3, which no fixture covers, n3 of unknown version) and the raft
// group records given.
func raftRecordModel(recs ...*model.RaftRecord) *model.Model {
	m := &model.Model{IDs: map[string]string{}, RaftRecords: recs}
	for _, s := range []struct{ name, version string }{{"n1", "2.15.2"}, {"n2", "2.11.3"}, {"n3", ""}} {
		id := natsfmt.PeerID(s.name)
		m.IDs[id] = s.name
		m.Servers = append(m.Servers, &model.Server{ID: model.ServerID(s.name), Name: s.name, PeerID: id, StoreDir: s.name, Version: s.version, Sources: map[string]bool{"store": true}})
	}
	return m
}

// peersRecord is a peers.idx of size listing the peer ids of names.
func peersRecord(file string, size uint32, names ...string) *model.PeersRecord {
	ps := &raftlog.PeerState{ClusterSize: size, HasDomainExt: true}
	for _, n := range names {
		ps.Peers = append(ps.Peers, natsfmt.PeerID(n))
	}
	return &model.PeersRecord{File: file, State: ps, Issues: ps.Check()}
}

// TestRaftFilesOnModel: store-corrupt judges the raft group records, one
// finding per rule a file breaks with today's wording, file and offset; a
// healthy record and a term below the group's entries give none, and no
// part skipped (a server writes the latter: tavlag-v2.10.22); a release line no fixture covers
// gets an info finding saying it cannot tell; a file the archive did not
// deliver is not judged. A missing finding and an extra one both fail.
func TestRaftFilesOnModel(t *testing.T) {
	dir := func(srv, g string) string { return srv + "/$SYS/_js_/" + g }
	s1, c1, meta1, meta2, meta3 := dir("n1", "S-one"), dir("n1", "C-one"), dir("n1", "_meta_"), dir("n2", "_meta_"), dir("n3", "_meta_")
	snapFile := s1 + "/snapshots/snap.3.13"
	recs := []*model.RaftRecord{
		{Server: "n1", Group: "S-one", Kind: "stream", Dir: s1, MaxTerm: 3,
			Peers: peersRecord(s1+"/peers.idx", 4, "n1", "n2", "n2"),
			Snapshot: &model.SnapshotRecord{File: snapFile, NameTerm: 3, NameIndex: 13, Term: 3, Index: 12, Decoded: true, ChecksumOK: true,
				PeerState: &raftlog.PeerState{ClusterSize: 3, Peers: []string{natsfmt.PeerID("n1"), natsfmt.PeerID("n2"), natsfmt.PeerID("n3")}}},
			TermVote: &model.TermVoteRecord{File: s1 + "/tav.idx", Size: 20, TermVote: raftlog.TermVote{Term: 3, HasTerm: true, Vote: natsfmt.PeerID("n2"), Trailing: 4}},
			Commit:   &model.CommitRecord{File: s1 + "/commit.idx", Size: 18, Index: raftlog.CommitIndex{Commit: 9, ChecksumOK: true, Trailing: 2}}},
		// Healthy: nothing.
		{Server: "n1", Group: "C-one", Kind: "consumer", Dir: c1, MaxTerm: 3,
			Peers:    peersRecord(c1+"/peers.idx", 3, "n1", "n2", "n3"),
			TermVote: &model.TermVoteRecord{File: c1 + "/tav.idx", Size: 16, TermVote: raftlog.TermVote{Term: 3, HasTerm: true, Vote: natsfmt.PeerID("n1")}}},
		// Term 0 and a vote under term-1 entries: what a v2.10.22 follower writes.
		{Server: "n1", Group: "_meta_", Kind: "meta", Dir: meta1, MaxTerm: 1,
			Peers:    peersRecord(meta1+"/peers.idx", 5, "n1", "n2", "n3"),
			TermVote: &model.TermVoteRecord{File: meta1 + "/tav.idx", Size: 16, TermVote: raftlog.TermVote{HasTerm: true, Vote: natsfmt.PeerID("n2")}}},
		// 2.11: no fixture proves an empty tav.idx is never written.
		{Server: "n2", Group: "_meta_", Kind: "meta", Dir: meta2, MaxTerm: 2,
			TermVote: &model.TermVoteRecord{File: meta2 + "/tav.idx", Size: 0}},
		// Unknown version: judged; the term runs past any run of elections.
		{Server: "n3", Group: "_meta_", Kind: "meta", Dir: meta3, MaxTerm: 2,
			TermVote: &model.TermVoteRecord{File: meta3 + "/tav.idx", Size: 8, TermVote: raftlog.TermVote{Term: 1 << 30, HasTerm: true}}},
		// Not delivered by the archive: not judged.
		{Server: "n3", Group: "S-torn", Kind: "stream", Dir: dir("n3", "S-torn"), MaxTerm: 1,
			TermVote: &model.TermVoteRecord{File: dir("n3", "S-torn") + "/tav.idx", Size: 0}},
	}
	m := raftRecordModel(recs...)
	m.Undelivered = map[string]bool{dir("n3", "S-torn") + "/tav.idx": true}
	fs, outcomes := runChecks(m, []check.Check{store.CheckStoreCorrupt}, defaultSettings(), nil)
	type want struct {
		file   string
		offset int64
		sev    report.Severity
		say    string
	}
	wants := []want{
		{s1 + "/peers.idx", 24, report.Warning, "raft group S-one: " + s1 + "/peers.idx at offset 24: bad format: peer state: peer id \"" + natsfmt.PeerID("n2") + "\" is listed twice"},
		{s1 + "/peers.idx", 0, report.Warning, "cluster size 4 above the 3 peers listed: for a stream or consumer group the server keeps them equal; n1 (2.15.2) starts the group from the peer state of its snapshot " + snapFile},
		{snapFile, 0, report.Critical, "raft group S-one: " + snapFile + " at offset 0: bad format: named for term 3 index 13 but holds term 3 index 12"},
		{s1 + "/tav.idx", 16, report.Warning, "4 bytes after the vote"},
		{s1 + "/commit.idx", 16, report.Warning, "2 bytes after the checksum"},
		{meta2 + "/tav.idx", 0, report.Info, "empty: the server reads no term and no vote from it: no real-server fixture of the 2.11 release line shows what it writes here (only 2.10, 2.12, 2.14, 2.15 are proven), so this cannot be told from damage on 2.11.3"},
		{meta3 + "/tav.idx", 0, report.Warning, fmt.Sprintf("term %d is more than %d above term 2", 1<<30, model.MaxTermJump)},
	}
	var got []want
	for _, f := range fs {
		off := int64(-1)
		if f.Offset != nil {
			off = *f.Offset
		}
		got = append(got, want{f.File, off, f.Severity, f.Message})
	}
	// The findings come sorted by severity, in order within each.
	bySev := func(ws []want) []want {
		var out []want
		for _, sev := range []report.Severity{report.Critical, report.Warning, report.Info} {
			for _, w := range ws {
				if w.sev == sev {
					out = append(out, w)
				}
			}
		}
		return out
	}
	wants = bySev(wants)
	if len(got) != len(wants) {
		t.Fatalf("%d findings, want %d: %s", len(got), len(wants), summarize(fs))
	}
	for i, w := range wants {
		g := got[i]
		if g.file != w.file || g.offset != w.offset || g.sev != w.sev || !strings.Contains(g.say, w.say) {
			t.Errorf("finding %d: %+v\nwant %+v", i, g, w)
		}
	}
	if len(outcomes) != 1 || outcomes[0].Outcome != check.OutcomeFailed {
		t.Fatalf("outcomes %+v", outcomes)
	}
	skipped := strings.Join(outcomes[0].Skipped, "\n")
	if !strings.Contains(skipped, dir("n3", "S-torn")+"/tav.idx is not in the bundle as the server wrote it") {
		t.Errorf("parts skipped lack the undelivered tav.idx: %s", skipped)
	}
	if strings.Contains(skipped, meta1) {
		t.Errorf("a term below the group's entries is a part skipped: %s", skipped)
	}

	// Only the healthy record: passed, nothing skipped.
	fs, outcomes = runChecks(raftRecordModel(recs[1]), []check.Check{store.CheckStoreCorrupt}, defaultSettings(), nil)
	if len(fs) != 0 || outcomes[0].Outcome != check.OutcomePassed || len(outcomes[0].Skipped) != 0 {
		t.Errorf("healthy record: %s, %+v", summarize(fs), outcomes[0])
	}
	// --skip store-corrupt leaves every one of them out.
	checks, err := SelectChecks(nil, []string{"store-corrupt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		for _, f := range runCheck(c, m) {
			if f.Code == "store-corrupt" || strings.Contains(f.Message, "tav.idx") {
				t.Errorf("skipped store-corrupt, yet %s: %s", f.Code, f.Message)
			}
		}
	}
	// No store at all: skipped, and why.
	nostore := raftRecordModel(recs...)
	for _, s := range nostore.Servers {
		s.StoreDir = ""
	}
	if _, outcomes := runChecks(nostore, []check.Check{store.CheckStoreCorrupt}, defaultSettings(), nil); outcomes[0].Outcome != check.OutcomeSkipped || outcomes[0].Reason != "the bundle holds no server's store" {
		t.Errorf("no store: %+v", outcomes[0])
	}
}

// TestNeverWrittenProven: every fixture neverWritten names for a rule and a
// release line holds raft files of that kind written by servers of that
// line, and none of them breaks the rule: the table says only what real
// servers showed.
func TestNeverWrittenProven(t *testing.T) {
	kind := map[string]func(r *model.RaftRecord) bool{
		store.RulePeerState:   func(r *model.RaftRecord) bool { return r.Peers != nil },
		store.RuleClusterSize: func(r *model.RaftRecord) bool { return r.Peers != nil && r.Kind != "meta" },
		store.RuleTavEmpty:    func(r *model.RaftRecord) bool { return r.TermVote != nil },
		store.RuleTavTrailing: func(r *model.RaftRecord) bool { return r.TermVote != nil },
		store.RuleTermJump:    func(r *model.RaftRecord) bool { return r.TermVote != nil && r.MaxTerm > 0 },
		store.RuleCommitTrail: func(r *model.RaftRecord) bool { return r.Commit != nil },
		store.RuleSnapName:    func(r *model.RaftRecord) bool { return r.Snapshot != nil && r.Snapshot.Decoded },
	}
	models := map[string]*model.Model{}
	loadFixture := func(fx string) *model.Model {
		if m := models[fx]; m != nil {
			return m
		}
		p := filepath.Join(bundlesDir, fx, "bundle")
		if strings.HasPrefix(fx, "perturbed-") {
			p = filepath.Join(perturbedDir, fx, "bundle")
		}
		if fx == "v2.12.1-archive" {
			p = filepath.Join(bundlesDir, fx, "bundle.zip")
		}
		b, err := bundle.Open(p, bundle.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", fx, err)
		}
		defer b.Close()
		models[fx] = Load(b)
		return models[fx]
	}
	for rule, lines := range store.NeverWritten {
		if kind[rule] == nil {
			t.Errorf("rule %q: no test of its files", rule)
			continue
		}
		for line, fxs := range lines {
			for _, fx := range fxs {
				m := loadFixture(fx)
				n := 0
				for _, r := range m.RaftRecords {
					_, mi, _, ok := releases.ParseVersion(model.ServerVersion(m, r.Server))
					if !ok || mi != line || !kind[rule](r) {
						continue
					}
					n++
					for _, v := range store.RecordVerdicts(r) {
						if v.Rule == rule {
							t.Errorf("%s (2.%d): %s breaks %q: %s", fx, line, v.C.File, rule, v.C.Message)
						}
					}
				}
				if n == 0 {
					t.Errorf("%s: no raft files for %q written by a 2.%d server", fx, rule, line)
				}
			}
		}
	}
}

// TestV210ClusterTermVoteNoFinding: the committed state of real v2.10.22
// clusters (followers whose tav.idx holds a term and no vote, or a vote of
// an earlier election; in tavlag-v2.10.22 a server that joined late holding
// term 0 and its own vote under a term-1 snapshot) gives no finding and no
// note on any tav.idx.
func TestV210ClusterTermVoteNoFinding(t *testing.T) {
	// The state itself, as the generator recorded it: else the test
	// would prove nothing.
	var w struct {
		Expect struct {
			TermVote map[string]struct {
				Term uint64 `json:"term"`
				Vote string `json:"vote"`
			} `json:"term_vote"`
			MetaTerm map[string]uint64 `json:"meta_term"`
		} `json:"expect"`
	}
	if b, err := os.ReadFile(filepath.Join(bundlesDir, "tavlag-v2.10.22", "want.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if tv := w.Expect.TermVote["t3"]; tv.Term != 0 || tv.Vote == "" || w.Expect.MetaTerm["t3"] != 1 {
		t.Fatalf("tavlag-v2.10.22: t3 tav.idx %+v, meta term %d: not the lagging state", tv, w.Expect.MetaTerm["t3"])
	}
	for _, fx := range []string{"v2.10.22-per-server", "v2.10.22-incident-phantom-peers", "orphan-v2.10.22", "tavlag-v2.10.22"} {
		rep := analyze(t, filepath.Join(bundlesDir, fx, "bundle"))
		for _, f := range rep.Findings {
			if path.Base(f.File) == "tav.idx" || strings.Contains(f.Message, "tav.idx") {
				t.Errorf("%s: %s %s: %s", fx, f.Severity, f.Code, f.Message)
			}
		}
		for _, n := range rep.Notes {
			if strings.Contains(n, "tav.idx") {
				t.Errorf("%s: note %s", fx, n)
			}
		}
	}
}

// TestRaftFilesReadOnce: every peers.idx, tav.idx, commit.idx and snapshot
// of a bundle is read once per analysis, though naming the stores, the raft
// views and the rename by content all use them.
func TestRaftFilesReadOnce(t *testing.T) {
	for _, fx := range []string{"v2.15.2-flat", "v2.10.22-per-server", "rename-v2.12.1"} {
		b, err := bundle.Open(filepath.Join(bundlesDir, fx, "bundle"), bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c := &countingFS{FS: b.FS, opens: map[string]int{}}
		b.FS = c
		m := Load(b)
		b.Close()
		n := 0
		for _, r := range m.RaftRecords {
			for _, f := range r.Files() {
				n++
				if c.opens[f] != 1 {
					t.Errorf("%s: %s read %d times", fx, f, c.opens[f])
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no raft files read", fx)
		}
	}
}

// metaSnapRecord is the record of srv's _meta_ holding the snapshot b (a
// real server's, possibly damaged by the test).
func metaSnapRecord(t *testing.T, srv string, b []byte) *model.RaftRecord {
	t.Helper()
	file := srv + "/$SYS/_js_/_meta_/snapshots/snap.1.11"
	snap, err := raftlog.DecodeSnapshot(file, "_meta_", b)
	if snap == nil {
		t.Fatalf("%s: %v", srv, err)
	}
	sr := &model.SnapshotRecord{File: file, NameTerm: 1, NameIndex: 11, Term: snap.Term, Index: snap.Index, Decoded: err == nil,
		ChecksumOK: snap.ChecksumOK, PeerState: snap.PeerState, DataOffset: snap.DataOffset, Raw: b, Meta: snap}
	sr.MetaAssign, sr.MetaErr = raftlog.DecodeMetaSnapshot(file, snap.DataOffset, snap.Data)
	return &model.RaftRecord{Server: model.ServerID(srv), Group: "_meta_", Kind: "meta", Dir: srv + "/$SYS/_js_/_meta_", MaxTerm: snap.Term, Snapshot: sr}
}

// TestMetaSnapshotDamageOnModel: of three servers' records of a real meta
// snapshot, the one with a bit flipped in its payload gives one
// store-corrupt finding, at that byte, in the snapshot's data, with what
// its version does next; intact copies give none.
func TestMetaSnapshotDamageOnModel(t *testing.T) {
	orig := realMetaSnapshot(t)
	good := metaSnapRecord(t, "n1", orig)
	mid := int(good.Snapshot.DataOffset) + (len(orig)-8-int(good.Snapshot.DataOffset))/2
	bad := metaSnapRecord(t, "n2", flipBit(mid, 3)(append([]byte(nil), orig...)))
	m := raftRecordModel(good, bad, metaSnapRecord(t, "n3", orig))
	m.Servers[1].Version = "2.15.2"
	fs, outcomes := runChecks(m, []check.Check{store.CheckStoreCorrupt}, defaultSettings(), nil)
	if len(fs) != 1 || outcomes[0].Outcome != check.OutcomeFailed {
		t.Fatalf("%d findings (%s), want 1: %+v", len(fs), summarize(fs), outcomes)
	}
	f := fs[0]
	if f.Server != "n2" || f.Offset == nil || *f.Offset != int64(mid) || f.Kind != string(natsfmt.CorruptChecksum) ||
		!strings.Contains(f.Message, fmt.Sprintf("bit 3 of byte %d is flipped", mid)) || !strings.Contains(strings.Join(f.Evidence, " "), "Can't start JetStream") {
		t.Errorf("finding: %s %v %s %s %v", f.Server, f.Offset, f.Kind, f.Message, f.Evidence)
	}
	if fs := runCheck(store.CheckStoreCorrupt, raftRecordModel(good, metaSnapRecord(t, "n3", orig))); len(fs) != 0 {
		t.Errorf("intact snapshots, yet %s", summarize(fs))
	}
}
