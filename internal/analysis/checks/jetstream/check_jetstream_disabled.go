package jetstream

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/check"
	"github.com/jsforensics/jsforensics/internal/analysis/facts"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

// A server turns its own JetStream off while the process runs when a write
// finds no space (raft.go setWriteErr, filestore.go/stream.go, then
// jetstream.go handleOutOfSpace: "JetStream out of resources, will be
// DISABLED") or is refused (handleWritePermissionError); from then on its
// /jsz says disabled: true and its /healthz "JetStream not enabled (10076)"
// (monitor.go), until it is restarted.

// jsOffKinds are the log lines of a server disabling its JetStream itself.
var jsOffKinds = []string{"out-of-resources", "permission-denied"}

// jsWriteFailKinds are the log lines of failed writes and limits that come
// before a disable: its cause.
var jsWriteFailKinds = []string{"raft-write-error", "filestore-write-error", "wal-error", "store-failed", "stream-apply-error",
	"snapshot-install-failed", "meta-write-error", "resource-limits", "permission-denied"}

// noSpace is the error text of a write that found the filesystem full
// (store.go isOutOfSpaceErr).
const NoSpace = "no space left on device"

var CheckJetStreamDisabled = check.Check{
	Code:        string(report.CodeJetStreamDisabled),
	Severity:    report.Critical,
	Description: "a server turned its own JetStream off while running (its log: \"JetStream out of resources, will be DISABLED\"; /jsz disabled: true; /healthz \"JetStream not enabled (10076)\"): it stores nothing and its replicas fall behind; since when, the cause it logged (disk full, resource limits, a write error), its store against its limit, the replicas behind, and how it comes back",
	Skip: func(p *check.Pass) string {
		for _, s := range p.Model.Servers {
			if s.Sources["log"] || s.Sources["jsz"] || s.Sources["healthz"] {
				return ""
			}
		}
		return "no log, /jsz or /healthz in the bundle says whether JetStream ran"
	},
	Run: func(p *check.Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		events := jsLogEvents(m)
		for _, s := range m.Servers {
			if d := jetStreamOff(m, s, events[s.Name]); d != nil {
				out = append(out, disabledFinding(m, s, d))
			}
		}
		return out
	},
}

// jsOff is what the bundle says of one server turning its JetStream off.
type jsOff struct {
	off      []int // timeline indexes of its disable lines
	causes   []int // of the failed writes of that boot up to just after the first disable
	followUp []int // its JetStream shutdown and meta leader transfer lines after the first disable
	answers  []model.JetStreamAnswer
	since    time.Time
	// back: a later JetStream start or /jsz shows it running again.
	back     bool
	backText string
}

// jsLogKinds are the log lines jetStreamOff reads.
var jsLogKinds = append(append([]string{string(natsfmt.EventStart), "js-start", "js-shutdown", "js-shutdown-done", "meta-leader-transfer"},
	jsOffKinds...), jsWriteFailKinds...)

// jsLogEvents indexes the timeline's log events of jsLogKinds by server
// name, in timeline order: one pass for every server.
func jsLogEvents(m *model.Model) map[string][]int {
	out := map[string][]int{}
	names := map[model.ServerID]string{}
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if e.Source != "log" || !slices.Contains(jsLogKinds, e.Kind) {
			continue
		}
		n, ok := names[e.Server]
		if !ok {
			n = m.Name(e.Server)
			names[e.Server] = n
		}
		out[n] = append(out[n], i)
	}
	return out
}

