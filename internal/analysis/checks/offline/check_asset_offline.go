// Package offline holds the checks of assets a server holds but does not
// serve: streams and consumers made with features its release does not
// know (a downgrade, or a mixed-version cluster).
package offline

import (
	"encoding/json"
	"fmt"
	"slices"
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

// A stream made on a newer release with a feature an older one does not
// know (a counter stream, atomic or fast batches: each stored with the API
// level it needs in `_nats.req.level`) is kept offline by the older release
// (2.11.9+, 2.12+): "Detected unsupported stream '<account> > <stream>':
// unsupported - config error: unknown field \"allow_msg_counter\"", stream
// info answers 10194 "stream is offline", publishes get no responders,
// /healthz stays ok, and its messages stay on disk: the newer release serves
// every one of them again (runs downgrade-v2.14.10-to-v2.11.17,
// downgrade-v2.15.3-to-v2.12.15). A consumer whose config holds a value the
// older release cannot decode at all (ack policy flow_control) does worse:
// 2.11.17 exits at start, 2.12.15's meta layer stops (releases
// UndecodableConsumer).

var CheckAssetOffline = check.Check{
	Code:        string(report.CodeAssetOffline),
	Severity:    report.Critical,
	Description: "a stream or consumer a server holds but its release cannot load: it needs a newer JetStream API level (`_nats.req.level` in meta.inf or the meta state) or has config fields the release does not know, and the server keeps it offline (its log: \"Detected unsupported stream\"; stream info 10194 \"stream is offline\") or, for a consumer it cannot decode, exits or stops its meta layer; per server, with the release that served it before: the data is intact and the first move is that release again",
	Skip: func(p *check.Pass) string {
		for _, s := range p.Model.Servers {
			if s.StoreDir != "" || s.Meta != nil || s.Sources["log"] {
				return ""
			}
		}
		return "the bundle holds no server's store, meta state or log"
	},
	Run: run,
}

// asset is one stream or consumer as one server holds it.
type asset struct {
	account, stream, consumer string
	need                      int      // the API level it needs (0: none above 0 seen)
	reqLevel                  string   // `_nats.req.level` as stored
	features                  []string // config fields of a level above 0
	undecodable               string   // a value older releases cannot decode ("ack_policy flow_control")
	where                     []string // where the bundle holds its config
	logRefs                   []int    // the server's "unsupported" lines since its last start
	messages                  *uint64
	holders                   []string // the servers whose stores hold a copy
	hosted                    bool     // this server holds a copy or its meta state places it here
}

func (a *asset) what() string {
	if a.consumer != "" {
		return fmt.Sprintf("consumer %s > %s > %s", a.account, a.stream, a.consumer)
	}
	return fmt.Sprintf("stream %s > %s", a.account, a.stream)
}

// readConfig folds a stored config (meta.inf, an assignment's config) into a.
func (a *asset) readConfig(raw []byte, where string, consumer bool) {
	var cfg map[string]json.RawMessage
	if json.Unmarshal(raw, &cfg) != nil {
		return
	}
	var md map[string]string
	if b, ok := cfg["metadata"]; ok {
		_ = json.Unmarshal(b, &md)
	}
	lvl := md[releases.ReqLevelKey]
	if n, err := strconv.Atoi(lvl); err == nil {
		a.reqLevel = lvl
		a.need = max(a.need, n)
	}
	seen := []string{}
	if lvl != "" {
		seen = append(seen, fmt.Sprintf("%s %q", releases.ReqLevelKey, lvl))
	}
	if !consumer {
		for _, f := range model.SortedKeys(releases.StreamFieldLevels) {
			v, ok := cfg[f]
			if !ok || !setValue(v) {
				continue
			}
			if !slices.Contains(a.features, f) {
				a.features = append(a.features, f)
			}
			a.need = max(a.need, releases.StreamFieldLevels[f])
			seen = append(seen, f+" "+string(v))
		}
	} else {
		for _, f := range model.SortedKeys(releases.UndecodableConsumerValues) {
			var v string
			if json.Unmarshal(cfg[f], &v) != nil {
				continue
			}
			if n, ok := releases.UndecodableConsumerValues[f][v]; ok {
				a.undecodable = f + " " + v
				a.need = max(a.need, n)
				seen = append(seen, f+" "+v)
			}
		}
	}
	if len(seen) > 0 {
		a.where = append(a.where, where+": "+strings.Join(seen, ", "))
	}
}

// setValue says whether a config value turns a feature on (true, a
// non-zero number, a non-empty string other than the default).
func setValue(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	switch s {
	case "", "false", "0", "null", `""`, `"default"`:
		return false
	}
	return true
}

func run(p *check.Pass) []report.Finding {
	m := p.Model
	var out []report.Finding
	for _, s := range m.Servers {
		out = append(out, serverFindings(p, s)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		return a.Stream+"\x00"+a.Consumer < b.Stream+"\x00"+b.Consumer
	})
	return out
}

// serverLog is what a server's log says since its last start.
type serverLog struct {
	lastStart   int // timeline index of its last start, -1 none
	last        int // timeline index of its last log event, -1 none
	versions    []int
	unsupported map[model.AssetKey][]int
	consumers   map[[3]string][]int
	metaApply   []int // "Error applying JetStream cluster entries: can not unmarshal"
}

func readLog(m *model.Model, s *model.Server) serverLog {
	sl := serverLog{lastStart: -1, last: -1, unsupported: map[model.AssetKey][]int{}, consumers: map[[3]string][]int{}}
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if e.Source != "log" || !m.Same(e.Server, s.Ref()) {
			continue
		}
		if e.Kind != string(natsfmt.EventUncleanStop) {
			sl.last = i
		}
		switch e.Kind {
		case string(natsfmt.EventStart):
			sl.lastStart = i
			sl.unsupported = map[model.AssetKey][]int{}
			sl.consumers = map[[3]string][]int{}
			sl.metaApply = nil
		case "version":
			sl.versions = append(sl.versions, i)
		case "unsupported-stream":
			if strings.Contains(e.Text, "Detected unsupported") && e.Stream != "" {
				k := model.AssetKey{Account: e.Account, Stream: e.Stream}
				sl.unsupported[k] = append(sl.unsupported[k], i)
			}
		case "meta-apply-error":
			if strings.Contains(e.Text, "can not unmarshal") {
				sl.metaApply = append(sl.metaApply, i)
			}
		}
	}
	return sl
}

