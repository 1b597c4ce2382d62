package storecrypt

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
)

// smallFileLimit bounds the sealed files read whole (meta.inf, index.db,
// o.dat, key files): storeparse's own bound for them.
const smallFileLimit = 64 << 20

// FS is a read-only view of base in which the stores under the given roots
// read decrypted: a sealed meta.inf, index.db or o.dat reads as the plain
// file, a message block as its plain records (decrypted at any offset, in
// step with the reader, never loaded whole), and the key files that opened
// are hidden, so a parser sees the store as nats-server would have written
// it without encryption. What no key opens stays as it is (sealed, its key
// file visible), exactly as without a key. Safe for concurrent use.
type FS struct {
	base  fs.FS
	roots []string
	keys  []string

	mu   sync.Mutex
	open map[string]keyResult // by key file path
	// sums holds, by asset folder, what meta.sum is checked against: taken
	// from meta.inf's sealed bytes when meta.inf is opened, so meta.sum
	// needs no second read of it (and the reverse: infs holds the sealed
	// meta.inf read for a meta.sum opened first, until meta.inf is opened).
	sums map[string]metaSums
	infs map[string][]byte
}

// metaSums is what a meta.sum of a sealed meta.inf is checked against.
type metaSums struct {
	sealed string // hex HighwayHash-64 of the sealed meta.inf: meta.sum's
	plain  string // hex HighwayHash-64 of the plain meta.inf ("" when it does not open)
}

type keyResult struct {
	key *AssetKey
	err error // nil, ErrWrongKey, a CorruptError, or fs.ErrNotExist
}

// New returns the view of base with the stores at roots (their jetstream
// folders, slash paths in base) opened with keys: the configured key
// first, then prev_encryption_key. keys must not be empty.
func New(base fs.FS, keys []string, roots ...string) *FS {
	return &FS{base: base, roots: roots, keys: keys, open: map[string]keyResult{}, sums: map[string]metaSums{}, infs: map[string][]byte{}}
}

// asset is a store folder whose files share keys: a stream, one of its
// consumers, or a raft group's WAL.
type asset struct {
	dir     string // the folder
	info    string // jsKeyGen info: the account, or the raft group for a WAL
	context string // the key file's context: stream, stream.consumer, group
	sumKey  string // the HighwayHash key of meta.sum and index.db
	wal     bool
}

// kind is the role of a file in an asset.
type kind int

const (
	plainFile kind = iota // not sealed (peers.idx, snapshots, ...) or outside any store
	assetKeyFile
	metaInf
	metaSum
	indexDB
	consumerState
	block
	blockKeyFile
)

// locate says which asset a path belongs to and what the file is.
func (f *FS) locate(name string) (asset, kind, uint32) {
	for _, root := range f.roots {
		rel := name
		if root != "." && root != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(name, root+"/"); !ok {
				continue
			}
		}
		p := strings.Split(rel, "/")
		if len(p) < 4 || (p[1] != "streams" && p[1] != "_js_") || p[0] == "" || p[2] == "" {
			continue
		}
		a := asset{dir: path.Join(root, p[0], p[1], p[2]), info: p[0], context: p[2], sumKey: p[2], wal: p[1] == "_js_"}
		if a.wal {
			a.info = p[2] // jetstream_cluster.go createRaftGroup: jsKeyGen(key, rg.Name)
		}
		rest := p[3:]
		if len(rest) == 3 && rest[0] == "obs" && !a.wal {
			a = asset{dir: path.Join(a.dir, "obs", rest[1]), info: a.info, context: a.context + "." + rest[1], sumKey: a.sumKey + "/" + rest[1]}
			switch rest[2] {
			case "meta.key":
				return a, assetKeyFile, 0
			case "meta.inf":
				return a, metaInf, 0
			case "meta.sum":
				return a, metaSum, 0
			case "o.dat":
				return a, consumerState, 0
			}
			return a, plainFile, 0
		}
		switch {
		case len(rest) == 1 && rest[0] == "meta.key":
			return a, assetKeyFile, 0
		case len(rest) == 1 && rest[0] == "meta.inf":
			return a, metaInf, 0
		case len(rest) == 1 && rest[0] == "meta.sum":
			return a, metaSum, 0
		case len(rest) == 2 && rest[0] == "msgs" && rest[1] == "index.db":
			return a, indexDB, 0
		case len(rest) == 2 && rest[0] == "msgs":
			for suf, k := range map[string]kind{".blk": block, ".key": blockKeyFile} {
				if num, ok := strings.CutSuffix(rest[1], suf); ok {
					if n, err := strconv.ParseUint(num, 10, 32); err == nil {
						return a, k, uint32(n)
					}
				}
			}
		}
		return a, plainFile, 0
	}
	return asset{}, plainFile, 0
}

