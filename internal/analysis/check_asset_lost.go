package analysis

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

var checkAssetLost = Check{
	Code:        "asset-lost",
	Severity:    report.Critical,
	Description: "a stream or consumer that existed (logs, captures, meta state, a stream group's WAL) is in no store, no API delete is recorded, and the bundle shows what removed it (the orphan cleanup, a join of meta groups founded apart, a rename, a server no member of its group, a meta snapshot dropped); the lack of a delete record alone is none: an intact meta state without it is what a compacted API delete leaves",
	Skip:        noStores,
	Run: func(p *Pass) []report.Finding {
		var out []report.Finding
		for _, a := range p.Facts.LostAssets {
			out = append(out, a.finding(p.Model))
		}
		return out
	},
}

// lostAsset is a stream (or a consumer of a stream that survives) that the
// bundle shows existing and that no store holds.
type lostAsset struct {
	Account, Stream, Consumer string
	// Holders are the servers seen holding it, sorted.
	Holders []string
	// Seen are where it was seen, one line each, oldest first.
	Seen []sighting
	// Messages and Bytes are its last known size (0 when unknown), from
	// SizeFrom.
	Messages, Bytes uint64
	SizeFrom        string
	// Consumers are the consumers of a lost stream known to the bundle.
	Consumers []string
	// Assigned lists "server: peers" where a meta state still assigns it.
	Assigned []string
	// Cause says what removed it, as far as the bundle tells; CauseRefs
	// are the timeline events behind it.
	Cause     string
	CauseRefs []int
	// Time is the last time it was seen, if dated.
	Time *time.Time
}

type sighting struct {
	time   time.Time
	server string
	text   string
}

// restoredRE reads the size from a "Restored N messages for stream" line.
var restoredRE = regexp.MustCompile(`Restored ([\d,]+) messages`)

