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

// keyFlags are --key and --key-file: the servers' jetstream encryption key
// in every command that takes one (analyze, extract, dump blk, dump wal).
// No checksum key is ever called --key.
type keyFlags struct {
	keys  []string
	files []string
}

func (k *keyFlags) add(c *cobra.Command) {
	c.Flags().StringArrayVar(&k.keys, "key", nil, keyFlagHelp+"; give it again for prev_encryption_key")
	c.Flags().StringArrayVar(&k.files, "key-file", nil, "a file holding the servers' jetstream `key` (its first line), kept out of the process list; may be given again")
	// --jetstream-key was dump's name for --key.
	c.Flags().StringArrayVar(&k.keys, "jetstream-key", nil, keyFlagHelp)
	_ = c.Flags().MarkDeprecated("jetstream-key", "use --key")
}

// resolve returns the keys of --key, then of --key-file, else $JSF_KEY,
// else none. An unreadable or empty key file is an error that names the
// file, never its content.
func (k *keyFlags) resolve() ([]string, error) {
	out := append([]string(nil), k.keys...)
	for _, f := range k.files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--key-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		line = strings.TrimSpace(line)
		if line == "" {
			return nil, fmt.Errorf("--key-file %s: holds no key on its first line", f)
		}
		out = append(out, line)
	}
	if len(out) > 0 {
		return out, nil
	}
	if v := os.Getenv(keyEnv); v != "" {
		return []string{v}, nil
	}
	return nil, nil
}

// unsealedBlock returns the block at file decrypted with key when keys are
// given (flag or $JSF_KEY) and the block has an N.key beside it; else r as
// it is. The block must sit in its store's layout
// (<account>/streams/<stream>/msgs/N.blk or <sys>/_js_/<group>/msgs/N.blk):
// the key derives from those names.
func unsealedBlock(file string, r io.ReaderAt, flags keyFlags) (io.ReaderAt, func(), error) {
	nop := func() {}
	keys, err := flags.resolve()
	if err != nil {
		return nil, nop, err
	}
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
