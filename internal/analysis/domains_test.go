package analysis

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/meta"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// Layouts that are not incidents (issue 30): several JetStream domains
// (each its own meta group, joined by leafnodes) and standalone servers
// raise none of meta-split, peer-unknown, orphan-risk or asset-lost.

// notIncidents are the codes a layout alone must not raise.
var notIncidents = []string{"meta-split", "peer-unknown", "orphan-risk", "asset-lost"}

// twoDomains is a hub cluster and a leaf cluster, each with its meta
// group of three (raftz views), founded apart.
func twoDomains(hubDomain, leafDomain string) *model.Model {
	t0 := time.Date(2026, 12, 7, 4, 44, 8, 0, time.UTC)
	m := &model.Model{IDs: map[string]string{}}
	g := &model.Group{Name: natsfmt.MetaGroup, Kind: natsfmt.GroupMeta}
	m.Groups = []*model.Group{g}
	sides := map[string][]string{"hub": {"hub-0", "hub-1", "hub-2"}, "leaf": {"leaf-0", "leaf-1", "leaf-2"}}
	doms := map[string]string{"hub": hubDomain, "leaf": leafDomain}
	for _, side := range []string{"hub", "leaf"} {
		var peers []string
		for _, n := range sides[side] {
			peers = append(peers, natsfmt.PeerID(n))
		}
		for i, n := range sides[side] {
			m.IDs[natsfmt.PeerID(n)] = n
			m.Servers = append(m.Servers, &model.Server{Name: n, PeerID: natsfmt.PeerID(n), Alive: true, Domain: doms[side], DomainFrom: "test"})
			g.Views = append(g.Views, model.View{GroupView: model.GroupView{Server: model.ServerID(n), ClusterSize: 3, Peers: peers, Leader: sides[side][0], Term: uint64(1 + len(side)), Source: "raftz"}})
			m.MetaFoundings = append(m.MetaFoundings, model.MetaFounding{Time: t0.Add(time.Duration(len(side)*i) * time.Millisecond), Server: model.ServerID(n), Leader: sides[side][0], Source: "log"})
		}
	}
	return m
}

// TestMetaSplitDomainsModel: two meta groups of three, founded apart, are
// a split within one domain (no domains told, or the same domain), and
// none when the servers are in two domains.
func TestMetaSplitDomainsModel(t *testing.T) {
	if fs := runCheck(meta.CheckMetaSplit, twoDomains("", "")); len(fs) != 2 {
		t.Fatalf("one domain: want a split of views and a founded-apart split: %+v", fs)
	}
	if fs := runCheck(meta.CheckMetaSplit, twoDomains("x", "x")); len(fs) != 2 {
		t.Fatalf("the same domain: want two findings: %+v", fs)
	}
	if fs := runCheck(meta.CheckMetaSplit, twoDomains("hub", "leaf")); len(fs) != 0 {
		t.Fatalf("two domains taken for a split: %+v", fs)
	}
	// A hub without a domain and a leaf with one: two domains too.
	if fs := runCheck(meta.CheckMetaSplit, twoDomains("", "leaf")); len(fs) != 0 {
		t.Fatalf("a hub without a domain and a leaf domain taken for a split: %+v", fs)
	}
	// A split inside one domain of two is still one.
	m := twoDomains("hub", "leaf")
	g := m.Groups[0]
	for i := range g.Views {
		if m.Name(g.Views[i].Server) == "leaf-2" {
			g.Views[i].ClusterSize, g.Views[i].Peers, g.Views[i].Leader = 1, []string{natsfmt.PeerID("leaf-2")}, "leaf-2"
		}
	}
	fs := runCheck(meta.CheckMetaSplit, m)
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "domain leaf") {
		t.Fatalf("a split within domain leaf: %+v", fs)
	}
}

// TestDomainsFixturesNoSplit: on the real two-domain bundles (hub and leaf
// clusters of three v2.14.10 or v2.15.3 servers over leafnodes; their logs
// say "JetStream not extended, domains differ"), every server's domain is
// read (/jsz config.domain, the log's "Domain:" line) and none of
// meta-split, peer-unknown, orphan-risk, asset-lost is raised; before the
// domains were told apart the report raised critical meta-split and
// orphan-risk on each.
func TestDomainsFixturesNoSplit(t *testing.T) {
	for _, name := range []string{"domains-v2.15.3", "domains-recreated-v2.14.10", "domains-recreated-v2.15.3", "domains-restarted-v2.14.10", "domains-restarted-v2.15.3", "domains-overtaken-v2.15.3"} {
		t.Run(name, func(t *testing.T) {
			x := readDomainsExpect(t, name)
			notExtended := 0
			for _, lines := range x.LogLines {
				for _, l := range lines {
					if strings.Contains(l, "JetStream not extended, domains differ") {
						notExtended++
					}
				}
			}
			if notExtended == 0 {
				t.Fatal("fixture: no server logged \"JetStream not extended, domains differ\"")
			}
			dir := filepath.Join(bundlesDir, name, "bundle")
			b, err := bundle.Open(dir, bundle.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			m := Load(b)
			for srv, d := range x.Domains {
				s := m.Server(srv)
				if s == nil || s.Domain != d || s.DomainFrom == "" {
					t.Errorf("%s: domain %+v, the servers said %q", srv, s, d)
				}
			}
			rep := analyze(t, dir)
			for _, f := range rep.Findings {
				for _, c := range notIncidents {
					if f.Code == c {
						t.Errorf("%s %s: %s", f.Code, f.Severity, f.Message)
					}
				}
			}
		})
	}
}

// TestStandaloneNoLayoutFindings: standalone (non-clustered) JetStream
// servers have no meta group at all: the perturbed-blocks fixtures (one
// real standalone server each, v2.10.27, v2.12.15, v2.15.3, whose blocks
// were then damaged) and the standalone server beside the cluster of
// lifecycle-v2.12.1 raise none of meta-split, peer-unknown, orphan-risk
// (store-corrupt is what their damage raises).
func TestStandaloneNoLayoutFindings(t *testing.T) {
	dirs := []string{filepath.Join(bundlesDir, "lifecycle-v2.12.1", "bundle")}
	for _, v := range []string{"v2.10.27", "v2.12.15", "v2.15.3"} {
		dirs = append(dirs, filepath.Join("..", "..", "testdata", "perturbed", "perturbed-blocks-"+v, "bundle"))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			rep := analyze(t, dir)
			standalone := false
			for _, s := range rep.Servers {
				if s.Name == "solo" {
					standalone = true
				}
			}
			if !standalone {
				t.Fatal("fixture: no standalone server solo in the report")
			}
			for _, f := range rep.Findings {
				for _, c := range notIncidents[:3] {
					if f.Code == c {
						t.Errorf("%s %s on %s: %s", f.Code, f.Severity, f.Server, f.Message)
					}
				}
			}
		})
	}
}
