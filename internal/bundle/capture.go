package bundle

import (
	"bytes"
	"path"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/capture"
)

// Capture kinds: those the capture package decodes, as capture.Sniff names
// them.
const (
	KindJsz           = capture.KindJsz
	KindRaftz         = capture.KindRaftz
	KindHealthz       = capture.KindHealthz
	KindVarz          = capture.KindVarz
	KindAuditManifest = capture.KindAuditManifest // capture/misc/manifest.json of `nats audit gather`: read with capture.ReadAudit
)

// Capture is a monitoring JSON file capture.Sniff takes for one.
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

	// Decoded and DecodeErr are the answers the sniff decoded from the
	// whole file (capture.Decode's result): the loader takes them from here
	// and never reads the file again. Hint and AnyHint say which kind an
	// empty answer was taken for (capture.Sniffed). Manifest is the index
	// of an audit manifest (KindAuditManifest).
	Decoded   []capture.Capture  `json:"-"`
	DecodeErr error              `json:"-"`
	Hint      string             `json:"-"`
	AnyHint   bool               `json:"-"`
	Manifest  capture.AuditIndex `json:"-"`
}

// maxCaptureBytes bounds the JSON files read whole to classify them; a
// monitoring response of a large deployment is a few MiB.
const maxCaptureBytes = 64 << 20

// looksJSON says whether prefix starts (after a BOM and white space) like a
// JSON object or array: only then is the file read whole for capture.Sniff.
func looksJSON(prefix []byte) bool {
	b := bytes.TrimLeft(bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// classifyCapture recognises a monitoring capture in data, the content of
// the file at p, by capture.Sniff; an audit manifest comes with its index.
func classifyCapture(p string, data []byte) (Capture, capture.AuditIndex, bool) {
	s, ok := capture.Sniff(p, data)
	if !ok {
		return Capture{}, nil, false
	}
	return Capture{Path: p, Kind: s.Kind, Shape: s.Shape, Wrapped: s.Wrapped, Servers: s.Servers, ServerIDs: s.ServerIDs,
		Decoded: s.Captures, DecodeErr: s.Err, Hint: s.Hint, AnyHint: s.AnyHint, Manifest: s.Manifest}, s.Manifest, true
}

// AuditEntry is an audit archive's entry decoded as its manifest's tag says
// (Bundle.AuditEntries).
type AuditEntry struct {
	Kind      string // capture.EntryKind's
	Decoded   []capture.Capture
	DecodeErr error
}

// isAuditManifest says whether p is named like an audit archive's manifest
// (AuditCaptureDir accepts it).
func isAuditManifest(p string) bool {
	return p == auditRootManifest || p == capture.AuditManifest || strings.HasSuffix(p, "/"+capture.AuditManifest)
}

// auditRootManifest is where an audit archive's manifest is in a bundle that
// is the archive's capture/ folder itself: the unpacked archive's one top
// folder, given as the bundle.
var auditRootManifest = strings.TrimPrefix(capture.AuditManifest, "capture/")

// auditTag gives the kind the manifests sniffed so far tag p with, as an
// entry of their archive that capture.AuditOf reads (capture.EntryKind).
func (b *Bundle) auditTag(p string) (string, bool) {
	for mp, ix := range b.manifests {
		dir, ok := AuditCaptureDir(Capture{Path: mp, Kind: KindAuditManifest})
		if !ok {
			continue
		}
		rel := p
		if dir != "." {
			var cut bool
			if rel, cut = strings.CutPrefix(p, dir+"/"); !cut {
				continue
			}
		}
		if kind, ok := capture.EntryKind(ix, "capture/"+rel); ok {
			return kind, true
		}
	}
	return "", false
}

// AuditCaptureDir gives the capture/ folder of a `nats audit gather`
// archive whose manifest is c (KindAuditManifest), the folder
// capture.AuditOf takes: "<dir>/capture" for a manifest at
// <dir>/capture/misc/manifest.json, "." for one at misc/manifest.json (the
// bundle is the archive's capture/ folder); ok is false for a manifest found
// elsewhere.
func AuditCaptureDir(c Capture) (string, bool) {
	if c.Kind != KindAuditManifest {
		return "", false
	}
	if c.Path == auditRootManifest {
		return ".", true
	}
	dir := strings.TrimSuffix(c.Path, capture.AuditManifest)
	if dir == c.Path || (dir != "" && !strings.HasSuffix(dir, "/")) {
		return "", false
	}
	return path.Join(dir, "capture"), true
}

// applyAuditManifests gives the captures of a `nats audit gather` archive
// the server its manifest tags them with. manifests holds each manifest's
// decoded index by its path, read when it was sniffed.
func applyAuditManifests(manifests map[string]capture.AuditIndex, caps []Capture) {
	byPath := map[string]int{}
	for i, c := range caps {
		byPath[c.Path] = i
	}
	for _, m := range caps {
		dir, ok := AuditCaptureDir(m)
		idx := manifests[m.Path]
		if !ok || idx == nil {
			continue
		}
		for k := range idx {
			i, ok := byPath[capture.AuditEntryPath(dir, k)]
			if !ok {
				continue
			}
			if srv := idx.Tag(k, "server"); srv != "" && !contains(caps[i].Servers, srv) {
				caps[i].Servers = append(caps[i].Servers, srv)
				sort.Strings(caps[i].Servers)
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
