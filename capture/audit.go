package capture

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// Bounds for `nats audit gather` archives. A gather of a large deployment
// holds a few pages per server and endpoint; these leave ample room while
// keeping a hostile archive (a zip bomb, a million entries) harmless.
const (
	// MaxAuditEntries caps the entries of the zip and of its manifest.
	MaxAuditEntries = 200_000
	// MaxAuditEntryBytes caps one decompressed entry (a /jsz page of 1024
	// accounts' streams fits many times over).
	MaxAuditEntryBytes int64 = 64 << 20
	// MaxAuditTotalBytes caps the decompressed bytes read from one archive.
	MaxAuditTotalBytes int64 = 2 << 30
)

// AuditManifest is the entry path of an audit archive's index.
const AuditManifest = "capture/misc/manifest.json"

const auditMetadata = "capture/misc/audit_gather_metadata.json"

// Artifact types of jsm.go audit/archive (tag.go) and the capture kinds they hold.
var auditKinds = map[string]string{
	"jetstream_info": KindJsz,
	"variables":      KindVarz,
	"health":         KindHealthz,
	"account_raftz":  KindRaftz,
	"gateways":       KindGatewayz,
	"leafs":          KindLeafz,
	"account_info":   KindAccountz,
}

// Audit is what a `nats audit gather` archive holds of interest here.
type Audit struct {
	Metadata *AuditMetadata // nil if the archive has none
	Servers  []AuditServer  // sorted by cluster, then name
	// Clusters are the cluster names of the manifest's tags, each with the
	// servers tagged with it, as natscli's audit enumerates them
	// (archive.Reader ClusterNames, ClusterServerNames): every entry
	// tagged with both counts, whatever its artifact type. Sorted.
	Clusters []AuditCluster
	// Streams are the stream infos per replica (artifact type stream_info),
	// by account, stream, then server.
	Streams []AuditStream
	// Skipped counts manifest entries of other artifact types (connz,
	// profiles…), not read.
	Skipped int
	// Problems are entries that could not be read or decoded, each a
	// *CorruptError naming the entry. What decoded is kept.
	Problems []error
}

// AuditServer is one server's captures, found by the manifest's tags.
type AuditServer struct {
	Cluster  string // "unclustered" for a server outside any cluster
	Name     string
	Captures []Capture // in entry-path order (page 0001 before 0002)
}

// AuditCluster is one cluster tag of a manifest and the servers tagged
// with it.
type AuditCluster struct {
	Name    string
	Servers []string // sorted
}

// AuditStream is one stream info a gather archive holds: the answer of
// one replica (server) of the stream to $JS.API.STREAM.INFO, with its
// consumers (consumer_detail).
type AuditStream struct {
	Account, Stream, Server, Cluster string
	File                             string // entry path in the bundle
	Info                             *StreamDetail
}

// auditStreamInfo is the artifact type of a stream's info per replica.
const auditStreamInfo = "stream_info"

// AuditMetadata is capture/misc/audit_gather_metadata.json.
type AuditMetadata struct {
	CaptureTime            time.Time `json:"capture_timestamp"`
	ConnectedServerName    string    `json:"connected_server_name"`
	ConnectedServerVersion string    `json:"connected_server_version"`
	ConnectURL             string    `json:"connect_url"`
	UserName               string    `json:"user_name"`
	Version                string    `json:"version"`
}

// AuditTag is one tag of a manifest entry (jsm.go audit/archive tag.go).
type AuditTag struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// AuditIndex is a decoded manifest: entry path (relative to the folder
// holding capture/) to its tags.
type AuditIndex map[string][]AuditTag

// Tag gives the value of the tag called name of entry p, "" if none.
func (ix AuditIndex) Tag(p, name string) string {
	for _, t := range ix[p] {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}

// DecodeAuditManifest decodes an audit archive's manifest (AuditManifest):
// a JSON object whose every key is a path under capture/ and every value an
// array of {"Name","Value"} tags.
func DecodeAuditManifest(file string, data []byte) (AuditIndex, error) {
	var ix AuditIndex
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fieldError(file, 0, 1, err)
	}
	if len(ix) == 0 {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrFormat, "no entries: not an audit manifest")
	}
	if len(ix) > MaxAuditEntries {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrTooLarge, "%d manifest entries, more than %d", len(ix), MaxAuditEntries)
	}
	for k := range ix {
		if !isAuditPath(k) {
			return nil, binfmt.Errorf(file, 0, binfmt.ErrFormat, "entry %q is not under capture/: not an audit manifest", k)
		}
	}
	return ix, nil
}

