package analysis

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/checks/store"
	"github.com/jsforensics/jsforensics/internal/analysis/model"
	"github.com/jsforensics/jsforensics/internal/analysis/releases"
	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/report"
)

// destructiveWords are the actions that destroy state: remove, truncate,
// peer-remove, scale down, move aside, restart (or start) a server on it.
var destructiveWords = regexp.MustCompile(`(?i)\b(remove|removal|truncate|peer-remove|scale[^.]*(down|to R1)|--replicas 1|move[^.]*(aside|out of)|restart|start|rebuil[dt])\b`)

// negated are phrases that name a destructive action only to rule it out.
var negated = regexp.MustCompile(`(?i)(do not|never|not) (remove|start|rebuild|peer-remove)[^:;.]*|start sequence`)

// destructive says whether a step's text or commands name a destructive
// action.
func destructive(text string, commands []string) bool {
	return destructiveWords.MatchString(negated.ReplaceAllString(text+" "+strings.Join(commands, " "), ""))
}

// checkSteps fails for a destructive action not marked so, and for a
// destructive action with no save step before it.
func checkSteps(t *testing.T, where string, steps []report.RemedyStep) {
	t.Helper()
	saved := false
	for _, s := range steps {
		switch s.Kind {
		case remedy.StepSave:
			saved = true
		case remedy.StepAction:
			if destructive(s.Text, s.Commands) && !s.Destructive {
				t.Errorf("%s: action %q names a destructive action but is not marked Destroys", where, s.Text)
			}
			if s.Destructive && !saved {
				t.Errorf("%s: destructive action %q has no save step before it", where, s.Text)
			}
		case remedy.StepCost, remedy.StepVerify, remedy.StepNote:
			if s.Destructive {
				t.Errorf("%s: a %s step marked destructive: %q", where, s.Kind, s.Text)
			}
		default:
			t.Errorf("%s: step kind %q", where, s.Kind)
		}
	}
}

// TestRemedyCatalogue: every entry, with every optional step in, holds no
// destructive action without a save step before it, marks every action
// that names one, and cites only committed fixtures.
func TestRemedyCatalogue(t *testing.T) {
	for _, r := range remedy.RemedyCatalogue {
		var steps []report.RemedyStep
		for _, s := range r.Steps {
			if s.Destroys && s.Kind != remedy.StepAction {
				t.Errorf("%s: %s step marked Destroys", r.ID, s.Kind)
			}
			steps = append(steps, report.RemedyStep{Kind: s.Kind, Text: s.Text, Commands: s.Commands, Destructive: s.Destroys})
		}
		checkSteps(t, string(r.ID), steps)
		for _, p := range r.Proven {
			if _, err := os.Stat("../../" + outcomeFile(p.Fixture)); err != nil {
				t.Errorf("%s: proven by %s %s, which is no committed outcome: %v", r.ID, p.Release, p.Fixture, err)
			}
		}
	}
}

// TestEveryRemedyIDPrescribed: every Prescribe call names its entry by an
// ID constant of remedy/ids.go, never by a literal, and every constant is
// prescribed by some check (Load holds the constants and the catalogue's
// entries in step).
func TestEveryRemedyIDPrescribed(t *testing.T) {
	consts := idConsts(t)
	used := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); !ok || x.Name != "remedy" || fn.Sel.Name != "Prescribe" {
					return true
				}
			case *ast.Ident:
				if fn.Name != "Prescribe" || f.Name.Name != "remedy" {
					return true
				}
			default:
				return true
			}
			var name string
			switch a := call.Args[0].(type) {
			case *ast.SelectorExpr:
				name = a.Sel.Name
			case *ast.Ident:
				name = a.Name
			}
			if _, ok := consts[name]; !ok {
				t.Errorf("%s: Prescribe(%s): not an ID constant of remedy/ids.go", path, types.ExprString(call.Args[0]))
			}
			used[name] = true
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, id := range consts {
		if !used[name] {
			t.Errorf("catalogue entry %s (remedy.%s) is prescribed by no check", id, name)
		}
	}
}

