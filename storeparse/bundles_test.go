package storeparse

import (
	"archive/zip"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// The fixtures of this package are the committed bundles under
// ../testdata/bundles, written by real nats-server binaries and rebuilt by
// testdata/gen (`cd testdata/gen && go run . all`). Each bundle's want.json
// names every server's JetStream root (store_dir) and lists what that
// server's /jsz said right before the graceful stop; the /jsz capture itself
// is in the bundle too.

// bundlesRoot holds the committed bundles; $JSF_BUNDLES replaces it with
// bundles the generator wrote with other nats-server versions
// (`go run . healthy@v2.10.27 -out DIR`), never committed.
var bundlesRoot = cmp.Or(os.Getenv("JSF_BUNDLES"), "../testdata/bundles")

// wantStream is a stream of a server in want.json (its /jsz figures).
type wantStream struct {
	Account    string `json:"account"`
	Name       string `json:"name"`
	Replicas   int    `json:"replicas"`
	FirstSeq   uint64 `json:"first_seq"`
	LastSeq    uint64 `json:"last_seq"`
	Messages   uint64 `json:"messages"`
	Bytes      uint64 `json:"bytes"`
	NumDeleted uint64 `json:"num_deleted"`
	Consumers  []struct {
		Name           string `json:"name"`
		AckFloorStream uint64 `json:"ack_floor_stream"`
		DeliveredSeq   uint64 `json:"delivered_stream"`
		NumAckPending  int    `json:"num_ack_pending"`
	} `json:"consumers"`
}

type wantServer struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	StoreDir string            `json:"store_dir"`
	Captures map[string]string `json:"captures"`
	Streams  []wantStream      `json:"streams"`
	// JetStreamDisabled: /jsz said disabled (diskfull-*: its store filled).
	JetStreamDisabled bool `json:"jetstream_disabled"`
}

type wantDoc struct {
	Scenario          string       `json:"scenario"`
	ServerVersion     string       `json:"server_version"`
	Servers           []wantServer `json:"servers"`
	StandaloneServers []wantServer `json:"standalone_servers"`
	StoppedServers    []wantServer `json:"stopped_servers"`
	Expect            struct {
		Encrypted bool `json:"encrypted"`
		StoreCopy struct {
			Live bool `json:"live"`
		} `json:"store_copy"`
		// Missing: consumers the meta layer assigns that no server runs
		// (consumermissing-*: the list API's missing ones); a folder of
		// one is not in /jsz.
		Missing []string `json:"missing"`
		// FullServer: the server whose stream store filled (streamfull-*).
		FullServer string `json:"full_server"`
		// A downgrade (downgrade-*): the release that made the stores, the
		// streams the older release kept offline (its /jsz lists none of
		// them; their index.db is the newer release's), and its meta
		// leader ("" where its meta layer stopped: its /jsz then lists no
		// consumer).
		From       string          `json:"from"`
		MetaLeader string          `json:"meta_leader"`
		Consumer   bool            `json:"consumer"`
		Downgraded json.RawMessage `json:"streams"`
		// Blocks the generator cut (acked-lost-*): "<acc>/<stream>" by
		// the file's folder, and whether the restarted server left the
		// index.db from before the cut.
		Cuts []struct {
			Server    string `json:"server"`
			File      string `json:"file"`
			IndexKept bool   `json:"index_kept"`
		} `json:"cuts"`
		// Unserved (operator-unresolved-*, operator-expired-*): per server,
		// the streams of an account it could not look up, as its /jsz listed
		// them before; on disk untouched, in no /jsz now.
		Unserved map[string][]wantStream `json:"unserved"`
	} `json:"expect"`
}

