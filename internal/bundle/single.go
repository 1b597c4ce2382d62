package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
)

// A single regular file that is no archive is a bundle of one file when it
// is what people attach to a ticket: a server log, a monitoring capture, an
// ack log or a client history, told by content as in any bundle (the
// inventory reads it). A store or raft file (a message block, index.db,
// peers.idx …) is a bundle of one file too, with a note pointing at
// `jsforensics dump`, which reads it record by record: one such file is no
// store to analyze. Those are told by the name nats-server gives them
// (their few header bytes alone would match arbitrary data), and their
// decoder says in the note whether the content is one. Anything else is
// ErrNotBundle, saying what the file holds and what a bundle is.

// bundleForms says what Open accepts, for the error naming a file it does
// not.
const bundleForms = "a bundle is a folder; a .zip, .tar, .tar.gz or .tgz archive; or one file: " +
	"a nats-server log, a monitoring capture (jsz, varz, healthz, raftz …), an ack log or client history, " +
	"or a store or raft file (N.blk, index.db, meta.inf, meta.sum, o.dat, peers.idx, tav.idx, commit.idx, snap.<term>.<index>)"

// openOneFile opens the regular file at path as a bundle of that one file,
// or says why it is none.
func (b *Bundle) openOneFile(path string, lim Limits, wrap func(fs.FS) fs.FS) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	one := &oneFS{f: f, info: fi}
	b.FS, b.inPlace = one, one
	if err := b.wrapAndInventory(lim, wrap); err != nil {
		return err
	}
	name := fi.Name()
	switch {
	case len(b.Logs) > 0:
		b.Notes = append(b.Notes, fmt.Sprintf("the bundle is one file, %s: a server log", name))
		return nil
	case len(b.Captures) > 0:
		b.Notes = append(b.Notes, fmt.Sprintf("the bundle is one file, %s: a monitoring capture (%s)", name, b.Captures[0].Kind))
		return nil
	case len(b.AckLogs) > 0:
		b.Notes = append(b.Notes, fmt.Sprintf("the bundle is one file, %s: an ack log or client history", name))
		return nil
	}
	if sf, ok := storeFileNamed(path); ok {
		b.Notes = append(b.Notes, fmt.Sprintf("the bundle is one file, %s: %s, as nats-server names it, and %s. One store or raft file is no store to analyze: give the store folder, the bundle or an archive of it; `jsforensics dump %s %s` reads this file record by record",
			name, sf.what, sf.decodes(path, f, fi.Size()), sf.dump, shellQuote(path)))
		return nil
	}
	head := make([]byte, min(fi.Size(), 512))
	n, _ := f.ReadAt(head, 0)
	return fmt.Errorf("%s: %w: it holds %s; %s", path, ErrNotBundle, b.seen(name, head[:n], fi.Size()), bundleForms)
}

// seen says what a file that is no bundle holds, from its first bytes and
// what the inventory said of it.
func (b *Bundle) seen(name string, head []byte, size int64) string {
	why := ""
	for _, p := range b.Problems {
		why = " (" + p.Reason + ")" // the file's own: the bundle holds nothing else
	}
	named := ""
	if suf := archiveSuffix(name); suf != "" {
		// The inventory's problem says the same.
		named, why = fmt.Sprintf(", though named %s: no zip, tar or gzipped tar header at offset 0", suf), ""
	}
	switch {
	case size == 0:
		return "nothing: it is empty (0 bytes)" + named
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip-compressed data that holds neither a tar archive nor a nats-server log" + named + why
	case len(b.Configs) > 0:
		return "a nats-server config file, which alone is nothing to analyze: give it with the bundle it belongs to" + named
	case len(b.JWTs) > 0:
		return "a NATS JWT (an account's or operator's, as a resolver or nsc keeps it), which alone is nothing to analyze: give it with the bundle it belongs to" + named
	case looksJSON(head):
		return "JSON that is no monitoring answer the capture reader knows, nor an ack log" + named + why
	}
	if text := bytes.TrimLeft(head, "\xef\xbb\xbf \t\r\n"); isText(text) {
		line, _, _ := bytes.Cut(text, []byte("\n"))
		if len(line) > 80 {
			line = append(line[:77:77], "..."...)
		}
		return fmt.Sprintf("text that is not a nats-server log (its first line: %q)", line) + named + why
	}
	return fmt.Sprintf("binary data starting % x, no zip, gzip or tar archive and no name nats-server gives a store or raft file", head[:min(len(head), 8)]) + named
}