// jetStreamOff finds s's JetStream disable from its log events (idx, see
// jsLogEvents) and captures; nil when nothing says it turned JetStream off.
func jetStreamOff(m *model.Model, s *model.Server, idx []int) *jsOff {
	d := &jsOff{}
	bootStart := -1 // position in idx of the boot of the first disable
	lastStart := -1 // timeline index of the last (JetStream) start
	for k, i := range idx {
		e := &m.Timeline[i]
		switch {
		case e.Kind == string(natsfmt.EventStart) || e.Kind == "js-start":
			lastStart = i
			if len(d.off) == 0 && e.Kind == string(natsfmt.EventStart) {
				bootStart = k
			}
		case slices.Contains(jsOffKinds, e.Kind) && (e.Kind != "permission-denied" || strings.Contains(e.Text, "disabling JetStream")):
			if len(d.off) == 0 || lastStart > d.off[len(d.off)-1] {
				d.off = append(d.off, i)
			}
		}
	}
	if js := s.JetStream; js != nil {
		d.answers = js.Off
	}
	if len(d.off) == 0 && len(d.answers) == 0 {
		return nil
	}
	if len(d.off) > 0 {
		first := m.Timeline[d.off[0]]
		d.since = first.Time
		for _, i := range idx[bootStart+1:] {
			e := &m.Timeline[i]
			if e.Kind == string(natsfmt.EventStart) && i > d.off[0] {
				break
			}
			near := !e.Time.After(first.Time.Add(10*time.Second)) && !e.Time.Before(first.Time.Add(-10*time.Minute))
			switch {
			case slices.Contains(jsWriteFailKinds, e.Kind) && near && !slices.Contains(d.off, i):
				d.causes = append(d.causes, i)
			case (e.Kind == "js-shutdown" || e.Kind == "js-shutdown-done" || e.Kind == "meta-leader-transfer") && i > d.off[0] && near:
				d.followUp = append(d.followUp, i)
			}
		}
		if lastStart > d.off[len(d.off)-1] {
			d.back, d.backText = true, fmt.Sprintf("its log shows JetStream starting again at %s (%s line %d)",
				m.Timeline[lastStart].Time.UTC().Format(time.RFC3339), m.Timeline[lastStart].File, m.Timeline[lastStart].Line)
		}
	}
	for _, a := range d.answers {
		if !a.Time.IsZero() && (d.since.IsZero() || a.Time.Before(d.since)) && len(d.off) == 0 {
			d.since = a.Time
		}
	}
	// The newest answer decides whether it is still off when the bundle
	// holds captures of it.
	if js := s.JetStream; js != nil {
		lastOn := time.Time{}
		for _, a := range js.On {
			lastOn = facts.Later(lastOn, a.Time)
		}
		switch {
		case facts.JetStreamOffAtEnd(s):
			d.back, d.backText = false, ""
		case len(js.On) > 0 && !lastOn.Before(d.since):
			d.back, d.backText = true, fmt.Sprintf("its /jsz at %s shows JetStream running", lastOn.UTC().Format(time.RFC3339))
		}
	}
	return d
}

// disabledCause classifies what the server logged before the disable.
func disabledCause(m *model.Model, d *jsOff) (kind, text string) {
	texts := func(kinds ...string) (string, bool) {
		for _, i := range append(append([]int(nil), d.causes...), d.off...) {
			e := m.Timeline[i]
			if len(kinds) == 0 || slices.Contains(kinds, e.Kind) {
				return e.Text, true
			}
		}
		return "", false
	}
	for _, i := range append(append([]int(nil), d.causes...), d.off...) {
		if t := m.Timeline[i].Text; strings.Contains(t, NoSpace) || strings.Contains(t, "out of space") {
			return "disk-full", "the filesystem holding its store is full (" + NoSpace + ")"
		}
	}
	if t, ok := texts("permission-denied"); ok {
		return "permission-denied", "its store is not writable: " + t
	}
	if t, ok := texts("resource-limits"); ok {
		return "resource-limits", "JetStream resource limits exceeded: " + t
	}
	if t, ok := texts(jsWriteFailKinds...); ok {
		return "write-error", "a write failed: " + t
	}
	if len(d.off) > 0 {
		return "out-of-resources", "it logged running out of resources with no failed write before it: " + m.Timeline[d.off[0]].Text
	}
	return "unknown", "no log line of it in the bundle says why"
}

// failedWrite is the file named by a "write PATH: …" error, "" if none.
func failedWrite(text string) string {
	i := strings.Index(text, "write /")
	if i < 0 {
		return ""
	}
	rest := text[i+len("write "):]
	if j := strings.Index(rest, ": "); j > 0 {
		return rest[:j]
	}
	return ""
}

func eventLine(e model.TimelineEvent) string {
	return fmt.Sprintf("%s line %d (%s) %s: %s", e.File, e.Line, e.Time.UTC().Format(time.RFC3339Nano), e.Kind, e.Text)
}

