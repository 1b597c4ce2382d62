package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path"
	"strings"
	"unicode/utf8"
)

// Files are found by content, but a file named like a capture or a log
// whose content is neither (emptied, overwritten, cut, a folder in its
// place) is said so in Problems, with the offset where reading failed,
// rather than skipped without a word.

// capturedExts are the names captures and logs are saved under.
var capturedExts = []string{".json", ".jsonl", ".log", ".txt", ".out"}

// namedLikeCapture says whether p's name is one a capture or log is saved
// under (a rotated log's "n1.log.1" too).
func namedLikeCapture(p string) bool {
	base := strings.ToLower(path.Base(p))
	base = strings.TrimSuffix(base, ".gz")
	for _, ext := range capturedExts {
		if strings.HasSuffix(base, ext) || strings.Contains(base, ext+".") {
			return true
		}
	}
	return false
}

// notCaptured says whether a file that is neither a log nor JSON, starting
// with head, is a capture or log that no longer reads: named as JSON, or
// named like a log and holding bytes that are not text (other text files,
// a tool's own log say, are just not captures).
func notCaptured(p string, head []byte) bool {
	base := strings.TrimSuffix(strings.ToLower(path.Base(p)), ".gz")
	if strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".jsonl") {
		return true
	}
	// A prefix may end inside a rune: only a bad byte before the last 3 counts.
	i := invalidUTF8(head)
	return namedLikeCapture(p) && (bytes.IndexByte(head, 0) >= 0 || i >= 0 && i < len(head)-3)
}

// jsonDamage checks data as JSON values (one, or one a line as natscli
// writes them) the way classifyCapture reads them, and returns the byte
// offset where they stop being JSON and why; ok when every byte decodes.
// Bytes that are not UTF-8 decode (as U+FFFD) but are damage all the same.
func jsonDamage(data []byte) (offset int64, err error) {
	if i := invalidUTF8(data); i >= 0 {
		return int64(i), errors.New("bytes that are not UTF-8 text")
	}
	body := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	skipped := int64(len(data) - len(body))
	dec := json.NewDecoder(bytes.NewReader(body))
	for range maxCheckedValues {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if err == io.EOF {
				return 0, nil
			}
			off := dec.InputOffset()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = se.Offset
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				off = int64(len(body))
			}
			return skipped + off, err
		}
	}
	return 0, nil
}

// maxCheckedValues bounds the JSON values jsonDamage reads (one per server
// in natscli output; a few thousand servers at most).
const maxCheckedValues = 100000

// invalidUTF8 is the offset of the first byte that is not UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