// ReadAuditArchive reads a `nats audit gather` zip held in r: ReadAudit on
// the zip's files.
//
// The error is non-nil only when the archive cannot be read at all (not a
// zip, no manifest); problems with single entries go to Audit.Problems.
func ReadAuditArchive(r io.ReaderAt, size int64) (*Audit, error) {
	const name = "<audit archive>"
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, binfmt.Errorf(name, 0, binfmt.ErrFormat, "not a readable zip: %v", err)
	}
	if len(zr.File) > MaxAuditEntries {
		return nil, binfmt.Errorf(name, 0, binfmt.ErrTooLarge, "%d entries, more than %d", len(zr.File), MaxAuditEntries)
	}
	return ReadAudit(zr, ".")
}

// ReadAudit reads the files of a `nats audit gather` archive (jsm.go
// audit/archive, SPEC.md) under the folder dir of fsys (the folder holding
// capture/: a support bundle's FS, or the zip itself) by its manifest: each
// entry tagged with a server, a cluster and an artifact type of /jsz,
// /varz, /healthz or /raftz is decoded with Decode and filed under its
// server. Each entry holds one pretty-printed system-API answer
// ({"server":…,"data":…}). Errors name files by their path in fsys.
//
// The error is non-nil only when the manifest cannot be read; problems with
// single entries go to Audit.Problems.
func ReadAudit(fsys fs.FS, dir string) (*Audit, error) {
	a := &Audit{}
	budget := MaxAuditTotalBytes
	mpath := path.Join(dir, AuditManifest)
	mb, err := readEntry(fsys, mpath, &budget)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, binfmt.Errorf(mpath, 0, binfmt.ErrFormat, "no %s: not an audit archive", AuditManifest)
	}
	if err != nil {
		return nil, err
	}
	manifest, err := DecodeAuditManifest(mpath, mb)
	if err != nil {
		return nil, err
	}

	mdpath := path.Join(dir, auditMetadata)
	if b, err := readEntry(fsys, mdpath, &budget); err == nil {
		var md AuditMetadata
		if err := json.Unmarshal(b, &md); err != nil {
			a.Problems = append(a.Problems, fieldError(mdpath, 0, 1, err))
		}
		a.Metadata = &md
	} else if !errors.Is(err, fs.ErrNotExist) {
		a.Problems = append(a.Problems, err)
	}

	readAuditEntries(a, fsys, path.Join(dir, "capture"), manifest, &budget, nil)
	return a, nil
}

// Decoded gives the answers of an audit archive's entry that were decoded
// already (by Sniff over the same bytes, with kind as its hint); ok false
// sends AuditOf to read the entry itself.
type Decoded func(file, kind string) (caps []Capture, err error, ok bool)

// EntryKind is the kind of answer the manifest's entry p is read as (its
// artifact_type tag); ok is false for an entry not read (another artifact,
// a stream's, or one no server is tagged for).
func EntryKind(manifest AuditIndex, p string) (kind string, ok bool) {
	if manifest.Tag(p, "artifact_type") == auditStreamInfo && manifest.Tag(p, "stream") != "" && manifest.Tag(p, "server") != "" && isPage(p) {
		return KindStreamInfo, true
	}
	kind, ok = auditKinds[manifest.Tag(p, "artifact_type")]
	if !ok || manifest.Tag(p, "server") == "" || manifest.Tag(p, "stream") != "" {
		return "", false
	}
	return kind, true
}

// DecodeEntry decodes data, the whole content of the audit archive's entry
// file, as an answer of kind (EntryKind): what AuditOf gives reading it from
// the archive, for a reader that already holds its bytes.
func DecodeEntry(file, kind string, data []byte) ([]Capture, error) {
	if int64(len(data)) > MaxAuditEntryBytes {
		return nil, binfmt.Errorf(file, 0, binfmt.ErrTooLarge, "entry of %d bytes, more than %d", len(data), MaxAuditEntryBytes)
	}
	if kind == KindStreamInfo {
		return decodeStreamInfo(file, data)
	}
	return decodeStream(file, kind, bytes.NewReader(data), MaxAuditEntryBytes)
}