// isText says whether b (a prefix) is UTF-8 without NUL bytes: a prefix
// may end inside a rune.
func isText(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	i := invalidUTF8(b)
	return i < 0 || i >= len(b)-utf8.UTFMax
}

// shellQuote quotes p for a POSIX shell when it holds more than letters,
// digits and ./_-+: store paths hold "$G" and "$SYS".
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-+") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// fileType names a file type that is neither a folder nor a regular file.
func fileType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return "file of mode " + t.String()
	}
}

// storeFile is a store or raft file, as nats-server names it.
type storeFile struct {
	what string // what it is, for the note
	dump string // the dump subcommand that reads it
	// decode checks the content with the file's decoder, which does not
	// judge it: any error is said in the note.
	decode func(path string, r io.ReaderAt, size int64) error
}

// decodes says whether the content decodes as the kind its name says.
func (s storeFile) decodes(path string, r io.ReaderAt, size int64) string {
	if err := s.decode(path, r, size); err != nil {
		return "its content does not decode as one: " + err.Error()
	}
	return "its content decodes as one"
}

// readWhole reads a small store or raft file whole, within limit, then
// decodes it.
func readWhole(limit int64, decode func(path string, b []byte) error) func(string, io.ReaderAt, int64) error {
	return func(path string, r io.ReaderAt, size int64) error {
		data, err := binfmt.ReadFull(path, r, size, limit)
		if err != nil {
			return err
		}
		return decode(path, data)
	}
}

// storeFileNamed tells a store or raft file by its name (filestore.go,
// raft.go): the folders above it say, for a block, whose it is, and give
// the checksum keys the decoders ask for.
func storeFileNamed(p string) (storeFile, bool) {
	slash := filepath.ToSlash(p)
	parts := strings.Split(slash, "/")
	up := func(n int) string { // the n-th folder above the file
		if len(parts) > n {
			return parts[len(parts)-1-n]
		}
		return ""
	}
	base := up(0)
	switch {
	case strings.HasSuffix(base, ".blk") && digits(strings.TrimSuffix(base, ".blk")):
		key, _ := storeparse.BlockKey(slash)
		sf := storeFile{what: "a message block (a stream's, or a raft group's WAL)", dump: "blk (a stream's; `dump wal` for a raft group's)",
			decode: func(path string, r io.ReaderAt, size int64) error { return firstRecord(path, r, size, key) }}
		switch {
		case up(1) == "msgs" && up(3) == "_js_":
			sf.what, sf.dump = "a raft group's WAL block", "wal"
		case up(1) == "msgs" && up(3) == "streams":
			sf.what, sf.dump = "a stream's message block", "blk"
		}
		return sf, true
	case base == "index.db":
		return storeFile{what: "a stream state file", dump: "index",
			decode: readWhole(binfmt.MaxFileRead, func(path string, b []byte) error { _, err := storeparse.ParseIndex(path, b, ""); return err })}, true
	case base == "meta.inf":
		return storeFile{what: "a stream, consumer or raft group meta file", dump: "meta",
			decode: readWhole(binfmt.MaxFileRead, func(path string, b []byte) error {
				if _, err := storeparse.ParseStreamMeta(path, b); err != nil {
					_, cerr := storeparse.ParseConsumerMeta(path, b)
					return cerr
				}
				return nil
			})}, true
	case base == "meta.sum":
		return storeFile{what: "the checksum of the meta.inf beside it", dump: "meta",
			decode: readWhole(4<<10, storeparse.CheckMetaSumFormat)}, true
	case base == "o.dat":
		return storeFile{what: "a consumer state file", dump: "odat",
			decode: readWhole(binfmt.MaxFileRead, func(path string, b []byte) error { _, err := storeparse.ParseConsumerState(path, b); return err })}, true
	case base == "peers.idx":
		return storeFile{what: "a raft group's peer state", dump: "peers",
			decode: readWhole(raftlog.MaxPeersIdxSize, func(path string, b []byte) error { _, err := raftlog.DecodePeerState(path, b); return err })}, true
	case base == "tav.idx":
		return storeFile{what: "a raft group's term and vote", dump: "tav",
			decode: readWhole(raftlog.MaxTavSize, func(path string, b []byte) error { _, err := raftlog.DecodeTermVote(path, b); return err })}, true
	case base == "commit.idx":
		group := up(1)
		return storeFile{what: "a raft group's commit index", dump: "commit",
			decode: readWhole(raftlog.MaxCommitSize, func(path string, b []byte) error {
				_, err := raftlog.DecodeCommitIndex(path, group, b)
				return keyless(err, raftlog.GroupKind(group) == "")
			})}, true
	}
	if _, _, ok := raftlog.ParseSnapshotName(base); ok {
		group := up(2)
		return storeFile{what: "a raft group's snapshot", dump: "snap",
			decode: readWhole(raftlog.MaxSnapshotSize, func(path string, b []byte) error {
				_, err := raftlog.DecodeSnapshot(path, group, b)
				return keyless(err, up(1) != "snapshots" || raftlog.GroupKind(group) == "")
			})}, true
	}
	return storeFile{}, false
}

