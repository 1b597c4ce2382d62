package logscan

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkScan scans real logs of the bundles (three versions, one with
// debug on) repeated to about 32 MiB; the figure is bytes of log per second
// on one core.
func BenchmarkScan(b *testing.B) {
	var one []byte
	one = append(one, bundleFile(b, "v2.10.22-per-server", "nats-1.log")...)
	one = append(one, bundleFile(b, "v2.12.1-archive", "support-bundle-20261130/logs/js-b.log")...)
	d, err := os.ReadFile(dialectBase)
	if err != nil {
		b.Fatal(err)
	}
	one = append(one, d...)
	data := bytes.Repeat(one, (32<<20)/len(one)+1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for range b.N {
		s := NewScanner(bytes.NewReader(data), Options{})
		n := 0
		for s.Next() {
			n++
		}
		if n == 0 {
			b.Fatal("no events")
		}
	}
	b.StopTimer()
	// On a shared machine wall time overstates the cost; report the
	// throughput per second of CPU time as well.
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	if cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}
