package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// What `dump blk` says about a record's NATS headers: every header with its
// value, in stored order, and the record kinds the JetStream ones make it
// (names: nats-server stream.go, the JS* header constants).

// headerKinds maps a JetStream header to the kind of record it marks.
var headerKinds = map[string]string{
	"Nats-TTL":             "ttl",           // per-message TTL (allow_msg_ttl, 2.11+)
	"Nats-Marker-Reason":   "delete-marker", // subject delete marker: MaxAge, Purge, Remove (2.11+)
	"Nats-Incr":            "counter",       // counter increment (allow_msg_counter, 2.12+)
	"Nats-Counter-Sources": "counter",
	"Nats-Batch-Id":        "batch", // atomic batch (allow_atomic, 2.12+)
	"Nats-Batch-Sequence":  "batch",
	"Nats-Batch-Commit":    "batch",
	"Nats-Schedule":        "schedule", // message schedule (allow_msg_schedules, 2.12+)
	"Nats-Schedule-TTL":    "schedule",
	"Nats-Schedule-Target": "schedule",
	"Nats-Schedule-Source": "schedule",
	"Nats-Scheduler":       "scheduled", // a message a schedule produced
	"Nats-Schedule-Next":   "scheduled",
	"Nats-Stream-Source":   "sourced", // copied from another stream (sources)
	"Nats-Rollup":          "rollup",
	"Nats-Msg-Id":          "msg-id",
	"KV-Operation":         "kv-op", // KV DEL or PURGE
}

// maxHeaderText bounds one header value on a text line (JSON has it whole).
const maxHeaderText = 120

// describeHeaders is storeparse.DumpOptions.Headers for `dump blk`.
func describeHeaders(hdr, data []byte) (map[string]any, string) {
	pairs := parseHeaders(hdr)
	if pairs == nil {
		return nil, ""
	}
	var kinds []string
	seen := map[string]bool{}
	var parts []string
	for _, p := range pairs {
		v := p.Value
		if len(v) > maxHeaderText {
			v = v[:maxHeaderText] + "…"
		}
		parts = append(parts, fmt.Sprintf("%s=%q", p.Name, v))
		for name, kind := range headerKinds {
			if strings.EqualFold(p.Name, name) && !seen[kind] {
				seen[kind] = true
				kinds = append(kinds, kind)
			}
		}
	}
	fields := map[string]any{"nats_headers": pairs}
	text := "headers " + strings.Join(parts, " ")
	if len(kinds) > 0 {
		fields["kinds"] = kinds
		text += " (" + strings.Join(kinds, ", ") + ")"
	}
	if seen["counter"] {
		// A counter message's body is the running total: {"val":"<n>"}.
		var c struct {
			Val string `json:"val"`
		}
		if json.Unmarshal(data, &c) == nil && c.Val != "" {
			fields["counter_value"] = c.Val
			text += " counter=" + c.Val
		}
	}
	return fields, text
}
