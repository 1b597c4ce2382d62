package analysis

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// extractOffer is an extract command a report offers, as printed.
var extractOffer = regexp.MustCompile(`jsforensics extract BUNDLE --stream '([^'/]+)/([^']+)'(?: --group (\S+))?`)

// offeredExtracts are the streams every finding of rep offers to extract,
// with the finding's code, from its remedy and evidence: account, stream
// and the --group the command names ("" for none).
func offeredExtracts(rep *report.Report) map[[3]string]string {
	out := map[[3]string]string{}
	for _, f := range rep.Findings {
		texts := append([]string{f.Message, f.Remedy}, f.Evidence...)
		for _, s := range f.RemedySteps {
			texts = append(texts, s.Text)
			texts = append(texts, s.Commands...)
		}
		for _, t := range texts {
			for _, m := range extractOffer.FindAllStringSubmatch(t, -1) {
				out[[3]string{m[1], m[2], m[3]}] = f.Code
			}
		}
	}
	return out
}

// TestEveryOfferedExtractYields: salvage is offered only where it yields.
// Every `jsforensics extract` a report offers, run as printed on the same
// bundle, writes at least one message (an offer that writes none sends the
// reader on a search for data that is not there).
func TestEveryOfferedExtractYields(t *testing.T) {
	dirs := committedBundles(t)
	offers := 0
	for _, dir := range dirs {
		rep, err := Run(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for stream, code := range offeredExtracts(rep) {
			offers++
			opts := SalvageOptions{Account: stream[0], Stream: stream[1], Group: stream[2]}
			got, err := Extract(dir, bundle.Limits{}, nil, opts, func(*SalvagedMsg) error { return nil })
			name := strings.TrimPrefix(dir, "../../testdata/")
			switch {
			case err != nil:
				t.Errorf("%s: %s offers extract of %s/%s, which fails: %v", name, code, stream[0], stream[1], err)
			case got.Written == 0:
				t.Errorf("%s: %s offers extract of %s/%s, which writes no message", name, code, stream[0], stream[1])
			}
		}
	}
	if offers < 5 {
		t.Fatalf("only %d extract offers in the committed fixtures", offers)
	}
}

// committedBundles are the committed fixtures' bundles, one form each:
// the folder where there is one, else the archive.
func committedBundles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{bundlesDir, perturbedDir} {
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			for _, form := range []string{"bundle", "bundle.zip", "bundle.tar.gz"} {
				if p := filepath.Join(root, e.Name(), form); exists(p) {
					out = append(out, p)
					break
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no committed bundle")
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
