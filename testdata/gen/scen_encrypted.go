package main

// Healthy 3-server clusters with JetStream encryption at rest
// (jetstream { key: ..., cipher: chacha|aes }): v2.15.2 with chacha,
// v2.12.1 with aes. The key is never written into the bundle: only
// want.json expect.key holds it, for `analyze --key`; the analyzer must
// cope without it too.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func encryptedScenarios() []Scenario {
	return []Scenario{
		{Name: "encrypted-v2.15.2",
			Doc: "healthy 3 x v2.15.2 cluster vault (enc-0..2) with JetStream encryption at rest (chacha), per-server layout, key only in want.json",
			Run: func(ctx context.Context, env *Env) error {
				return encrypted(ctx, env, encryptedRun{name: "encrypted-v2.15.2", version: "v2.15.2", cluster: "vault",
					servers: []string{"enc-0", "enc-1", "enc-2"}, cipher: "chacha", key: encKey, logProbe: "chacha"})
			}},
		{Name: "encrypted-aes-v2.12.1",
			Doc: "healthy 3 x v2.12.1 cluster vault-aes (aes-0..2) with JetStream encryption at rest (cipher: aes), per-server layout, key only in want.json",
			Run: func(ctx context.Context, env *Env) error {
				return encrypted(ctx, env, encryptedRun{name: "encrypted-aes-v2.12.1", version: "v2.12.1", cluster: "vault-aes",
					servers: []string{"aes-0", "aes-1", "aes-2"}, cipher: "aes", key: encKeyAES, logProbe: "aes-gcm"})
			}},
	}
}

// encKey and encKeyAES are the JetStream encryption keys of the encrypted
// bundles' servers.
const (
	encKey    = "jsf-gen-vault-key-1b7e0c52a94d"
	encKeyAES = "jsf-gen-vault-aes-key-7d31f09a6e25"
)

// encryptedRun is one encrypted scenario: a version and a cipher.
type encryptedRun struct {
	name, version, cluster string
	servers                []string
	cipher, key            string
	logProbe               string // lower-case word the servers' encryption log lines hold
}

// EncryptedExpect is want.json's expect for the encrypted-* bundles.
type EncryptedExpect struct {
	Encrypted bool   `json:"encrypted"`
	Cipher    string `json:"cipher"`
	// Key is the configured jetstream.key (in no bundle file).
	Key string `json:"key"`
	// Config is the jetstream block's encryption lines (key elided).
	Config []string `json:"config"`
	// Workload is what HealthyWorkload did (see README).
	Workload string `json:"workload"`
	// KeyFiles are the per-asset key files the servers wrote (bundle paths).
	KeyFiles []string `json:"key_files"`
	// PlaintextProbes are byte strings the workload wrote in clear (subjects,
	// payload text); PlaintextFiles lists any store file holding one (none
	// expected).
	PlaintextProbes []string `json:"plaintext_probes"`
	PlaintextFiles  []string `json:"plaintext_files"`
	// PlaintextSnapshots are the raft snapshot files (snapshots/snap.T.I)
	// the servers wrote unencrypted: the header's term and index match the
	// file name and, for stream (S-) and consumer (C-) groups, the payload
	// starts with the state magic (0x2A stream, 0x16 consumer); the _meta_
	// payload is S2-compressed JSON. Encryption at rest covers message
	// blocks, index.db and meta.inf, not raft snapshots (raft.go
	// installSnapshot writes encodeSnapshot as is).
	PlaintextSnapshots []string `json:"plaintext_snapshots"`
	// LogLines are the servers' own log lines about encryption.
	LogLines map[string][]string `json:"log_lines"`
}

