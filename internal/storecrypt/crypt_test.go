package storecrypt

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/storeparse"
)

// The fixtures are the encrypted bundles written by real nats-server
// clusters (testdata/gen scen_encrypted.go): v2.15.2 with chacha, v2.12.1
// with aes. want.json holds each server's /jsz and, in expect.key, the key.

const bundlesRoot = "../../testdata/bundles"

type wantDoc struct {
	Servers []struct {
		Name     string `json:"name"`
		StoreDir string `json:"store_dir"`
		Streams  []struct {
			Account    string `json:"account"`
			Name       string `json:"name"`
			FirstSeq   uint64 `json:"first_seq"`
			LastSeq    uint64 `json:"last_seq"`
			Messages   uint64 `json:"messages"`
			Bytes      uint64 `json:"bytes"`
			NumDeleted uint64 `json:"num_deleted"`
			Consumers  []struct {
				Name           string `json:"name"`
				AckFloorStream uint64 `json:"ack_floor_stream"`
				DeliveredSeq   uint64 `json:"delivered_stream"`
			} `json:"consumers"`
		} `json:"streams"`
	} `json:"servers"`
	Expect struct {
		Cipher   string   `json:"cipher"`
		Key      string   `json:"key"`
		KeyFiles []string `json:"key_files"`
	} `json:"expect"`
}

type fixture struct {
	name string
	dir  string // the bundle folder
	want wantDoc
}

func encryptedFixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	for _, name := range []string{"encrypted-v2.15.2", "encrypted-aes-v2.12.1"} {
		b, err := os.ReadFile(filepath.Join(bundlesRoot, name, "want.json"))
		if err != nil {
			t.Fatal(err)
		}
		fx := fixture{name: name, dir: filepath.Join(bundlesRoot, name, "bundle")}
		if err := json.Unmarshal(b, &fx.want); err != nil {
			t.Fatal(err)
		}
		if fx.want.Expect.Key == "" {
			t.Fatalf("%s: want.json has no expect.key", name)
		}
		out = append(out, fx)
	}
	return out
}

func (fx fixture) roots() []string {
	var r []string
	for _, s := range fx.want.Servers {
		r = append(r, s.StoreDir)
	}
	return r
}

// TestFiguresEqualJSZ: through the view, storeparse recomputes every
// stream of every server of both fixtures exactly as that server's /jsz
// reported it, and every consumer's ack floor and delivered sequence.
func TestFiguresEqualJSZ(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			v := New(os.DirFS(fx.dir), []string{fx.want.Expect.Key}, fx.roots()...)
			n := 0
			for _, srv := range fx.want.Servers {
				for _, ws := range srv.Streams {
					dir := path.Join(srv.StoreDir, ws.Account, "streams", ws.Name)
					sc, err := storeparse.ScanStream(v, dir, storeparse.ScanOptions{})
					if err != nil {
						t.Fatalf("%s: %v", dir, err)
					}
					if sc.Encrypted || len(sc.Problems) > 0 || !sc.MetaSumOK || sc.Index == nil || !sc.IndexCurrent() {
						t.Errorf("%s: encrypted %v, problems %v, meta.sum ok %v, index.db %v", dir, sc.Encrypted, sc.Problems, sc.MetaSumOK, sc.Index != nil)
					}
					got := [5]uint64{sc.State.FirstSeq, sc.State.LastSeq, sc.State.Msgs, sc.State.Bytes, sc.State.NumDeleted}
					want := [5]uint64{ws.FirstSeq, ws.LastSeq, ws.Messages, ws.Bytes, ws.NumDeleted}
					if got != want {
						t.Errorf("%s: first, last, messages, bytes, deleted %v, /jsz %v", dir, got, want)
					}
					for _, wc := range ws.Consumers {
						found := false
						for _, c := range sc.Consumers {
							if c.Name != wc.Name {
								continue
							}
							found = true
							if c.Meta == nil || !c.MetaSumOK || c.State == nil {
								t.Errorf("%s consumer %s: meta %v, sum ok %v, state %v", dir, c.Name, c.Meta != nil, c.MetaSumOK, c.State != nil)
								continue
							}
							if c.State.AckFloor.Stream != wc.AckFloorStream || c.State.Delivered.Stream != wc.DeliveredSeq {
								t.Errorf("%s consumer %s: ack floor %d delivered %d, /jsz %d %d", dir, c.Name, c.State.AckFloor.Stream, c.State.Delivered.Stream, wc.AckFloorStream, wc.DeliveredSeq)
							}
						}
						if !found {
							t.Errorf("%s: consumer %s not read", dir, wc.Name)
						}
					}
					n++
				}
			}
			if n == 0 {
				t.Fatal("no streams in want.json")
			}
		})
	}
}