// bundleStore is one server's JetStream root in a committed bundle.
type bundleStore struct {
	Bundle     string // folder name under testdata/bundles
	Server     string
	Version    string // nats-server version that wrote it (want.json)
	Root       string // OS path of the JetStream root (store_dir)
	JSZ        string // OS path of the server's /jsz capture, "" if none
	Streams    []wantStream
	Standalone bool // not a cluster member (want.json standalone_servers)
	Stopped    bool // down at capture time: no /jsz, no figures
	Encrypted  bool // want.json expect.encrypted
	// Live: the bundle's stores were copied while the servers ran (want.json
	// expect.store_copy.live), so index.db can be older than the blocks.
	Live bool
	// Disabled: the server had disabled JetStream when its store filled
	// (want.json jetstream_disabled): its /jsz lists no stream, and the
	// index.db files it failed to write at the stop are 0 bytes.
	Disabled bool
	// StoreFilled: a stream store of this server filled while JetStream
	// stayed on (streamfull-*); the server then writes a 0-byte index.db at
	// its stop.
	StoreFilled bool
	// Missing: consumers the servers did not load (want.json
	// expect.missing): their folders are not in /jsz.
	Missing []string
	// KeptCut: "<acc>/<stream>" folders whose last block the generator cut
	// and whose index.db the restarted server left from before the cut
	// (acked-lost-v2.11.17): the block ends before what index.db records,
	// and what the server reports of it is its version's rule (the
	// analysis's priorLastSeqs), not the blocks'.
	KeptCut map[string]bool
	// Cut: every "<acc>/<stream>" folder whose block the generator cut,
	// whatever the server did with it after (acked-lost-*, ahead-*).
	Cut map[string]bool
	// Offline: "<acc>/<stream>" folders the older release of a downgrade
	// kept offline, whose index.db FromVersion wrote; MetaStopped: its meta
	// layer stopped (downgrade-consumer-*-to-v2.12.15), so its /jsz lists
	// no consumer.
	Offline     map[string]bool
	FromVersion string
	MetaStopped bool
	// Unserved: streams on disk the server did not load (their account
	// could not be looked up), as its /jsz listed them before.
	Unserved []wantStream
}

func (b bundleStore) String() string { return b.Bundle + "/" + b.Server }

// bundleRoot returns the OS folder holding the files of a bundle: its
// bundle/ folder, or bundle.zip read with archive/zip into a temp dir.
func bundleRoot(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(bundlesRoot, name, "bundle")
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir
	}
	zp := filepath.Join(bundlesRoot, name, "bundle.zip")
	if _, err := os.Stat(zp); err != nil {
		return ""
	}
	return unzipTo(t, zp, t.TempDir())
}

// unzipTo writes every file of the zip archive zp under dst.
func unzipTo(t testing.TB, zp, dst string) string {
	t.Helper()
	zr, err := zip.OpenReader(zp)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		name := path.Clean(f.Name)
		if !fs.ValidPath(name) {
			t.Fatalf("%s: entry %q escapes the archive", zp, f.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", zp, f.Name, err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func readWant(t testing.TB, name string) wantDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundlesRoot, name, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	var w wantDoc
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s/want.json: %v", name, err)
	}
	return w
}

// storesOf lists the JetStream roots of one bundle (cluster members,
// standalone servers, then servers that were down), in want.json order.
func storesOf(t testing.TB, name string) []bundleStore {
	t.Helper()
	w := readWant(t, name)
	var root string
	var out []bundleStore
	add := func(srvs []wantServer, standalone, stopped bool) {
		for _, s := range srvs {
			if s.StoreDir == "" {
				continue
			}
			if root == "" {
				if root = bundleRoot(t, name); root == "" {
					t.Fatalf("%s: want.json names stores but the bundle has no bundle/ or bundle.zip", name)
				}
			}
			bs := bundleStore{Bundle: name, Server: s.Name, Version: s.Version, Streams: s.Streams,
				Root:       filepath.Join(root, filepath.FromSlash(s.StoreDir)),
				Standalone: standalone, Stopped: stopped, Encrypted: w.Expect.Encrypted,
				Live: w.Expect.StoreCopy.Live, Disabled: s.JetStreamDisabled,
				StoreFilled: s.Name == w.Expect.FullServer, Unserved: w.Expect.Unserved[s.Name], Missing: w.Expect.Missing}
			if bs.Version == "" {
				bs.Version = w.ServerVersion
			}
			for _, c := range w.Expect.Cuts {
				if c.Server != s.Name {
					continue
				}
				// <store>/<acc>/streams/<stream>/msgs/<N>.blk
				parts := strings.Split(c.File, "/")
				n := len(parts)
				if n < 5 {
					continue
				}
				key := parts[n-5] + "/" + parts[n-3]
				if bs.Cut == nil {
					bs.Cut = map[string]bool{}
				}
				bs.Cut[key] = true
				// A bundle of the stores as the cut left them (ahead-*-cut:
				// no server started on them since) keeps the index.db from
				// before the cut, whatever the record says of a restart.
				if c.IndexKept || strings.HasSuffix(name, "-cut") {
					if bs.KeptCut == nil {
						bs.KeptCut = map[string]bool{}
					}
					bs.KeptCut[key] = true
				}
			}
			if w.Expect.From != "" {
				bs.FromVersion = w.Expect.From
				bs.MetaStopped = w.Expect.Consumer && w.Expect.MetaLeader == ""
				var streams []struct {
					Account string `json:"account"`
					Name    string `json:"name"`
					Offline bool   `json:"offline"`
				}
				_ = json.Unmarshal(w.Expect.Downgraded, &streams)
				for _, d := range streams {
					if d.Offline && !w.Expect.Consumer {
						if bs.Offline == nil {
							bs.Offline = map[string]bool{}
						}
						bs.Offline[d.Account+"/"+d.Name] = true
					}
				}
			}
			if c := s.Captures["jsz"]; c != "" {
				bs.JSZ = filepath.Join(root, filepath.FromSlash(c))
			}
			if _, err := os.Stat(bs.Root); err != nil {
				t.Fatalf("%s: store_dir of %s: %v", name, s.Name, err)
			}
			out = append(out, bs)
		}
	}
	add(w.Servers, false, false)
	add(w.StandaloneServers, true, false)
	add(w.StoppedServers, false, true)
	return out
}

// bundleNames lists the committed bundles (folders with a want.json).
func bundleNames(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(bundlesRoot, "*", "want.json"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no bundles under %s (%v)", bundlesRoot, err)
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(filepath.Dir(p)))
	}
	slices.Sort(out)
	return out
}