// decodeStreamInfo decodes a stream_info entry: one bare JSON object.
func decodeStreamInfo(file string, data []byte) ([]Capture, error) {
	var sd StreamDetail
	if err := json.Unmarshal(data, &sd); err != nil {
		return nil, fieldError(file, 0, 1, err)
	}
	return []Capture{{Kind: KindStreamInfo, StreamInfo: &sd, File: file, Line: 1}}, nil
}

// AuditOf is ReadAudit over a manifest already decoded (Sniff,
// DecodeAuditManifest) of the archive whose capture/ folder is capDir in
// fsys (AuditEntryPath): each entry's answers come from decoded where it
// has them, and only the others are read from fsys. The metadata file is
// not read (Metadata is nil).
//
// capDir, not the folder holding it, because that folder may be outside
// fsys: a bundle that is the archive's capture/ folder itself ("."), as
// when the unpacked archive's one top folder is given.
func AuditOf(fsys fs.FS, capDir string, manifest AuditIndex, decoded Decoded) *Audit {
	a := &Audit{}
	budget := MaxAuditTotalBytes
	readAuditEntries(a, fsys, capDir, manifest, &budget, decoded)
	return a
}

// AuditEntryPath is where the manifest's entry key (a path under
// capture/, DecodeAuditManifest) is in an FS whose folder capDir is the
// archive's capture/ folder.
func AuditEntryPath(capDir, key string) string {
	return path.Join(capDir, strings.TrimPrefix(key, "capture/"))
}

// readAuditEntries files the manifest's entries of the kinds read here
// under their servers, each decoded from fsys (the archive's capture/
// folder at capDir) unless decoded has it.
func readAuditEntries(a *Audit, fsys fs.FS, capDir string, manifest AuditIndex, budget *int64, decoded Decoded) {
	paths := make([]string, 0, len(manifest))
	for p := range manifest {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	servers := map[[2]string]*AuditServer{}
	clusters := map[string][]string{}
	for _, p := range paths {
		tags := map[string]string{}
		for _, t := range manifest[p] {
			tags[t.Name] = t.Value
		}
		if tags["cluster"] != "" && tags["server"] != "" {
			clusters[tags["cluster"]] = append(clusters[tags["cluster"]], tags["server"])
		}
		kind, ok := EntryKind(manifest, p)
		if !ok {
			a.Skipped++
			continue
		}
		file := AuditEntryPath(capDir, p)
		caps, err, ok := []Capture(nil), error(nil), false
		if decoded != nil {
			caps, err, ok = decoded(file, kind)
			// A stream info the sniff decoded as something else (named
			// like a capture in an unpacked archive) is read as one.
			if ok && kind == KindStreamInfo && (len(caps) != 1 || caps[0].StreamInfo == nil) {
				ok = false
			}
		}
		if !ok && *budget <= 0 {
			a.Problems = append(a.Problems, binfmt.Errorf(file, 0, binfmt.ErrTooLarge, "archive decompresses to more than %d bytes; rest not read", MaxAuditTotalBytes))
			break
		}
		if !ok {
			caps, err = decodeEntry(fsys, file, kind, budget)
		}
		if errors.Is(err, fs.ErrNotExist) {
			a.Problems = append(a.Problems, binfmt.Errorf(file, 0, binfmt.ErrTruncated, "listed in the manifest but not in the archive"))
			continue
		}
		if err != nil {
			a.Problems = append(a.Problems, err)
		}
		if kind == KindStreamInfo {
			for _, c := range caps {
				a.Streams = append(a.Streams, AuditStream{Account: tags["account"], Stream: tags["stream"], Server: tags["server"],
					Cluster: tags["cluster"], File: file, Info: c.StreamInfo})
			}
			continue
		}
		key := [2]string{tags["cluster"], tags["server"]}
		s := servers[key]
		if s == nil {
			s = &AuditServer{Cluster: key[0], Name: key[1]}
			servers[key] = s
		}
		for _, c := range caps {
			if c.Kind != kind && c.Kind != KindUnknown {
				a.Problems = append(a.Problems, binfmt.Errorf(file, c.Offset, binfmt.ErrFormat, "tagged %s but holds a %s answer", tags["artifact_type"], c.Kind))
				continue
			}
			if c.Server.Name == "" {
				c.Server.Name = s.Name
			}
			if c.Server.Cluster == "" && s.Cluster != "unclustered" {
				c.Server.Cluster = s.Cluster
			}
			s.Captures = append(s.Captures, c)
		}
	}
	for _, s := range servers {
		a.Servers = append(a.Servers, *s)
	}
	for _, c := range slices.Sorted(maps.Keys(clusters)) {
		names := clusters[c]
		slices.Sort(names)
		a.Clusters = append(a.Clusters, AuditCluster{Name: c, Servers: slices.Compact(names)})
	}
	sort.Slice(a.Servers, func(i, j int) bool {
		if a.Servers[i].Cluster != a.Servers[j].Cluster {
			return a.Servers[i].Cluster < a.Servers[j].Cluster
		}
		return a.Servers[i].Name < a.Servers[j].Name
	})
}

// isPage says whether entry p is a page of an artifact (NNNN.json), the
// only entries natscli's audit reads (archive.ForEachTaggedArtifact).
func isPage(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".json") && len(base) == len("0001.json")
}

