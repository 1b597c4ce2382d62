package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReplicaComparison analyzes the bundle at $JSF_REPLICA_BUNDLE
// (made on demand by `cd testdata/gen && go run . replicas -out DIR`; the
// bundle is DIR/diverged, one folder per server): "three" is the whole
// bundle, every copy of the R3 stream compared message by message; "one-at-
// a-time" analyzes each server's folder alone, in turn. The diverging
// sequence must be reported with the servers on each side. Metrics: CPU
// seconds per op (the machine is shared, wall time overstates the cost) and
// the process's peak RSS so far (run one sub-benchmark per process).
func BenchmarkReplicaComparison(b *testing.B) {
	dir := os.Getenv("JSF_REPLICA_BUNDLE")
	if dir == "" {
		b.Skip("JSF_REPLICA_BUNDLE is not set (see testdata/gen README, `replicas`)")
	}
	b.Run("three", func(b *testing.B) {
		defer usage(b)()
		for b.Loop() {
			rep, err := Run(dir, Options{ToolVersion: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			found := false
			for _, f := range rep.Findings {
				if f.Code == "replica-divergence" {
					found = true
					b.Logf("%s > %s: %s", f.Account, f.Stream, strings.Join(f.Evidence, "; "))
				}
			}
			if !found {
				b.Fatal("no replica-divergence reported")
			}
		}
	})
	b.Run("one-at-a-time", func(b *testing.B) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer usage(b)()
		for b.Loop() {
			for _, e := range ents {
				if !e.IsDir() {
					continue
				}
				if _, err := Run(filepath.Join(dir, e.Name()), Options{ToolVersion: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// usage starts measuring CPU time; the function it returns reports it per
// op, with the peak RSS (getrusage).
func usage(b *testing.B) func() { return usageOf(b, syscall.RUSAGE_SELF) }

// usageOf is usage for who (RUSAGE_SELF, or RUSAGE_CHILDREN: the child
// processes that ended meanwhile, whose peak RSS is not reported).
func usageOf(b *testing.B, who int) func() {
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(who, &ru0)
	return func() {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil || b.N == 0 {
			return
		}
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		if who == syscall.RUSAGE_SELF {
			b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
		}
	}
}