// TestKeyFiles: every key file the servers wrote opens with the key; the
// stream stores under the configured cipher, the raft WAL stores under
// ChaCha whatever the configuration (jetstream_cluster.go creates them
// with no cipher, whose zero value is ChaCha).
func TestKeyFiles(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		v := New(os.DirFS(fx.dir), []string{"not-the-key", fx.want.Expect.Key}, fx.roots()...)
		var got []string
		for _, root := range fx.roots() {
			for _, kf := range v.KeyFiles(root) {
				got = append(got, kf.Path)
				want := fx.want.Expect.Cipher
				if strings.Contains(kf.Path, "/_js_/") {
					want = "chacha"
				}
				if kf.Err != nil || kf.Cipher.String() != want || kf.KeyIndex != 1 {
					t.Errorf("%s %s: err %v, cipher %s (want %s), key %d (want the second)", fx.name, kf.Path, kf.Err, kf.Cipher, want, kf.KeyIndex)
				}
			}
		}
		if strings.Join(got, "\n") != strings.Join(fx.want.Expect.KeyFiles, "\n") {
			t.Errorf("%s: key files\n%v\nwant.json\n%v", fx.name, got, fx.want.Expect.KeyFiles)
		}
	}
}

// TestWrongKey: a key that is not the store's opens nothing, says so with
// ErrWrongKey, and leaves the files as they are: the parser sees the same
// sealed store as without a key, and never a damage.
func TestWrongKey(t *testing.T) {
	fx := encryptedFixtures(t)[1]
	v := New(os.DirFS(fx.dir), []string{"jsf-not-the-key"}, fx.roots()...)
	srv := fx.want.Servers[0]
	for _, kf := range v.KeyFiles(srv.StoreDir) {
		if !errors.Is(kf.Err, ErrWrongKey) {
			t.Errorf("%s: %v, want ErrWrongKey", kf.Path, kf.Err)
		}
		if strings.Contains(kf.Err.Error(), "jsf-not-the-key") {
			t.Errorf("%s: the error shows the key", kf.Path)
		}
	}
	ws := srv.Streams[0]
	dir := path.Join(srv.StoreDir, ws.Account, "streams", ws.Name)
	plain, err := storeparse.ScanStream(os.DirFS(fx.dir), dir, storeparse.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := storeparse.ScanStream(v, dir, storeparse.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Encrypted || len(sc.Problems) != len(plain.Problems) {
		t.Fatalf("wrong key: encrypted %v, %d problems; without a key %d", sc.Encrypted, len(sc.Problems), len(plain.Problems))
	}
	for _, p := range sc.Problems {
		if !errors.Is(p, binfmt.ErrEncrypted) {
			t.Errorf("wrong key: %v, want only 'encrypted'", p)
		}
	}
}

// TestBlockReadAtAnyOffset: reading a block's plain view at any offset and
// length gives the bytes of one pass from the start (the keystream is
// positioned, not restarted), for both ciphers.
func TestBlockReadAtAnyOffset(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		v := New(os.DirFS(fx.dir), []string{fx.want.Expect.Key}, fx.roots()...)
		checked := 0
		for _, kf := range fx.want.Expect.KeyFiles {
			blk, ok := strings.CutSuffix(kf, ".key")
			if !ok || path.Base(blk) == "meta" {
				continue
			}
			blk += ".blk"
			f, err := v.Open(blk)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := io.ReadAll(f)
			f.Close()
			if err != nil || len(whole) == 0 {
				t.Fatalf("%s: %d bytes, %v", blk, len(whole), err)
			}
			// The first record's header is sane: the view is plain.
			if h := natsfmt.ParseRecordHeader(whole); !bytes.HasPrefix(whole, []byte("cmp\x01")) && h.FrameError() != "" {
				t.Errorf("%s: first record after decryption: %s", blk, h.FrameError())
			}
			f, _ = v.Open(blk)
			ra := f.(io.ReaderAt)
			for _, span := range [][2]int{{0, 1}, {1, 63}, {64, 64}, {17, 200}, {len(whole) - 9, 9}, {len(whole) / 2, len(whole) - len(whole)/2}, {3, 5}} {
				off, n := span[0], span[1]
				if off < 0 || off+n > len(whole) {
					continue
				}
				buf := make([]byte, n)
				if _, err := ra.ReadAt(buf, int64(off)); err != nil && err != io.EOF {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, whole[off:off+n]) {
					t.Errorf("%s: ReadAt(%d, %d) differs from the whole read", blk, off, n)
				}
			}
			f.Close()
			checked++
		}
		if checked == 0 {
			t.Fatalf("%s: no block checked", fx.name)
		}
	}
}

// TestKeyFilesHidden: the key files that open are not listed and do not
// exist in the view; the rest of the folder is there.
func TestKeyFilesHidden(t *testing.T) {
	fx := encryptedFixtures(t)[0]
	v := New(os.DirFS(fx.dir), []string{fx.want.Expect.Key}, fx.roots()...)
	kf := fx.want.Expect.KeyFiles[0]
	if _, err := fs.Stat(v, kf); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: stat %v, want not exist", kf, err)
	}
	ents, err := fs.ReadDir(v, path.Dir(kf))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := v.Open(path.Dir(kf))
	dents, _ := d.(fs.ReadDirFile).ReadDir(-1)
	d.Close()
	for _, list := range [][]fs.DirEntry{ents, dents} {
		names := ""
		for _, e := range list {
			names += e.Name() + " "
		}
		if strings.Contains(names, path.Base(kf)) || !strings.Contains(names, "meta.inf") {
			t.Errorf("%s listed as %q", path.Dir(kf), names)
		}
	}
}