// Raftz merges the server's /raftz captures (the archive holds one per
// account) into one answer. A group seen twice keeps the later page.
func (s *AuditServer) Raftz() Raftz {
	out := Raftz{}
	for _, c := range s.Captures {
		if c.Raftz == nil {
			continue
		}
		for acc, groups := range *c.Raftz {
			if out[acc] == nil {
				out[acc] = map[string]RaftzGroup{}
			}
			for n, g := range groups {
				out[acc][n] = g
			}
		}
	}
	return out
}

// Captures lists every capture of the archive, server by server.
func (a *Audit) Captures() []Capture {
	var out []Capture
	for _, s := range a.Servers {
		out = append(out, s.Captures...)
	}
	return out
}

// budgetReader charges what is read against the archive's byte budget.
type budgetReader struct {
	r      io.Reader
	budget *int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	*b.budget -= int64(n)
	return n, err
}

// openEntry opens file of fsys, refusing one whose size is past
// MaxAuditEntryBytes, and charges what is read against budget.
func openEntry(fsys fs.FS, file string, budget *int64) (io.ReadCloser, error) {
	f, err := fsys.Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, binfmt.Errorf(file, 0, binfmt.ErrFormat, "%v", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxAuditEntryBytes {
		f.Close()
		return nil, binfmt.Errorf(file, 0, binfmt.ErrTooLarge, "entry of %d bytes, more than %d", fi.Size(), MaxAuditEntryBytes)
	}
	return struct {
		io.Reader
		io.Closer
	}{&budgetReader{r: f, budget: budget}, f}, nil
}

func readEntry(fsys fs.FS, file string, budget *int64) ([]byte, error) {
	rc, err := openEntry(fsys, file, budget)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	// The declared size may lie: read at most one byte past the cap.
	b, err := io.ReadAll(io.LimitReader(rc, MaxAuditEntryBytes+1))
	if err != nil {
		return b, zipError(file, int64(len(b)), err)
	}
	if int64(len(b)) > MaxAuditEntryBytes {
		return nil, binfmt.Errorf(file, MaxAuditEntryBytes, binfmt.ErrTooLarge, "entry larger than %d bytes", MaxAuditEntryBytes)
	}
	return b, nil
}

func decodeEntry(fsys fs.FS, file, kind string, budget *int64) ([]Capture, error) {
	if kind == KindStreamInfo {
		b, err := readEntry(fsys, file, budget)
		if err != nil {
			return nil, err
		}
		return decodeStreamInfo(file, b)
	}
	rc, err := openEntry(fsys, file, budget)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return decodeStream(file, kind, &zipErrReader{r: rc, name: file}, MaxAuditEntryBytes)
}

// zipErrReader turns a zip checksum failure into a CorruptError.
type zipErrReader struct {
	r    io.Reader
	name string
	n    int64
}

func (z *zipErrReader) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	z.n += int64(n)
	if err != nil && err != io.EOF {
		err = zipError(z.name, z.n, err)
	}
	return n, err
}

func zipError(name string, off int64, err error) error {
	if errors.Is(err, zip.ErrChecksum) {
		return binfmt.Errorf(name, off, binfmt.ErrChecksum, "zip entry CRC-32 mismatch")
	}
	var ce *binfmt.CorruptError
	if errors.As(err, &ce) {
		return err
	}
	return binfmt.Errorf(name, off, binfmt.ErrFormat, "%s", fmt.Sprint(err))
}
