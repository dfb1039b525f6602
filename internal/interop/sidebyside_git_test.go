package interop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tflock/tflock/source/git/gittest"
	"github.com/tflock/tflock/source/registry/registrytest"
)

// gitBenchTags is the number of release tags of the benchmark's large
// repository, as many as a much-used public module has.
const gitBenchTags = 240

// gitBenchVersion is the version of tag i of the large repository:
// v1.0.0 to v5.5.7, eight patches a minor, six minors a major.
func gitBenchVersion(i int) string {
	return fmt.Sprintf("v%d.%d.%d", 1+i/48, (i%48)/8, i%8)
}

// gitBenchLatest is the newest version "~> 5.0" allows.
var gitBenchLatest = gitBenchVersion(gitBenchTags - 1)

// gitBenchBlocks is n blocks of HCL (or, for "readme", table rows)
// that differ from seed to seed, so that packs compress as real module
// sources do.
func gitBenchBlocks(rng *rand.Rand, kind string, n int) []string {
	words := []string{"vpc", "subnet", "route", "table", "gateway", "nat", "cidr", "block", "tags", "name", "enable", "dns", "support", "hostnames", "ipv6", "egress", "only", "flow", "log", "destination"}
	out := make([]string, n)
	for i := range n {
		id := rng.IntN(1 << 30)
		w1, w2, w3 := words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))]
		switch kind {
		case "variables":
			out[i] = fmt.Sprintf("variable \"%s_%s_%d\" {\n  description = \"Whether to %s the %s %s\"\n  type        = bool\n  default     = %v\n}\n\n", w1, w2, id, w1, w2, w3, rng.IntN(2) == 0)
		case "outputs":
			out[i] = fmt.Sprintf("output \"%s_%s_%d\" {\n  description = \"The %s of the %s\"\n  value       = \"%s-%s\"\n}\n\n", w1, w2, id, w3, w1, w2, w3)
		case "readme":
			out[i] = fmt.Sprintf("| <a name=\"input_%s_%s_%d\"></a> [%s\\_%s](#input\\_%s) | Whether to %s the %s %s | `bool` | `%v` | no |\n", w1, w2, id, w1, w2, w3, w1, w2, w3, rng.IntN(2) == 0)
		default:
			out[i] = fmt.Sprintf("locals {\n  %s_%s_%d = {\n    create = %v\n    %s     = \"%s-%s\"\n    tags   = { Name = \"%s-%d\" }\n  }\n}\n\n", w1, w2, id, rng.IntN(2) == 0, "name", w3, w2, w1, id)
		}
	}
	return out
}

// gitBenchText is gitBenchBlocks joined.
func gitBenchText(rng *rand.Rand, kind string, n int) string {
	return strings.Join(gitBenchBlocks(rng, kind, n), "")
}

// gitFastImport makes the bare repository dir from a git fast-import
// stream.
func gitFastImport(tb testing.TB, dir string, stream []byte) {
	tb.Helper()
	gittest.Run(tb, filepath.Dir(dir), "init", "-q", "--bare", dir)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Env = gittest.Env()
	cmd.Stdin = bytes.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git fast-import in %s: %v\n%s", dir, err, out)
	}
	gittest.Run(tb, dir, "gc", "-q")
}

// fastImportCommit writes one commit of the whole tree files onto branch
// main of a fast-import stream, with mark, then the tags given
// (annotated when annotate).
func fastImportCommit(b *bytes.Buffer, mark, parent int, files map[string]string, tags []string, annotate bool) {
	when := 1704067200 + mark*3600
	fmt.Fprintf(b, "commit refs/heads/main\nmark :%d\ncommitter bench <bench@example.test> %d +0000\ndata <<EOF\nchange %d\nEOF\n", mark, when, mark)
	if parent > 0 {
		fmt.Fprintf(b, "from :%d\n", parent)
	}
	b.WriteString("deleteall\n")
	for name, content := range files {
		fmt.Fprintf(b, "M 644 inline %s\ndata %d\n%s\n", name, len(content), content)
	}
	b.WriteString("\n")
	for _, t := range tags {
		if annotate {
			fmt.Fprintf(b, "tag %s\nfrom :%d\ntagger bench <bench@example.test> %d +0000\ndata <<EOF\nrelease %s\nEOF\n\n", t, mark, when, t)
		} else {
			fmt.Fprintf(b, "reset refs/tags/%s\nfrom :%d\n\n", t, mark)
		}
	}
}

