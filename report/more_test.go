package report

import (
	"slices"
	"testing"
)

func TestFirstOf(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for _, tc := range []struct {
		n     int
		first []string
		join  string
	}{
		{3, []string{"a", "b", "c"}, "a, b, c"},
		{5, []string{"a", "b", "c"}, "a, b, c"},
		{2, []string{"a", "b", "and 1 more"}, "a, b and 1 more"},
		{0, []string{"and 3 more"}, " and 3 more"},
	} {
		if got := FirstOf(abc, tc.n); !slices.Equal(got, tc.first) {
			t.Errorf("FirstOf(%d) = %q, want %q", tc.n, got, tc.first)
		}
		if got := JoinFirst(abc, tc.n); got != tc.join {
			t.Errorf("JoinFirst(%d) = %q, want %q", tc.n, got, tc.join)
		}
	}
	if !slices.Equal(abc, []string{"a", "b", "c"}) {
		t.Errorf("FirstOf changed its input: %q", abc)
	}
}
