package bundle

import (
	"bytes"
	"encoding/json"
	"io"
	"path"
	"sort"
	"strings"
)

// Capture kinds.
const (
	KindJsz           = "jsz"
	KindRaftz         = "raftz"
	KindHealthz       = "healthz"
	KindVarz          = "varz"
	KindJszAccount    = "jsz-account"    // one account's AccountDetail (/jsz?acc=, audit account_jetstream_info)
	KindStreamInfo    = "stream-info"    // StreamInfo or StreamDetail of one stream (audit stream_info, nats stream info --json)
	KindAuditManifest = "audit-manifest" // capture/misc/manifest.json of `nats audit gather`
	KindAuditMetadata = "audit-metadata" // capture/misc/audit_gather_metadata.json
)

// Capture is a monitoring JSON file recognised by its keys.
type Capture struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // one of the Kind* constants
	// Shape is "object", "array" or "lines" (JSON lines, or concatenated values).
	Shape string `json:"shape"`
	// Wrapped: natscli `nats server request` envelopes {"server":…,"data":…}.
	Wrapped bool `json:"wrapped,omitempty"`
	// Servers are the server names the content gives (varz server_name,
	// envelope server.name, audit manifest tags), sorted. ServerIDs are the
	// server ID NKeys it gives (jsz/varz server_id, envelope server.id).
	Servers   []string `json:"servers,omitempty"`
	ServerIDs []string `json:"server_ids,omitempty"`
	// NameCandidates: Servers, then names from the path.
	NameCandidates []string `json:"name_candidates"`
}

// maxCaptureBytes bounds the JSON files read whole to classify them; a
// monitoring response of a large deployment is a few MiB.
const maxCaptureBytes = 64 << 20

// maxCaptureValues bounds the JSON values classified in one file (one per
// server in natscli output).
const maxCaptureValues = 10000

// looksJSON says whether prefix starts (after a BOM and white space) like a
// JSON object or array.
func looksJSON(prefix []byte) bool {
	b := bytes.TrimLeft(bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// classifyCapture recognises a monitoring capture in data.
func classifyCapture(data []byte) (Capture, bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	var c Capture
	servers, ids := map[string]bool{}, map[string]bool{}
	n := 0
	for n < maxCaptureValues {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if err != io.EOF && n == 0 {
				return Capture{}, false
			}
			break // JSON lines with a torn last line still count
		}
		n++
		t := bytes.TrimLeft(v, " \t\r\n")
		if len(t) > 0 && t[0] == '[' {
			c.Shape = "array"
			var elems []json.RawMessage
			if json.Unmarshal(v, &elems) != nil {
				continue
			}
			for _, e := range elems {
				c.add(e, servers, ids)
			}
			continue
		}
		c.add(v, servers, ids)
	}
	if c.Kind == "" {
		return Capture{}, false
	}
	switch {
	case n > 1:
		c.Shape = "lines"
	case c.Shape == "":
		c.Shape = "object"
	}
	c.Servers, c.ServerIDs = sortedKeys(servers), sortedKeys(ids)
	return c, true
}

// add classifies one JSON value; the first kind found wins.
func (c *Capture) add(v json.RawMessage, servers, ids map[string]bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil || obj == nil {
		return
	}
	kind, wrapped := classifyObject(obj, servers, ids)
	if kind != "" && c.Kind == "" {
		c.Kind, c.Wrapped = kind, wrapped
	}
}

// classifyObject names the kind of one top-level object and collects the
// server names and ids it states.
func classifyObject(obj map[string]json.RawMessage, servers, ids map[string]bool) (string, bool) {
	if srv, ok := obj["server"]; ok && (has(obj, "data") || has(obj, "error")) {
		var si struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(srv, &si) == nil && (si.Name != "" || si.ID != "") {
			addNonEmpty(servers, si.Name)
			addNonEmpty(ids, si.ID)
			var data map[string]json.RawMessage
			if json.Unmarshal(obj["data"], &data) == nil && data != nil {
				kind, _ := classifyObject(data, servers, ids)
				return kind, true
			}
			return "", true
		}
	}
	switch {
	case has(obj, "server_name") && has(obj, "version") && has(obj, "start"):
		addString(servers, obj["server_name"])
		addString(ids, obj["server_id"])
		return KindVarz, false
	case has(obj, "meta_cluster") || has(obj, "account_details") ||
		(has(obj, "server_id") && has(obj, "config") && has(obj, "streams")):
		addString(ids, obj["server_id"])
		return KindJsz, false
	case has(obj, "name") && has(obj, "id") && has(obj, "api") && has(obj, "ha_assets"):
		return KindJszAccount, false
	case has(obj, "config") && has(obj, "state") && has(obj, "created"):
		return KindStreamInfo, false
	case has(obj, "capture_timestamp") && has(obj, "connected_server_name"):
		return KindAuditMetadata, false
	case isHealthz(obj):
		return KindHealthz, false
	case isRaftz(obj):
		return KindRaftz, false
	case isAuditManifest(obj):
		return KindAuditManifest, false
	}
	return "", false
}

func has(obj map[string]json.RawMessage, k string) bool { _, ok := obj[k]; return ok }

func addNonEmpty(m map[string]bool, s string) {
	if s != "" {
		m[s] = true
	}
}

func addString(m map[string]bool, v json.RawMessage) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		addNonEmpty(m, s)
	}
}

