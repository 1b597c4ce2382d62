package main

// Assembling a bundle from stopped servers: copy store, log and captures
// into a tree shaped by a Layout, then commit it as a directory or as
// .zip/.tar.gz archives (deterministic entry order and times), plus want.json.

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Layout says where each server's pieces go inside a bundle tree.
type Layout struct {
	Kind string // "per-server", "flat", "archive"
	// Top is the single top folder inside archives ("" for directory bundles).
	Top     string
	Store   func(server string) string          // JetStream root, relative to the tree root
	Log     func(server string) string          // log file
	Capture func(server, capture string) string // capture file
	Zip     bool                                // archive: write bundle.zip
	TarGz   bool                                // archive: write bundle.tar.gz
}

// LayoutPerServer: <name>/data/jetstream, <name>.log, captures/<name>/<capture>.json.
func LayoutPerServer() Layout {
	return Layout{Kind: "per-server",
		Store:   func(s string) string { return s + "/data/jetstream" },
		Log:     func(s string) string { return s + ".log" },
		Capture: func(s, c string) string { return "captures/" + s + "/" + c + ".json" },
	}
}

// LayoutFlat: store-<name>/ is the JetStream root, <name>.log, <name>-<capture>.json.
func LayoutFlat() Layout {
	return Layout{Kind: "flat",
		Store:   func(s string) string { return "store-" + s },
		Log:     func(s string) string { return s + ".log" },
		Capture: func(s, c string) string { return s + "-" + c + ".json" },
	}
}

// LayoutArchive: <top>/servers/<name>/jetstream, <top>/logs/<name>.log, <top>/monitoring/<name>/<capture>.json.
func LayoutArchive(top string, zipIt, tarIt bool) Layout {
	return Layout{Kind: "archive", Top: top, Zip: zipIt, TarGz: tarIt,
		Store:   func(s string) string { return top + "/servers/" + s + "/jetstream" },
		Log:     func(s string) string { return top + "/logs/" + s + ".log" },
		Capture: func(s, c string) string { return top + "/monitoring/" + s + "/" + c + ".json" },
	}
}

// Bundle collects what goes into one committed bundle.
type Bundle struct {
	Name    string
	Version string // server version reported in want.json ("2.15.2"); mixed: comma list
	Layout  Layout
	Servers []*Server
	// Stopped servers have their store and log copied into the tree (same
	// Layout) but no captures and no want.json entry: members that were down
	// when the live servers were captured.
	Stopped []*Server
	// Standalone servers (no cluster block, no raft) are bundled like
	// Servers (store, log, captures) but listed in want.json
	// standalone_servers, apart from the cluster's members.
	Standalone []*Server
	Captures   map[string]*Capture
	// StoreRoots optionally replaces a server's JetStream root as the source
	// of its bundled store (server name -> directory), e.g. a copy taken
	// while the server was still running.
	StoreRoots map[string]string
	// Extra files (path relative to the tree root -> bytes), e.g. kubectl logs, poll series.
	Extra  map[string][]byte
	Expect any
	// Prebuilt, when set, is committed verbatim as <name>/<PrebuiltName>
	// (e.g. a `nats audit gather` archive) instead of a tree built from the
	// servers' stores, logs and captures; want.json still comes from the
	// generator's own captures, with empty store_dir/log/captures.
	Prebuilt     []byte
	PrebuiltName string
	// PrebuiltCaptures optionally names, per server, the files inside
	// Prebuilt that hold the equivalent endpoints (want.json "captures").
	PrebuiltCaptures map[string]map[string]string
}

