package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/resolve/install/installtest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// BenchmarkSideBySide times the real tofu, terraform and tflock (the
// examples/lock program) doing the same job against the same loopback
// registry, one process run per operation:
//
//   - cold: init of one large provider (TFLOCK_BENCH_PROVIDER_MIB MiB of
//     provider-like executable, default 400; a zip of about 40% of that),
//     nothing installed, no lock file, no cache, and the file system
//     synced before each run (sync(2), not timed), so that no run pays for
//     the write-back of the one before: what a user's first init sees. A
//     fourth tool, "floor" (internal/interop/floor -install), downloads
//     the same package and writes as many bytes as it holds, at once, and
//     does nothing else: the time the download and the page cache take on
//     this machine, below which no installer can go;
//   - warm: the same init run again, lock file, install and (for tflock)
//     cache present;
//   - providers-lock: "providers lock" of 50 providers for 4 platforms,
//     every request delayed 20 ms, nothing cached; "packages" when the
//     registry sends OpenTofu 1.12's packages field, "downloads" when it
//     does not. A fourth tool, "floor" (internal/interop/floor; with
//     -downloads in the "downloads" measure, where it also reads and
//     SHA-256s every platform's package in memory), makes the same
//     requests and nothing else: the time no client of the protocol can go
//     below on this machine.
//
// Each tool is skipped without its variable (TFLOCK_TOFU, TFLOCK_TERRAFORM).
// With TFLOCK_BENCH_BASELINE naming an examples/lock binary built from
// another revision, that binary runs too, as the tool "tflock-baseline",
// interleaved with the others: a before/after comparison in one run.
// The "requests/op" metric is the registry's count; the cold and
// providers-lock measures also report "peak-RSS-MiB", and the CPU time of
// the process, "user-s/op" and "sys-s/op" (see peakRSS; every tool, the
// floors too, then runs under GNU time). Compare with
// benchstat; resolve/install/BENCHMARKS.md has the command and the
// figures.
func BenchmarkSideBySide(b *testing.B) {
	tools := []struct{ name, env string }{{"tofu", "TFLOCK_TOFU"}, {"terraform", "TFLOCK_TERRAFORM"}, {"tflock", ""}}
	if os.Getenv("TFLOCK_BENCH_BASELINE") != "" {
		tools = append(tools, struct{ name, env string }{"tflock-baseline", "TFLOCK_BENCH_BASELINE"})
	}
	mib := 400
	if s := os.Getenv("TFLOCK_BENCH_PROVIDER_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("TFLOCK_BENCH_PROVIDER_MIB=%q: want a positive whole number", s)
		}
		mib = n
	}
	bigFixtures := registrytest.Fixtures{Providers: []registrytest.Provider{{
		Addr:     installtest.RegistryHost + "/acme/big",
		Versions: []registrytest.ProviderVersion{{Version: "1.0.0", Platforms: []string{installtest.Platforms()[0]}, Size: mib << 20, Binary: true}},
	}}}
	bigTF := fmt.Sprintf(`terraform {
  required_providers {
    big = {
      source  = "%s/acme/big"
      version = "1.0.0"
    }
  }
}
`, installtest.RegistryHost)

	// The worlds live as long as the whole benchmark (their servers are
	// closed by the parent's cleanup); each sub-benchmark makes itself
	// the world's test while it runs.
	parent := b
	var bigWorld *world
	big := func(b *testing.B) *world {
		if bigWorld == nil {
			bigWorld = newWorldWith(parent, bigFixtures, registrytest.Options{})
			bigWorld.config(map[string]string{"main.tf": bigTF})
		}
		bigWorld.t = b
		return bigWorld
	}
	isTflock := func(tool string) bool { return tool == "tflock" || tool == "tflock-baseline" }
	initArgs := func(tool string) []string {
		if isTflock(tool) {
			return nil
		}
		return []string{"init", "-input=false", "-no-color"}
	}
	runTool := func(b *testing.B, w *world, tool, bin string, args []string) {
		if isTflock(tool) {
			args = append(append([]string{"-cache-dir", filepath.Join(w.home, "tflock-cache")}, args...), w.dir)
		}
		w.run(0, bin, args...)
	}
	binFor := func(b *testing.B, name, env string) string {
		if name == "floor" {
			return program(b, "internal/interop/floor")
		}
		if env == "" {
			return tflockBinary(b)
		}
		return tool(b, env, name)
	}
	fresh := func(w *world) {
		w.removeInstall()
		w.removeCache()
	}

	coldTools := append(slices.Clone(tools), struct{ name, env string }{"floor", ""})
	for _, tl := range coldTools {
		b.Run("measure=cold/tool="+tl.name, func(b *testing.B) {
			bin := binFor(b, tl.name, tl.env)
			w := big(b)
			args := initArgs(tl.name)
			floorDir := filepath.Join(w.home, "floor-install")
			if tl.name == "floor" {
				addr := installtest.RegistryHost + "/acme/big"
				info, ok := w.w.Registry.ProviderPackage(addr, "1.0.0", installtest.Platforms()[0])
				if !ok {
					b.Fatal("no package of the big provider")
				}
				args = []string{"-install", floorDir, fmt.Sprintf("%s/files/providers/%s/1.0.0/%s", w.w.Registry.URL, addr, info.Filename), strconv.Itoa(mib << 20)}
			}
			before := w.w.Registry.Requests()
			rss := peakRSS(b, w)
			for b.Loop() {
				b.StopTimer()
				fresh(w)
				if err := os.RemoveAll(floorDir); err != nil {
					b.Fatal(err)
				}
				syncFS()
				b.StartTimer()
				runTool(b, w, tl.name, bin, args)
				b.StopTimer()
				rss.read()
				b.StartTimer()
			}
			w.wrap = nil
			b.ReportMetric(float64(w.w.Registry.Requests()-before)/float64(b.N), "requests/op")
			rss.report()
		})
	}
	for _, tl := range tools {
		b.Run("measure=warm/tool="+tl.name, func(b *testing.B) {
			bin := binFor(b, tl.name, tl.env)
			w := big(b)
			fresh(w)
			runTool(b, w, tl.name, bin, initArgs(tl.name))
			before := w.w.Registry.Requests()
			for b.Loop() {
				runTool(b, w, tl.name, bin, initArgs(tl.name))
			}
			b.ReportMetric(float64(w.w.Registry.Requests()-before)/float64(b.N), "requests/op")
		})
	}

	// 50 providers, two versions each, four platforms, on tofu's default
	// registry: the one whose packages field a lock records as reported
	// (elsewhere its h1: are not signed, and each platform is hashed).
	plats := []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}
	var fx registrytest.Fixtures
	var tf strings.Builder
	tf.WriteString("terraform {\n  required_providers {\n")
	for i := range 50 {
		name := fmt.Sprintf("p%02d", i)
		fx.Providers = append(fx.Providers, registrytest.Provider{Addr: defaultHost + "/acme/" + name, Versions: []registrytest.ProviderVersion{
			{Version: "1.0.0", Platforms: plats}, {Version: "1.1.0", Platforms: plats},
		}})
		fmt.Fprintf(&tf, "    %s = {\n      source  = \"%s/acme/%s\"\n      version = \"~> 1.0\"\n    }\n", name, defaultHost, name)
	}
	tf.WriteString("  }\n}\n")
	for _, variant := range []string{"packages", "downloads"} {
		var lockWorld *world
		lockTools := append(slices.Clone(tools), struct{ name, env string }{"floor", ""})
		for _, tl := range lockTools {
			b.Run("measure=providers-lock-"+variant+"/tool="+tl.name, func(b *testing.B) {
				bin := binFor(b, tl.name, tl.env)
				if lockWorld == nil {
					lockWorld = newWorldWith(parent, fx, registrytest.Options{Hosts: []string{defaultHost}, Packages: variant == "packages", Latency: 20 * time.Millisecond})
					lockWorld.config(map[string]string{"main.tf": tf.String()})
				}
				w := lockWorld
				w.t = b
				var args []string
				switch tl.name {
				case "floor":
					if variant == "packages" {
						args = append(args, "-platform", plats[0])
					} else {
						args = append(args, "-downloads", strings.Join(plats, ","))
					}
					args = append(args, w.w.Registry.URL+"/v1/providers/")
					for i := range 50 {
						args = append(args, fmt.Sprintf("acme/p%02d", i))
					}
				case "tflock", "tflock-baseline":
					args = append(args, "providers-lock", "-cache-dir", filepath.Join(w.home, "tflock-cache"))
					for _, p := range plats {
						args = append(args, "-platform", p)
					}
					args = append(args, w.dir)
				default:
					args = append(args, "providers", "lock", "-no-color")
					for _, p := range plats {
						args = append(args, "-platform="+p)
					}
				}
				before := w.w.Registry.Requests()
				rss := peakRSS(b, w)
				for b.Loop() {
					b.StopTimer()
					fresh(w)
					b.StartTimer()
					w.run(0, bin, args...)
					b.StopTimer()
					rss.read()
					b.StartTimer()
				}
				w.wrap = nil
				b.ReportMetric(float64(w.w.Registry.Requests()-before)/float64(b.N), "requests/op")
				rss.report()
			})
		}
	}
}

