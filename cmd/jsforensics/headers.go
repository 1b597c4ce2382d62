package main

import "strings"

// The one reader of a message's NATS header block, for `dump blk` (every
// header in stored order) and extract (headers by name).
//
//	NATS/1.0[ <status>[ <description>]]\r\n
//	<Name>: <value>\r\n      (repeated; a name may come again)
//	\r\n
//
// Names keep the case they were stored with.

// headerPair is one header line.
type headerPair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// parseHeaders reads a NATS header block into its lines in stored order,
// names and values trimmed of spaces; the status line is skipped. It returns
// nil when h is not a header block (no NATS/1.0 version line, or a line
// without a colon) or holds no header.
func parseHeaders(h []byte) []headerPair {
	text, ok := strings.CutPrefix(string(h), "NATS/1.0")
	if !ok {
		return nil
	}
	lines := strings.Split(text, "\r\n")
	var out []headerPair
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			return nil
		}
		out = append(out, headerPair{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// headersByName groups pairs by name, values in stored order (as
// nats.Header holds them); nil for none.
func headersByName(pairs []headerPair) map[string][]string {
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string][]string, len(pairs))
	for _, p := range pairs {
		out[p.Name] = append(out[p.Name], p.Value)
	}
	return out
}
