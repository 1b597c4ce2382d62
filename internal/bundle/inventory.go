package bundle

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/acklog"
	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/natsconf"
	"github.com/klauspost/compress/gzip"
)

// inventory walks b.FS and fills Stores, Logs, Captures and Problems. Each
// folder is listed once, in the order fs.WalkDir visits it, and each file
// opened once. The archives found among the files are mounted as they are
// met (readArchive); their folders are walked and read next, round after
// round, down to maxArchiveLevels.
func (b *Bundle) inventory(lim Limits) error {
	b.lim = lim
	if b.nest == nil {
		b.nest = &nestFS{base: b.FS}
		b.FS = b.nest
	}
	w := &walker{b: b, lim: lim, walked: 1} // the root, as fs.WalkDir counts it
	if err := w.walk("."); err != nil {
		return err
	}
	for {
		b.sniffFiles(w.files)
		if len(b.pending) == 0 {
			break
		}
		mounts := b.pending
		b.pending, w.files = nil, nil
		for _, m := range mounts {
			w.walked++ // the mount, as its parent's listing would count it
			if err := w.walk(m); err != nil {
				return err
			}
		}
	}
	applyAuditManifests(b.manifests, b.Captures)
	b.Stores, b.Logs, b.Captures, b.Problems = orEmpty(b.Stores), orEmpty(b.Logs), orEmpty(b.Captures), orEmpty(b.Problems)
	b.name()
	sort.Slice(b.Stores, func(i, j int) bool { return b.Stores[i].Dir < b.Stores[j].Dir })
	sort.Slice(b.Logs, func(i, j int) bool { return b.Logs[i].Path < b.Logs[j].Path })
	sort.Slice(b.Captures, func(i, j int) bool { return b.Captures[i].Path < b.Captures[j].Path })
	sort.SliceStable(b.Problems, func(i, j int) bool {
		if b.Problems[i].Path != b.Problems[j].Path {
			return b.Problems[i].Path < b.Problems[j].Path
		}
		return b.Problems[i].Reason < b.Problems[j].Reason
	})
	return nil
}

// walker lists the folders of a bundle below a start, collecting its files
// outside store roots.
type walker struct {
	b      *Bundle
	lim    Limits
	walked int
	files  []string
}

func (w *walker) walk(p string) error {
	b := w.b
	ents, err := fs.ReadDir(b.FS, p)
	if err != nil {
		if p == "." {
			return err
		}
		b.problem(p, "unreadable: %v", err)
	} else {
		if st, ok := sniffStore(b.FS, p, ents); ok {
			b.Stores = append(b.Stores, st)
			return nil // a folder inside a store root is not another one
		}
		if len(ents) == 0 && namedLikeCapture(p) {
			b.problem(p, "an empty folder where a file named like a capture or log is expected")
		}
	}
	for _, d := range ents {
		q := path.Join(p, d.Name())
		w.walked++
		if w.walked > w.lim.MaxEntries {
			return fmt.Errorf("%w: more than %d files and folders (at %q)", ErrLimit, w.lim.MaxEntries, q)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			b.problem(q, "symlink not followed")
		case d.IsDir():
			if err := w.walk(q); err != nil {
				return err
			}
		case d.Type().IsRegular():
			w.files = append(w.files, q)
		default:
			b.problem(q, "special file (%v) skipped", d.Type())
		}
	}
	return nil
}

// sniffFiles sniffs files, audit manifests first: an archive's entry whose
// content gives no kind of answer (an empty one) is then decoded in its one
// read as the kind its manifest tags it with.
func (b *Bundle) sniffFiles(files []string) {
	for _, p := range files {
		if isAuditManifest(p) {
			b.sniffFile(p)
		}
	}
	for _, p := range files {
		if !isAuditManifest(p) {
			b.sniffFile(p)
		}
	}
}

func (b *Bundle) problem(p, format string, args ...any) {
	b.Problems = append(b.Problems, Problem{Path: p, Reason: fmt.Sprintf(format, args...)})
}

