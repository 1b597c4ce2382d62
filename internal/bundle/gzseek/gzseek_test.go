package gzseek

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// sample is text-like data with repeats at every distance, so that the
// blocks use long back-references across checkpoints.
func sample(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"stream ", "consumer ", "raft ", "meta ", "seq=", "1234 ", "\n", "jetstream "}
	var b bytes.Buffer
	for b.Len() < n {
		if r.IntN(50) == 0 {
			k := r.IntN(300)
			b.Write(bytes.Repeat([]byte{byte(r.IntN(256))}, k))
			continue
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

func gzipped(t *testing.T, level int, parts ...[]byte) []byte {
	var out bytes.Buffer
	for _, p := range parts {
		w, err := gzip.NewWriterLevel(&out, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Name = "part"
		w.Write(p)
		w.Close()
	}
	return out.Bytes()
}

// TestResumeAtEveryBlock: reading from the start gives the data, and a read
// resumed from a checkpoint taken at any block boundary gives the rest of
// it, byte for byte, across member boundaries too.
func TestResumeAtEveryBlock(t *testing.T) {
	a, b := sample(1<<20), sample(300<<10)
	for _, level := range []int{1, 6, 9, gzip.HuffmanOnly, gzip.NoCompression} {
		data := append(append([]byte(nil), a...), b...)
		gz := gzipped(t, level, a, b)
		z, err := NewReader(bytes.NewReader(gz), int64(len(gz)))
		if err != nil {
			t.Fatal(err)
		}
		var cps []Checkpoint
		z.Boundary = func(out int64) {
			cp := z.Checkpoint()
			if cp.Out != out {
				t.Fatalf("checkpoint at %d, boundary says %d", cp.Out, out)
			}
			cps = append(cps, cp)
		}
		got, err := io.ReadAll(z)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("level %d: read %d bytes, differ from the %d written", level, len(got), len(data))
		}
		if len(cps) < 4 {
			t.Fatalf("level %d: %d checkpoints", level, len(cps))
		}
		for i, cp := range cps {
			if i%7 != 0 && i != len(cps)-1 {
				continue
			}
			rest, err := io.ReadAll(Resume(bytes.NewReader(gz), int64(len(gz)), cp))
			if err != nil {
				t.Fatalf("level %d, checkpoint %d at %d: %v", level, i, cp.Out, err)
			}
			if !bytes.Equal(rest, data[cp.Out:]) {
				t.Fatalf("level %d, checkpoint %d at out %d in %d: resumed read differs", level, i, cp.Out, cp.In)
			}
		}
	}
}

// TestDamage: a cut stream and a changed trailer are errors, never a
// silent short read.
func TestDamage(t *testing.T) {
	data := sample(1 << 20)
	gz := gzipped(t, 6, data)
	cut := gz[:len(gz)/2]
	z, err := NewReader(bytes.NewReader(cut), int64(len(cut)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(z)
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut stream: %v", err)
	}
	if !bytes.Equal(got, data[:len(got)]) {
		t.Fatal("cut stream: the prefix read is not the data's")
	}
	bad := bytes.Clone(gz)
	bad[len(bad)-5] ^= 1
	z, _ = NewReader(bytes.NewReader(bad), int64(len(bad)))
	if _, err := io.ReadAll(z); !errors.Is(err, ErrChecksum) {
		t.Fatalf("trailer changed: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrHeader) {
		t.Fatalf("no gzip: %v", err)
	}
}

// FuzzResume: any input either fails with an error or reads, and a read
// resumed at any checkpoint taken on the way gives the same rest; nothing
// panics or hangs.
func FuzzResume(f *testing.F) {
	f.Add(gzippedF(f, 1, sample(64<<10)))
	f.Add(gzippedF(f, 9, sample(40<<10), sample(10<<10)))
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var cps []Checkpoint
		z.Boundary = func(int64) {
			if len(cps) < 8 {
				cps = append(cps, z.Checkpoint())
			}
		}
		all, err := io.ReadAll(io.LimitReader(z, 4<<20))
		for _, cp := range cps {
			rest, rerr := io.ReadAll(io.LimitReader(Resume(bytes.NewReader(data), int64(len(data)), cp), int64(len(all))-cp.Out))
			if cp.Out > int64(len(all)) {
				t.Fatalf("checkpoint at %d past the %d bytes read", cp.Out, len(all))
			}
			if !bytes.Equal(rest, all[cp.Out:cp.Out+int64(len(rest))]) {
				t.Fatalf("resumed at %d: other bytes", cp.Out)
			}
			if err == nil && rerr == nil && int64(len(rest)) != int64(len(all))-cp.Out {
				t.Fatalf("resumed at %d: %d bytes, want %d", cp.Out, len(rest), int64(len(all))-cp.Out)
			}
		}
	})
}

func gzippedF(f *testing.F, level int, parts ...[]byte) []byte {
	var out bytes.Buffer
	for _, p := range parts {
		w, err := gzip.NewWriterLevel(&out, level)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(p)
		w.Close()
	}
	return out.Bytes()
}