// gitBenchRepos makes, under root, the repositories of the git benchmark,
// served at base:
//
//   - vpc.git: a module with gitBenchTags release tags (three commits per
//     release, every tenth tag annotated), about 150 KB of sources in a
//     dozen files, with a submodule-like directory modules/sg;
//   - app.git: tag v1.2.3, whose root module calls its own directory sub
//     at the same tag ("//sub?ref=v1.2.3") and db.git at v2.0.0;
//   - db.git: tag v2.0.0, whose module calls vpc.git//modules/sg at
//     the newest release.
func gitBenchRepos(tb testing.TB, root, base string) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	// The files that change, as blocks; the others stay as they are.
	changing := map[string][]string{
		"main.tf":      gitBenchBlocks(rng, "main", 250),
		"variables.tf": gitBenchBlocks(rng, "variables", 300),
		"outputs.tf":   gitBenchBlocks(rng, "outputs", 200),
		"README.md":    gitBenchBlocks(rng, "readme", 300),
	}
	kinds := map[string]string{"main.tf": "main", "variables.tf": "variables", "outputs.tf": "outputs", "README.md": "readme"}
	files := map[string]string{
		"versions.tf":               "terraform {\n  required_version = \">= 1.0\"\n}\n",
		"modules/sg/main.tf":        gitBenchText(rng, "main", 40),
		"modules/sg/variables.tf":   gitBenchText(rng, "variables", 30),
		"modules/endpoints/main.tf": gitBenchText(rng, "main", 40),
		"examples/complete/main.tf": "module \"vpc\" {\n  source = \"../../\"\n}\n",
		"examples/simple/main.tf":   "module \"vpc\" {\n  source = \"../../\"\n}\n",
		".github/workflows/ci.yml":  "on: push\n",
	}
	var stream bytes.Buffer
	mark := 0
	var changelog strings.Builder
	names := []string{"main.tf", "variables.tf", "README.md", "outputs.tf"}
	for i := range gitBenchTags {
		for c := range 3 {
			// Each commit changes a few blocks of two files.
			for _, name := range names[c : c+2] {
				blocks := changing[name]
				for range 3 {
					blocks[rng.IntN(len(blocks))] = gitBenchBlocks(rng, kinds[name], 1)[0]
				}
			}
			for name, blocks := range changing {
				files[name] = strings.Join(blocks, "")
			}
			var tags []string
			if c == 2 {
				fmt.Fprintf(&changelog, "## %s\n\n* change %d\n\n", gitBenchVersion(i), i)
				files["CHANGELOG.md"] = changelog.String()
				tags = []string{gitBenchVersion(i)}
			}
			mark++
			fastImportCommit(&stream, mark, mark-1, files, tags, i%10 == 0)
		}
	}
	gitFastImport(tb, filepath.Join(root, "vpc.git"), stream.Bytes())

	stream.Reset()
	fastImportCommit(&stream, 1, 0, map[string]string{
		"main.tf":     fmt.Sprintf("module \"net\" {\n  source = \"git::%s/app.git//sub?ref=v1.2.3\"\n}\n\nmodule \"db\" {\n  source = \"git::%s/db.git?ref=v2.0.0\"\n}\n", base, base),
		"sub/main.tf": gitBenchText(rng, "main", 30),
		"README.md":   gitBenchText(rng, "readme", 40),
	}, []string{"v1.2.3"}, false)
	gitFastImport(tb, filepath.Join(root, "app.git"), stream.Bytes())

	stream.Reset()
	fastImportCommit(&stream, 1, 0, map[string]string{
		"main.tf":      fmt.Sprintf("module \"sg\" {\n  source = \"git::%s/vpc.git//modules/sg?ref=%s\"\n}\n", base, gitBenchLatest),
		"variables.tf": gitBenchText(rng, "variables", 40),
	}, []string{"v2.0.0"}, false)
	gitFastImport(tb, filepath.Join(root, "db.git"), stream.Bytes())
}

