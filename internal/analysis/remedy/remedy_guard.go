package remedy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/report"
)

// runningEvidence says which source of the bundle shows the server with
// peer id running when the bundle was taken: it answered a capture, or its
// log runs to the end with no stop after its last start. "" when none does.
func runningEvidence(m *model.Model, id string) string {
	s := m.ServerByID(id)
	if s == nil {
		return ""
	}
	if model.AnsweredCapture(s) {
		return fmt.Sprintf("%s answered the bundle's captures", s.Name)
	}
	var last *model.TimelineEvent
	for i := range m.Timeline {
		e := &m.Timeline[i]
		if !m.Same(e.Server, s.ID) {
			continue
		}
		switch e.Kind {
		case "start", "shutdown", "stop", "js-shutdown", "unclean-stop":
			last = e
		}
	}
	if last != nil && last.Kind == "start" {
		return fmt.Sprintf("%s's log runs to the end of the bundle with no stop after its start at %s", s.Name, last.Time.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return ""
}

// GuardServerRemovals takes out of every remedy the server removals of
// servers that a source of the bundle shows running, and says why in their
// place: a running server that is removed disables its own JetStream and
// its replicas are placed anew (jetstream_cluster.go processRemovePeer, read
// in 2.10.22, 2.12.4 and 2.15.2). Which command removes which peer is the
// step's data (report.RemedyStep.Removes, recorded by Prescribe where it
// fills {{…|server-remove}}), not read back from the command text. The
// findings keep their verdicts.
func GuardServerRemovals(m *model.Model, findings []report.Finding) {
	for i := range findings {
		f := &findings[i]
		changed := false
		var steps []report.RemedyStep
		for _, s := range f.RemedySteps {
			var kept, keptRemoves, notes []string
			for j, c := range s.Commands {
				id := ""
				if j < len(s.Removes) {
					id = s.Removes[j]
				}
				if why := runningEvidence(m, id); id != "" && why != "" {
					notes = append(notes, fmt.Sprintf("Not: a server removal of %s (%s): %s, and a running server removed from the cluster disables its own JetStream while every group it serves re-places its replicas (jetstream_cluster.go processRemovePeer). Stop it first, or leave it in.", id, m.IDs[id], why))
					continue
				}
				kept, keptRemoves = append(kept, c), append(keptRemoves, id)
			}
			if len(notes) == 0 {
				steps = append(steps, s)
				continue
			}
			changed = true
			if len(kept) > 0 {
				s.Commands, s.Removes = kept, keptRemoves
				steps = append(steps, s)
			}
			for _, n := range notes {
				steps = append(steps, report.RemedyStep{Kind: StepNote, Text: n})
			}
		}
		if changed {
			f.RemedySteps = slices.Clip(steps)
			f.Remedy = RenderRemedy(f.RemedySteps, f.RemedyProven)
		}
	}
}

// guardPartialBundle puts, before the first destructive step of every
// remedy, that the bundle was not read whole (an archive cut short, files
// unread): what it lacks may show a server running or a copy intact, so the
// step waits for the whole bundle. The findings keep their verdicts.
func GuardPartialBundle(m *model.Model, findings []report.Finding) {
	var why string
	switch {
	case m.Read.CutAt != "":
		why = "the archive is cut short (it ends inside " + m.Read.CutAt + "), so the servers, logs and stores after it are not in the bundle"
	case len(m.Read.Unread) > 0:
		why = fmt.Sprintf("%d files of the bundle could not be read (coverage.unread)", len(m.Read.Unread))
	default:
		return
	}
	note := "Before any step below that destroys: " + why + "; what they hold may show a server running or a copy intact. Get the whole bundle and analyze it again first."
	for i := range findings {
		f := &findings[i]
		if slices.ContainsFunc(f.RemedySteps, func(s report.RemedyStep) bool { return s.Destructive }) {
			addRemedyNote(f, note, func(s report.RemedyStep) bool { return s.Destructive })
		}
	}
}

// guardRemedies adds to every remedy that starts a server, in a bundle
// with stores encrypted at rest, on which config to do it: a server started
// on a bundle's copy of its config (key redacted) empties its streams.
func GuardRemedies(m *model.Model, findings []report.Finding) {
	if len(m.EncryptedStores) == 0 {
		return
	}
	var servers []string
	for id := range m.EncryptedStores {
		servers = model.AppendUnique(servers, m.Name(id))
	}
	slices.Sort(servers)
	caveat := fmt.Sprintf(" The stores of %s are encrypted at rest: start a server only on its own config with the key its store was sealed with, never on a copy from a bundle (its key is redacted there): it would bring the streams back empty and delete their files.", strings.Join(servers, ", "))
	starts := func(s report.RemedyStep) bool {
		return s.Kind == StepAction && strings.Contains(strings.ToLower(s.Text), "start")
	}
	for i := range findings {
		f := &findings[i]
		r := strings.ToLower(f.Remedy)
		switch {
		case f.RemedyID == string(StoreSealed) || f.Remedy == SealedRemedy || !strings.Contains(r, "start") || strings.Contains(r, "encrypted at rest"):
		case len(f.RemedySteps) > 0:
			// Said before the first action that starts a server.
			addRemedyNote(f, strings.TrimSpace(caveat), starts)
		default:
			f.Remedy += caveat
		}
	}
}