// TestDamageUnderKey: damage to an encrypted store read with its key is
// reported as on a plain store, by the file and structure that failed: a
// bit flipped in a block fails that record's checksum at the same offset
// (the keystream keeps bit positions); a changed sealed meta.inf or o.dat
// does not authenticate; a changed index.db fails its checksum; a cut
// block key file names the key file. Never "encrypted", never a panic.
func TestDamageUnderKey(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		srv := fx.want.Servers[0]
		var stream string
		for _, ws := range srv.Streams {
			if ws.Name == "ORDERS" {
				stream = path.Join(srv.StoreDir, ws.Account, "streams", ws.Name)
			}
		}
		if stream == "" {
			t.Fatalf("%s: no ORDERS on %s", fx.name, srv.Name)
		}
		flip := func(off int) func([]byte) []byte {
			return func(b []byte) []byte { b[off] ^= 0x10; return b }
		}
		cases := []struct {
			name, file string
			corrupt    func([]byte) []byte
			structure  binfmt.Structure
			sentinel   error
			offset     int64 // -1: any
		}{
			{"block record", "msgs/1.blk", flip(40), natsfmt.StructBlockRecord, binfmt.ErrChecksum, -1},
			{"meta.inf", "meta.inf", flip(30), natsfmt.StructMetaInf, binfmt.ErrChecksum, -1},
			{"index.db", "msgs/index.db", flip(30), natsfmt.StructIndexDB, binfmt.ErrChecksum, -1},
			{"o.dat", "obs/PROC/o.dat", flip(30), natsfmt.StructConsumerState, binfmt.ErrChecksum, -1},
			{"block key cut", "msgs/1.key", func(b []byte) []byte { return b[:40] }, StructKeyFile, binfmt.ErrTruncated, 40},
			{"block key changed", "msgs/1.key", flip(30), StructKeyFile, binfmt.ErrChecksum, 0},
		}
		for _, tc := range cases {
			t.Run(fx.name+"/"+tc.name, func(t *testing.T) {
				m := fstest.MapFS{}
				base := os.DirFS(fx.dir)
				err := fs.WalkDir(base, stream, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := fs.ReadFile(base, p)
					if p == path.Join(stream, tc.file) {
						b = tc.corrupt(b)
					}
					m[p] = &fstest.MapFile{Data: b, Mode: 0o644}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				v := New(m, []string{fx.want.Expect.Key}, srv.StoreDir)
				sc, err := storeparse.ScanStream(v, stream, storeparse.ScanOptions{})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, p := range sc.Problems {
					if errors.Is(p, binfmt.ErrEncrypted) {
						t.Errorf("reported as encrypted: %v", p)
					}
					var ce *binfmt.CorruptError
					if errors.As(p, &ce) && ce.Structure == tc.structure && errors.Is(p, tc.sentinel) && (tc.offset < 0 || ce.Offset == tc.offset) {
						found = true
					}
				}
				if !found || sc.Encrypted {
					t.Errorf("want a %s %v problem; encrypted %v, problems %v", tc.structure, tc.sentinel, sc.Encrypted, sc.Problems)
				}
			})
		}
	}
}

