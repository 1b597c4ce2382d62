package storecrypt

import (
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"testing"
	"testing/fstest"

	"github.com/jsforensics/jsforensics/storeparse"
)

// fuzzStream is a real encrypted stream folder (its consumer included),
// copied into memory: the files the fuzzer replaces one at a time.
func fuzzStream(f *testing.F) (fstest.MapFS, []string, string, string) {
	f.Helper()
	fx := encryptedFixtures(f)[1] // aes: 16-byte nonces; the WALs beside it are chacha
	srv := fx.want.Servers[0]
	dir := path.Join(srv.StoreDir, "$G", "streams", "ORDERS")
	base := os.DirFS(fx.dir)
	m := fstest.MapFS{}
	var names []string
	err := fs.WalkDir(base, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(base, p)
		if err != nil {
			return err
		}
		m[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		names = append(names, p)
		return nil
	})
	if err != nil || len(names) == 0 {
		f.Fatalf("%s: %v (%d files)", dir, err, len(names))
	}
	sort.Strings(names)
	return m, names, dir, fx.want.Expect.Key
}

// FuzzUnseal replaces one file of a real encrypted stream (a key file, the
// sealed meta.inf, index.db, o.dat, a block) with the fuzzer's bytes and
// reads the folder through the view with storeparse, then every file of
// the view whole and at offsets: bad key files, short nonces, cut or
// changed seals must give errors, never a panic or a hang.
func FuzzUnseal(f *testing.F) {
	m, names, dir, key := fuzzStream(f)
	for i, n := range names {
		data := m[n].Data
		f.Add(uint8(i), data)
		f.Add(uint8(i), data[:len(data)/2])
		f.Add(uint8(i), data[:min(len(data), 15)])
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		mm := fstest.MapFS{}
		for k, v := range m {
			mm[k] = v
		}
		target := names[int(which)%len(names)]
		mm[target] = &fstest.MapFile{Data: data, Mode: 0o644}
		v := New(mm, []string{key}, path.Dir(path.Dir(path.Dir(dir))))
		if _, err := storeparse.ScanStream(v, dir, storeparse.ScanOptions{Workers: 1}); err != nil {
			t.Logf("scan: %v", err)
		}
		for _, n := range names {
			file, err := v.Open(n)
			if err != nil {
				continue
			}
			_, _ = io.ReadAll(file)
			if ra, ok := file.(io.ReaderAt); ok {
				buf := make([]byte, 7)
				_, _ = ra.ReadAt(buf, int64(len(data)%97))
			}
			file.Close()
		}
		_ = v.KeyFiles(path.Dir(path.Dir(path.Dir(dir))))
	})
}

// FuzzOpenKeyFile: any bytes as a key file, under any context, give an
// AssetKey or an error; an AssetKey opens any sealed bytes or errs.
func FuzzOpenKeyFile(f *testing.F) {
	m, names, dir, key := fuzzStream(f)
	inf := m[path.Join(dir, "meta.inf")].Data
	for _, n := range names {
		if path.Ext(n) == ".key" {
			f.Add(m[n].Data, "ORDERS", inf)
			f.Add(m[n].Data, "ORDERS:1", m[path.Join(dir, "msgs", "1.blk")].Data)
		}
	}
	f.Fuzz(func(t *testing.T, kf []byte, context string, sealed []byte) {
		k, err := OpenKeyFile("key", kf, []string{key, ""}, "$G", context)
		if err != nil {
			return
		}
		_, _ = k.Open("sealed", "x", sealed)
		if s, err := k.streamAt(int64(len(sealed))); err == nil {
			s.XORKeyStream(sealed, sealed)
		}
	})
}
