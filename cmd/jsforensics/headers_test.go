package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		pairs  []headerPair
		byName map[string][]string
	}{
		{
			name:   "in stored order",
			in:     "NATS/1.0\r\nNats-TTL: 1h\r\nNats-Rollup: sub\r\n\r\n",
			pairs:  []headerPair{{"Nats-TTL", "1h"}, {"Nats-Rollup", "sub"}},
			byName: map[string][]string{"Nats-TTL": {"1h"}, "Nats-Rollup": {"sub"}},
		},
		{
			name:   "a value holding colons is cut at the first",
			in:     "NATS/1.0\r\nX: a:b:c\r\n\r\n",
			pairs:  []headerPair{{"X", "a:b:c"}},
			byName: map[string][]string{"X": {"a:b:c"}},
		},
		{
			name:   "a repeated name keeps both values, in order",
			in:     "NATS/1.0\r\nX: 1\r\nY: y\r\nX: 2\r\n\r\n",
			pairs:  []headerPair{{"X", "1"}, {"Y", "y"}, {"X", "2"}},
			byName: map[string][]string{"X": {"1", "2"}, "Y": {"y"}},
		},
		{
			name:   "the status line is not a header",
			in:     "NATS/1.0 503 No Responders\r\nNats-Msg-Id: a\r\n\r\n",
			pairs:  []headerPair{{"Nats-Msg-Id", "a"}},
			byName: map[string][]string{"Nats-Msg-Id": {"a"}},
		},
		{
			name:   "spaces around names and values are trimmed, case kept",
			in:     "NATS/1.0\r\n  kv-operation :  DEL  \r\n\r\n",
			pairs:  []headerPair{{"kv-operation", "DEL"}},
			byName: map[string][]string{"kv-operation": {"DEL"}},
		},
		{
			name:  "an empty value is a value",
			in:    "NATS/1.0\r\nX:\r\n\r\n",
			pairs: []headerPair{{"X", ""}}, byName: map[string][]string{"X": {""}},
		},
		{name: "no header after the version line", in: "NATS/1.0\r\n\r\n"},
		{name: "the version line alone", in: "NATS/1.0"},
		{name: "empty", in: ""},
		{name: "not a header block", in: "garbage\r\nX: 1\r\n\r\n"},
		{name: "an older version line", in: "NATS/0.9\r\nX: 1\r\n\r\n"},
		{name: "a line without a colon", in: "NATS/1.0\r\nX: 1\r\nbroken\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseHeaders([]byte(tc.in))
			if diff := cmp.Diff(tc.pairs, got); diff != "" {
				t.Errorf("parseHeaders(%q) (-want +got):\n%s", tc.in, diff)
			}
			if diff := cmp.Diff(tc.byName, headersByName(got)); diff != "" {
				t.Errorf("headersByName (-want +got):\n%s", diff)
			}
		})
	}
}