// allStores lists the JetStream roots of every committed bundle.
func allStores(t testing.TB) []bundleStore {
	t.Helper()
	var out []bundleStore
	for _, n := range bundleNames(t) {
		out = append(out, storesOf(t, n)...)
	}
	if len(out) == 0 {
		t.Fatal("no stores in the committed bundles")
	}
	return out
}

// store returns the JetStream root of server srv in bundle name.
func store(t testing.TB, name, srv string) bundleStore {
	t.Helper()
	for _, s := range storesOf(t, name) {
		if s.Server == srv {
			return s
		}
	}
	t.Fatalf("%s has no store for server %s", name, srv)
	return bundleStore{}
}

// onlyEmptyIndex says whether every problem of a scan is an index.db of 0
// bytes (what a server whose store filled leaves), and there is one.
func onlyEmptyIndex(sc *StreamScan) bool {
	for _, p := range sc.Problems {
		var ce *binfmt.CorruptError
		if !errors.As(p, &ce) || path.Base(ce.File) != "index.db" || !errors.Is(ce, binfmt.ErrTruncated) || ce.Offset != 0 {
			return false
		}
	}
	return len(sc.Problems) > 0
}

// streamDirs lists the stream folders (<account>/streams/<name>) of a
// JetStream root, sorted. Empty folders are left out: the server skips them
// ("Missing stream metafile"; the emptyfolders-* bundles hold some, as the
// servers left them).
func streamDirs(t testing.TB, root string) []string {
	t.Helper()
	m, err := fs.Glob(os.DirFS(root), "*/streams/*")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(m, func(d string) bool {
		ents, err := os.ReadDir(filepath.Join(root, d))
		return err == nil && len(ents) == 0
	})
}

// jszDoc is the part of a /jsz capture (accounts=1&streams=1&consumers=1)
// the tests compare with.
type jszDoc struct {
	AccountDetails []struct {
		Name string `json:"name"`
		// ID is the account as the server names it: in operator mode its
		// public key (name is then the JWT's name).
		ID      string            `json:"id"`
		Streams []jszStreamDetail `json:"stream_detail"`
	} `json:"account_details"`
}

type jszStreamDetail struct {
	Name  string `json:"name"`
	State struct {
		Msgs       uint64 `json:"messages"`
		Bytes      uint64 `json:"bytes"`
		FirstSeq   uint64 `json:"first_seq"`
		LastSeq    uint64 `json:"last_seq"`
		NumDeleted uint64 `json:"num_deleted"`
	} `json:"state"`
	Consumers []struct {
		Name      string  `json:"name"`
		AckFloor  SeqPair `json:"ack_floor"`
		Delivered SeqPair `json:"delivered"`
		AckPend   int     `json:"num_ack_pending"`
	} `json:"consumer_detail"`
}

func readJSZ(t testing.TB, p string) jszDoc {
	t.Helper()
	var d jszDoc
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return d
}