// previousRelease is the newest release the server's log shows it running
// before its last start other than the one it runs now, with the index of
// that version line (-1 none).
func previousRelease(m *model.Model, sl serverLog, now string) (string, int) {
	for j := len(sl.versions) - 1; j >= 0; j-- {
		i := sl.versions[j]
		if i > sl.lastStart && sl.lastStart >= 0 {
			continue
		}
		v := versionOf(m.Timeline[i].Text)
		if v != "" && v != now {
			return v, i
		}
	}
	return "", -1
}

func versionOf(text string) string {
	_, v, ok := strings.Cut(text, "Version:")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

func serverFindings(p *check.Pass, s *model.Server) []report.Finding {
	m := p.Model
	name := m.Name(s.Ref())
	sl := readLog(m, s)
	assets := map[[3]string]*asset{}
	get := func(acc, stream, consumer string) *asset {
		k := [3]string{acc, stream, consumer}
		if assets[k] == nil {
			assets[k] = &asset{account: acc, stream: stream, consumer: consumer}
		}
		return assets[k]
	}
	for k, refs := range sl.unsupported {
		get(k.Account, k.Stream, "").logRefs = refs
	}
	for _, st := range m.Streams {
		for _, c := range st.Copies {
			if !m.Same(c.Server, s.Ref()) || c.MetaInf == nil {
				continue
			}
			a := get(st.Account, st.Name, "")
			a.readConfig(c.MetaInf, fmt.Sprintf("meta.inf of %s's copy (%s)", name, c.Path), false)
			a.messages, a.hosted = report.Ptr(c.Messages), true
		}
	}
	if s.Meta != nil {
		keys := make([]model.AssetKey, 0, len(s.Meta.Streams))
		for k := range s.Meta.Streams {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i].Account < keys[j].Account || keys[i].Account == keys[j].Account && keys[i].Stream < keys[j].Stream
		})
		for _, k := range keys {
			as := s.Meta.Streams[k]
			hosts := s.PeerID != "" && slices.Contains(as.Peers, s.PeerID)
			if len(as.Config) > 0 {
				a := get(k.Account, k.Stream, "")
				a.readConfig(as.Config, name+"'s meta state ("+s.Meta.Source+")", false)
				a.hosted = a.hosted || hosts
			}
			// A consumer config the release cannot decode stops every
			// server applying the meta state, host or not.
			for _, cn := range model.SortedKeys(as.ConsumerConfigs) {
				a := &asset{account: k.Account, stream: k.Stream, consumer: cn}
				a.readConfig(as.ConsumerConfigs[cn], name+"'s meta state ("+s.Meta.Source+")", true)
				if a.need > 0 {
					b := get(k.Account, k.Stream, cn)
					b.need, b.reqLevel, b.undecodable = max(b.need, a.need), a.reqLevel, a.undecodable
					b.where = append(b.where, a.where...)
				}
			}
		}
	}
	v := s.Version
	level, levelKnown := releases.APILevel(v)
	keeps, keepsKnown := releases.KeepsUnsupportedOffline(v)
	prev, prevAt := previousRelease(m, sl, v)
	var out []report.Finding
	unjudged := 0
	for _, k := range sortedAssetKeys(assets) {
		a := assets[k]
		if st := m.Stream(a.account, a.stream); st != nil && a.consumer == "" {
			for _, c := range st.Copies {
				if a.messages == nil {
					a.messages = report.Ptr(c.Messages)
				}
				a.holders = append(a.holders, m.Name(c.Server))
			}
			sort.Strings(a.holders)
		}
		switch {
		case len(a.logRefs) > 0:
			out = append(out, offlineFinding(m, name, v, level, levelKnown, prev, prevAt, a))
		case a.need == 0:
		case !a.hosted && a.consumer == "":
		case !levelKnown || !keepsKnown:
			unjudged++
		case a.need <= level:
		case a.undecodable != "":
			out = append(out, undecodableFinding(m, name, v, level, prev, prevAt, sl, a))
		case keeps:
			out = append(out, offlineFinding(m, name, v, level, levelKnown, prev, prevAt, a))
		default:
			unjudged++
		}
	}
	if unjudged > 0 {
		rel := "its release is not in the bundle"
		if v != "" {
			rel = "what nats-server " + v + " does with them was not read"
		}
		p.Skipf("%s: %d stream(s) or consumer(s) need a JetStream API level above 0, and %s", name, unjudged, rel)
	}
	return out
}

