package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestTimelineKindColumn: the kind column is as wide as the report's
// longest kind, so every timeline line's text starts in one column (with a
// kind as long as route-connect-error too); a kind past maxKindWidth is cut
// with … and its text still follows.
func TestTimelineKindColumn(t *testing.T) {
	r := sampleReport()
	t0 := r.Timeline[0].Time
	r.Timeline = append(r.Timeline,
		TimelineEvent{Time: t0.Add(2 * time.Second), Server: "nats-0", Source: "log", Kind: "route-connect-error", Text: "Error trying to connect to route"},
		TimelineEvent{Time: t0.Add(3 * time.Second), Server: "nats-0", Source: "log", Kind: "start", Text: "Starting nats-server"},
	)
	starts := func(r *Report, width int) map[string]int {
		var b bytes.Buffer
		if err := WriteTextWith(&b, r, TextOptions{Width: width}); err != nil {
			t.Fatal(err)
		}
		_, tl, ok := strings.Cut(b.String(), "\nTIMELINE (")
		if !ok {
			t.Fatal("no timeline")
		}
		col := map[string]int{} // text -> column it starts at
		for _, l := range strings.Split(tl, "\n")[1:] {
			for _, e := range r.Timeline {
				if i := strings.Index(l, e.Text); i >= 0 && strings.HasPrefix(l, "  20") {
					col[e.Text] = i
				}
			}
		}
		return col
	}
	for _, width := range []int{0, 100} {
		col := starts(r, width)
		// "  " + time (24) + " " + server (9) + " " + kind (19) + " "
		want := 2 + 24 + 1 + 9 + 1 + len("route-connect-error") + 1
		for _, e := range r.Timeline {
			if e.Count > 0 {
				continue // a run's text follows its "(x3 until …)"
			}
			if c, ok := col[e.Text]; !ok || c != want {
				t.Errorf("width %d: %q starts at column %d (found: %v), want %d", width, e.Text, c, ok, want)
			}
		}
	}

	long := strings.Repeat("k", maxKindWidth+6)
	r.Timeline[len(r.Timeline)-1].Kind = long
	var b bytes.Buffer
	if err := WriteTextWith(&b, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("k", maxKindWidth-1) + "… Starting nats-server"
	if !strings.Contains(b.String(), cut) || strings.Contains(b.String(), long) {
		t.Errorf("a kind of %d characters is not cut to %d:\n%s", len(long), maxKindWidth, b.String())
	}
}