func disabledFinding(m *model.Model, s *model.Server, d *jsOff) report.Finding {
	name := m.Name(s.Ref())
	kind, cause := disabledCause(m, d)
	f := report.Finding{Server: name, Kind: kind, Servers: []string{name}}
	if !d.since.IsZero() {
		t := d.since.UTC()
		f.Since = &t
	}
	refs := append(append(append([]int(nil), d.causes...), d.off...), d.followUp...)
	slices.Sort(refs)
	f.TimelineRefs = refs
	// The first failed write, the disable, what followed; then how many
	// more failed writes the log holds.
	var shown []int
	if len(d.causes) > 0 {
		f.Evidence = append(f.Evidence, "first failed write: "+eventLine(m.Timeline[d.causes[0]]))
		shown = append(shown, d.causes[0])
	}
	for _, i := range d.causes {
		if t := m.Timeline[i].Text; strings.Contains(t, NoSpace) {
			if i != d.causes[0] {
				f.Evidence = append(f.Evidence, "first write that found no space: "+eventLine(m.Timeline[i]))
				shown = append(shown, i)
			}
			if p := failedWrite(t); p != "" {
				f.Evidence = append(f.Evidence, "the write that failed: "+p)
			}
			break
		}
	}
	if len(shown) == 1 {
		if p := failedWrite(m.Timeline[shown[0]].Text); p != "" && !strings.Contains(m.Timeline[shown[0]].Text, NoSpace) {
			f.Evidence = append(f.Evidence, "the write that failed: "+p)
		}
	}
	if n := len(d.causes) - len(shown); n > 0 {
		groups := []string{}
		for _, i := range d.causes {
			if slices.Contains(shown, i) {
				continue
			}
			if g := m.Timeline[i].Group; g != "" {
				groups = model.AppendUnique(groups, g)
			}
		}
		line := fmt.Sprintf("%d more failed write(s) logged around it", n)
		if len(groups) > 0 {
			line += " (raft groups " + strings.Join(groups, ", ") + ")"
		}
		f.Evidence = append(f.Evidence, line)
	}
	for _, i := range d.off {
		f.Evidence = append(f.Evidence, "disabled: "+eventLine(m.Timeline[i]))
	}
	for _, i := range d.followUp {
		f.Evidence = append(f.Evidence, eventLine(m.Timeline[i]))
	}
	for _, a := range d.answers {
		line := a.Text + " (" + a.File
		if !a.Time.IsZero() {
			line += ", " + a.Time.UTC().Format(time.RFC3339)
		}
		f.Evidence = append(f.Evidence, line+")")
	}
	limit := storeAgainstLimit(s, kind)
	if limit != "" {
		f.Evidence = append(f.Evidence, limit)
	}
	if n := emptyIndexes(m, s); n > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%d index.db file(s) of 0 bytes in its store (store-corrupt): written at the stop with no space left; a start rebuilds them from the blocks", n))
	}
	behind := behindReplicas(m, s)
	f.Evidence = append(f.Evidence, behind...)

	since := ""
	if f.Since != nil {
		since = " since " + f.Since.Format(time.RFC3339)
	}
	f.Message = fmt.Sprintf("JetStream on %s is disabled%s: %s; it stores nothing, so its replicas fall behind while the other servers carry on", name, since, cause)
	if d.back {
		f.Severity = report.Warning
		f.Message = fmt.Sprintf("JetStream on %s was disabled%s (%s), then came back: %s", name, since, cause, d.backText)
	}
	switch n := len(behind); {
	case n == 1:
		f.Message += "; its copy of a stream is behind (replica-gap)"
	case n > 1:
		f.Message += fmt.Sprintf("; %d of its stream copies are behind (replica-gap)", n)
	}
	disabledRemedy(m, s, kind, d.back).Apply(&f)
	return f
}

