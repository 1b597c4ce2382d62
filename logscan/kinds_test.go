package logscan

import (
	"testing"

	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// TestSharedEventKindsInCatalogue: every event kind the analysis acts on as
// a logged one (natsfmt.LogEventKinds) is produced by a catalogue entry, so
// a renamed kind cannot silently stop matching.
func TestSharedEventKindsInCatalogue(t *testing.T) {
	have := map[string]bool{}
	for _, p := range Catalogue() {
		have[p.Kind] = true
	}
	for _, k := range natsfmt.LogEventKinds {
		if !have[string(k)] {
			t.Errorf("no catalogue entry produces %q", k)
		}
	}
}