// isHealthz: {"status": "...", "status_code"?, "error"?, "errors"?} and nothing else.
func isHealthz(obj map[string]json.RawMessage) bool {
	var status string
	if json.Unmarshal(obj["status"], &status) != nil || status == "" {
		return false
	}
	for k := range obj {
		switch k {
		case "status", "status_code", "error", "errors":
		default:
			return false
		}
	}
	return true
}

// isRaftz: {"<account>": {"<group>": {"id":…, "term":…, …}}} with every
// group object carrying id and term.
func isRaftz(obj map[string]json.RawMessage) bool {
	groups := 0
	for _, accv := range obj {
		var acc map[string]map[string]json.RawMessage
		if json.Unmarshal(accv, &acc) != nil {
			return false
		}
		for _, g := range acc {
			if g == nil || !has(g, "id") || !has(g, "term") {
				return false
			}
			groups++
		}
	}
	return groups > 0
}

// isAuditManifest: every key is a path under capture/, every value an array
// of {"Name","Value"} tags.
func isAuditManifest(obj map[string]json.RawMessage) bool {
	if len(obj) == 0 {
		return false
	}
	for k, v := range obj {
		if !strings.HasPrefix(k, "capture/") {
			return false
		}
		var tags []auditTag
		if json.Unmarshal(v, &tags) != nil {
			return false
		}
	}
	return true
}

type auditTag struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// auditManifestSuffix is where `nats audit gather` keeps its index (jsm.go
// audit/archive SPEC.md): paths in it are relative to the folder holding
// capture/.
const auditManifestSuffix = "capture/misc/manifest.json"

// applyAuditManifests gives the captures of a `nats audit gather` archive
// the server its manifest tags them with.
func applyAuditManifests(fsys interface {
	ReadFile(string) ([]byte, error)
}, caps []Capture) []Problem {
	var problems []Problem
	byPath := map[string]int{}
	for i, c := range caps {
		byPath[c.Path] = i
	}
	for _, m := range caps {
		if m.Kind != KindAuditManifest || path.Base(m.Path) != "manifest.json" {
			continue
		}
		base := strings.TrimSuffix(m.Path, auditManifestSuffix)
		if base == m.Path {
			continue
		}
		data, err := fsys.ReadFile(m.Path)
		if err != nil {
			problems = append(problems, Problem{Path: m.Path, Reason: "audit manifest unreadable: " + err.Error()})
			continue
		}
		var idx map[string][]auditTag
		if err := json.Unmarshal(data, &idx); err != nil {
			problems = append(problems, Problem{Path: m.Path, Reason: "audit manifest unreadable: " + err.Error()})
			continue
		}
		for k, tags := range idx {
			i, ok := byPath[path.Join(base, k)]
			if !ok {
				continue
			}
			for _, t := range tags {
				if t.Name == "server" && t.Value != "" && !contains(caps[i].Servers, t.Value) {
					caps[i].Servers = append(caps[i].Servers, t.Value)
					sort.Strings(caps[i].Servers)
				}
			}
		}
	}
	return problems
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