// TestPrescribeGivesEveryParameter: every Prescribe call whose arguments
// can be read from its function (an Args literal, or a variable built from
// one and from a["key"] = … assignments) gives every parameter its entry's
// unconditional steps name, so none is left as "{{name}}" in a report. A
// step kept only when or unless a parameter is set, or only where some
// finding is, may name parameters given only with it, and is not held.
func TestPrescribeGivesEveryParameter(t *testing.T) {
	consts := idConsts(t)
	field := regexp.MustCompile(`\{\{([a-z0-9_]+)(?:\|[a-z-]+)?\}\}`)
	needs := map[string][]string{}
	for _, r := range remedy.RemedyCatalogue {
		for _, s := range r.Steps {
			if s.When != "" || s.Unless != "" || s.Refers != nil || s.UnlessFound != nil {
				continue
			}
			tmpls := []string{s.Text}
			if s.Each != "" {
				// Each value fills the commands; the list itself is needed.
				needs[string(r.ID)] = append(needs[string(r.ID)], s.Each)
			} else {
				tmpls = append(tmpls, s.Commands...)
			}
			for _, tmpl := range tmpls {
				for _, m := range field.FindAllStringSubmatch(tmpl, -1) {
					if m[1] != "each" && m[1] != "refs" {
						needs[string(r.ID)] = append(needs[string(r.ID)], m[1])
					}
				}
			}
		}
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// Each outermost function body (a func, or a func literal such as a
		// check's Run), with every call in it and its closures.
		var bodies []*ast.BlockStmt
		for _, decl := range f.Decls {
			ast.Inspect(decl, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Body != nil {
						bodies = append(bodies, n.Body)
					}
					return false
				case *ast.FuncLit:
					bodies = append(bodies, n.Body)
					return false
				}
				return true
			})
		}
		for _, body := range bodies {
			ast.Inspect(body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 || !strings.HasSuffix(types.ExprString(call.Fun), "Prescribe") {
					return true
				}
				name := types.ExprString(call.Args[0])
				id := consts[name[strings.LastIndex(name, ".")+1:]]
				given, known := argKeys(body, call.Args[1])
				if !known {
					return true
				}
				checked++
				for _, p := range needs[id] {
					if !given[p] {
						t.Errorf("%s:%d: Prescribe(%s) does not give {{%s}}", path, fset.Position(call.Pos()).Line, name, p)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Errorf("only %d Prescribe calls read", checked)
	}
}

// argKeys are the keys an Args expression gives, read from body: nil, a
// literal, or a variable holding a literal and its later a["key"] = ….
// known is false where they cannot be read there.
func argKeys(body *ast.BlockStmt, arg ast.Expr) (keys map[string]bool, known bool) {
	keys = map[string]bool{}
	lit := func(e ast.Expr) bool {
		cl, ok := e.(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, el := range cl.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(k.Value)
					keys[s] = true
				}
			}
		}
		return true
	}
	switch a := arg.(type) {
	case *ast.Ident:
		if a.Name == "nil" {
			return keys, true
		}
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for i, l := range as.Lhs {
				switch l := l.(type) {
				case *ast.Ident:
					if l.Name == a.Name && i < len(as.Rhs) && lit(as.Rhs[i]) {
						known = true
					}
				case *ast.IndexExpr:
					if x, ok := l.X.(*ast.Ident); ok && x.Name == a.Name {
						if k, ok := l.Index.(*ast.BasicLit); ok {
							s, _ := strconv.Unquote(k.Value)
							keys[s] = true
						}
					}
				}
			}
			return true
		})
		return keys, known
	default:
		return keys, lit(arg)
	}
}

// idConsts are the ID constants of remedy/ids.go: name to catalogue id.
func idConsts(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "remedy/ids.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ID" || len(v.Values) != 1 {
				continue
			}
			lit, _ := v.Values[0].(*ast.BasicLit)
			if lit == nil {
				t.Fatalf("remedy/ids.go: %s is not a literal", v.Names[0].Name)
			}
			out[v.Names[0].Name], _ = strconv.Unquote(lit.Value)
		}
	}
	if len(out) != len(remedy.IDs) {
		t.Errorf("remedy/ids.go declares %d IDs, remedy.IDs lists %d", len(out), len(remedy.IDs))
	}
	return out
}