// keyless drops a checksum mismatch when the checksum key (the raft group's
// name) could not be taken from the path: the bytes were not checked.
func keyless(err error, noKey bool) error {
	if noKey && errors.Is(err, binfmt.ErrChecksum) {
		return nil
	}
	return err
}

// firstRecord decodes the first record of a message block: its framing
// (length, sequence, sizes) is the block's, and its checksum is checked
// when the path gives the key.
func firstRecord(path string, r io.ReaderAt, size int64, key string) error {
	br, err := storeparse.NewBlockReader(path, r, size, key)
	if err != nil {
		return err
	}
	if _, err := br.Next(); err != nil && err != io.EOF {
		return err
	}
	return nil
}

func digits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil && s != "" && s[0] != '+'
}

// oneFS serves one file as a folder holding it: a bundle of one file.
type oneFS struct {
	f    *os.File
	info fs.FileInfo
}

func (o *oneFS) Close() error { return o.f.Close() }

func (o *oneFS) Open(name string) (fs.File, error) {
	switch {
	case name == ".":
		return &oneDir{o: o}, nil
	case name == o.info.Name():
		return &oneFile{SectionReader: io.NewSectionReader(o.f, 0, o.info.Size()), info: o.info}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Stat implements fs.StatFS.
func (o *oneFS) Stat(name string) (fs.FileInfo, error) {
	switch {
	case name == ".":
		return rootInfo{}, nil
	case name == o.info.Name():
		return o.info, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir implements fs.ReadDirFS.
func (o *oneFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return []fs.DirEntry{fs.FileInfoToDirEntry(o.info)}, nil
}

// oneFile is the file of a oneFS, read at any offset.
type oneFile struct {
	*io.SectionReader
	info fs.FileInfo
}

func (f *oneFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *oneFile) Close() error               { return nil }

// oneDir is the folder of a oneFS.
type oneDir struct {
	o    *oneFS
	done bool
}

func (d *oneDir) Stat() (fs.FileInfo, error) { return rootInfo{}, nil }
func (d *oneDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: errors.New("is a directory")}
}
func (d *oneDir) Close() error { return nil }

func (d *oneDir) ReadDir(count int) ([]fs.DirEntry, error) {
	if d.done {
		if count > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	d.done = true
	return d.o.ReadDir(".")
}

// rootInfo describes the folder of a oneFS.
type rootInfo struct{}

func (rootInfo) Name() string       { return "." }
func (rootInfo) Size() int64        { return 0 }
func (rootInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (rootInfo) ModTime() time.Time { return time.Time{} }
func (rootInfo) IsDir() bool        { return true }
func (rootInfo) Sys() any           { return nil }
