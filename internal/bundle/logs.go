package bundle

import (
	"github.com/jsforensics/jsforensics/logscan"
)

// Log is a file whose first lines look like nats-server log lines.
type Log struct {
	Path string `json:"path"`
	// Format names the envelope around the nats-server lines, as logscan
	// names it (Event.Dialect): "nats" (as the server writes them),
	// "kubectl", "docker" or "syslog".
	Format     string `json:"format"`
	Compressed bool   `json:"compressed,omitempty"` // gzip
	Rotated    bool   `json:"rotated,omitempty"`    // name carries nats-server's rotation suffix
	// From the first startup banner in the sniffed prefix (formats.md 9.2),
	// empty when none was seen.
	Name    string `json:"name,omitempty"`
	Node    string `json:"node,omitempty"` // raft node id
	Version string `json:"version,omitempty"`
	Cluster string `json:"cluster,omitempty"`
	Pod     string `json:"pod,omitempty"` // from a kubectl --prefix "[pod/<pod>/<container>] "
	// NameCandidates: the banner name, the pod, then names from the path.
	NameCandidates []string `json:"name_candidates"`
}

// sniffBytes bounds how much of each file is read to recognise it (after
// gzip decompression for a compressed log); the banner is looked for only in
// that prefix.
const sniffBytes = 256 << 10

// sniffLog decides, by logscan's own reading (logscan.Sniff), whether prefix
// (the first bytes of a file, decompressed) is a nats-server log, and fills
// what its first banner says. full says prefix is the whole file.
func sniffLog(prefix []byte, full bool) (Log, bool) {
	s, ok := logscan.Sniff(prefix, full)
	if !ok {
		return Log{}, false
	}
	return Log{Format: s.Dialect, Pod: s.Pod, Name: s.Banner.Name, Node: s.Banner.Node,
		Version: s.Banner.Version, Cluster: s.Banner.Cluster}, true
}
