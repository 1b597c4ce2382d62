package storeparse

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const jepsenBundle = "../testdata/bundles/acked-lost-jepsen-v2.15.2/bundle"

// TestScanPayloads: looking for the values a Jepsen-style client published
// in the restarted real servers' copies finds each kept value at the
// sequence the servers served it from (the history's last :fetch, an
// ordered consumer reading 1..last in order), whatever the number of
// workers; values the servers lost are not found.
func TestScanPayloads(t *testing.T) {
	hist, err := os.ReadFile(jepsenBundle + "/client/history.edn")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(hist)), "\n")
	set := map[string]bool{}
	for _, m := range regexp.MustCompile(`:f :publish, :value "([^"]+)"`).FindAllStringSubmatch(string(hist), -1) {
		set[m[1]] = true
	}
	last := lines[len(lines)-1]
	if !strings.Contains(last, ":type :ok") || !strings.Contains(last, ":f :fetch") {
		t.Fatalf("last op is not the read after the restart: %.100s", last)
	}
	var want []PayloadHit
	for i, m := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(last[strings.Index(last, "["):], -1) {
		want = append(want, PayloadHit{Seq: uint64(i + 1), Payload: m[1]})
	}
	if len(want) < 100 || len(set) <= len(want) {
		t.Fatalf("%d values read, %d published", len(want), len(set))
	}
	for _, srv := range []string{"ack-0", "ack-1", "ack-2"} {
		for _, workers := range []int{1, 4} {
			scan, err := ScanStream(os.DirFS(jepsenBundle), "store-"+srv+"/$G/streams/LEDGER", ScanOptions{Payloads: set, Workers: workers, SkipConsumers: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(scan.Payloads, want) || scan.PayloadsCapped {
				t.Errorf("%s, %d workers: %d hits (capped %v), want the %d the servers served", srv, workers, len(scan.Payloads), scan.PayloadsCapped, len(want))
			}
		}
	}
}