// TestCommittedReportsRemedies: in the report of every committed fixture,
// every remedy comes from the catalogue, fully filled in, its text is its
// steps, no destructive step comes before its save step, and the first
// step of every cause holds the save steps of the remedy it is taken from
// when that remedy destroys anything.
func TestCommittedReportsRemedies(t *testing.T) {
	for _, fx := range fixtures(t) {
		rep := analyze(t, fx.forms[0])
		for i, f := range rep.Findings {
			where := fx.name + " " + f.Code + " #" + string(rune('0'+i%10))
			if f.Remedy == "" {
				continue
			}
			if f.RemedyID == "" || len(f.RemedySteps) == 0 {
				t.Errorf("%s: remedy not from the catalogue: %s", where, f.Remedy)
				continue
			}
			if strings.Contains(f.Remedy, "{{") {
				t.Errorf("%s: remedy %s left a parameter unfilled: %s", where, f.RemedyID, f.Remedy)
			}
			if got := remedy.RenderRemedy(f.RemedySteps, f.RemedyProven); got != f.Remedy {
				t.Errorf("%s: remedy text is not its steps:\n%s\nsteps:\n%s", where, f.Remedy, got)
			}
			checkSteps(t, where, f.RemedySteps)
		}
		for _, c := range rep.Diagnosis {
			src := -1
			for _, i := range c.Findings {
				if len(rep.Findings[i].RemedySteps) > 0 && remedy.RemedyFirstStep(rep.Findings[i]) == c.FirstStep {
					src = i
					break
				}
			}
			if src < 0 {
				// orphanCauses says its own first step: the copy out.
				if !strings.Contains(c.FirstStep, "copy the stream folders") {
					t.Errorf("%s: cause %q: first step taken from no finding's remedy: %s", fx.name, c.Summary, c.FirstStep)
				}
				continue
			}
			steps := rep.Findings[src].RemedySteps
			if !slices.ContainsFunc(steps, func(s report.RemedyStep) bool { return s.Destructive }) {
				continue
			}
			for _, s := range steps {
				if s.Kind == remedy.StepSave && !strings.Contains(c.FirstStep, s.Text) {
					t.Errorf("%s: cause %q: first step lacks the save step %q of %s: %s", fx.name, c.Summary, s.Text, rep.Findings[src].RemedyID, c.FirstStep)
				}
			}
		}
	}
}

// TestGuardServerRemovals: a server removal of a server that answered a
// capture, or whose log runs on after its last start, is taken out of the
// remedy and said why; removals of servers shown stopped stay.
func TestGuardServerRemovals(t *testing.T) {
	m := &model.Model{IDs: map[string]string{"AAAAAAAA": "up", "BBBBBBBB": "logged", "CCCCCCCC": "gone"}}
	m.Servers = []*model.Server{
		{ID: "up", Name: "up", PeerID: "AAAAAAAA", Sources: map[string]bool{"varz": true}},
		{ID: "logged", Name: "logged", PeerID: "BBBBBBBB", Sources: map[string]bool{"log": true}},
		{ID: "gone", Name: "gone", PeerID: "CCCCCCCC", Sources: map[string]bool{"log": true}},
	}
	m.Timeline = []model.TimelineEvent{{Server: "logged", Kind: "start"}, {Server: "gone", Kind: "start"}, {Server: "gone", Kind: "shutdown"}}
	fs := []report.Finding{{}}
	removals := []remedy.Args{{"peer": "AAAAAAAA", "name": "up"}, {"peer": "BBBBBBBB", "name": "logged"}, {"peer": "CCCCCCCC", "name": "gone"}}
	remedy.Prescribe(remedy.DepartedServerRemove, remedy.Args{"removals": removals}).Apply(&fs[0])
	remedy.GuardServerRemovals(m, fs)
	r := fs[0].Remedy
	if strings.Contains(r, `"peer_id":"AAAAAAAA"`) || strings.Contains(r, `"peer_id":"BBBBBBBB"`) || !strings.Contains(r, `"peer_id":"CCCCCCCC"`) {
		t.Errorf("removals of running servers kept, or of the stopped one dropped: %s", r)
	}
	for _, want := range []string{"Not: a server removal of AAAAAAAA (up): up answered the bundle's captures", "Not: a server removal of BBBBBBBB (logged): logged's log runs to the end"} {
		if !strings.Contains(r, want) {
			t.Errorf("remedy lacks %q: %s", want, r)
		}
	}
	checkSteps(t, "guarded", fs[0].RemedySteps)

	// Every way an entry renders a server removal is guarded: a list of ids,
	// one id, a field of a record; a stream peer removal is not one.
	for _, tc := range []struct {
		p       remedy.Prescription
		guarded bool
	}{
		{remedy.PeerRemoveRemedy(m, natsfmt.MetaGroup, []string{"AAAAAAAA", "CCCCCCCC"}), true},
		{remedy.Prescribe(remedy.UnknownPeerRemove, remedy.Args{"peer": "AAAAAAAA", "group": "G"}), true},
		{remedy.Prescribe(remedy.MetaQuorumRescue, remedy.Args{"missing": []string{"AAAAAAAA"}, "rescue": "r", "quorum": 2}), true},
		{remedy.Prescribe(remedy.RenameOldNamesBeside, remedy.Args{"stops": []remedy.Args{{"old": "up", "peer": "AAAAAAAA"}}}), true},
		{remedy.Prescribe(remedy.StreamQuorumPeerRemove, remedy.Args{"removals": []string{remedy.StreamPeerRemoveCommand("S", "up")}, "stream": "S", "replicas": 3}), false},
	} {
		fs := []report.Finding{remedy.WithRemedy(report.Finding{}, tc.p)}
		remedy.GuardServerRemovals(m, fs)
		r := fs[0].Remedy
		if got := strings.Contains(r, "Not: a server removal of AAAAAAAA (up)"); got != tc.guarded || tc.guarded && strings.Contains(r, `"peer_id":"AAAAAAAA"`) {
			t.Errorf("%s: guarded %v, want %v: %s", tc.p.ID, got, tc.guarded, r)
		}
		for _, s := range fs[0].RemedySteps {
			if s.Removes != nil && len(s.Removes) != len(s.Commands) {
				t.Errorf("%s: removals %v beside commands %v", tc.p.ID, s.Removes, s.Commands)
			}
		}
	}
}