// lostAssets finds the streams the bundle shows existing (log lines of a
// server holding or restoring it, captured /jsz, any server's meta state, a
// stream group's WAL) that no store holds, whose deletion no meta WAL
// records, and whose removal the bundle shows a cause for (lostCause). A
// holder whose store is not in the bundle leaves it undecided.
func lostAssets(m *Model, f *Facts) []*lostAsset {
	hasStore := map[string]bool{}
	for _, s := range m.Servers {
		if s.StoreDir != "" {
			hasStore[s.Name] = true
		}
	}
	if len(hasStore) == 0 {
		return nil
	}
	held := map[AssetKey]bool{}
	heldConsumer := map[[3]string]bool{}
	for _, st := range m.Streams {
		for _, c := range st.Copies {
			held[AssetKey{st.Account, st.Name}] = true
			for _, con := range c.Consumers {
				heldConsumer[[3]string{st.Account, st.Name, con.Name}] = true
			}
		}
	}
	deleted := map[[3]string]bool{}
	for _, r := range m.MetaRemovals {
		deleted[[3]string{r.Account, r.Stream, r.Consumer}] = true
	}
	assets := map[[3]string]*lostAsset{}
	get := func(acc, stream, consumer string) *lostAsset {
		k := [3]string{acc, stream, consumer}
		if held[AssetKey{acc, stream}] && consumer == "" || deleted[k] || deleted[[3]string{acc, stream, ""}] || consumer != "" && heldConsumer[k] {
			return nil
		}
		if consumer != "" && !held[AssetKey{acc, stream}] {
			return nil // goes with its stream, listed there
		}
		a := assets[k]
		if a == nil {
			a = &lostAsset{Account: acc, Stream: stream, Consumer: consumer}
			assets[k] = a
		}
		return a
	}
	seenOn := func(a *lostAsset, srv string, t time.Time, text string) {
		a.Holders = appendUnique(a.Holders, srv)
		a.Seen = append(a.Seen, sighting{t, srv, text})
		if !t.IsZero() && (a.Time == nil || t.After(*a.Time)) {
			tt := t
			a.Time = &tt
		}
	}
	for _, id := range serversOf(m, m.LogStreams) {
		srv := m.Name(id)
		for k, e := range m.LogStreams[id] {
			a := get(k.Account, k.Stream, "")
			if a == nil {
				continue
			}
			seenOn(a, srv, e.Time, fmt.Sprintf("%s log %s line %d: %q", srv, e.File, e.Line, e.Text))
			if mm := restoredRE.FindStringSubmatch(e.Text); mm != nil && a.SizeFrom == "" {
				n, _ := strconv.ParseUint(strings.ReplaceAll(mm[1], ",", ""), 10, 64)
				a.Messages, a.SizeFrom = n, fmt.Sprintf("%s log line %d", srv, e.Line)
			}
		}
	}
	for _, st := range m.Streams {
		for _, c := range st.Captured {
			srv := m.Name(c.Server)
			if a := get(st.Account, st.Name, ""); a != nil {
				seenOn(a, srv, time.Time{}, fmt.Sprintf("%s captured /jsz: %d messages, %d bytes, last seq %d", srv, c.Messages, c.Bytes, c.LastSeq))
				if c.Messages >= a.Messages {
					a.Messages, a.Bytes, a.SizeFrom = c.Messages, c.Bytes, srv+"'s captured /jsz"
				}
			}
			for _, con := range c.Consumers {
				if a := get(st.Account, st.Name, con.Name); a != nil {
					seenOn(a, srv, time.Time{}, fmt.Sprintf("%s captured /jsz lists consumer %s", srv, con.Name))
				}
			}
		}
	}
	for _, srv := range m.Servers {
		if srv.Meta == nil {
			continue
		}
		for k, as := range srv.Meta.Streams {
			peers := namesFor(m, as.Peers)
			if a := get(k.Account, k.Stream, ""); a != nil {
				a.Assigned = append(a.Assigned, fmt.Sprintf("the meta state of %s (%s) assigns it to %s (group %s)", srv.Name, srv.Meta.Source, strings.Join(peers, ", "), as.Group))
			}
			for cn := range as.Consumers {
				if a := get(k.Account, k.Stream, cn); a != nil {
					a.Assigned = append(a.Assigned, fmt.Sprintf("the meta state of %s assigns consumer %s", srv.Name, cn))
				}
			}
		}
	}
	for _, g := range m.Groups {
		if g.Kind != "stream" || g.Asset == "" {
			continue
		}
		if a := get(g.Account, g.Asset, ""); a != nil {
			for _, v := range g.Views {
				seenOn(a, m.Name(v.Server), time.Time{}, fmt.Sprintf("%s still has the raft group %s of the stream (its WAL may hold messages)", m.Name(v.Server), g.Name))
			}
		}
	}
	var out []*lostAsset
	for _, a := range assets {
		// An assignment alone (a stream assigned and never created on its
		// peers) is no sign it held data; a sighting is.
		if len(a.Seen) == 0 {
			continue
		}
		undecided := false
		for _, h := range a.Holders {
			if !hasStore[h] {
				undecided = true
			}
		}
		if undecided {
			continue
		}
		sort.SliceStable(a.Seen, func(i, j int) bool { return a.Seen[i].time.Before(a.Seen[j].time) })
		sort.Strings(a.Assigned)
		if a.Consumer == "" {
			for _, st := range m.Streams {
				if st.Account == a.Account && st.Name == a.Stream {
					for _, c := range st.Captured {
						for _, con := range c.Consumers {
							a.Consumers = appendUnique(a.Consumers, con.Name)
						}
					}
				}
			}
			for _, srv := range m.Servers {
				if srv.Meta != nil {
					if as := srv.Meta.Streams[AssetKey{a.Account, a.Stream}]; as != nil {
						for cn := range as.Consumers {
							a.Consumers = appendUnique(a.Consumers, cn)
						}
					}
				}
			}
			sort.Strings(a.Consumers)
		}
		a.Cause, a.CauseRefs = lostCause(m, f, a)
		if a.Cause == "" {
			continue // the lack of a delete record alone is no loss
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		return x.Account+"\x00"+x.Stream+"\x00"+x.Consumer < y.Account+"\x00"+y.Stream+"\x00"+y.Consumer
	})
	return out
}