// sniffFile reads a bounded prefix of one file and records it as a log or a
// capture if it is one.
func (b *Bundle) sniffFile(p string) {
	f, err := b.FS.Open(p)
	if err != nil {
		b.problem(p, "unreadable: %v", err)
		return
	}
	kept := false // handed to b.held: its reader takes it (OpenLog)
	defer func() {
		if !kept {
			f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		b.problem(p, "unreadable: %v", err)
		return
	}
	if fi.Size() == 0 {
		if namedLikeCapture(p) {
			b.problem(p, "at offset 0: empty (0 bytes), though named like a capture or log")
		}
		return
	}
	head := make([]byte, min(fi.Size(), sniffBytes))
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		b.problem(p, "unreadable at offset %d: %v", n, err)
		return
	}
	head = head[:n]
	whole := int64(n) == fi.Size()
	if kind := sniffArchive(bytes.NewReader(head), int64(n)); kind != "" {
		b.readArchive(p, f, fi.Size(), head, kind)
		return
	}

	text, compressed := head, false
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		text, whole = gunzipPrefix(head, whole)
		compressed = true
	}
	if lg, ok := sniffLog(text, whole); ok {
		lg.Path, lg.Compressed, lg.Rotated = p, compressed, isRotated(path.Base(p))
		b.Logs = append(b.Logs, lg)
		kept = b.held.hold(p, f, head)
		return
	}
	if !compressed && acklog.Sniff(head) {
		b.AckLogs = append(b.AckLogs, p) // walked in order: sorted
		kept = b.held.hold(p, f, head)
		return
	}
	if !compressed && whole && natsconf.Sniff(head) {
		// Configs are small: held as read, so no later step opens them again.
		b.Configs = append(b.Configs, Config{Path: p, Data: head}) // walked in order: sorted
		return
	}
	if !compressed && whole && sniffJWT(head) {
		// JWTs are small: held as read, like configs.
		b.JWTs = append(b.JWTs, JWT{Path: p, Data: head}) // walked in order: sorted
		return
	}
	if namedLikeJWT(p) {
		switch {
		case compressed:
			b.problem(p, "named like a JWT but gzip-compressed: not read")
		case !whole && fi.Size() > maxJWTBytes:
			b.problem(p, "named like a JWT but %d bytes, more than a JWT's %d: not read", fi.Size(), maxJWTBytes)
		default:
			b.problem(p, "named like a JWT but holds none (no base64url header.payload.signature; starts %q): not read", head[:min(len(head), 16)])
		}
		return
	}
	if compressed || !looksJSON(head) {
		if suf := archiveSuffix(p); suf != "" {
			b.problem(p, "named like an archive but is none: no zip, tar or gzipped tar header at offset 0 (starts %q), though named %s: not read", head[:min(len(head), 16)], suf)
		} else if notCaptured(p, head) {
			b.problem(p, "at offset 0: neither a server log nor JSON, though named like a capture or log (starts %q)", head[:min(len(head), 16)])
		}
		return
	}
	if fi.Size() > maxCaptureBytes {
		b.problem(p, "JSON file of %d bytes, more than the %d read to classify it: skipped", fi.Size(), maxCaptureBytes)
		return
	}
	data := head
	if !whole {
		// The rest, from the file already open (a file is opened once).
		buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+1))
		buf.Write(head)
		if _, err := buf.ReadFrom(f); err != nil {
			b.problem(p, "unreadable: %v", err)
			return
		}
		data = buf.Bytes()
	}
	if off, err := jsonDamage(data); err != nil {
		b.problem(p, "at offset %d: JSON stops decoding (%v); what decodes before it is read", off, err)
	}
	c, ix, ok := classifyCapture(p, data)
	if !ok {
		if kind, tagged := b.auditTag(p); tagged {
			caps, err := capture.DecodeEntry(p, kind, data)
			if b.AuditEntries == nil {
				b.AuditEntries = map[string]AuditEntry{}
			}
			b.AuditEntries[p] = AuditEntry{Kind: kind, Decoded: caps, DecodeErr: err}
		}
		return
	}
	b.Captures = append(b.Captures, c)
	if ix != nil {
		if b.manifests == nil {
			b.manifests = map[string]capture.AuditIndex{}
		}
		b.manifests[p] = ix
	}
}

// gunzipPrefix decompresses at most sniffBytes from the gzip data in head
// (itself maybe a prefix of the file). whole says the output is the whole
// decompressed content.
func gunzipPrefix(head []byte, headWhole bool) ([]byte, bool) {
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil, false
	}
	defer zr.Close()
	out := make([]byte, sniffBytes)
	n, err := io.ReadFull(zr, out)
	whole := headWhole && (err == io.EOF || err == io.ErrUnexpectedEOF) && n < sniffBytes
	return out[:n], whole
}

// name fills NameCandidates everywhere and the store hints.
func (b *Bundle) name() {
	type item struct {
		cands []string
		nfull int
	}
	stores := make([]item, len(b.Stores))
	for i := range b.Stores {
		var c candidates
		c.fromPath(b.Stores[i].Dir)
		if b.Stores[i].Dir == "." {
			c.fromPath(b.outerName())
		}
		b.Stores[i].NameCandidates = nonNil(c.list)
		stores[i] = item{c.list, c.nfull}
	}
	logs := make([]item, len(b.Logs))
	for i := range b.Logs {
		lg := &b.Logs[i]
		var c candidates
		c.full(lg.Name, lg.Pod)
		c.fromPath(lg.Path)
		lg.NameCandidates = nonNil(c.list)
		logs[i] = item{c.list, c.nfull}
	}
	caps := make([]item, len(b.Captures))
	for i := range b.Captures {
		cp := &b.Captures[i]
		var c candidates
		c.full(cp.Servers...)
		c.fromPath(cp.Path)
		cp.NameCandidates = nonNil(c.list)
		caps[i] = item{c.list, c.nfull}
	}
	// Each log and capture hints the store(s) sharing a whole name with it at
	// the best summed rank.
	best := func(it item) []int {
		bestScore, out := -1, []int(nil)
		for si, st := range stores {
			score := -1
			for a := 0; a < st.nfull; a++ {
				for c := 0; c < it.nfull; c++ {
					if st.cands[a] == it.cands[c] && (score < 0 || a+c < score) {
						score = a + c
					}
				}
			}
			switch {
			case score < 0:
			case bestScore < 0 || score < bestScore:
				bestScore, out = score, []int{si}
			case score == bestScore:
				out = append(out, si)
			}
		}
		return out
	}
	for i, it := range logs {
		for _, si := range best(it) {
			b.Stores[si].Logs = append(b.Stores[si].Logs, b.Logs[i].Path)
		}
	}
	for i, it := range caps {
		for _, si := range best(it) {
			b.Stores[si].Captures = append(b.Stores[si].Captures, b.Captures[i].Path)
		}
	}
	for i := range b.Stores {
		sort.Strings(b.Stores[i].Logs)
		sort.Strings(b.Stores[i].Captures)
	}
}

// outerName is the tail of the bundle's own path (the last three folders of
// a directory, the file name of an archive): all that names a bundle that is
// itself a store root.
func (b *Bundle) outerName() string {
	p := filepath.ToSlash(b.Root)
	if b.Archive != "" {
		p = filepath.ToSlash(filepath.Base(b.Path))
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	return strings.Join(parts[max(0, len(parts)-3):], "/")
}

func nonNil(s []string) []string { return orEmpty(s) }

// orEmpty keeps JSON output stable: [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