// TestReaddNote: the removed-peer warning follows the source of each
// release line; a version no source was read of cannot be told.
func TestReaddNote(t *testing.T) {
	for v, want := range map[string][2]bool{
		"2.10.22": {false, true}, "2.10.27": {false, true}, "2.11.0": {false, true}, "2.11.1": {false, true},
		"2.11.2": {true, true}, "2.11.17": {true, true}, "2.12.1": {true, true}, "2.14.10": {true, true},
		"2.15.2": {true, true}, "2.15.3": {true, true},
		"2.13.0": {false, false}, "2.11.18": {false, false}, "2.15.4": {false, false}, "2.16.0": {false, false}, "": {false, false},
	} {
		yes, known := remedy.ReaddsRemovedMetaPeer(v)
		if [2]bool{yes, known} != want {
			t.Errorf("%q: %v %v, want %v", v, yes, known, want)
		}
	}
	note := func(versions ...string) string {
		m := &model.Model{}
		for _, v := range versions {
			m.Servers = append(m.Servers, &model.Server{Name: "s" + v, Version: v})
		}
		sort.Slice(m.Servers, func(i, j int) bool { return m.Servers[i].Name < m.Servers[j].Name })
		return remedy.ReaddNote(m)
	}
	if n := note("2.15.2"); !strings.Contains(n, "2.15.2 lets a peer removed from the meta group back in") {
		t.Errorf("2.15.2: %q", n)
	}
	if n := note("2.10.22", "2.11.1"); n != "" {
		t.Errorf("2.10.22: %q", n)
	}
	if n := note("2.15.2", "2.13.0"); !strings.Contains(n, "cannot be told for 2.13.0") {
		t.Errorf("2.13.0: %q", n)
	}
}

// TestGuardPartialBundle: on a bundle not read whole, every remedy with a
// destructive step says so before that step; on a whole bundle nothing is
// added, and a remedy with no destructive step is left alone.
func TestGuardPartialBundle(t *testing.T) {
	destructive := report.Finding{Code: "peer-unknown", RemedySteps: []report.RemedyStep{
		{Kind: remedy.StepSave, Text: "save"}, {Kind: remedy.StepAction, Text: "remove", Destructive: true}}}
	harmless := report.Finding{Code: "x", RemedySteps: []report.RemedyStep{{Kind: remedy.StepNote, Text: "n"}}}
	for _, tc := range []struct {
		name string
		read model.Read
		want bool
	}{
		{"whole", model.Read{}, false},
		{"cut", model.Read{CutAt: "a/b.blk"}, true},
		{"unread", model.Read{Unread: []report.UnreadFile{{Path: "x", Reason: "y"}}}, true},
	} {
		fs := []report.Finding{destructive, harmless}
		remedy.GuardPartialBundle(&model.Model{Read: tc.read}, fs)
		steps := fs[0].RemedySteps
		got := len(steps) == 3 && steps[1].Kind == remedy.StepNote && strings.Contains(steps[1].Text, "Get the whole bundle") && steps[2].Destructive
		if got != tc.want || (!tc.want && len(steps) != 2) {
			t.Errorf("%s: steps %+v", tc.name, steps)
		}
		if len(fs[1].RemedySteps) != 1 {
			t.Errorf("%s: a remedy with no destructive step was changed", tc.name)
		}
		if tc.want && !strings.Contains(fs[0].Remedy, "Get the whole bundle") {
			t.Errorf("%s: the remedy text lacks the note", tc.name)
		}
	}
}

