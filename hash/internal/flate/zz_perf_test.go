package flate

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	kflate "github.com/klauspost/compress/flate"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestPerfZZ(t *testing.T) {
	raw, err := os.ReadFile("/tmp/tflock-hash-bench/provider-40MiB-v2.zip")
	if err != nil {
		t.Skip()
	}
	zr, _ := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	f := zr.File[0]
	off, _ := f.DataOffset()
	data := raw[off : off+int64(f.CompressedSize64)]
	out := make([]byte, f.UncompressedSize64)
	buf := make([]byte, 512<<10)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var d Decoder
	for round := 0; round < 5; round++ {
		t0 := cpuTime()
		io.CopyBuffer(io.Discard, struct{ io.Reader }{kflate.NewReader(bytes.NewReader(data))}, buf)
		tk := cpuTime() - t0
		t0 = cpuTime()
		d.ResetBytes(data)
		if err := d.DecodeAll(out, 0, nil); err != nil {
			t.Fatal(err)
		}
		tw := cpuTime() - t0
		t.Logf("klauspost %v  tflock %v  ratio %.2f", tk, tw, float64(tk)/float64(tw))
	}
}
