package analysis

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/analysis/remedy"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

var (
	// doNotStart is a caveat against starting a server (as it is, or
	// before something is done); reloadMove a move that reloads a running
	// server's config.
	doNotStart = regexp.MustCompile(`(?i)\bdo not (re)?start\b[^.]*`)
	reloadMove = regexp.MustCompile(`(?i)\breload (its|the) config`)
)

// consequences pair what a move's cost step says it causes with what the
// headline of its cause must then name.
var consequences = []struct{ cost, headline *regexp.Regexp }{
	{regexp.MustCompile(`serves those deleted messages again`), regexp.MustCompile(`serves them again`)},
	{regexp.MustCompile(`deletes this copy when its meta layer recovers`), regexp.MustCompile(`deletes them as orphans`)},
}

// TestOneFirstMovePerServer: over every committed fixture, the first
// moves the report gives about one server do not contradict each other:
//   - where one finding's first screen says not to start the server (before
//     something is done, or as it is), every other first screen about that
//     server whose first move starts it carries that caveat too;
//   - a server some finding says is down is not told to reload its config,
//     and where a first screen reloads it, every first screen that starts it
//     says so too;
//   - a consequence the first move of a cause costs (deleted messages
//     served again, orphans deleted) is named by its headline.
func TestOneFirstMovePerServer(t *testing.T) {
	checked := 0
	for _, dir := range committedBundles(t) {
		rep, err := Run(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		name := strings.TrimPrefix(dir, "../../testdata/")
		screens := map[string][]int{} // server -> findings with a first screen
		for i, f := range rep.Findings {
			if f.Server != "" && len(f.RemedySteps) > 0 {
				screens[f.Server] = append(screens[f.Server], i)
			}
		}
		for srv, idx := range screens {
			var caveats []string
			reloads, down := false, ""
			for _, i := range idx {
				f := rep.Findings[i]
				screen := remedy.RemedyFirstStep(f)
				caveats = append(caveats, doNotStart.FindAllString(screen, -1)...)
				reloads = reloads || reloadMove.MatchString(screen)
				if strings.Contains(f.Message, srv+" is down") {
					down = f.Code
				}
			}
			if reloads && down != "" {
				t.Errorf("%s: %s: a first screen reloads its config, while %s says it is down", name, srv, down)
			}
			for _, i := range idx {
				f := rep.Findings[i]
				if !remedy.StartsServer(f) {
					continue
				}
				checked++
				screen := remedy.RemedyFirstStep(f)
				for _, c := range caveats {
					if !strings.Contains(screen, c) {
						t.Errorf("%s: %s %s: its first move starts %s without the caveat another finding gives: %q\nits first screen: %s", name, f.Code, srv, srv, c, screen)
					}
				}
				if reloads && !reloadMove.MatchString(screen) {
					t.Errorf("%s: %s %s: starts it while another finding's first move reloads it: %s", name, f.Code, srv, screen)
				}
			}
		}
		for ci, c := range rep.Diagnosis {
			for _, q := range consequences {
				if q.cost.MatchString(c.FirstStep) && !q.headline.MatchString(c.Summary) {
					t.Errorf("%s: cause %d: its first move costs %q; the headline does not say so: %s", name, ci+1, q.cost, c.Summary)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no first move starts a server in any fixture")
	}
}

// TestResurrectedConsequenceFollowsServer: a block that lost the
// tombstones of deleted messages is said to bring them back exactly where
// the real servers restarted on a copy served them again (standalone,
// perturbed-blocks-*: CUTTOMB), and to have them deleted again where they
// did not (R3 with the other replicas' record, perturbed-tombstones-*).
func TestResurrectedConsequenceFollowsServer(t *testing.T) {
	n := 0
	for dir, o := range loadOracles(t) {
		for _, d := range o.Damage {
			if d.Class != "cut-in-tombstones" {
				continue
			}
			var served []report.Range
			for _, s := range o.Streams {
				if s.Stream == d.Stream && s.After.Served != nil && (o.Mode == "cluster" || s.Server == d.Server) {
					served = s.After.Served
				}
			}
			rep, err := Run(filepath.Join(dir, "bundle"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Code != "store-corrupt" || f.Server != d.Server || f.Stream != d.Stream || !strings.Contains(f.Message, "tombstones") {
					continue
				}
				n++
				again := len(seqset.Of(f.Ranges...).Intersect(seqset.Of(served...))) > 0
				says := strings.Contains(f.Message, "serves them again")
				if again != says {
					t.Errorf("%s: %s %s: the restarted server served the deleted sequences again: %v; the finding says: %s", o.Name, d.Server, d.Stream, again, f.Message)
				}
				if !again && !strings.Contains(f.Message, "deletes them again") {
					t.Errorf("%s: %s: the restarted cluster deleted them again; the finding does not say so: %s", o.Name, d.Server, f.Message)
				}
			}
		}
	}
	if n < 4 {
		t.Fatalf("%d findings on blocks cut inside tombstones, want the standalone and the R3 ones", n)
	}
}