func blockKeyPath(a asset, n uint32) string {
	return path.Join(a.dir, "msgs", strconv.FormatUint(uint64(n), 10)+".key")
}

// openKey opens (once) the key file kf of asset a under context.
func (f *FS) openKey(kf, info, context string) keyResult {
	f.mu.Lock()
	r, ok := f.open[kf]
	f.mu.Unlock()
	if ok {
		return r
	}
	data, err := f.readBase(kf)
	if err == nil {
		r.key, r.err = OpenKeyFile(kf, data, f.keys, info, context)
	} else {
		r.err = err
	}
	f.mu.Lock()
	f.open[kf] = r
	f.mu.Unlock()
	return r
}

// assetKey opens a's meta.key.
func (f *FS) assetKey(a asset) keyResult {
	return f.openKey(path.Join(a.dir, "meta.key"), a.info, a.context)
}

// blockKey opens a's msgs/N.key (context "stream:N").
func (f *FS) blockKey(a asset, n uint32) keyResult {
	return f.openKey(blockKeyPath(a, n), a.info, fmt.Sprintf("%s:%d", a.context, n))
}

func (f *FS) readBase(name string) ([]byte, error) {
	return binfmt.ReadFileFS(f.base, name, smallFileLimit)
}

// hidden reports whether name is a key file that opened (the parsers
// would take it for a sign the store is sealed).
func (f *FS) hidden(name string) bool {
	a, k, n := f.locate(name)
	switch k {
	case assetKeyFile:
		return f.assetKey(a).key != nil
	case blockKeyFile:
		// hidden also when damaged under the right key: the block then
		// fails to open with that damage (see openBlock).
		r := f.blockKey(a, n)
		return r.key != nil || !errors.Is(r.err, fs.ErrNotExist) && f.assetKeyOK(a)
	}
	return false
}

// assetKeyOK reports whether the asset's meta.key opened: the key is the
// store's, so a block key file that does not open is damaged.
func (f *FS) assetKeyOK(a asset) bool { return f.assetKey(a).key != nil }