func encrypted(ctx context.Context, env *Env, run encryptedRun) error {
	encKey := run.key
	c, err := NewCluster(ctx, env.Scratch, run.version, run.cluster, run.servers)
	if err != nil {
		return err
	}
	defer c.Kill()
	for _, s := range c.Servers {
		s.JetStreamExtra = fmt.Sprintf("key: %q\n  cipher: %s", encKey, run.cipher)
	}
	caps, err := runHealthy(ctx, env, c)
	if err != nil {
		return err
	}
	layout := LayoutPerServer()
	x := EncryptedExpect{Encrypted: true, Cipher: run.cipher, Key: encKey,
		Config:          []string{`key: "<expect.key>"`, "cipher: " + run.cipher},
		Workload:        "HealthyWorkload: ORDERS R3, EVENTS R1, LOGS R1 s2, TMP R1 purged, KV cfg R3; consumers PROC (R3), SHIP, AUDIT",
		PlaintextProbes: []string{"orders.paid", "events.sensor", "processed batch", "svc.3.limit", `"order":7`},
		PlaintextFiles:  []string{}, PlaintextSnapshots: []string{}, LogLines: map[string][]string{}}
	for _, s := range c.Servers {
		err := filepath.WalkDir(s.JSRoot(), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(s.JSRoot(), p)
			bp := layout.Store(s.Name) + "/" + filepath.ToSlash(rel)
			if plainSnapshot(p) {
				x.PlaintextSnapshots = append(x.PlaintextSnapshots, bp)
			}
			if strings.HasSuffix(p, ".key") {
				x.KeyFiles = append(x.KeyFiles, bp)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(encKey)) {
				return fmt.Errorf("%s holds the encryption key", p)
			}
			for _, probe := range x.PlaintextProbes {
				if bytes.Contains(data, []byte(probe)) {
					x.PlaintextFiles = append(x.PlaintextFiles, bp)
					break
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		logb, err := os.ReadFile(s.LogFile)
		if err != nil {
			return err
		}
		if bytes.Contains(logb, []byte(encKey)) {
			return fmt.Errorf("%s: log holds the encryption key", s.Name)
		}
		for _, l := range strings.Split(string(logb), "\n") {
			// (the scratch path holds the scenario name, "encrypted-...")
			if ll := strings.ToLower(strings.ReplaceAll(l, env.Scratch, "")); strings.Contains(ll, "encrypt") || strings.Contains(ll, "cipher") || strings.Contains(ll, run.logProbe) {
				x.LogLines[s.Name] = append(x.LogLines[s.Name], l)
			}
		}
		for n, b := range caps[s.Name].Files {
			if bytes.Contains(b, []byte(encKey)) {
				return fmt.Errorf("%s: capture %s holds the encryption key", s.Name, n)
			}
		}
	}
	sort.Strings(x.KeyFiles)
	sort.Strings(x.PlaintextSnapshots)
	if len(x.KeyFiles) == 0 {
		return fmt.Errorf("no .key files in the stores: encryption not in effect?")
	}
	b := &Bundle{Name: run.name, Version: strings.TrimPrefix(run.version, "v"), Layout: layout, Servers: c.Servers, Captures: caps, Expect: x}
	return b.Write(env.Scratch, env.Out)
}

// plainSnapshot reports whether p is a raft snapshot file written in clear
// (formats.md 5.7): LE u64 term and index equal to the name's snap.T.I, and
// for S-/C- groups a payload starting with the state magic.
func plainSnapshot(p string) bool {
	var term, index uint64
	if _, err := fmt.Sscanf(filepath.Base(p), "snap.%d.%d", &term, &index); err != nil || filepath.Base(filepath.Dir(p)) != "snapshots" {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 28 {
		return false
	}
	if binary.LittleEndian.Uint64(b[0:8]) != term || binary.LittleEndian.Uint64(b[8:16]) != index {
		return false
	}
	off := 20 + int(binary.LittleEndian.Uint32(b[16:20]))
	if off >= len(b)-8 {
		return false
	}
	switch group := filepath.Base(filepath.Dir(filepath.Dir(p))); {
	case strings.HasPrefix(group, "S-"):
		return b[off] == 0x2A
	case strings.HasPrefix(group, "C-"):
		return b[off] == 0x16
	}
	return true
}