// outcomeFile is the committed remedy-outcome file a proof cites: the
// fixture's remedy-outcome.json, or the file itself (testdata/remedies).
func outcomeFile(fixture string) string {
	if strings.HasSuffix(fixture, ".json") {
		return fixture
	}
	return fixture + "/remedy-outcome.json"
}

// ranOutcome is what TestProvenHeldToOutcomes reads of one run of a
// committed outcome file (testdata/gen remedyrun.go RemedyOutcome).
type ranOutcome struct {
	RemedyID      string   `json:"remedy_id"`
	Findings      []string `json:"findings"`
	Steps         []string `json:"steps"`
	Skipped       string   `json:"skipped"`
	Error         string   `json:"error"`
	LeaderElected bool     `json:"leader_elected"`
	StreamsKept   bool     `json:"streams_kept"`
	MessagesKept  bool     `json:"messages_kept"`
	StreamLeaders bool     `json:"stream_leaders"`
	Deleted       []string `json:"deleted"`
	Variants      []string `json:"variants"`
	Verified      []struct {
		Check string `json:"check"`
		Held  bool   `json:"held"`
	} `json:"verified"`
	Proven bool     `json:"proven"`
	Why    []string `json:"why"`
}

// promisesCurrentRE: a verify step that says the replicas end current
// (testdata/gen remedyrun.go promisesCurrentRE, the same pattern): the
// run must then have settled with every replica equal.
var promisesCurrentRE = regexp.MustCompile(`\bcurrent\b|catch(es)? (it |each stream )?up|caught up|agrees with the others|messages on every server`)

// promisesCurrent says whether a catalogue entry's verify step promises
// current replicas.
func promisesCurrent(id remedy.ID) bool {
	for _, s := range remedy.RemedyByID[id].Steps {
		if s.Kind == remedy.StepVerify && promisesCurrentRE.MatchString(s.Text) {
			return true
		}
	}
	return false
}

// heldPromise re-derives from a recorded run whether the remedy's promise
// held: where the runner recorded its checks (verified), every one held,
// and for a verify step promising current replicas one of them is about
// that; in older files, a meta leader, every stream kept with its messages
// and a leader, nothing deleted, and nothing in why but a stop that took
// long, or (where the verify step does not promise current replicas) a
// cluster that did not settle. It says why not.
func heldPromise(id remedy.ID, oc ranOutcome) (bool, string) {
	if oc.Skipped != "" || oc.Error != "" {
		return false, "not carried out: " + oc.Skipped + oc.Error
	}
	current := promisesCurrent(id)
	if len(oc.Verified) > 0 {
		about := false
		for _, c := range oc.Verified {
			if !c.Held {
				return false, "did not hold: " + c.Check
			}
			about = about || strings.Contains(c.Check, "current") || strings.Contains(c.Check, "caught")
		}
		if current && !about {
			return false, "the verify step promises current replicas and no check is about them"
		}
		return true, ""
	}
	if !oc.LeaderElected || !oc.StreamsKept || !oc.MessagesKept || !oc.StreamLeaders || len(oc.Deleted) > 0 {
		return false, "a meta leader, the streams, their messages and leaders kept, nothing deleted: not all"
	}
	for _, w := range oc.Why {
		switch {
		case strings.HasPrefix(w, "stop: "):
		case strings.HasPrefix(w, "not quiet: ") && !current:
		default:
			return false, w
		}
	}
	return true, ""
}

