package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/storecrypt"
)

// keyEnv holds the servers' jetstream key when no flag gives it (a flag
// shows in the process list; the environment does not).
const keyEnv = "JSF_KEY"

const keyFlagHelp = "the servers' jetstream `key` (config key), to read stores encrypted at rest; default $" + keyEnv + "; never printed"

// jetstreamKeys returns the keys the flag gave, else $JSF_KEY, else none.
func jetstreamKeys(flag []string) []string {
	if len(flag) > 0 {
		return flag
	}
	if k := os.Getenv(keyEnv); k != "" {
		return []string{k}
	}
	return nil
}

// addBlockKeyFlag adds --jetstream-key to a dump of message blocks (its
// --key, where it exists, is the checksum key).
func addBlockKeyFlag(c *cobra.Command, key *string) {
	c.Flags().StringVar(key, "jetstream-key", "", keyFlagHelp)
}

// unsealedBlock returns the block at file decrypted with key when keys are
// given (flag or $JSF_KEY) and the block has an N.key beside it; else r as
// it is. The block must sit in its store's layout
// (<account>/streams/<stream>/msgs/N.blk or <sys>/_js_/<group>/msgs/N.blk):
// the key derives from those names.
func unsealedBlock(file string, r io.ReaderAt, key string) (io.ReaderAt, func(), error) {
	keys := jetstreamKeys(nil)
	if key != "" {
		keys = []string{key}
	}
	nop := func() {}
	num, ok := strings.CutSuffix(filepath.Base(file), ".blk")
	kf := filepath.Join(filepath.Dir(file), num+".key")
	if len(keys) == 0 || !ok {
		return r, nop, nil
	}
	if _, err := os.Stat(kf); err != nil {
		return r, nop, nil // not encrypted (or its key file was not copied)
	}
	abs := filepath.ToSlash(absPath(file))
	parts := strings.Split(abs, "/")
	if len(parts) < 6 || parts[len(parts)-2] != "msgs" || (parts[len(parts)-4] != "streams" && parts[len(parts)-4] != "_js_") {
		return nil, nil, fmt.Errorf("%s: an encrypted block is read in its store's layout (<account>/streams/<stream>/msgs/N.blk or <sys>/_js_/<group>/msgs/N.blk), whose names its key derives from", file)
	}
	root := strings.Join(parts[:len(parts)-5], "/")
	if root == "" {
		root = "/"
	}
	rel := strings.Join(parts[len(parts)-5:], "/")
	view := storecrypt.New(os.DirFS(root), keys, ".")
	if _, err := fs.Stat(view, path.Join(path.Dir(rel), num+".key")); err == nil {
		return nil, nil, fmt.Errorf("%s: the key given does not open %s (not this store's key, or the key file is damaged)", file, kf)
	}
	f, err := view.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	ra, ok := f.(io.ReaderAt)
	if !ok {
		f.Close()
		return nil, nil, fmt.Errorf("%s: decrypted view cannot be read at offsets", file)
	}
	return ra, func() { f.Close() }, nil
}
