package analysis

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// readAgain are the files an analysis opens more than once today, by a
// pattern of their base name (path.Match), each with the places that open
// it again. Each entry is to go when the readers it names read their file
// once (issue 16): the test fails for an entry no committed bundle needs
// any more, so the list only shrinks.
var readAgain = map[string]string{
	// load_replicas.go compareReplicas reads blocks again for a window's
	// digests (storeparse digest.go) where two copies of a stream differ.
	"*.blk": "load_replicas.go digests",
}

// TestAnalysisOpensEachFileOnce runs a whole analysis (inventory, load,
// checks) of every committed bundle, in every form, through a counting FS:
// every file is opened at most once, but for the files readAgain lists.
func TestAnalysisOpensEachFileOnce(t *testing.T) {
	needed := map[string]bool{}
	for _, fx := range fixtures(t) {
		keys := fixtureKeys(t, fx)
		for _, form := range fx.forms {
			name := fx.name + "/" + filepath.Base(form)
			b, c, err := bundle.OpenCounted(form, bundle.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			m := LoadWith(b, Options{Keys: keys})
			Build(m, Checks, nil)
			b.Close()
			opens := c.Opens()
			if len(opens) == 0 {
				t.Errorf("%s: the analysis opened no file through the bundle's FS", name)
			}
			var twice []string
			for p, n := range opens {
				if n < 2 {
					continue
				}
				if pat := againPattern(path.Base(p)); pat != "" {
					needed[pat] = true
					continue
				}
				twice = append(twice, fmt.Sprintf("%s (%d times)", p, n))
			}
			sort.Strings(twice)
			for _, p := range twice {
				t.Errorf("%s: %s opened more than once", name, p)
			}
		}
	}
	for pat, where := range readAgain {
		if !needed[pat] {
			t.Errorf("readAgain lists %s (%s), which no committed bundle opens twice now: remove the entry", pat, where)
		}
	}
}

// againPattern is the readAgain pattern base matches, "" for none.
func againPattern(base string) string {
	for pat := range readAgain {
		if ok, _ := path.Match(pat, base); ok {
			return pat
		}
	}
	return ""
}