// storeAgainstLimit says what the captures tell of the store's usage and
// limit.
func storeAgainstLimit(s *model.Server, kind string) string {
	js := s.JetStream
	if js == nil || (js.MaxStorage == 0 && js.StorageSource == "") {
		return ""
	}
	var parts []string
	if js.MaxStorage > 0 {
		parts = append(parts, fmt.Sprintf("max_storage (max_file_store) %s (%s)", sizeText(uint64(js.MaxStorage)), js.MaxStorageSource))
	}
	if js.StorageSource != "" {
		parts = append(parts, fmt.Sprintf("JetStream counted %s stored, %s reserved by stream limits (%s)", sizeText(js.Storage), sizeText(js.Reserved), js.StorageSource))
	}
	line := strings.Join(parts, "; ")
	if kind == "disk-full" && js.MaxStorage > 0 && js.Storage < uint64(js.MaxStorage) {
		line += ": the limit was not reached, so the filesystem under its store_dir is smaller than max_file_store and filled first"
	}
	if js.StoreDir != "" {
		line += "; store_dir " + js.StoreDir
	}
	return line
}

// sizeText is n bytes in the unit that reads best.
func sizeText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// emptyIndexes counts s's index.db files found 0 bytes long.
func emptyIndexes(m *model.Model, s *model.Server) int {
	n := 0
	for _, c := range m.Corruptions {
		if m.Same(c.Server, s.Ref()) && c.Kind == natsfmt.CorruptIndex && strings.HasSuffix(c.File, "index.db") && strings.Contains(c.Message, "of 0 bytes") {
			n++
		}
	}
	return n
}

// behindReplicas are s's current stream copies lacking what another current
// replica holds after their last sequence (what replica-gap reports).
func behindReplicas(m *model.Model, s *model.Server) []string {
	var out []string
	for _, st := range m.Streams {
		cmp := st.Comparison
		if cmp == nil {
			continue
		}
		var assigned uint64
		self := -1
		for i, c := range cmp.Copies {
			if len(st.AssignedTo) == 0 || slices.ContainsFunc(st.AssignedTo, func(a model.ServerID) bool { return m.Same(a, c.Server) }) {
				assigned |= 1 << i
			}
			if m.Same(c.Server, s.Ref()) {
				self = i
			}
		}
		if self < 0 || assigned&(1<<self) == 0 {
			continue
		}
		_, behind := cmp.Lacks(self, assigned)
		if len(behind) == 0 {
			continue
		}
		var ranges seqset.Set
		var holders uint64
		for _, sp := range behind {
			ranges.AddRange(sp.First, sp.Last)
			holders |= sp.Holders
		}
		out = append(out, fmt.Sprintf("behind: its copy of %s > %s ends at sequence %d; %s held by %s (replica-gap)",
			st.Account, st.Name, cmp.Copies[self].LastSeq, model.RangesText(ranges), strings.Join(cmp.Servers(m, holders), ", ")))
	}
	return out
}

// disabledRemedy is how a disabled JetStream comes back, as the diskfull
// fixtures proved on 2.11.17, 2.12.15 and 2.15.3 (testdata/gen README,
// diskfull-*); what a start on a still-full volume does, and whether the
// meta state is gone, follow disableDeletesMeta (docs/verification.md versions table,
// row diskfull).
func disabledRemedy(m *model.Model, s *model.Server, kind string, back bool) remedy.Prescription {
	dropped, known := releases.DisableDeletesMeta(s.Version)
	full := kind == "disk-full"
	down := processDown(m, s.Ref())
	return remedy.Prescribe(remedy.JetStreamDisabled, remedy.Args{"server": m.Name(s.Ref()), "back": back, "version": model.DashIfEmpty(s.Version),
		"down": down != "", "downtext": down,
		"fullexits": full && !dropped, "fullagain": full && dropped, "metaunknown": !known && s.Version != "", "metadeleted": dropped,
		"diskfull": kind == "disk-full", "permission": kind == "permission-denied", "limits": kind == "resource-limits",
		"other": kind != "disk-full" && kind != "permission-denied" && kind != "resource-limits"})
}

// processDown says how the logs show server id's process stopped after its
// last start ("" when they show it running, or nothing): a server that
// exited is started again, not reloaded (diskfull-*: df-2 disabled its
// JetStream, then its process exited, "Server Exiting").
func processDown(m *model.Model, id model.ServerID) string {
	var last *model.TimelineEvent
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if !m.Same(e.Server, id) {
			continue
		}
		switch e.Kind {
		case "start", "shutdown", "stop", "unclean-stop":
			last = e
		}
	}
	if last == nil || last.Kind == "start" {
		return ""
	}
	return fmt.Sprintf("the last start/stop its log shows is %s at %s", last.Kind, last.Time.Format(time.RFC3339))
}