// lostCause says what removed an asset: the orphan cleanup a log shows, a
// join of meta groups founded apart, a rename or a meta state that places
// the stream on other peers, a meta snapshot a holder dropped; "" when
// the bundle shows none.
func lostCause(m *Model, f *Facts, a *lostAsset) (string, []int) {
	var refs []int
	var lines []string
	for i, e := range m.Timeline {
		if (e.Kind == "orphan-stream" || e.Kind == "orphan-consumer") && e.Account == a.Account && e.Stream == a.Stream && slices.Contains(a.Holders, m.Name(e.Server)) {
			refs = append(refs, i)
			lines = append(lines, fmt.Sprintf("%s at %s (%s line %d)", m.Name(e.Server), e.Time.UTC().Format(time.RFC3339), e.File, e.Line))
		}
	}
	if len(refs) > 0 {
		return "the orphan cleanup: " + strings.Join(lines, "; ") + " logged \"Detected orphaned stream\" and deleted it", refs
	}
	for _, pair := range f.FoundingSplits {
		for si, side := range pair {
			for _, x := range side {
				if slices.Contains(a.Holders, m.Name(x.Server)) {
					other := pair[1-si]
					return fmt.Sprintf("a lineage join: the meta group founded by %s (leader %s) met the one founded by %s (leader %s), and the state with the higher term replaced this side's, which alone assigned it", foundersOf(m, side), side[0].Leader, foundersOf(m, other), other[0].Leader), nil
				}
			}
		}
	}
	for i, e := range m.Timeline {
		if e.Kind == string(natsfmt.EventSnapshotCorrupt) && slices.Contains(a.Holders, m.Name(e.Server)) {
			return fmt.Sprintf("a meta snapshot dropped: %s logged its snapshot corrupt at %s (%s line %d) and started without the state it held", m.Name(e.Server), e.Time.UTC().Format(time.RFC3339), e.File, e.Line), []int{i}
		}
	}
	for _, h := range a.Holders {
		if srv := f.Server(h); srv != nil && srv.Meta != nil && srv.Meta.SnapshotCorrupt {
			return fmt.Sprintf("a meta snapshot dropped: the meta snapshot of %s fails its checksum, which the server drops with every assignment it held", h), nil
		}
	}
	for _, h := range a.Holders {
		srv := f.Server(h)
		if srv == nil || srv.Meta == nil {
			continue
		}
		as := srv.Meta.Streams[AssetKey{a.Account, a.Stream}]
		switch {
		case as != nil && srv.PeerID != "" && len(as.Peers) > 0 && !slices.Contains(as.Peers, srv.PeerID):
			for _, p := range as.Peers {
				if r, ok := f.Former[p]; ok && r.New == h {
					return fmt.Sprintf("a rename: %s ran as %s before (%s line %d), the stream's group still lists that old id %s, so as %s it is no member of the group and removed its copy at its first start (\"JetStream removing stream\", a debug line only)", h, r.Old, r.File, r.Line, p, h), nil
				}
			}
			return fmt.Sprintf("%s is no member of the stream's group in its own meta state (peers %s): the server removed its copy (\"JetStream removing stream\", a debug line only)", h, strings.Join(namesFor(m, as.Peers), ", ")), nil
		}
	}
	// An intact meta state without the asset is what an API delete leaves
	// once the meta layer compacts the removeStream op into its snapshot
	// (every minute on 2.12+, and at a clean stop: deleted-v2.12.15,
	// deleted-v2.15.3): no cause, so no loss.
	return "", nil
}

func (a *lostAsset) finding(m *Model) report.Finding {
	what := fmt.Sprintf("stream %s > %s", a.Account, a.Stream)
	if a.Consumer != "" {
		what = fmt.Sprintf("consumer %s > %s > %s", a.Account, a.Stream, a.Consumer)
	}
	f := report.Finding{Account: a.Account, Stream: a.Stream, Consumer: a.Consumer, Servers: a.Holders, Since: a.Time, TimelineRefs: a.CauseRefs}
	size := ""
	if a.SizeFrom != "" {
		f.Messages = report.Ptr(a.Messages)
		size = fmt.Sprintf(", last known with %d messages (%s)", a.Messages, a.SizeFrom)
		if a.Bytes > 0 {
			f.Bytes = report.Ptr(a.Bytes)
		}
	}
	last := ""
	if n := len(a.Seen); n > 0 && !a.Seen[n-1].time.IsZero() {
		last = fmt.Sprintf(", last seen %s (%s)", a.Seen[n-1].time.UTC().Format(time.RFC3339), a.Seen[n-1].text)
	}
	f.Message = fmt.Sprintf("%s existed on %s%s%s and is in no store of the bundle, with no API delete recorded; removed by %s", what, strings.Join(a.Holders, ", "), size, last, a.Cause)
	for _, s := range a.Seen {
		f.Evidence = append(f.Evidence, "seen: "+s.text)
	}
	f.Evidence = append(f.Evidence, a.Assigned...)
	if len(a.Consumers) > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("its consumers went with it: %s", strings.Join(a.Consumers, ", ")))
	}
	if len(a.Assigned) > 0 {
		f.Evidence = append(f.Evidence, "an assignment remains although no store holds the data: the stream's messages are gone, not the assignment")
	}
	r := args{"account": a.Account, "stream": a.Stream}
	for _, g := range m.Groups {
		if g.Kind == "stream" && g.Account == a.Account && g.Asset == a.Stream && len(g.Views) > 0 {
			r["group"] = g.Name
			break
		}
	}
	if a.Consumer != "" {
		prescribe("asset-lost-consumer", nil).apply(&f)
	} else {
		prescribe("asset-lost-recreate", r).apply(&f)
	}
	return f
}