// Open implements fs.FS.
func (f *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f.hidden(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	a, k, n := f.locate(name)
	switch k {
	case metaInf, indexDB, consumerState, metaSum:
		r := f.assetKey(a)
		if r.key == nil {
			break
		}
		data, err := f.unsealSmall(name, a, k, r.key)
		if err != nil {
			return nil, err
		}
		if data != nil {
			return f.memFile(name, data)
		}
	case block:
		return f.openBlock(name, a, n)
	}
	file, err := f.base.Open(name)
	if err != nil {
		return nil, err
	}
	return f.dirView(name, file), nil
}

// unsealSmall returns the plain view of a small sealed file, nil for one
// to show as it is.
func (f *FS) unsealSmall(name string, a asset, k kind, key *AssetKey) ([]byte, error) {
	if k == metaSum {
		return f.metaSumView(a)
	}
	var sealed []byte
	if k == metaInf {
		f.mu.Lock()
		sealed = f.infs[a.dir]
		delete(f.infs, a.dir)
		f.mu.Unlock()
	}
	if sealed == nil {
		var err error
		if sealed, err = f.readBase(name); err != nil {
			return nil, err
		}
	}
	switch k {
	case metaInf:
		plain, err := key.Open(name, natsfmt.StructMetaInf, sealed)
		f.noteSums(a, sealed, plain, err)
		return plain, err
	case consumerState:
		if len(sealed) == 0 {
			return nil, nil // nats-server reads an empty o.dat as no state
		}
		return key.Open(name, natsfmt.StructConsumerState, sealed)
	case indexDB:
		// nonce ‖ seal(state) ‖ HighwayHash-64 of the sealed bytes
		// (writeFullState); the plain view is state ‖ its checksum.
		if len(sealed) < 8 {
			return nil, binfmt.Stamp(binfmt.Errorf(name, 0, binfmt.ErrTruncated, "sealed index.db of %d bytes, shorter than its checksum", len(sealed)), natsfmt.StructIndexDB)
		}
		body := sealed[:len(sealed)-8]
		if got := binfmt.HH64(a.sumKey, body); string(got[:]) != string(sealed[len(body):]) {
			return nil, binfmt.Stamp(binfmt.Errorf(name, int64(len(body)), binfmt.ErrChecksum,
				"index.db checksum %x, its sealed bytes hash to %x (key %q)", sealed[len(body):], got, a.sumKey), natsfmt.StructIndexDB)
		}
		plain, err := key.Open(name, natsfmt.StructIndexDB, body)
		if err != nil {
			return nil, err
		}
		sum := binfmt.HH64(a.sumKey, plain)
		return append(plain, sum[:]...), nil
	}
	return nil, nil
}

// noteSums keeps what a's meta.sum is checked against, from meta.inf's
// sealed bytes and its plain view (err: it did not open).
func (f *FS) noteSums(a asset, sealed, plain []byte, err error) {
	want := binfmt.HH64(a.sumKey, sealed)
	ms := metaSums{sealed: hex.EncodeToString(want[:])}
	if err == nil {
		sum := binfmt.HH64(a.sumKey, plain)
		ms.plain = hex.EncodeToString(sum[:])
	}
	f.mu.Lock()
	f.sums[a.dir] = ms
	f.mu.Unlock()
}

// metaSumView is the plain view of a's meta.sum, nil to show it as it is.
// meta.sum is the checksum of the sealed meta.inf. When it holds, the plain
// view carries the plain file's checksum, so the parser's own check passes;
// when it fails, the sum is shown as it is and fails against the plain
// meta.inf too. meta.inf is read once: its sums were kept when it was
// opened (a parser reads it first); else it is read here and kept for its
// own open.
func (f *FS) metaSumView(a asset) ([]byte, error) {
	name := path.Join(a.dir, "meta.sum")
	sealedSum, err := f.readBase(name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	ms, ok := f.sums[a.dir]
	f.mu.Unlock()
	if !ok {
		inf := path.Join(a.dir, "meta.inf")
		sealed, err := f.readBase(inf)
		if err != nil {
			return nil, nil
		}
		key := f.assetKey(a).key
		plain, err := key.Open(inf, natsfmt.StructMetaInf, sealed)
		f.noteSums(a, sealed, plain, err)
		f.mu.Lock()
		ms = f.sums[a.dir]
		f.infs[a.dir] = sealed
		f.mu.Unlock()
	}
	if string(sealedSum) != ms.sealed || ms.plain == "" {
		return nil, nil
	}
	return []byte(ms.plain), nil
}

// openBlock opens msgs/N.blk decrypted with its N.key. Without an N.key
// the block is plain (nats-server converts such a block when it next
// loads it). An N.key that no key opens while the stream's meta.key does
// is damage: the block fails to open, naming the key file.
func (f *FS) openBlock(name string, a asset, n uint32) (fs.File, error) {
	r := f.blockKey(a, n)
	if r.key == nil {
		if errors.Is(r.err, fs.ErrNotExist) || !f.assetKeyOK(a) {
			return f.base.Open(name)
		}
		kf := blockKeyPath(a, n)
		var ce *binfmt.CorruptError
		if errors.As(r.err, &ce) {
			return nil, r.err
		}
		return nil, binfmt.Stamp(binfmt.Errorf(kf, 0, binfmt.ErrChecksum,
			"msgs/%d.key does not open under the key that opens the stream's meta.key: the key file is damaged, so %s cannot be decrypted", n, path.Base(name)), StructKeyFile)
	}
	file, err := f.base.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	ra, ok := file.(io.ReaderAt)
	if !ok {
		data, err := binfmt.ReadFull(name, readerAtOf(file), fi.Size(), binfmt.MaxFileRead)
		file.Close()
		if err != nil {
			return nil, err
		}
		return &blockFile{key: r.key, base: nil, ra: strings.NewReader(string(data)), fi: fi}, nil
	}
	return &blockFile{key: r.key, base: file, ra: ra, fi: fi}, nil
}

// readerAtOf reads a file that has no ReadAt sequentially (offsets in order).
func readerAtOf(file fs.File) io.ReaderAt { return &seqReaderAt{r: file} }

type seqReaderAt struct {
	r   io.Reader
	pos int64
}

func (s *seqReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off != s.pos {
		return 0, fmt.Errorf("offset %d out of order (at %d)", off, s.pos)
	}
	n, err := io.ReadFull(s.r, p)
	s.pos += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// blockFile is a message block decrypted on read. The keystream runs from
// offset 0; a read that continues the previous one continues its stream,
// any other is positioned afresh.
type blockFile struct {
	key  *AssetKey
	base fs.File // nil when read into memory
	ra   io.ReaderAt
	fi   fs.FileInfo

	mu     sync.Mutex
	pos    int64 // sequential Read offset
	stream interface{ XORKeyStream(dst, src []byte) }
	at     int64 // where stream stands
}

func (b *blockFile) Stat() (fs.FileInfo, error) { return b.fi, nil }

func (b *blockFile) Close() error {
	if b.base != nil {
		return b.base.Close()
	}
	return nil
}

func (b *blockFile) Read(p []byte) (int, error) {
	b.mu.Lock()
	off := b.pos
	b.mu.Unlock()
	n, err := b.ReadAt(p, off)
	b.mu.Lock()
	b.pos += int64(n)
	b.mu.Unlock()
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (b *blockFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.ra.ReadAt(p, off)
	if n <= 0 {
		return n, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stream == nil || b.at != off {
		s, serr := b.key.streamAt(off)
		if serr != nil {
			return 0, &binfmt.CorruptError{File: b.fi.Name(), Offset: off, Err: serr}
		}
		b.stream = s
	}
	b.stream.XORKeyStream(p[:n], p[:n])
	b.at = off + int64(n)
	return n, err
}

// memFile is a plain view held in memory.
func (f *FS) memFile(name string, data []byte) (fs.File, error) {
	fi, err := fs.Stat(f.base, name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: strings.NewReader(string(data)), fi: sizedInfo{fi, int64(len(data))}}, nil
}

type memFile struct {
	*strings.Reader
	fi fs.FileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.fi, nil }
func (m *memFile) Close() error               { return nil }

// sizedInfo is a FileInfo with the plain view's size.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

// Stat implements fs.StatFS: a view's own size, hidden key files absent.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	file, err := f.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || f.hidden(name) {
			return nil, err
		}
		// A sealed file that fails to open still exists.
		return fs.Stat(f.base, name)
	}
	defer file.Close()
	return file.Stat()
}

// ReadDir implements fs.ReadDirFS, leaving out the hidden key files.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(f.base, name)
	out := ents[:0]
	for _, e := range ents {
		if !f.hidden(path.Join(name, e.Name())) {
			out = append(out, e)
		}
	}
	return out, err
}

// dirView wraps an opened directory so that its ReadDir leaves out the
// hidden key files too.
func (f *FS) dirView(name string, file fs.File) fs.File {
	d, ok := file.(fs.ReadDirFile)
	if !ok {
		return file
	}
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		return file
	}
	return &dirFile{ReadDirFile: d, fs: f, path: name}
}