// ranVariants are the variants a recorded run carried out: what the runner
// recorded, else (older files) derived from its findings and steps: for
// stream-quorum-peer-remove, the finding's group (a consumer group's name
// starts with C-) and the stream peer removals its done step sent, every
// finding the runner did not carry out ("not carried out for …") left out.
func ranVariants(id remedy.ID, oc ranOutcome) []string {
	if len(oc.Variants) > 0 {
		return oc.Variants
	}
	if id != remedy.StreamQuorumPeerRemove {
		return nil
	}
	removed := slices.ContainsFunc(oc.Steps, func(s string) bool {
		return strings.HasPrefix(s, "done: ") && strings.Contains(s, "$JS.API.STREAM.PEER.REMOVE.")
	})
	var out []string
	for _, f := range oc.Findings {
		if !removed || slices.ContainsFunc(oc.Steps, func(s string) bool { return strings.HasPrefix(s, "not carried out for "+f+":") }) {
			continue
		}
		fields := strings.Fields(f)
		group := "stream group"
		if strings.HasPrefix(fields[len(fields)-1], "C-") {
			group = "consumer group"
		}
		out = append(out, "for a "+group+", by stream peer removal")
	}
	return out
}

// TestProvenHeldToOutcomes: every run a catalogue entry cites is a
// committed outcome file (testdata/gen `go run . remedies`) of that
// release in which the remedy was carried out once (an entry is one run,
// and the report counts them); whether the remedy's promise held is
// re-derived from what the file records (heldPromise: its verify step),
// and agrees with the file's proven and with the catalogue's failed; a
// run cited for a variant carried out that variant (ranVariants).
func TestProvenHeldToOutcomes(t *testing.T) {
	for _, r := range remedy.RemedyCatalogue {
		cited := map[string]bool{}
		for _, p := range r.Proven {
			if cited[p.Fixture] {
				t.Errorf("%s: %s cited twice", r.ID, p.Fixture)
			}
			cited[p.Fixture] = true
			path := outcomeFile(p.Fixture)
			b, err := os.ReadFile("../../" + path)
			if err != nil {
				t.Errorf("%s on %s: no outcome file: %v", r.ID, p.Release, err)
				continue
			}
			var o struct {
				Version  string       `json:"version"`
				Outcomes []ranOutcome `json:"outcomes"`
			}
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if o.Version != p.Release {
				t.Errorf("%s: cites %s for %s, which records a run on %s", r.ID, path, p.Release, o.Version)
			}
			runs := 0
			for _, oc := range o.Outcomes {
				if oc.RemedyID != string(r.ID) || oc.Skipped != "" {
					continue
				}
				runs++
				held, why := heldPromise(r.ID, oc)
				if held == p.Failed {
					t.Errorf("%s on %s: the catalogue says failed=%v, but in %s the promise held=%v %s", r.ID, p.Release, p.Failed, path, held, why)
				}
				if oc.Proven != held {
					t.Errorf("%s on %s: %s says proven=%v, its own record says held=%v %s", r.ID, p.Release, path, oc.Proven, held, why)
				}
				if p.Variant != "" && !slices.Contains(ranVariants(r.ID, oc), p.Variant) {
					t.Errorf("%s on %s: cited for %q, but %s carried out %q", r.ID, p.Release, p.Variant, path, ranVariants(r.ID, oc))
				}
			}
			if runs != 1 {
				t.Errorf("%s on %s: %s holds %d runs of it, the catalogue counts one", r.ID, p.Release, path, runs)
			}
		}
	}
}

// TestProofPerVariant: a prescription cites only the runs of the variants
// its parameters select: stream-quorum-peer-remove for a stream group
// carries the runs of the stream peer removal (proven) and of the
// scale-down (failed on 2.12.1), each named, for a consumer group none (no
// run carried one out), and its proof line says so.
func TestProofPerVariant(t *testing.T) {
	stream := remedy.Prescribe(remedy.StreamQuorumPeerRemove, remedy.Args{"group": "S-R3F-x", "stream": "S", "replicas": 3, "missing": "a", "removals": []string{"r"}})
	consumer := remedy.Prescribe(remedy.StreamQuorumPeerRemove, remedy.Args{"group": "C-R3F-x", "stream": "S", "replicas": 3, "missing": "a", "removals": []string{"r"}, "consumergroup": true})
	if len(stream.Proven) == 0 {
		t.Fatal("no run cited for a stream group")
	}
	for _, p := range stream.Proven {
		if !strings.HasPrefix(p.Variant, "for a stream group, ") {
			t.Errorf("a stream group's prescription cites a run of %q", p.Variant)
		}
	}
	if len(consumer.Proven) != 0 {
		t.Errorf("a consumer group's prescription cites %d runs, none carried one out", len(consumer.Proven))
	}
	if line := remedy.ProofLine(consumer.Proven); !strings.HasPrefix(line, "Not proven by execution") {
		t.Errorf("consumer group: %q", line)
	}
	line := remedy.ProofLine(stream.Proven)
	if !strings.HasPrefix(line, "For a stream group, by stream peer removal: proven by execution on nats-server ") || !strings.HasSuffix(line, "nor any other way.") ||
		!strings.Contains(line, "For a stream group, by scale-down: carried out on nats-server 2.12.1 (1 run) and failed") {
		t.Errorf("stream group: %q", line)
	}
	mixed := remedy.ProofLine([]report.RemedyProof{{Version: "2.12.15"}, {Version: "2.15.3"}, {Version: "2.15.3"}, {Version: "2.10.27", Failed: true}})
	if want := "Proven by execution on nats-server 2.12.15 and 2.15.3 (3 runs); failed on 2.10.27 (1 run). Not proven on any other version."; mixed != want {
		t.Errorf("got %q, want %q", mixed, want)
	}
	failed := remedy.ProofLine([]report.RemedyProof{{Version: "2.10.27", Failed: true, Variant: "for a stream group, by scale-down"}})
	if want := "For a stream group, by scale-down: carried out on nats-server 2.10.27 (1 run) and failed: its check did not hold. Not proven on any other version, nor any other way."; failed != want {
		t.Errorf("got %q, want %q", failed, want)
	}
}