// Write builds the tree in a scratch dir and commits it under outRoot/<name>/.
func (b *Bundle) Write(scratch, outRoot string) error {
	tree := filepath.Join(scratch, "bundle-tree-"+b.Name)
	if err := os.RemoveAll(tree); err != nil {
		return err
	}
	want := Want{Scenario: b.Name, ServerVersion: b.Version, Layout: b.Layout.Kind, Expect: b.Expect}
	standalone := map[*Server]bool{}
	for _, s := range b.Standalone {
		standalone[s] = true
	}
	for _, s := range append(append([]*Server{}, b.Servers...), b.Standalone...) {
		if s.Running() {
			return fmt.Errorf("bundle %s: server %s still running", b.Name, s.Name)
		}
		if b.Prebuilt != nil {
			if b.Captures[s.Name] == nil {
				return fmt.Errorf("bundle %s: no capture for %s", b.Name, s.Name)
			}
			ws, err := wantServer(s, b.Captures[s.Name])
			if err != nil {
				return err
			}
			ws.Captures = map[string]string{}
			for k, v := range b.PrebuiltCaptures[s.Name] {
				ws.Captures[k] = v
			}
			want.Servers = append(want.Servers, ws)
			continue
		}
		if err := copyTree(b.storeRoot(s), filepath.Join(tree, filepath.FromSlash(b.Layout.Store(s.Name)))); err != nil {
			return err
		}
		if err := copyFile(s.LogFile, filepath.Join(tree, filepath.FromSlash(b.Layout.Log(s.Name)))); err != nil {
			return err
		}
		c := b.Captures[s.Name]
		if c == nil {
			return fmt.Errorf("bundle %s: no capture for %s", b.Name, s.Name)
		}
		ws, err := wantServer(s, c)
		if err != nil {
			return err
		}
		ws.StoreDir = b.Layout.Store(s.Name)
		ws.Log = b.Layout.Log(s.Name)
		ws.Captures = map[string]string{}
		for _, n := range c.names() {
			p := b.Layout.Capture(s.Name, n)
			ws.Captures[n] = p
			if err := writeFileAll(filepath.Join(tree, filepath.FromSlash(p)), c.Files[n]); err != nil {
				return err
			}
		}
		if standalone[s] {
			want.Standalone = append(want.Standalone, ws)
			continue
		}
		want.Servers = append(want.Servers, ws)
	}
	for _, s := range b.Stopped {
		if s.Running() {
			return fmt.Errorf("bundle %s: stopped server %s is running", b.Name, s.Name)
		}
		if err := copyTree(b.storeRoot(s), filepath.Join(tree, filepath.FromSlash(b.Layout.Store(s.Name)))); err != nil {
			return err
		}
		if err := copyFile(s.LogFile, filepath.Join(tree, filepath.FromSlash(b.Layout.Log(s.Name)))); err != nil {
			return err
		}
		want.Stopped = append(want.Stopped, WantStopped{Name: s.Name, PeerID: nodeID(s.Name), Cluster: s.Cluster,
			StoreDir: b.Layout.Store(s.Name), Log: b.Layout.Log(s.Name)})
	}
	for p, data := range b.Extra {
		if err := writeFileAll(filepath.Join(tree, filepath.FromSlash(p)), data); err != nil {
			return err
		}
	}
	out := filepath.Join(outRoot, b.Name)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if b.Prebuilt != nil {
		if err := os.WriteFile(filepath.Join(out, b.PrebuiltName), b.Prebuilt, 0o644); err != nil {
			return err
		}
	} else if b.Layout.Kind == "archive" {
		if b.Layout.Zip {
			if err := writeZip(tree, filepath.Join(out, "bundle.zip")); err != nil {
				return err
			}
		}
		if b.Layout.TarGz {
			if err := writeTarGz(tree, filepath.Join(out, "bundle.tar.gz")); err != nil {
				return err
			}
		}
	} else if err := copyTree(tree, filepath.Join(out, "bundle")); err != nil {
		return err
	}
	wb, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "want.json"), append(wb, '\n'), 0o644); err != nil {
		return err
	}
	size, _ := dirSize(out)
	logf("bundle %s written to %s (%d bytes)", b.Name, out, size)
	if size > 2<<20 {
		return fmt.Errorf("bundle %s is %d bytes, over the 2 MB budget", b.Name, size)
	}
	return nil
}

func (b *Bundle) storeRoot(s *Server) string {
	if r := b.StoreRoots[s.Name]; r != "" {
		return r
	}
	return s.JSRoot()
}

func writeFileAll(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyTree copies the regular files and directories of src into dst (created).
func copyTree(src, dst string) error { return mirrorTree(src, dst, copyFile) }

// mirrorTree recreates the directories of src under dst and calls file for
// each regular file.
func mirrorTree(src, dst string, file func(src, dst string) error) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return file(p, target)
		}
		return nil // sockets, symlinks: none expected in a store
	})
}

func dirSize(root string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			st, err := d.Info()
			if err != nil {
				return err
			}
			n += st.Size()
		}
		return nil
	})
	return n, err
}

// archiveTime is the fixed modification time of every archive entry, so the
// archives depend only on their content.
var archiveTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type entry struct {
	rel   string // slash path
	isDir bool
	abs   string
}

func listTree(root string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type().IsRegular() {
			es = append(es, entry{rel: filepath.ToSlash(rel), isDir: d.IsDir(), abs: p})
		}
		return nil
	})
	sort.Slice(es, func(i, k int) bool { return es[i].rel < es[k].rel })
	return es, err
}

func writeZip(root, dst string) error {
	es, err := listTree(root)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.rel, Method: zip.Deflate, Modified: archiveTime}
		if e.isDir {
			h.Name += "/"
			h.Method = zip.Store
			h.SetMode(fs.ModeDir | 0o755)
		} else {
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			f.Close()
			return err
		}
		if !e.isDir {
			data, err := os.ReadFile(e.abs)
			if err != nil {
				f.Close()
				return err
			}
			if _, err := w.Write(data); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeTarGz(root, dst string) error {
	es, err := listTree(root)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	gz, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	gz.ModTime = archiveTime
	tw := tar.NewWriter(gz)
	for _, e := range es {
		h := &tar.Header{Name: e.rel, ModTime: archiveTime, Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
			Uname: "nats", Gname: "nats"}
		var data []byte
		if e.isDir {
			h.Name += "/"
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			if data, err = os.ReadFile(e.abs); err != nil {
				f.Close()
				return err
			}
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := gz.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// nodeID is the server's raft node id: SHA-256(name) mapped to base62 (formats.md 5.1).
func nodeID(name string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	h := sha256.Sum256([]byte(name))
	var b [8]byte
	for i := range b {
		b[i] = digits[int(h[i])%len(digits)]
	}
	return string(b[:])
}