func sortedAssetKeys(m map[[3]string]*asset) [][3]string {
	out := make([][3]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i][0]+"\x00"+out[i][1]+"\x00"+out[i][2] < out[j][0]+"\x00"+out[j][1]+"\x00"+out[j][2]
	})
	return out
}

func eventLine(e model.TimelineEvent) string {
	return fmt.Sprintf("%s line %d (%s): %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), strings.TrimSpace(e.Text))
}

func releaseText(v string, level int, known bool) string {
	if v == "" {
		return "a release the bundle does not name"
	}
	if known {
		return fmt.Sprintf("nats-server %s (API level %d)", v, level)
	}
	return "nats-server " + v
}

// needText says what the asset needs and why.
func needText(a *asset, v string) string {
	var why []string
	if a.reqLevel != "" && a.reqLevel != "0" {
		why = append(why, releases.ReqLevelKey+" "+a.reqLevel)
	}
	why = append(why, a.features...)
	if a.undecodable != "" {
		why = append(why, a.undecodable)
	}
	s := "it needs a newer release"
	if a.need > 0 {
		s = fmt.Sprintf("it needs API level %d", a.need)
		if r := releases.FirstReleaseOfLevel(a.need); r != "" {
			why = append([]string{"nats-server " + r + " or later"}, why...)
		}
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	return s
}

func base(name string, a *asset) report.Finding {
	f := report.Finding{Server: name, Servers: []string{name}, Account: a.account, Stream: a.stream, Consumer: a.consumer, Messages: a.messages}
	return f
}

func prevEvidence(m *model.Model, name, prev string, prevAt int, a *asset) (string, []int) {
	if prev == "" {
		return "", nil
	}
	l, k := releases.APILevel(prev)
	e := m.Timeline[prevAt]
	s := fmt.Sprintf("%s ran nats-server %s before its last start (%s)", name, prev, eventLine(e))
	if k {
		s = fmt.Sprintf("%s ran nats-server %s (API level %d) before its last start (%s)", name, prev, l, eventLine(e))
		if l < a.need {
			s += ": that release does not support it either"
		}
	}
	return s, []int{prevAt}
}

// serves is the release that serves the asset again: the one the server ran
// before when it supports the asset's level, else the first release that
// does.
func serves(prev string, a *asset) (release, first string) {
	first = releases.FirstReleaseOfLevel(a.need)
	if prev != "" {
		if l, k := releases.APILevel(prev); k && l >= a.need {
			return prev, first
		}
	}
	return "", first
}

func offlineFinding(m *model.Model, name, v string, level int, levelKnown bool, prev string, prevAt int, a *asset) report.Finding {
	f := base(name, a)
	f.Kind = "offline"
	var reason string
	for _, i := range a.logRefs {
		f.Evidence = append(f.Evidence, "its log: "+eventLine(m.Timeline[i]))
		if _, r, ok := strings.Cut(m.Timeline[i].Text, "': "); ok {
			reason = r
		}
	}
	if len(a.logRefs) > 0 {
		t := m.Timeline[a.logRefs[0]].Time.UTC()
		f.Since = &t
		f.TimelineRefs = append(f.TimelineRefs, a.logRefs...)
	}
	f.Evidence = append(f.Evidence, a.where...)
	pe, refs := prevEvidence(m, name, prev, prevAt, a)
	if pe != "" {
		f.Evidence = append(f.Evidence, pe)
		f.TimelineRefs = append(f.TimelineRefs, refs...)
	}
	sort.Ints(f.TimelineRefs)
	held := "its data is on disk"
	if a.messages != nil {
		held = fmt.Sprintf("its %d messages are on disk", *a.messages)
	}
	if len(a.holders) > 0 && !slices.Equal(a.holders, []string{name}) {
		held = fmt.Sprintf("%s in the store of %s", strings.TrimSuffix(held, " on disk"), strings.Join(a.holders, ", "))
	}
	if a.consumer != "" {
		held = "its state is on disk"
	}
	cause := needText(a, v)
	if reason != "" {
		cause += "; the server says: " + reason
	}
	release, first := serves(prev, a)
	f.Message = fmt.Sprintf("%s is offline on %s: %s runs %s and %s. The data is intact (%s), but until a release that supports it loads it, the stream API answers 10194 \"stream is offline\", publishes to it get no responders and its consumers answer info with an empty state; /healthz does not report it. %s",
		a.what(), name, name, releaseText(v, level, levelKnown), cause, held, servesText(release, first))
	prescribe(&f, a, release, first, "")
	return f
}

func undecodableFinding(m *model.Model, name, v string, level int, prev string, prevAt int, sl serverLog, a *asset) report.Finding {
	f := base(name, a)
	outcome, known := releases.UndecodableConsumer(v)
	f.Evidence = append(f.Evidence, a.where...)
	for _, i := range sl.metaApply {
		f.Evidence = append(f.Evidence, "its log: "+eventLine(m.Timeline[i]))
		f.TimelineRefs = append(f.TimelineRefs, i)
	}
	pe, refs := prevEvidence(m, name, prev, prevAt, a)
	if pe != "" {
		f.Evidence = append(f.Evidence, pe)
		f.TimelineRefs = append(f.TimelineRefs, refs...)
	}
	if sl.lastStart >= 0 {
		t := m.Timeline[sl.lastStart].Time.UTC()
		f.Since = &t
	}
	sort.Ints(f.TimelineRefs)
	what := fmt.Sprintf("%s runs %s, which cannot decode the config of %s: %s", name, releaseText(v, level, true), a.what(), needText(a, v))
	switch {
	case known && outcome == "exits":
		if sl.last > sl.lastStart && sl.lastStart >= 0 {
			f.Evidence = append(f.Evidence, "its log ends after its last start, on "+v+", with no shutdown logged: "+eventLine(m.Timeline[sl.last]))
			f.TimelineRefs = append(f.TimelineRefs, sl.last)
			sort.Ints(f.TimelineRefs)
		}
		f.Kind = "crash"
		f.Message = what + fmt.Sprintf(". nats-server %s does not keep it offline: it exits at start (a nil pointer panic in processClusterCreateConsumer, seen on %s with such a consumer), so JetStream on %s does not run at all. The data is intact on disk", v, v, name)
	case known && outcome == "meta-stops":
		f.Kind = "meta-stopped"
		f.Message = what + fmt.Sprintf(". nats-server %s does not keep it offline: its meta layer stops applying the meta state (\"Error applying JetStream cluster entries: can not unmarshal\"), no meta leader is elected and every stream answers 10008 \"JetStream system temporarily unavailable\" (seen on %s with such a consumer). The data is intact on disk", v, v)
	default:
		f.Kind = "undecodable"
		f.Message = what + ". What this release does with it was not seen (2.11.17 exits at start, 2.12.15 stops applying its meta state); either way the data is intact on disk"
	}
	release, first := serves(prev, a)
	f.Message += ". " + servesText(release, first)
	prescribe(&f, a, release, first, f.Kind)
	return f
}

// servesText names the release that serves the asset again.
func servesText(release, first string) string {
	switch {
	case release != "":
		return fmt.Sprintf("nats-server %s, which ran these servers before, serves it again", release)
	case first != "":
		return fmt.Sprintf("nats-server %s or later serves it again", first)
	}
	return "a release newer than the one running serves it again"
}

func prescribe(f *report.Finding, a *asset, release, first, kind string) {
	args := remedy.Args{"what": a.what(), "stream": a.stream, "account": a.account, "first": first,
		"need": fmt.Sprint(a.need), "down": kind == "crash" || kind == "meta-stopped" || kind == "undecodable"}
	if release != "" {
		args["release"] = release
	} else {
		args["norelease"] = true
	}
	args["withmsgs"] = ""
	if a.messages != nil && a.consumer == "" {
		args["withmsgs"] = fmt.Sprintf(" with its %d messages", *a.messages)
	}
	remedy.Prescribe(remedy.AssetOfflineNewerRelease, args).Apply(f)
}
