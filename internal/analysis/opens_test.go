package analysis

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// TestAnalysisOpensEachFileOnce runs a whole analysis (inventory, load,
// checks) of every committed bundle, in every form, through a counting FS:
// every file is opened at most once (peers.idx, meta.inf, meta.sum, index.db,
// message and WAL blocks, captures and audit entries, configs, logs and ack
// logs), with no exception.
func TestAnalysisOpensEachFileOnce(t *testing.T) {
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
				twice = append(twice, fmt.Sprintf("%s (%d times)", p, n))
			}
			sort.Strings(twice)
			for _, p := range twice {
				t.Errorf("%s: %s opened more than once", name, p)
			}
		}
	}
}
