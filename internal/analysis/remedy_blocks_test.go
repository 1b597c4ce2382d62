package analysis

import (
	"strings"
	"testing"
)

// TestBlockRemedyFollowsRuns: the block remedies say what the runs of
// testdata/gen `remedies` on these bundles showed. acked-lost-v2.11.17:
// every replica lost 211-240, so no rebuild is prescribed (the rebuilt
// replica came back without them); perturbed-replica-v2.10.27: the rebuild
// names the scale to R2 and back, and the resurrected block's check says a
// 2.10 replica did not catch up; on 2.12.15 it says the replica took the
// leader's state.
func TestBlockRemedyFollowsRuns(t *testing.T) {
	for _, c := range []struct {
		bundle, remedy string
		destructive    bool
		want, not      []string
	}{
		{"../../testdata/bundles/acked-lost-v2.11.17/bundle", "store-block-lost", false,
			[]string{"no other replica's blocks hold these sequences"}, []string{"stream cluster peer-remove"}},
		{"../../testdata/perturbed/perturbed-replica-v2.10.27/bundle", "store-block-lost", true,
			[]string{"nats stream edit ORDERS --replicas 2", "nats stream edit ORDERS --replicas 3", "2.15.3 refused the removal"}, []string{"Do not peer-remove it"}},
		{"../../testdata/perturbed/perturbed-replica-v2.10.27/bundle", "store-block-resurrected", true,
			[]string{"On 2.10 a replica started on such a block did not catch up", "then R2 and back to R3"}, nil},
		{"../../testdata/perturbed/perturbed-replica-v2.12.15/bundle", "store-block-resurrected", true,
			[]string{"as 2.12.15 and 2.15.3 did"}, []string{"On 2.10"}},
	} {
		rep, err := Run(c.bundle, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.RemedyID != c.remedy {
				continue
			}
			n++
			destructive := false
			for _, s := range f.RemedySteps {
				destructive = destructive || s.Destructive
			}
			if destructive != c.destructive {
				t.Errorf("%s %s on %s: destructive %v, want %v", c.bundle, c.remedy, f.Server, destructive, c.destructive)
			}
			for _, w := range c.want {
				if !strings.Contains(f.Remedy, w) {
					t.Errorf("%s %s: lacks %q: %s", c.bundle, c.remedy, w, f.Remedy)
				}
			}
			for _, w := range c.not {
				if strings.Contains(f.Remedy, w) {
					t.Errorf("%s %s: says %q: %s", c.bundle, c.remedy, w, f.Remedy)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no %s finding", c.bundle, c.remedy)
		}
	}
}