// BenchmarkSideBySideGit times the real tofu and tflock (the examples/lock
// program) installing git modules cold, one process run per operation,
// from git repositories served over smart HTTP (git http-backend, gittest's
// loopback address) with 20 ms added to every request:
//
//   - constrained: one call of a repository of gitBenchTags tags,
//     constrained to "~> 5.0" (tflock's annotation; its "ref" names the
//     newest 5.x tag, which tofu checks out);
//   - tree: that call, and a call of app.git, whose module calls its own
//     subdirectory at its tag ("//sub?ref=v1.2.3") and db.git, whose
//     module calls vpc.git//modules/sg at the newest tag.
//
// Each iteration is a round in which every tool runs once, in turn, each
// run starting with no install directory, no lock file and an empty tflock
// cache, after "sync" (outside the time measured): a change of the
// machine's load falls on both. One round before them is not counted (it
// brings the binaries and the served repositories into memory). Per tool, "TOOL-ms" is the median of its
// runs and "TOOL-requests" the git server's requests per run; "x-tofu" is
// tofu's median over tflock's. tofu is skipped without TFLOCK_TOFU.
// BENCHMARKS.md in resolve/install has the command and the figures.
func BenchmarkSideBySideGit(b *testing.B) {
	root := b.TempDir()
	srv := gittest.New(b, gittest.Options{Root: root, Latency: 20 * time.Millisecond})
	base := srv.LoopbackURL()
	gitBenchRepos(b, root, base)
	vpcCall := fmt.Sprintf("module \"vpc\" {\n  # tflock: version = \"~> 5.0\"\n  source = \"git::%s/vpc.git?ref=%s\"\n}\n", base, gitBenchLatest)
	configs := []struct{ name, tf string }{
		{"constrained", vpcCall},
		{"tree", vpcCall + fmt.Sprintf("\nmodule \"app\" {\n  source = \"git::%s/app.git?ref=v1.2.3\"\n}\n", base)},
	}
	w := newWorldWith(b, registrytest.Fixtures{}, registrytest.Options{})
	type contender struct {
		name string
		run  func()
		ms   []float64
		reqs int
	}
	for _, c := range configs {
		b.Run("measure=git-"+c.name, func(b *testing.B) {
			w.t = b
			w.config(map[string]string{"main.tf": c.tf})
			tflockBinary(b) // built before the first run is timed
			tools := []*contender{{name: "tflock", run: func() { w.tflock(0) }}}
			if os.Getenv("TFLOCK_TOFU") != "" {
				tofu := tool(b, "TFLOCK_TOFU", "tofu")
				tools = append([]*contender{{name: "tofu", run: func() { w.run(0, tofu, "init", "-input=false", "-no-color") }}}, tools...)
			}
			fresh := func() {
				w.removeInstall()
				w.removeCache()
				if err := exec.Command("sync").Run(); err != nil {
					b.Fatal(err)
				}
			}
			// One run each first, not counted: the binaries and the
			// server's repositories are then in memory for every round.
			b.StopTimer()
			for _, tl := range tools {
				fresh()
				tl.run()
			}
			b.StartTimer()
			for b.Loop() {
				for _, tl := range tools {
					b.StopTimer()
					fresh()
					before := srv.Requests()
					b.StartTimer()
					start := time.Now()
					tl.run()
					tl.ms = append(tl.ms, float64(time.Since(start).Microseconds())/1000)
					tl.reqs += srv.Requests() - before
				}
			}
			for _, tl := range tools {
				b.Logf("%s: %v ms", tl.name, tl.ms)
				b.ReportMetric(median(tl.ms), tl.name+"-ms")
				b.ReportMetric(float64(tl.reqs)/float64(len(tl.ms)), tl.name+"-requests")
			}
			if len(tools) == 2 {
				b.ReportMetric(median(tools[0].ms)/median(tools[1].ms), "x-tofu")
			}
		})
	}
}

// median is the middle value of xs (the mean of the two middle ones for
// an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
