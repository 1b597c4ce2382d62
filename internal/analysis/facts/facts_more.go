package facts

import (
	"slices"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
)

func Later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// jetStreamOffAtEnd says whether s's captures end with its JetStream off
// (its newest answer about it says so).
func JetStreamOffAtEnd(s *model.Server) bool {
	if s == nil || s.JetStream == nil || len(s.JetStream.Off) == 0 {
		return false
	}
	js := s.JetStream
	lastOff, lastOn := time.Time{}, time.Time{}
	for _, a := range js.Off {
		lastOff = Later(lastOff, a.Time)
	}
	for _, a := range js.On {
		lastOn = Later(lastOn, a.Time)
	}
	return len(js.On) == 0 || !lastOff.Before(lastOn)
}

func FoundersOf(m *model.Model, fs []model.MetaFounding) string {
	var s []string
	for _, f := range fs {
		s = append(s, m.Name(f.Server))
	}
	return strings.Join(s, ",")
}

// memberPeers is a view's peer set without the renamed server's own new id
// when that id is one too many: /raftz adds the answering node to its
// peers, but on 2.15 a renamed server is no member of a group that knows it
// by its old id (2.12 adds the new id to the meta group, which then counts
// both).
func MemberPeers(m *model.Model, v model.View, former map[string]model.Rename) []string {
	if len(v.Peers) <= v.ClusterSize {
		return v.Peers
	}
	renamedSelf := false
	for _, r := range former {
		if r.New == m.Name(v.Server) {
			renamedSelf = true
		}
	}
	if !renamedSelf {
		return v.Peers
	}
	self := ""
	if s := m.ServerOf(v.Server); s != nil {
		self = s.PeerID
	}
	var out []string
	for _, p := range v.Peers {
		if p != self {
			out = append(out, p)
		}
	}
	return out
}

// SizeDamage is one peers.idx whose cluster size disagrees with the peers
// the file itself lists and with every other server's view of the group,
// which agree on one size (Real): the size was damaged, not changed by the
// group.
type SizeDamage struct {
	Group *model.Group
	View  model.View
	Real  int
}

// sizeDamages are the peers.idx files whose cluster size was damaged, in
// the model's order of groups and views.
func SizeDamages(m *model.Model) []SizeDamage {
	var out []SizeDamage
	for _, g := range m.Groups {
		for _, v := range g.Views {
			// The peers the file lists (View.Tracked come from the WAL).
			real := len(v.Peers) - len(v.Tracked)
			if v.Source != "peers.idx" || v.File == "" || v.ClusterSize == real {
				continue
			}
			sizes := map[int]bool{}
			for _, o := range g.Views {
				if o.Server != v.Server && o.ClusterSize > 0 {
					sizes[o.ClusterSize] = true
				}
			}
			if len(sizes) != 1 || !sizes[real] {
				continue
			}
			if !peersAgree(g, v) {
				continue
			}
			out = append(out, SizeDamage{Group: g, View: v, Real: real})
		}
	}
	return out
}

// peersAgree: every other server's view of g that lists peers lists those
// of v.
func peersAgree(g *model.Group, v model.View) bool {
	for _, o := range g.Views {
		if o.Server == v.Server || len(o.Peers) == 0 {
			continue
		}
		if !slices.Equal(model.SortedCopy(o.Peers), model.SortedCopy(v.Peers)) {
			return false
		}
	}
	return true
}

// sizeDamaged is the peers.idx files whose cluster size peerSizeFindings
// reports as damaged: a check of the group's size reads the size the
// group runs with (the peers the file lists) instead.
func SizeDamaged(m *model.Model) map[string]bool {
	covered := map[string]bool{}
	for _, d := range SizeDamages(m) {
		covered[d.View.File] = true
	}
	return covered
}
