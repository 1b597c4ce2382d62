package analysis

import (
	"os"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// BenchmarkBigCluster analyzes the healthy bundle at $JSF_CLUSTER_BUNDLE
// (made on demand by `cd testdata/gen && go run . cluster -out DIR`; the
// bundle is DIR/bundle: three v2.15.2 servers, thousands of streams, KV
// buckets and consumers, one R3 stream of millions of messages). Every
// message checksum is verified; the run fails on any finding at warning or
// above (the servers were healthy: one would be a false alarm). Set its
// figures beside the `servers_up` lines the generator prints.
func BenchmarkBigCluster(b *testing.B) {
	dir := os.Getenv("JSF_CLUSTER_BUNDLE")
	if dir == "" {
		b.Skip("JSF_CLUSTER_BUNDLE is not set (see testdata/gen README, `cluster`)")
	}
	defer usage(b)()
	for b.Loop() {
		rep, err := Run(dir, Options{ToolVersion: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Severity == report.Critical || f.Severity == report.Warning {
				b.Errorf("false alarm on a healthy cluster: %s %s %s/%s: %s", f.Severity, f.Code, f.Account, f.Stream, f.Message)
			}
		}
		if b.N == 1 {
			b.Logf("%d servers, %d streams, %d findings", len(rep.Servers), len(rep.Streams), len(rep.Findings))
		}
	}
}