type dirFile struct {
	fs.ReadDirFile
	fs   *FS
	path string
}

func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for {
		ents, err := d.ReadDirFile.ReadDir(n)
		for _, e := range ents {
			if !d.fs.hidden(path.Join(d.path, e.Name())) {
				out = append(out, e)
			}
		}
		if n <= 0 || len(out) > 0 || err != nil {
			return out, err
		}
	}
}

// KeyFile is what became of one key file of a store.
type KeyFile struct {
	Path     string
	Cipher   Cipher // when opened
	KeyIndex int    // which given key opened it
	Err      error  // nil: opened; ErrWrongKey; a *binfmt.CorruptError
}

// KeyFiles opens every key file of the store at root and says which opened.
func (f *FS) KeyFiles(root string) []KeyFile {
	var out []KeyFile
	_ = fs.WalkDir(f.base, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".key") {
			return nil
		}
		a, k, n := f.locate(p)
		var r keyResult
		switch k {
		case assetKeyFile:
			r = f.assetKey(a)
		case blockKeyFile:
			r = f.blockKey(a, n)
		default:
			return nil
		}
		kf := KeyFile{Path: p, Err: r.err}
		if r.key != nil {
			kf.Cipher, kf.KeyIndex = r.key.Cipher, r.key.KeyIndex
		}
		out = append(out, kf)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
