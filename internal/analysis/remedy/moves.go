package remedy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// One first move per server (issue 31): findings about one server are made
// by different checks, and each remedy's first screen is right on its own;
// side by side they must not contradict. A finding whose first screen says
// not to start the server before something is done (a full volume: make
// room first), or to bring it back by a reload, holds the gate: every
// other finding about that server whose first move starts it is told so
// right before that start (diskfull-*: "Start df-2: once up, it catches
// up" beside "Do not restart it before there is room").

// notStartRE finds a caveat against starting a server before something is
// done; removedRE, one against starting it after its removal from the
// cluster (it has left: the move is the removal); reloadRE, a move that
// brings a running server's JetStream back without a start; startRE, a
// move that starts a server.
var (
	notStartRE = regexp.MustCompile(`(?i)\bdo not (re)?start\b[^.]*\bbefore\b|\bbefore starting it again\b`)
	removedRE  = regexp.MustCompile(`(?i)\bdo not (re)?start\b[^.;]*\bafter the removal\b`)
	reloadRE   = regexp.MustCompile(`(?i)\breload\b`)
	startRE    = regexp.MustCompile(`(?i)(^|[^a-z-])(re)?start(s|ed)?\b`)
)

// Gate is what a finding says of starting its server that every other
// finding about it must carry: the moves that must come first (Before) or
// the removal that replaces a start (Removal), and the caveat itself.
type Gate struct {
	Code, Server string
	// Removal: the server has left and the finding's move removes it; a
	// start is the other way, bringing it back, before any removal.
	Removal bool
	Text    string
}

// gateOf is f's gate, nil when its first screen holds no caveat against
// starting the server.
func gateOf(f report.Finding) *Gate {
	first := firstSteps(f.RemedySteps)
	var caveats []string
	removal := false
	for _, s := range first {
		if m := removedRE.FindString(s.Text); m != "" {
			caveats, removal = append(caveats, m), true
		} else if notStartRE.MatchString(s.Text) && (s.Kind == StepNote || s.Kind == StepAction) {
			caveats = append(caveats, firstSentence(s.Text))
		}
	}
	if len(caveats) == 0 {
		return nil
	}
	i := slices.IndexFunc(f.RemedySteps, func(s report.RemedyStep) bool { return s.Kind == StepAction })
	if i < 0 {
		return nil
	}
	moves := []string{firstSentence(f.RemedySteps[i].Text)}
	if removal {
		return &Gate{Code: f.Code, Server: f.Server, Removal: true, Text: strings.Join(caveats, "; ")}
	}
	// The move that brings the server back, when it is a later step
	// (jetstream-disabled: make room, then reload or start).
	if !startRE.MatchString(f.RemedySteps[i].Text) && !reloadRE.MatchString(f.RemedySteps[i].Text) {
		for _, s := range f.RemedySteps[i+1:] {
			if s.Kind == StepAction && (startRE.MatchString(s.Text) || reloadRE.MatchString(s.Text)) {
				moves = append(moves, bringBack(s.Text))
				break
			}
		}
	}
	return &Gate{Code: f.Code, Server: f.Server, Text: strings.Join(append(moves, caveats...), " ")}
}

// bringBack is the sentences of a step up to the one naming the reload or
// start (the reason that follows is the finding's own).
func bringBack(text string) string {
	var out []string
	for _, s := range sentences(text) {
		out = append(out, s)
		if reloadRE.MatchString(s) || startRE.MatchString(s) {
			break
		}
	}
	return strings.Join(out, " ")
}

// StartsServer says whether a finding's first move starts its server: its
// first action names a start (or restart) of it.
func StartsServer(f report.Finding) bool {
	i := slices.IndexFunc(f.RemedySteps, func(s report.RemedyStep) bool { return s.Kind == StepAction })
	return i >= 0 && startRE.MatchString(firstSentence(f.RemedySteps[i].Text))
}

// ResolveServerMoves gives every server one first move: for each server
// whose findings hold a gate (GateOf), each other finding about it whose
// first move starts it gets, right before that action, a note saying what
// must come first and which finding says so. It runs after ResolveRefs,
// before the diagnosis reads the first screens.
func ResolveServerMoves(findings []report.Finding) {
	gates := map[string]*Gate{}
	for _, f := range findings {
		if f.Server == "" || gates[f.Server] != nil {
			continue
		}
		if g := gateOf(f); g != nil {
			gates[f.Server] = g
		}
	}
	for i := range findings {
		f := &findings[i]
		g := gates[f.Server]
		if g == nil || gateOf(*f) != nil || !StartsServer(*f) {
			continue
		}
		if strings.Contains(renderSteps(firstSteps(f.RemedySteps)), g.Text) {
			continue
		}
		note := fmt.Sprintf("Before this, as %s says for %s: %s", g.Code, g.Server, g.Text)
		if g.Removal {
			note = fmt.Sprintf("%s has left the cluster: %s's first move removes it (a server removal), and then %s. The start below is the other way, to bring %s back instead, before any removal of it.", g.Server, g.Code, g.Text, g.Server)
		}
		addRemedyNote(f, note, func(s report.RemedyStep) bool { return s.Kind == StepAction })
	}
}

// sentences splits text at ". " (a sentence ends with its period).
func sentences(text string) []string {
	var out []string
	for text != "" {
		i := strings.Index(text, ". ")
		if i < 0 {
			out = append(out, strings.TrimSpace(text))
			break
		}
		out = append(out, strings.TrimSpace(text[:i+1]))
		text = text[i+2:]
	}
	return out
}

// firstSentence is text up to its first ". ", all of it when none.
func firstSentence(text string) string {
	if s := sentences(text); len(s) > 0 {
		return s[0]
	}
	return text
}
