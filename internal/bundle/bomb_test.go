package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"compress/flate"
)

// zeroDeflate gives a raw deflate stream of prefix followed by n zero
// bytes, and the CRC-32 of that content. Zeros are streamed through the
// compressor once, 64 MiB of them; their blocks are repeated (any back
// reference in them reads zeros, whatever precedes), then a final empty
// block ends the stream.
func zeroDeflate(t *testing.T, prefix []byte, n int64) ([]byte, uint32) {
	t.Helper()
	const chunk = 64 << 20
	compress := func(b []byte) []byte {
		var buf bytes.Buffer
		w, err := flate.NewWriter(&buf, flate.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.Flush() // ends on a byte boundary with a non-final block
		return buf.Bytes()
	}
	zeros := make([]byte, chunk)
	out := bytes.NewBuffer(compress(prefix))
	var block []byte
	crc := crc32.ChecksumIEEE(prefix)
	for left := n; left > 0; {
		m := min(left, chunk)
		if m == chunk {
			if block == nil {
				block = compress(zeros)
			}
			out.Write(block)
		} else {
			out.Write(compress(zeros[:m]))
		}
		crc = crc32.Update(crc, crc32.IEEETable, zeros[:m])
		left -= m
	}
	out.Write([]byte{0x03, 0x00}) // final fixed-Huffman block holding only end-of-block
	return out.Bytes(), crc
}

// A zip or .tar.gz of a few MB whose one entry is 4 GiB of zeros is
// refused, by ratio, in under a second and before a byte of it is written.
// The archives are built here: a bomb is a container, not server state.
func TestDecompressionBombRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 4 GiB bombs")
	}
	const size = 4 << 30
	raw, crc := zeroDeflate(t, nil, size)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "store/zeros.blk", Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(raw)), UncompressedSize64: size})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw)
	zw.Close()

	hdr := make([]byte, 512)
	var hb bytes.Buffer
	tw := tar.NewWriter(&hb)
	tw.WriteHeader(&tar.Header{Name: "store/zeros.blk", Mode: 0o644, Size: size, Typeflag: tar.TypeReg})
	copy(hdr, hb.Bytes())
	tarRaw, tarCRC := zeroDeflate(t, hdr, size+1024) // the entry, then the two zero blocks ending a tar
	gzb := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, tarRaw...)
	gzb = binary.LittleEndian.AppendUint32(gzb, tarCRC)
	gzb = binary.LittleEndian.AppendUint32(gzb, uint32((size+512+1024)&0xffffffff))

	for _, tc := range []struct {
		file string
		data []byte
	}{{"bomb.zip", zbuf.Bytes()}, {"bomb.tar.gz", gzb}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Logf("%s: %d bytes", tc.file, len(tc.data))
			if len(tc.data) > 8<<20 {
				t.Fatalf("bomb of %d bytes: not a few MB", len(tc.data))
			}
			tmp, src := sandbox(t)
			file := filepath.Join(src, tc.file)
			if err := os.WriteFile(file, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			b, err := Open(file, Limits{})
			took := time.Since(start)
			if err == nil {
				b.Close()
				t.Fatal("a 4 GiB bomb was unpacked")
			}
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "decompression bomb") || !strings.Contains(err.Error(), "zeros.blk") {
				t.Errorf("error %v, want a decompression bomb refusal naming the entry", err)
			}
			if took > time.Second {
				t.Errorf("refused after %v, want under a second", took)
			}
			if left := listTree(t, tmp); len(left) != 0 {
				t.Errorf("bomb left %v in TMPDIR", left)
			}
			t.Logf("%d-byte %s refused in %v: %v", len(tc.data), tc.file, took, err)
		})
	}
}

// A temporary folder without room for what a zip lists is refused before
// unpacking starts, naming the folder and the size needed.
func TestNoRoomRefusedBeforeUnpacking(t *testing.T) {
	tmp, src := sandbox(t)
	free, ok := freeBytes(tmp)
	if !ok {
		t.Skip("free space unknown here")
	}
	real := smallRealEntries(t)
	if len(real) == 0 {
		t.Skip("no real files")
	}
	// A real file under an entry that claims more than the folder has.
	raw, crc := zeroDeflate(t, nil, 0)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create(real[0].name)
	w.Write(real[0].body)
	big, _ := zw.CreateRaw(&zip.FileHeader{Name: "big.bin", Method: zip.Deflate, CRC32: crc,
		CompressedSize64: uint64(len(raw)), UncompressedSize64: uint64(free) + 1<<30})
	big.Write(raw)
	zw.Close()
	file := filepath.Join(src, "b.zip")
	os.WriteFile(file, zbuf.Bytes(), 0o644)
	_, err := Open(file, Limits{TempDir: tmp})
	if !errors.Is(err, ErrNoRoom) || !strings.Contains(err.Error(), tmp) || !strings.Contains(err.Error(), "--tmpdir") {
		t.Fatalf("error %v, want ErrNoRoom naming %s", err, tmp)
	}
	if left := listTree(t, tmp); len(left) != 0 {
		t.Errorf("left %v in the folder", left)
	}
}