// gnuTime is GNU time, through which the cold measure runs each tool to
// read its peak resident size.
const gnuTime = "/usr/bin/time"

// rssMeter gathers the peak resident size of the runs of a benchmark.
type rssMeter struct {
	b    *testing.B
	file string // where GNU time writes the size; "" when not measured
	peak float64
	// The CPU times of the runs read, in seconds, and their number.
	user, sys float64
	runs      int
}

// peakRSS makes w run its tools through GNU time, when there is one, so
// that the benchmark can report the mean user and system CPU time of the
// tool's processes ("user-s/op", "sys-s/op") and their largest peak
// resident size as "peak-RSS-MiB": the maximum resident set size that
// /usr/bin/time reports, mapped file pages included, as a CI runner's
// memory limit counts them. (The rusage of a child of the test process
// itself would not do: a child started by Go shares the test process's
// memory until it executes the tool, and the kernel keeps that peak, the
// test's registry fixtures included, as the child's.) The caller resets
// w.wrap when done.
func peakRSS(b *testing.B, w *world) *rssMeter {
	m := &rssMeter{b: b}
	if _, err := os.Stat(gnuTime); err != nil {
		return m
	}
	m.file = filepath.Join(b.TempDir(), "rss")
	w.wrap = []string{gnuTime, "-f", "%M %U %S", "-o", m.file}
	return m
}

// read takes the peak and the CPU times of the last run.
func (m *rssMeter) read() {
	if m.file == "" {
		return
	}
	out, err := os.ReadFile(m.file)
	if err != nil {
		m.b.Fatal(err)
	}
	var kib, user, sys float64
	if _, err := fmt.Sscan(string(out), &kib, &user, &sys); err != nil {
		m.b.Fatalf("%s: %q: %v", gnuTime, out, err)
	}
	m.peak = max(m.peak, kib*1024)
	m.user += user
	m.sys += sys
	m.runs++
}

// report reports the largest peak read and the mean CPU times.
func (m *rssMeter) report() {
	if m.peak > 0 {
		m.b.ReportMetric(m.peak/(1<<20), "peak-RSS-MiB")
	}
	if m.runs > 0 {
		m.b.ReportMetric(m.user/float64(m.runs), "user-s/op")
		m.b.ReportMetric(m.sys/float64(m.runs), "sys-s/op")
	}
}