// TestReaddRuns: the committed runs of a removed meta peer that talks raft
// again (testdata/gen `go run . readd`) agree with readdsRemovedMetaPeer.
func TestReaddRuns(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/remedies/readd-*.json")
	if len(files) == 0 {
		t.Fatal("no readd runs committed")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Version string `json:"version"`
			ReAdded bool   `json:"re_added"`
			Error   string `json:"error"`
			Polls   []struct {
				Since string `json:"since_removal"`
			} `json:"polls"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if o.Error != "" || len(o.Polls) == 0 {
			t.Errorf("%s: the run failed: %s", f, o.Error)
			continue
		}
		watched, _ := time.ParseDuration(o.Polls[len(o.Polls)-1].Since)
		if !o.ReAdded && watched < 6*time.Minute {
			t.Errorf("%s: watched %v only, short of the 5 min timeout", f, watched)
		}
		yes, known := remedy.ReaddsRemovedMetaPeer(strings.TrimPrefix(o.Version, "v"))
		if !known || yes != o.ReAdded {
			t.Errorf("%s: readdsRemovedMetaPeer(%s) = %v (known %v), the servers re-added it: %v", f, o.Version, yes, known, o.ReAdded)
		}
	}
}

// TestMetaSnapStartOrderRuns: every committed run of meta-snapshot-move-aside
// that followed the start order metaSnapStartOrder gives its version
// recovered, and every run that took the other order did not. Where it
// cannot tell (""), the runs of that version show no order that recovered
// every time while the other never did.
func TestMetaSnapStartOrderRuns(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/remedies/metasnap-*.json")
	more, _ := filepath.Glob("../../testdata/bundles/metasnap-*/remedy-outcome.json")
	files = append(files, more...)
	runs := 0
	// untold[version][order] = {proven, failed} for versions without a rule.
	untold := map[string]map[string][2]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Version  string `json:"version"`
			Outcomes []struct {
				RemedyID string   `json:"remedy_id"`
				Steps    []string `json:"steps"`
				Proven   bool     `json:"proven"`
			} `json:"outcomes"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, oc := range o.Outcomes {
			if oc.RemedyID != "meta-snapshot-move-aside" || len(oc.Steps) == 0 {
				continue
			}
			runs++
			last := oc.Steps[len(oc.Steps)-1]
			order := "together"
			if strings.Contains(last, "then started") {
				order = "stagger"
			}
			want := store.MetaSnapStartOrder(o.Version)
			if want == "" {
				if untold[o.Version] == nil {
					untold[o.Version] = map[string][2]int{}
				}
				c := untold[o.Version][order]
				if oc.Proven {
					c[0]++
				} else {
					c[1]++
				}
				untold[o.Version][order] = c
				continue
			}
			if (order == want) != oc.Proven {
				t.Errorf("%s: %s started %s (%s): proven %v, but metaSnapStartOrder says %q", f, o.Version, order, last, oc.Proven, want)
			}
		}
	}
	for v, byOrder := range untold {
		for order, c := range byOrder {
			other := byOrder[map[string]string{"stagger": "together", "together": "stagger"}[order]]
			if c[0] > 0 && c[1] == 0 && other[0] == 0 && other[1] > 0 {
				t.Errorf("%s: %s recovered in %d runs of %d and the other order in none of %d, but metaSnapStartOrder cannot tell", v, order, c[0], c[0], other[1])
			}
		}
	}
	if runs < 6 {
		t.Errorf("%d runs of meta-snapshot-move-aside committed, want at least 6", runs)
	}
}

