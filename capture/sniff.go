package capture

import (
	"bytes"
	"maps"
	"slices"
	"strings"
)

// KindAuditManifest is what Sniff calls the index of a `nats audit gather`
// archive (AuditManifest): not an answer itself, it says where the answers
// are (ReadAudit).
const KindAuditManifest = "audit-manifest"

// Sniffed is what Sniff learnt of a file it takes for a capture.
type Sniffed struct {
	// Kind is the first answer's kind other than KindUnknown (KindJsz,
	// KindRaftz, KindHealthz, KindVarz), or KindAuditManifest.
	Kind string
	// Shape is "object", "array" or "lines" (JSON lines, or values one after
	// another).
	Shape string
	// Wrapped: natscli / system API envelopes {"server":…,"data":…}.
	Wrapped bool
	// Servers and ServerIDs are the server names and server ids (N… NKeys)
	// the answers state, sorted.
	Servers   []string
	ServerIDs []string
	// Manifest is the decoded index when Kind is KindAuditManifest.
	Manifest AuditIndex
	// Captures and Err are what Decode gives for the same bytes: the
	// answers decoded while sniffing, so that the file need not be read
	// and decoded again. Hint is the kind an empty or failed answer was
	// taken for (from the file's name), as Decode takes it; AnyHint says
	// no answer depended on it (Hint is "" and every value decoded to a
	// known kind by its content), so the answers are also those of a
	// reader that knows the kind otherwise (an audit manifest's tag).
	Captures []Capture
	Err      error
	Hint     string
	AnyHint  bool
}

// Sniff says whether data, the whole content of file, is a monitoring capture
// Decode reads, or an audit archive's manifest. It runs Decode's own reading
// over data, so a file is taken for a capture exactly when Decode gives an
// answer of a known kind from it (a torn last JSON line included); file is
// used as Decode uses it, to place an empty answer.
func Sniff(file string, data []byte) (Sniffed, bool) {
	hint := kindHint(file)
	s := decodeAll(file, hint, bytes.NewReader(data), MaxFileBytes)
	var out Sniffed
	servers, ids := map[string]bool{}, map[string]bool{}
	for _, c := range s.caps {
		if c.Kind == KindUnknown {
			continue
		}
		if out.Kind == "" {
			out.Kind, out.Wrapped = c.Kind, c.Info != nil
		}
		if c.Server.Name != "" {
			servers[c.Server.Name] = true
		}
		if c.Server.ID != "" {
			ids[c.Server.ID] = true
		}
	}
	if out.Kind == "" {
		ix, err := DecodeAuditManifest(file, data)
		if err != nil {
			return Sniffed{}, false
		}
		out.Kind, out.Manifest = KindAuditManifest, ix
	}
	switch {
	case s.values > 1:
		out.Shape = "lines"
	case s.array:
		out.Shape = "array"
	default:
		out.Shape = "object"
	}
	out.Servers, out.ServerIDs = sortedSet(servers), sortedSet(ids)
	if out.Kind != KindAuditManifest {
		out.Captures, out.Err = s.result()
		out.Hint = hint
		out.AnyHint = hint == "" && s.objects == len(s.caps) && !slices.ContainsFunc(s.caps, func(c Capture) bool { return c.Kind == KindUnknown })
	}
	return out, true
}

func sortedSet(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// isAuditPath says whether a manifest key names a file of the archive: jsm.go
// audit/archive keeps every artifact under capture/.
func isAuditPath(k string) bool { return strings.HasPrefix(k, "capture/") }