// countOpens counts the opens of every file of an fs.FS.
type countOpens struct {
	fs.FS
	mu sync.Mutex
	n  map[string]int
}

func (c *countOpens) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

// Stat reads no content: not counted.
func (c *countOpens) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

// TestMetaInfReadOnce: the view checks a sealed meta.sum against the sealed
// meta.inf it read when meta.inf was opened (or, meta.sum opened first,
// keeps the meta.inf it read for meta.inf's own open), so each is read
// from the base once, in either order, with the same plain views: meta.sum
// verifies against the plain meta.inf. On the old view meta.inf was read
// again for meta.sum.
func TestMetaInfReadOnce(t *testing.T) {
	for _, fx := range encryptedFixtures(t) {
		for _, sumFirst := range []bool{false, true} {
			base := &countOpens{FS: os.DirFS(fx.dir), n: map[string]int{}}
			v := New(base, []string{fx.want.Expect.Key}, fx.roots()...)
			n := 0
			for _, srv := range fx.want.Servers {
				for _, ws := range srv.Streams {
					dir := path.Join(srv.StoreDir, ws.Account, "streams", ws.Name)
					files := []string{path.Join(dir, "meta.inf"), path.Join(dir, "meta.sum")}
					if sumFirst {
						files[0], files[1] = files[1], files[0]
					}
					got := map[string][]byte{}
					for _, p := range files {
						b, err := fs.ReadFile(v, p)
						if err != nil {
							t.Fatalf("%s: %v", p, err)
						}
						got[path.Base(p)] = b
					}
					if err := storeparse.CheckMetaSum(files[1], got["meta.sum"], got["meta.inf"], ws.Name); err != nil {
						t.Errorf("%s (meta.sum first %v): %v", dir, sumFirst, err)
					}
					for _, p := range files {
						if base.n[p] != 1 {
							t.Errorf("%s (meta.sum first %v): read %d times from the base", p, sumFirst, base.n[p])
						}
					}
					n++
				}
			}
			if n == 0 {
				t.Fatalf("%s: no stream", fx.name)
			}
		}
	}
}