// remedyProofTable is README's remedy × release table, computed from the
// catalogue: a row per remedy with a destructive action or a cited run
// (per variant where it has several), a column per release any run was
// on; a cell says "proven" or "failed" (with the count of runs where more
// than one), "–" where no run was on that release.
func remedyProofTable() string {
	var rels []string
	for _, r := range remedy.RemedyCatalogue {
		for _, p := range r.Proven {
			rels = model.AppendUnique(rels, p.Release)
		}
	}
	slices.SortFunc(rels, func(a, b string) int {
		a1, a2, a3, _ := releases.ParseVersion(a)
		b1, b2, b3, _ := releases.ParseVersion(b)
		if a1 != b1 {
			return a1 - b1
		}
		if a2 != b2 {
			return a2 - b2
		}
		return a3 - b3
	})
	var sb strings.Builder
	sb.WriteString("| remedy | " + strings.Join(rels, " | ") + " |\n|---|" + strings.Repeat("---|", len(rels)) + "\n")
	for _, r := range remedy.RemedyCatalogue {
		destroys := false
		for _, s := range r.Steps {
			destroys = destroys || s.Destroys
		}
		if !destroys && len(r.Proven) == 0 {
			continue
		}
		ways := []string{""}
		if len(r.Variants) > 0 {
			ways = nil
			for _, v := range r.Variants {
				ways = append(ways, v.Name)
			}
		}
		for _, way := range ways {
			name := "`" + string(r.ID) + "`"
			if way != "" {
				name += " (" + way + ")"
			}
			cells := []string{name}
			for _, rel := range rels {
				ok, failed := 0, 0
				for _, p := range r.Proven {
					if p.Release != rel || p.Variant != way {
						continue
					}
					if p.Failed {
						failed++
					} else {
						ok++
					}
				}
				var parts []string
				for _, c := range []struct {
					n    int
					word string
				}{{ok, "proven"}, {failed, "failed"}} {
					switch {
					case c.n == 1:
						parts = append(parts, c.word)
					case c.n > 1:
						parts = append(parts, fmt.Sprintf("%s ×%d", c.word, c.n))
					}
				}
				if len(parts) == 0 {
					parts = []string{"–"}
				}
				cells = append(cells, strings.Join(parts, ", "))
			}
			sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
	}
	return sb.String()
}

// TestREADMERemedyProofTable: README's remedy × release table is the one
// the catalogue's cited runs give (JSF_WRITE_README=1 rewrites it).
func TestREADMERemedyProofTable(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const open, end = "<!-- remedy-proof-table -->\n", "<!-- end remedy-proof-table -->"
	i, j := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README has no remedy-proof-table markers")
	}
	want := remedyProofTable()
	if got := s[i+len(open) : j]; got != want {
		if os.Getenv("JSF_WRITE_README") != "" {
			if err := os.WriteFile(path, []byte(s[:i+len(open)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README's remedy × release table is not the catalogue's; want:\n%s", want)
	}
	for _, cell := range []string{"proven", "failed", "–"} {
		if !strings.Contains(want, "| "+cell) {
			t.Errorf("the table shows no %q cell", cell)
		}
	}
}

// TestPromisesCurrentAsRunner: the runner (testdata/gen remedyrun.go)
// decides which verify steps promise current replicas with the same
// pattern as heldPromise, and it picks the entries whose step says so.
func TestPromisesCurrentAsRunner(t *testing.T) {
	b, err := os.ReadFile("../../testdata/gen/remedyrun.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "regexp.MustCompile(`"+promisesCurrentRE.String()+"`)") {
		t.Errorf("testdata/gen remedyrun.go does not use the pattern %q", promisesCurrentRE)
	}
	for id, want := range map[remedy.ID]bool{
		remedy.StreamQuorumPeerRemove: true, remedy.ReplicaGapStart: true, remedy.StoreBlockResurrected: true,
		remedy.MetaSnapshotMoveAside: true, remedy.DepartedServerRemove: false, remedy.MetaQuorumRescue: false, remedy.StoreEmptyFolder: false,
	} {
		if got := promisesCurrent(id); got != want {
			t.Errorf("%s: promises current replicas %v, want %v", id, got, want)
		}
	}
}
